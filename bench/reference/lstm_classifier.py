import torch
from torch import nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size=500, embed_dim=24, units=(32, 32, 16)):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        sizes = (embed_dim,) + tuple(units)
        self.lstms = nn.ModuleList(nn.LSTM(a, b, batch_first=True) for a, b in zip(sizes, sizes[1:]))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(units[-1], 1)

    def forward(self, tokens):
        x = self.embedding(tokens)
        for lstm in self.lstms:
            x, (h, _) = lstm(x)
        return torch.sigmoid(self.fc(self.dropout(h[-1])))


def build_model():
    return LSTMClassifier()
