# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A token-and-position embedding (keras.io ner_transformers / neural machine translation) on
sequences of any length: the position ids go up to ops.shape(inputs)[-1], a size known only
when the program runs."""

import torch
from torch import nn
import torch.nn.functional as F


class TokenAndPositionEmbedding(nn.Module):
    """Transpiled from the Keras class ``TokenAndPositionEmbedding`` (input.py)."""

    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = nn.Embedding(vocab_size, embed_dim)
        self.pos_emb = nn.Embedding(maxlen, embed_dim)

    def forward(self, inputs):
        positions = torch.arange(inputs.shape[1], device=inputs.device)
        position_embeddings = self.pos_emb(positions)
        token_embeddings = self.token_emb(inputs)
        token_embeddings = token_embeddings + position_embeddings
        return token_embeddings


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:27).

    Input ``inputs``: (N, N) int32.
    Returns: (N, N, 5).
    """

    def __init__(self, maxlen=64, vocab_size=200, embed_dim=16):
        super().__init__()
        self.token_and_position_embedding = TokenAndPositionEmbedding(
            maxlen, vocab_size, embed_dim
        )
        self.fc1 = nn.Linear(embed_dim, embed_dim)
        self.fc2 = nn.Linear(embed_dim, 5)

    def forward(self, inputs):
        x = self.token_and_position_embedding(inputs)
        x = F.relu(self.fc1(x))
        outputs = F.softmax(self.fc2(x), dim=-1)
        return outputs


def build_model(maxlen=64, vocab_size=200, embed_dim=16):
    return Net(maxlen, vocab_size, embed_dim)
