# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""keras.io's mlp_image_classification PositionEmbedding: a weight trimmed with ops.slice to the
input's length and broadcast over the batch with ops.broadcast_to."""

import math
import torch
from torch import nn


class PositionEmbedding(nn.Module):
    """Transpiled from the Keras class ``PositionEmbedding`` (input.py)."""

    def __init__(self, sequence_length):
        super().__init__()
        self.position_embeddings = nn.Parameter(torch.empty(sequence_length, 32))
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.uniform_(
            self.position_embeddings, -math.sqrt(3.0 / 26.0), math.sqrt(3.0 / 26.0)
        )

    def forward(self, x):
        position_embeddings = self.position_embeddings[:16]
        position_embeddings = position_embeddings.expand(x.shape[0], 16, 32)
        return position_embeddings


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:29).

    Input ``inputs``: (N, 16, 8) float32.
    Returns: (N, 4).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.position_embedding = PositionEmbedding(20)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, inputs):
        x = self.fc1(inputs)
        x_1 = self.position_embedding(x)
        x = (x + x_1).mean(dim=1)
        outputs = self.fc2(x)
        return outputs


def build_model():
    return Net()
