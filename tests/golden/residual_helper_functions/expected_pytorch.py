# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class ConvBnRelu(nn.Module):
    """The ``conv_bn_relu()`` block of the Keras model (input.py) as a module."""

    def __init__(self, in_channels, filters):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, filters, kernel_size=3, padding=1, bias=False
        )
        self.bn = nn.BatchNorm2d(filters, eps=0.001, momentum=0.01)

    def forward(self, x):
        x = self.conv(x)
        x = F.relu(self.bn(x))
        return x


class ResidualBlock(nn.Module):
    """The ``residual_block()`` block of the Keras model (input.py) as a module."""

    def __init__(self, filters):
        super().__init__()
        self.conv_bn_relu = ConvBnRelu(filters, filters)
        self.conv = nn.Conv2d(filters, filters, kernel_size=3, padding=1)

    def forward(self, x):
        y = self.conv_bn_relu(x)
        y = self.conv(y)
        x = x + y
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:25).

    Input ``inputs``: (N, 3, 16, 16) float32, channels-first.
    Returns: (N, 5).
    """

    def __init__(self, filters=16):
        super().__init__()
        self.conv_bn_relu = ConvBnRelu(3, filters)
        self.residual_block1 = ResidualBlock(filters)
        self.residual_block2 = ResidualBlock(filters)
        self.fc1 = nn.Linear(filters, 5)

    def forward(self, inputs):
        x = self.conv_bn_relu(inputs)
        x = self.residual_block1(x)
        x = self.residual_block2(x).mean(dim=(2, 3))
        outputs = self.fc1(x)
        return outputs


def build_model(filters=16):
    return Net(filters)
