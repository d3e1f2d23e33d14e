import torch
import torch.nn.functional as F
from torch import nn


class TextCNN(nn.Module):
    def __init__(self, vocab_size=1000, embed_dim=32, num_filters=24, kernel_sizes=(3, 4, 5), num_classes=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.dropout_in = nn.Dropout(0.1)
        self.convs = nn.ModuleList(nn.Conv1d(embed_dim, num_filters, k) for k in kernel_sizes)
        self.fc1 = nn.Linear(num_filters * len(kernel_sizes), 64)
        self.dropout = nn.Dropout(0.3)
        self.fc2 = nn.Linear(64, num_classes)

    def forward(self, tokens):
        x = self.dropout_in(self.embedding(tokens)).transpose(1, 2)  # (N, C, L) for Conv1d
        x = torch.cat([F.relu(conv(x)).amax(dim=2) for conv in self.convs], dim=1)
        x = self.dropout(F.relu(self.fc1(x)))
        return torch.softmax(self.fc2(x), dim=1)


def build_model():
    return TextCNN()
