# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""An LSTM with activation="relu" (keras.io timeseries_traffic_forecasting's LSTMGC): torch's
nn.LSTM applies tanh only, so the output steps Keras' arithmetic with nn.LSTM's parameters.
"""

import math
import torch
from torch import nn


class ActivationLSTM(nn.LSTM):
    """nn.LSTM (one layer, one direction) whose candidate and output use ``activation``."""

    def __init__(
        self, input_size, hidden_size, activation, batch_first=True, bias=True
    ):
        super().__init__(input_size, hidden_size, batch_first=batch_first, bias=bias)
        self.activation = activation

    def forward(self, x, hx=None):
        if not self.batch_first:
            x = x.transpose(0, 1)
        if hx is None:
            h = x.new_zeros(x.shape[0], self.hidden_size)
            c = x.new_zeros(x.shape[0], self.hidden_size)
        else:
            h, c = hx[0][0], hx[1][0]
        bias_ih = self.bias_ih_l0 if self.bias else None
        bias_hh = self.bias_hh_l0 if self.bias else None
        inputs = nn.functional.linear(x, self.weight_ih_l0, bias_ih)
        outputs = []
        for t in range(x.shape[1]):
            gates = inputs[:, t] + nn.functional.linear(h, self.weight_hh_l0, bias_hh)
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * self.activation(g)
            h = torch.sigmoid(o) * self.activation(c)
            outputs.append(h)
        out = (
            torch.stack(outputs, dim=1)
            if outputs
            else x.new_zeros(x.shape[0], 0, self.hidden_size)
        )
        if not self.batch_first:
            out = out.transpose(0, 1)
        return out, (h.unsqueeze(0), c.unsqueeze(0))


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:11).

    Input ``inputs``: (N, 12, 4) float32.
    Returns: (N, 12).
    """

    def __init__(self, steps=12, features=4):
        super().__init__()
        self.lstm1 = ActivationLSTM(features, 32, torch.relu, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm1.bias_hh_l0.requires_grad_(False)
        self.fc1 = nn.Linear(32, steps)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.lstm1.weight_ih_l0)
        nn.init.orthogonal_(self.lstm1.weight_hh_l0)
        nn.init.zeros_(self.lstm1.bias_ih_l0)
        nn.init.zeros_(self.lstm1.bias_hh_l0)
        nn.init.ones_(self.lstm1.bias_ih_l0[32:64])  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, inputs):
        x_seq, (_, _) = self.lstm1(inputs)
        x = x_seq[:, -1]
        outputs = self.fc1(x)
        return outputs


def build_model(steps=12, features=4):
    return Net(steps, features)
