# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Branches on the training flag in call(): self.training in torch."""

import torch
from torch import nn
import torch.nn.functional as F


class Jitter(nn.Module):
    """Scales while training, shifts at inference."""

    def __init__(self):
        super().__init__()

    def forward(self, inputs):
        if self.training:
            # a deterministic stand-in for noise
            return inputs * 0.9
        return inputs + 1.0


class Gate(nn.Module):
    """Transpiled from the Keras class ``Gate`` (input.py)."""

    def __init__(self, units):
        super().__init__()
        self.dense = nn.Linear(6, units)
        self.extra = nn.Linear(6, units)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.dense.weight)
        nn.init.zeros_(self.dense.bias)
        nn.init.xavier_uniform_(self.extra.weight)
        nn.init.zeros_(self.extra.bias)

    def forward(self, x):
        h = self.dense(x)
        if self.training:
            scale = torch.sigmoid(self.extra(x))
            h = h * scale
        else:
            h = F.relu(h)
        if self.training:
            h = h - 0.5
        h = h * (0.5 if self.training else 2.0)
        return h


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:50).

    Input ``inputs``: (N, 6) float32.
    Returns: (N, 3).
    """

    def __init__(self):
        super().__init__()
        self.jitter = Jitter()
        self.gate = Gate(5)
        self.head = nn.Linear(5, 3)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, inputs):
        x = self.jitter(inputs)
        x = self.gate(x)
        if self.training:
            x = torch.tanh(x)
        x = self.head(x)
        return x


def build_model():
    return Net()
