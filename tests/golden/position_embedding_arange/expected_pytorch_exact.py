# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A ViT-style patch encoder (keras.io): position ids from ops.arange, embedded and added to
every sample; the MLP uses activation=ops.gelu (the tanh approximation, ops.gelu's default)
and a stop_gradient branch."""

import torch
from torch import nn
import torch.nn.functional as F


class PatchEncoder(nn.Module):
    """Transpiled from the Keras class ``PatchEncoder`` (input.py)."""

    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.projection = nn.Linear(12, projection_dim)
        self.position_embedding = nn.Embedding(num_patches, projection_dim)
        self.register_buffer(
            "arange1_positions", torch.arange(num_patches), persistent=False
        )
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.projection.weight)
        nn.init.zeros_(self.projection.bias)
        nn.init.uniform_(self.position_embedding.weight, -0.05, 0.05)

    def forward(self, patch):
        positions = self.arange1_positions.unsqueeze(0)
        projected_patches = self.projection(patch)
        positions = self.position_embedding(positions)
        projected_patches = projected_patches + positions
        return projected_patches


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:28).

    Input ``inputs``: (N, 16, 12) float32.
    Returns: (N, 2).
    """

    def __init__(self, num_patches=16, projection_dim=32):
        super().__init__()
        self.patch_encoder = PatchEncoder(num_patches, projection_dim)
        self.fc1 = nn.Linear(projection_dim, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 2)
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
        x = self.patch_encoder(inputs)
        x = F.gelu(self.fc1(x), approximate="tanh")
        x = (x + self.fc2(x).detach()).mean(dim=1)
        outputs = F.softmax(self.fc3(x), dim=-1)
        return outputs


def build_model(num_patches=16, projection_dim=32):
    return Net(num_patches, projection_dim)
