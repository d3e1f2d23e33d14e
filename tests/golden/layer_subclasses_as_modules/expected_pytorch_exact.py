# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Layer subclasses become nn.Module classes: sub-layers sized in build(), a list of blocks
(nn.ModuleList, looped in forward), and a Model subclass on top."""

import torch
from torch import nn
import torch.nn.functional as F


class ResidualDense(nn.Module):
    """Dense -> Dense back to the input width, plus the input."""

    def __init__(self, hidden):
        super().__init__()
        self.expand = nn.Linear(16, hidden)
        self.project = nn.Linear(hidden, 16)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.expand.weight)
        nn.init.zeros_(self.expand.bias)
        nn.init.xavier_uniform_(self.project.weight)
        nn.init.zeros_(self.project.bias)

    def forward(self, x):
        x_1 = F.relu(self.expand(x))
        x_2 = self.project(x_1)
        x = x + x_2
        return x


class Tower(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:38).

    Input ``inputs``: (N, 8) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(8, 16)
        # the blocks share one class; torch holds them in an nn.ModuleList
        self.blocks = nn.ModuleList([ResidualDense(32) for _ in range(2)])
        self.head = nn.Linear(16, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.stem.weight)
        nn.init.zeros_(self.stem.bias)
        nn.init.xavier_uniform_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, inputs):
        x = self.stem(inputs)
        for block in self.blocks:
            x = block(x)
        x = self.head(x)
        return x


def build_model():
    return Tower()
