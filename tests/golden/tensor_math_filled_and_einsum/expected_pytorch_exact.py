# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""keras.ops.zeros_like / ones_like / full_like / zeros and einsum on a conv's feature map."""

import torch
from torch import nn
import torch.nn.functional as F


class Bias(nn.Module):
    """Adds a per-sample bias map built from the batch size (ops.ones with ops.shape)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = (
            x
            + torch.ones(x.shape[0], 4, 6, 5, dtype=torch.float32, device=x.device)
            / 10.0
        )
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:25).

    Input ``inputs``: (N, 3, 6, 5) float32, channels-first.
    Returns: (N, 16), (N, 2, 2), (N, 4).
    """

    def __init__(self, filters=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, filters, kernel_size=3, padding=1)
        self.bias = Bias()
        self.conv2 = nn.Conv1d(6, 2, kernel_size=3)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv1.weight)
        nn.init.zeros_(self.conv1.bias)
        nn.init.xavier_uniform_(self.conv2.weight)
        nn.init.zeros_(self.conv2.bias)

    def forward(self, inputs):
        x = F.relu(self.conv1(inputs))
        x = self.bias(x)
        x_1 = x * torch.full_like(x, 0.5)
        x = x_1 + torch.zeros_like(x)
        # layout: ops.einsum needs the Keras (channels-last) axis order: permuted back from NCHW to NHWC here
        x_2 = x.permute(0, 2, 3, 1)
        # per-channel Gram matrix over the pixels, channels last as in Keras
        gram = torch.einsum("bhwc,bhwd->bcd", x_2, x_2)
        rows = torch.einsum("bhwc->bch", x_2)
        x = torch.ones_like(x, dtype=torch.int32)
        # layout: axis=(1, 2) of the Keras code (channels-last) is dim (2, 3) of this channels-first tensor
        counts = x.sum(dim=(2, 3))
        gram = gram.flatten(1)
        rows = rows.permute(0, 2, 1)
        rows = self.conv2(rows)
        return gram, rows, counts


def build_model(filters=4):
    return Net(filters)
