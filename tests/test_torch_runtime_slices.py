"""A weight sliced to a size the program knows only when it runs (issue 19: minGPT's
``EmbeddingStem``, ``self.pos_emb[:, :t, :]`` with ``b, t = idx.size()``): the IR's
``slice_like`` op (the first positions of the weight, as many as the input's axis has);
Keras: ``pos_emb[:, : keras.ops.shape(idx)[1]]``, torch: ``.narrow``."""

from __future__ import annotations

import numpy as np
import pytest

from torch_keras_harness import load_source, randomize_torch  # (imports torch first)
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

STEM = '''import torch
import torch.nn as nn


class EmbeddingStem(nn.Module):
    def __init__(self, vocab_size, n_embd, block_size=32):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, block_size, n_embd))
        self.drop = nn.Dropout(0.1)

    def forward(self, idx):
        b, t = idx.size()
        token_embeddings = self.tok_emb(idx)
        position_embeddings = self.pos_emb[:, :t, :]
        return self.drop(token_embeddings + position_embeddings)
'''


def test_a_weight_sliced_to_the_inputs_length_equals_torch_at_any_length():
    import keras
    import torch

    tr = translate(STEM, "stem.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "keras.ops.shape(idx)[1]" in tr.text
    md = tr.program.models[0]
    model = load_source(STEM).EmbeddingStem(17, 6)
    randomize_torch(model)
    model.eval()
    kmodel = load_source(tr.text, "keras_model_under_test").EmbeddingStem(17, 6)
    rng = np.random.RandomState(0)
    xs = [rng.randint(0, 17, size=(2, n)).astype("int64") for n in (5, 11)]
    kmodel(xs[0])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    for x in xs:  # (the same Keras model at two lengths: nothing fixed to the first)
        with torch.no_grad():
            y_t = model(torch.from_numpy(x)).numpy()
        y_k = keras.ops.convert_to_numpy(kmodel(x, training=False))
        assert y_t.shape == y_k.shape == (2, x.shape[1], 6)
        assert float(np.max(np.abs(y_t - y_k))) <= 1e-5


@pytest.mark.parametrize("index", ["self.pos_emb[:, 1:t, :]", "self.pos_emb[:, :t + 1, :]"])
def test_other_run_time_slices_stay_stubs(index):
    """Only a slice from the start to the run-time size is read; another bound is a stub
    naming the indexing (never a slice of the traced length)."""
    tr = translate(STEM.replace("self.pos_emb[:, :t, :]", index), "stem.py", "keras")
    assert any(d.message.startswith("EmbeddingStem:") for d in tr.stubs), [str(d) for d in tr.stubs]


def test_torch_dtype_and_device_defaults_of_a_constructor_are_written_for_keras():
    """``def __init__(self, vocab_size, n_embd, device="cpu", dtype=torch.float32)`` (minGPT's
    blocks): the Keras class's signature and its default-arguments guard name the dtype as a
    string, never ``torch.float32`` (a NameError when the translated module is imported)."""
    src = STEM.replace("def __init__(self, vocab_size, n_embd, block_size=32):",
                       'def __init__(self, vocab_size, n_embd, block_size=32, device="cpu", dtype=torch.float32):')
    tr = translate(src, "stem.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "torch." not in tr.text.split("class EmbeddingStem")[1]
    assert 'dtype="float32"' in tr.text
    mod = load_source(tr.text, "keras_model_under_test")
    mod.EmbeddingStem(5, 4)(np.zeros((1, 3), "int64"))
