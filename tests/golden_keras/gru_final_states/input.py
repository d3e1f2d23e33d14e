import torch
import torch.nn as nn

INPUT_SHAPE = (20, 4)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        _, h_n = self.gru(x)
        # the last layer's forward and backward states
        return self.head(torch.cat([h_n[-2], h_n[-1]], dim=1))


def build_model():
    return Regressor()
