"""Keras recurrent layers torch has no module for, for generated PyTorch programs.

``ActivationLSTM``: Keras' ``LSTM(activation=...)`` with an activation other than tanh
(keras.io's timeseries_traffic_forecasting uses ``activation="relu"``). torch's nn.LSTM
applies tanh to the candidate and to the cell state's output; Keras applies ``activation``
to both (``recurrent_activation``, sigmoid, to the gates). This subclass keeps nn.LSTM's
parameters (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, gates in the
order i, f, g, o, the order of Keras' i, f, c, o) and its call signature and results, and
steps through the sequence in Python with Keras' arithmetic.
"""

import torch
from torch import nn


class ActivationLSTM(nn.LSTM):
    """nn.LSTM (one layer, one direction) whose candidate and output use ``activation``."""

    def __init__(self, input_size, hidden_size, activation, batch_first=True, bias=True):
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
        out = torch.stack(outputs, dim=1) if outputs else x.new_zeros(x.shape[0], 0, self.hidden_size)
        if not self.batch_first:
            out = out.transpose(0, 1)
        return out, (h.unsqueeze(0), c.unsqueeze(0))
