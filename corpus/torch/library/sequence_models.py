"""Sequence models whose sequence length nothing in the file fixes: a token tagger
(Embedding -> batch-first LSTM -> a Linear on every step) and a 1-D conv encoder over
feature sequences, defined in a library file without data."""

import torch
import torch.nn as nn


class Tagger(nn.Module):
    """(N, L) token ids -> (N, L, 5) tag logits, any L."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 12)
        self.lstm = nn.LSTM(12, 16, batch_first=True)
        self.head = nn.Linear(16, 5)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.head(h)


class FeatureEncoder(nn.Module):
    """(N, 4, L) feature sequences -> (N, 8) by a conv and a max over time."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=3, padding=1)
        self.act = nn.GELU()

    def forward(self, x):
        h = self.act(self.conv(x))
        return h.max(dim=2).values
