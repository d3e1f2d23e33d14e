# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""TensorFlow tensor functions in custom layers' call(): TensorFlow NumPy (keras.io's
tensorflow_numpy_models), ShiftViT's crop/pad shift, SimCLR's per-sample tf.eye."""

import torch
from torch import nn
import torch.nn.functional as F


class TNPDense(nn.Module):
    """Transpiled from the Keras class ``TNPDense`` (input.py)."""

    def __init__(self, units):
        super().__init__()
        self.w = nn.Parameter(torch.empty(4, units))
        self.b = nn.Parameter(torch.empty(units))
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.normal_(self.w, 0.0, 0.05)
        nn.init.zeros_(self.b)

    def forward(self, inputs):
        inputs = inputs @ self.w
        inputs = inputs + self.b
        inputs = inputs.clamp(min=0.0)
        return inputs


class Shift(nn.Module):
    """Transpiled from the Keras class ``Shift`` (input.py)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        # layout: axis=3 of the Keras code (channels-last) is dim 1 of this channels-first tensor
        left, right = x.split(2, dim=1)
        # layout: axes=2 of the Keras code (channels-last) is dim 3 of this channels-first tensor
        crop = left[..., 1:]
        # layout: axis=3 of the Keras code (channels-last) is dim 1 of this channels-first tensor
        left = torch.cat([F.pad(crop, (0, 1, 0, 0)), right], dim=1)
        return left


class ColorMix(nn.Module):
    """Transpiled from the Keras class ``ColorMix`` (input.py)."""

    def __init__(self):
        super().__init__()

    def forward(self, images):
        # layout: tf.eye needs the Keras (channels-last) axis order: permuted back from NCHW to NHWC here
        x = images.permute(0, 2, 3, 1)
        transforms = (
            torch.eye(4, 4, dtype=torch.float32, device=x.device).expand(
                x.shape[0], 1, 4, 4
            )
            / 2.0
        ) + 0.125
        x = x @ transforms
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:51).

    Input ``inp``: (N, 3, 6, 5) float32, channels-first.
    Returns: (N, 2).
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.shift = Shift()
        self.color_mix = ColorMix()
        self.t_n_p_dense = TNPDense(2)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv1.weight)
        nn.init.zeros_(self.conv1.bias)

    def forward(self, inp):
        x = self.conv1(inp)
        x = self.shift(x)
        x = self.color_mix(x).mean(dim=(1, 2))
        out = self.t_n_p_dense(x)
        return out


def build_model():
    return Net()
