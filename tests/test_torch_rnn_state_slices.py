"""The final states of a bidirectional nn.LSTM read as torch programs write them:
``h_n[-2:]`` (the last layer's two directions), put batch first with ``.transpose(0, 1)``
and flattened with ``.view(batch, -1)``, where ``batch`` is ``inputs.size(1)`` of the
time-major (L, N, F) sequence the LSTM read (legacy SNLI's encoder). Before: stubs "'h_n[-2:]':
index the stacked RNN states with one integer" and ".view(...): the first size must be the
batch". Numeric: equal to torch on the same weights; the generated program runs."""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (torch before Keras in one process)

import numpy as np

from torch_keras_harness import load_source, randomize_torch
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

ENCODER = '''import torch
import torch.nn as nn

INPUT_SHAPE = (None, 6)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=6, hidden_size=4, num_layers=LAYERS, bidirectional=True)
        self.out = nn.Linear(8, 3)

    def forward(self, inputs):
        batch_size = inputs.size()[1]
        h0 = c0 = inputs.new_zeros((2 * LAYERS, batch_size, 4))
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        last = ht[-2:].TRANSPOSE.contiguous().view(batch_size, -1)
        return self.out(last)


def build_model():
    return Encoder()
'''


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("transpose", ["transpose(0, 1)", "permute(1, 0, 2)"])
def test_last_layer_states_of_a_bidirectional_lstm(layers, transpose):
    src = ENCODER.replace("LAYERS", str(layers)).replace("TRANSPOSE", transpose)
    tr = translate(src, "model.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if m.builder == "build_model")
    model = load_source(src).build_model()
    randomize_torch(model)
    model.eval()
    kmodel = load_source(tr.text, "keras_model_under_test").build_model()
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    # time-major (L, N, F) in both programs, a length and a batch the file does not fix
    for length, batch in ((7, 5), (3, 2)):
        x = np.random.RandomState(length).randn(length, batch, 6).astype("float32")
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        got = np.asarray(kmodel(x, training=False))
        assert got.shape == want.shape == (batch, 3)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_slice_of_states_not_put_batch_first_stays_refused():
    src = ENCODER.replace("LAYERS", "1").replace("TRANSPOSE", "sum(0)")
    tr = translate(src, "model.py", "keras")
    assert any("stacked RNN states .sum()" in str(d) for d in tr.stubs), [str(d) for d in tr.stubs]
