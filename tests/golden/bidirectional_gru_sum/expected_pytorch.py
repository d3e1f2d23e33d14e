# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:10).

    Input ``tokens``: (N, 12) int32.
    Returns: (N, 2).
    """

    def __init__(self, vocab_size=100):
        super().__init__()
        self.embedding1 = nn.Embedding(vocab_size, 16)
        self.birnn1 = nn.GRU(16, 8, batch_first=True, bidirectional=True)
        self.fc1 = nn.Linear(8, 2)

    def forward(self, tokens):
        x = self.embedding1(tokens)
        x_seq, x_h = self.birnn1(x)
        x = x_h[0] + x_h[1]
        outputs = F.softmax(self.fc1(x), dim=-1)
        return outputs


def build_model(vocab_size=100):
    return Net(vocab_size)
