# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F
import numpy as np


class StochasticDepth(nn.Module):
    """Transpiled from the Keras class ``StochasticDepth`` (input.py) (for drop_prop=0.0)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        if self.training:
            # random.uniform: torch's generator draws other numbers (same distribution)
            random_tensor = torch.floor(
                torch.rand(x.shape[0], 1, 1, device=x.device) + 1.0
            )
            return x * random_tensor
        return x


class StochasticDepth2(nn.Module):
    """Transpiled from the Keras class ``StochasticDepth`` (input.py) (for drop_prop=0.05)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        if self.training:
            # random.uniform: torch's generator draws other numbers (same distribution)
            random_tensor = torch.floor(
                torch.rand(x.shape[0], 1, 1, device=x.device) + 0.95
            )
            return x * 1.0526315789473684 * random_tensor
        return x


class StochasticDepth3(nn.Module):
    """Transpiled from the Keras class ``StochasticDepth`` (input.py) (for drop_prop=0.1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        if self.training:
            # random.uniform: torch's generator draws other numbers (same distribution)
            random_tensor = torch.floor(
                torch.rand(x.shape[0], 1, 1, device=x.device) + 0.9
            )
            return x * 1.1111111111111112 * random_tensor
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:29).

    Input ``inputs``: (N, 6, 8) float32.
    Returns: (N, 6, 8).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.stochastic_depth = StochasticDepth()
        self.fc2 = nn.Linear(8, 8)
        self.stochastic_depth2 = StochasticDepth2()
        self.fc3 = nn.Linear(8, 8)
        self.stochastic_depth3 = StochasticDepth3()
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)
        nn.init.xavier_uniform_(self.fc3.weight)
        nn.init.zeros_(self.fc3.bias)

    def forward(self, inputs):
        y = F.relu(self.fc1(inputs))
        y = self.stochastic_depth(y)
        x = y + inputs
        y = F.relu(self.fc2(x))
        y = self.stochastic_depth2(y)
        x = y + x
        y = F.relu(self.fc3(x))
        y = self.stochastic_depth3(y)
        x = y + x
        return x


def build_model():
    return Net()
