# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A subclassed model that is never built in the script: its call() first hands the input to
an Embedding (token ids, any length), whose output goes through a custom layer holding a
keras.Sequential without an Input. Keras builds all of it on the first call."""

import torch
from torch import nn
import torch.nn.functional as F


class Ffn(nn.Module):
    """The Keras model ``ffn``, used as a layer."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return x


class Residual(nn.Module):
    """Transpiled from the Keras class ``Residual`` (input.py)."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8, eps=1e-06)
        self.ffn = Ffn()

    def forward(self, inputs):
        inputs_1 = self.ffn(inputs)
        inputs = inputs + inputs_1
        inputs = self.norm(inputs)
        return inputs


class Tagger(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:30).

    Input ``inputs``: (N, N) int64.
    Returns: (N, N, 4).
    """

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(40, 8)
        self.block = Residual()
        self.head = nn.Linear(8, 4)

    def forward(self, inputs):
        x = self.embed(inputs)
        x = self.block(x)
        x = self.head(x)
        return x


def build_model():
    return Tagger()
