# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:10).

    Input ``inputs``: (N, 10, 6) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTM(6, 12, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm1.bias_hh_l0.requires_grad_(False)
        self.lstm2 = nn.LSTM(12, 8, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm2.bias_hh_l0.requires_grad_(False)
        self.fc1 = nn.Linear(20, 1)

    def forward(self, inputs):
        sequence, (state_h, state_c) = self.lstm1(inputs)
        state_h = state_h[0]
        state_c = state_c[0]
        last_seq, (_, _) = self.lstm2(sequence)
        last = last_seq[:, -1]
        last = torch.cat([last, state_h], dim=1)
        outputs = self.fc1(last)
        return outputs


def build_model():
    return Net()
