# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A two-layer perceptron built with keras.Sequential([...])."""

import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:7).

    Input ``x``: (N, 20) float32.
    Returns: (N, 3).
    """

    def __init__(self, num_features=20, num_classes=3):
        super().__init__()
        self.fc1 = nn.Linear(num_features, 64)
        self.dropout1 = nn.Dropout(0.2)
        self.fc2 = nn.Linear(64, num_classes)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.dropout1(x)
        x = F.softmax(self.fc2(x), dim=-1)
        return x


def build_model(num_features=20, num_classes=3):
    return Net(num_features, num_classes)
