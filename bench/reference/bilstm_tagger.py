import torch
from torch import nn


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab_size=300, num_tags=5, hidden=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, 32)
        self.lstm = nn.LSTM(32, hidden, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden // 2, batch_first=True, bidirectional=True)
        self.norm = nn.LayerNorm(hidden // 2, eps=1e-5)
        self.dropout = nn.Dropout(0.1)
        self.fc = nn.Linear(hidden // 2, num_tags)

    def forward(self, words):
        x, _ = self.lstm(self.embedding(words))
        x, _ = self.gru(x)
        forward, backward = x.chunk(2, dim=-1)  # merge_mode="sum"
        x = self.dropout(self.norm(forward + backward))
        return torch.softmax(self.fc(x), dim=-1)


def build_model():
    return BiLSTMTagger()
