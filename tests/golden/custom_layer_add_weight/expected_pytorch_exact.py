# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A custom layer with its own weights (add_weight in build) becomes an nn.Module whose
weights are nn.Parameters, initialised like Keras' initializers."""

import torch
from torch import nn
import torch.nn.functional as F


class FeatureGate(nn.Module):
    """out = x * sigmoid(gate) + bias, one gate and bias per feature."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Parameter(torch.empty(16))
        self.bias = nn.Parameter(torch.empty(16))
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.zeros_(self.gate)
        nn.init.normal_(self.bias, 0.0, 0.05)

    def forward(self, x):
        x = x * torch.sigmoid(self.gate)
        x = x + self.bias
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:23).

    Input ``inputs``: (N, 10) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.feature_gate = FeatureGate()
        self.fc2 = nn.Linear(16, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, inputs):
        x = F.relu(self.fc1(inputs))
        x = self.feature_gate(x)
        outputs = self.fc2(x)
        return outputs


def build_model():
    return Net()
