# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn


class Regressor(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:6).

    Input ``x``: (N, 8) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.bn1 = nn.BatchNorm1d(32, eps=0.001, momentum=0.01)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = self.bn1(x)
        x = self.fc2(x)
        return x


def build_model():
    return Regressor()
