# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""keras.io's FNet block (mlp_image_classification): tokens mixed by the real part of a 2-D FFT."""

import torch
from torch import nn
import torch.nn.functional as F


class Ffn(nn.Module):
    """The Keras model ``ffn``, used as a layer."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.dropout = nn.Dropout(0.2)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = self.dropout(x)
        x = self.fc2(x)
        return x


class FNetLayer(nn.Module):
    """Transpiled from the Keras class ``FNetLayer`` (input.py)."""

    def __init__(self):
        super().__init__()
        self.normalize1 = nn.LayerNorm(8, eps=1e-06)
        self.normalize2 = nn.LayerNorm(8, eps=1e-06)
        self.ffn = Ffn()

    def forward(self, inputs):
        im_part = torch.zeros_like(inputs)
        x = torch.fft.fft2(torch.complex(inputs, im_part))
        x_1 = x.imag
        x = x.real
        x = x + inputs
        x = self.normalize1(x)
        x_ffn = self.ffn(x)
        x = x + x_ffn
        x = self.normalize2(x)
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:34).

    Input ``inputs``: (N, 16, 8) float32.
    Returns: (N, 4).
    """

    def __init__(self):
        super().__init__()
        self.f_net_layer = FNetLayer()
        self.fc3 = nn.Linear(8, 4)

    def forward(self, inputs):
        x = self.f_net_layer(inputs).mean(dim=1)
        outputs = self.fc3(x)
        return outputs


def build_model():
    return Net()
