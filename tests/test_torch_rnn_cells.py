"""``nn.LSTMCell`` / ``nn.GRUCell`` / ``nn.RNNCell`` stepped by the program's own loop
(time_sequence_prediction's ``Sequence``; seq2seq decoders): each call is the recurrent
layer over a one-step sequence from the given states (graph_build ``_apply_cell``), one Keras
layer shared by every step, the cell's torch keys (``weight_ih``, ``bias_hh``) mapped onto
it. Before: a stub "nn.LSTMCell is not supported yet". Numeric: equal to torch on the same
weights (≤ 1e-5), the states carried across steps."""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (torch before Keras in one process)

from torch_keras_harness import check_torch_source
from transpiler.translate import translate

TWO_CELLS = '''import torch
import torch.nn as nn

INPUT_SHAPE = (6, 3)


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(3, 8)
        self.lstm2 = nn.LSTMCell(8, 8)
        self.linear = nn.Linear(8, 2)

    def forward(self, input):
        outputs = []
        h_t = torch.zeros(input.size(0), 8)
        c_t = torch.zeros(input.size(0), 8)
        h_t2 = torch.zeros(input.size(0), 8)
        c_t2 = torch.zeros(input.size(0), 8)
        for i in range(6):
            h_t, c_t = self.lstm1(input[:, i], (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            outputs += [self.linear(h_t2)]
        return torch.stack(outputs, dim=1)


def build_model():
    return Seq()
'''

ONE_CELL = '''import torch
import torch.nn as nn

INPUT_SHAPE = (4, 5)


class Steps(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.CELL(5, 7BIAS)
        self.head = nn.Linear(7, 3)

    def forward(self, x):
        h = self.cell(x[:, 0])
        for t in range(1, 4):
            h = self.cell(x[:, t], h)
        return self.head(h)


def build_model():
    return Steps()
'''


def test_two_stacked_lstm_cells_stepped_by_a_loop_equal_torch():
    err, n_t, n_k, tr = check_torch_source(TWO_CELLS)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5 and n_t == n_k + 2 * 4 * 8, (err, n_t, n_k)  # (bias_hh of each cell folds into its bias)
    assert tr.text.count("layers.LSTM(") == 2 and "initial_state=[" in tr.text


@pytest.mark.parametrize("cell,bias", [("GRUCell", ""), ("RNNCell", ""), ("GRUCell", ", bias=False"),
                                       ("LSTMCell", ", bias=False")])
def test_a_cell_without_a_state_then_with_its_own_equals_torch(cell, bias):
    src = ONE_CELL.replace("CELL", cell).replace("BIAS", bias)
    if cell == "LSTMCell":  # (its state is the pair)
        src = src.replace("h = self.cell(x[:, 0])", "h, c = self.cell(x[:, 0])")
        src = src.replace("h = self.cell(x[:, t], h)", "h, c = self.cell(x[:, t], (h, c))")
    err, n_t, n_k, tr = check_torch_source(src)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err


def test_a_cell_called_on_a_sequence_is_refused():
    src = ONE_CELL.replace("CELL", "GRUCell").replace("BIAS", "").replace("h = self.cell(x[:, 0])", "h = self.cell(x)")
    tr = translate(src, "model.py", "keras")
    assert any("GRUCell: the input must be one (N, input_size) tensor" in d.message for d in tr.stubs), \
        [str(d) for d in tr.stubs]


def test_cells_stepped_over_an_input_of_unknown_length_are_refused_not_traced_for_a_guess():
    """time_sequence_prediction's ``Sequence`` loops over ``input.split(1, dim=1)``; its file
    never fixes the length (the data comes from torch.load). Traced for the first cell's
    (N, 1) it would silently be a one-step model: it is a stub naming the loop instead."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "torch" / "time_sequence_prediction" / "train.py"
    if not path.exists():
        pytest.skip("the real-world set is not checked out here")
    tr = translate(path.read_text(), str(path), "keras")
    messages = [d.message for d in tr.stubs if d.message.startswith("Sequence:")]
    assert messages and "LSTMCell step through the input in forward's own loop" in messages[0], \
        [str(d) for d in tr.stubs]
    assert "class Sequence(keras.Model)" not in tr.text
