# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import math

import torch
from torch import nn
import torch.nn.functional as F


class SinusoidalEmbedding(nn.Module):
    """Diffusion models' time step embedding: sines and cosines of the step at several frequencies."""

    def __init__(self):
        super().__init__()

    def forward(self, steps, x):
        x_1 = steps.float().unsqueeze(-1)
        angles = x_1 * x.unsqueeze(0)
        angles_1 = torch.sin(angles)
        angles = torch.cos(angles)
        angles = torch.cat([angles_1, angles], dim=1)
        return angles


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:26).

    Input ``steps``: (N) int64.
    Returns: (N, 8).
    """

    def __init__(self):
        super().__init__()
        self.sinusoidal_embedding = SinusoidalEmbedding()
        self.fc1 = nn.Linear(16, 8)
        self.register_buffer(
            "arange1_positions", torch.arange(8, dtype=torch.float32), persistent=False
        )
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, steps):
        x = torch.exp(self.arange1_positions * -1.3157629102823118)
        x = self.sinusoidal_embedding(steps, x)
        x = F.silu(self.fc1(x))
        return x


def build_model():
    return Net()
