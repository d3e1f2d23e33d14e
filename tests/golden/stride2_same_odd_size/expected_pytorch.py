# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:11).

    Input ``inputs``: (N, 3, 7, 7) float32, channels-first.
    Returns: (N, 8, 2, 2).
    """

    def __init__(self):
        super().__init__()
        # 7x7 -> 4x4: TensorFlow pads one row and column on each side
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1)
        # 4x4 -> 2x2: TensorFlow pads only the bottom row and right column
        self.conv2 = nn.Conv2d(8, 8, kernel_size=3, stride=2)

    def forward(self, inputs):
        x = self.conv2(F.pad(self.conv1(inputs), (0, 1, 0, 1)))
        return x


def build_model():
    return Net()
