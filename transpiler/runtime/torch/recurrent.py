"""Keras recurrent layers torch has no module for, for generated PyTorch programs (``ActivationLSTM``,
``ConvLSTM2D``).

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


def _same_pads(size, kernel, stride, dilation):
    """TensorFlow's 'same' padding of one axis: (before, after), the odd one after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class ConvLSTM2D(nn.Module):
    """Keras' ConvLSTM2D: an LSTM whose gates are 2-D convolutions, over a sequence of feature
    maps held channels-first like nn.Conv3d's input, x (N, C, T, H, W) (time where Conv3d has
    depth). Returns (N, filters, T, H', W') with ``return_sequences``, else the last step's
    (N, filters, H', W'). Parameters: ``weight_ih`` (4 filters, C, kh, kw) for the input
    convolution (``stride``, ``padding`` 'valid' or 'same' as TensorFlow pads, ``dilation``),
    ``weight_hh`` (4 filters, filters, kh, kw) for the recurrent one (stride 1, 'same'),
    ``bias`` (4 filters); gates in Keras' order i, f, c, o. ``go_backwards`` runs over the
    reversed sequence and returns the outputs in that order, as Keras does."""

    def __init__(self, in_channels, filters, kernel_size, stride=1, padding="valid", dilation=1, bias=True,
                 activation=torch.tanh, return_sequences=False, go_backwards=False):
        super().__init__()
        pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
        self.filters, self.kernel_size = filters, pair(kernel_size)
        self.stride, self.dilation, self.padding = pair(stride), pair(dilation), padding
        self.activation, self.return_sequences, self.go_backwards = activation, return_sequences, go_backwards
        self.weight_ih = nn.Parameter(torch.empty(4 * filters, in_channels, *self.kernel_size))
        self.weight_hh = nn.Parameter(torch.empty(4 * filters, filters, *self.kernel_size))
        self.bias = nn.Parameter(torch.zeros(4 * filters)) if bias else None
        nn.init.xavier_uniform_(self.weight_ih)
        nn.init.orthogonal_(self.weight_hh)

    def _pad(self, x, stride, dilation):
        (kh, kw), (h, w) = self.kernel_size, x.shape[-2:]
        top, bottom = _same_pads(h, kh, stride[0], dilation[0])
        left, right = _same_pads(w, kw, stride[1], dilation[1])
        return nn.functional.pad(x, (left, right, top, bottom))

    def forward(self, x):
        n, c, t, h, w = x.shape
        steps = x.transpose(1, 2).reshape(n * t, c, h, w)
        if self.padding == "same":
            steps = self._pad(steps, self.stride, self.dilation)
        gates_x = nn.functional.conv2d(steps, self.weight_ih, self.bias, self.stride, 0, self.dilation)
        gates_x = gates_x.reshape(n, t, *gates_x.shape[1:])
        state_h = x.new_zeros(n, self.filters, *gates_x.shape[-2:])
        state_c = state_h
        outputs = []
        for i in (reversed(range(t)) if self.go_backwards else range(t)):
            recurrent = nn.functional.conv2d(self._pad(state_h, (1, 1), (1, 1)), self.weight_hh)
            gi, gf, gc, go = (gates_x[:, i] + recurrent).chunk(4, dim=1)
            state_c = torch.sigmoid(gf) * state_c + torch.sigmoid(gi) * self.activation(gc)
            state_h = torch.sigmoid(go) * self.activation(state_c)
            outputs.append(state_h)
        if self.return_sequences:
            return torch.stack(outputs, dim=2)
        return state_h
