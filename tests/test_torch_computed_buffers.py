"""Constants a torch module computes in ``__init__`` and registers as buffers (issue 19 item b:
word_language_model's PositionalEncoding, minGPT's causal mask): the reader follows the
computation as a numpy expression (frontend_ast/torch/const_arrays.py) and the Keras model
holds a non-trainable weight initialised with it. The checks: the Keras weight equals the
torch buffer as made (not copied from torch), and the whole model equals torch on the same
trainable weights."""

from __future__ import annotations

import os
import re

import numpy as np

from torch_keras_harness import load_source, randomize_torch  # (imports torch first)
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "corpus", "torch", "library", "positional_models.py")


def _source() -> str:
    with open(PATH) as fh:
        return fh.read()


def test_positional_table_and_causal_mask_are_computed_like_torchs():
    """The buffers as the Keras model makes them (its own initializer) equal torch's."""
    import keras

    src = _source()
    tr = translate(src, PATH, "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "np.sin(" in tr.text and "slice(0, None, 2)" in tr.text and "trainable=False" in tr.text
    model = load_source(src).build_model()
    kmodel = load_source(tr.text, "keras_model_under_test").build_model()
    got_pe = keras.ops.convert_to_numpy(kmodel.get_layer("pos_pe").weights[0])
    got_mask = keras.ops.convert_to_numpy(kmodel.get_layer("causal").weights[0])
    assert got_pe.shape == tuple(model.pos.pe.shape)  # (its dtype is keras.config.floatx())
    np.testing.assert_allclose(got_pe, model.pos.pe.numpy(), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got_mask, model.causal.numpy())
    assert not kmodel.get_layer("pos_pe").trainable_weights  # (a buffer: not trained)


def test_model_over_computed_buffers_equals_torch():
    import keras
    import torch

    src = _source()
    tr = translate(src, PATH, "keras")
    md = tr.program.models[0]
    model = load_source(src).build_model()
    randomize_torch(model)  # (parameters only: the buffers stay as computed)
    model.eval()
    kmodel = load_source(tr.text, "keras_model_under_test").build_model()
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    buffers = {name for name, _ in model.named_buffers()}
    for name, arrays in keras_weights(md.graph, state).items():
        if name.replace("_", ".") in buffers or name in buffers:
            continue  # (the Keras model's own computed value is what is checked)
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    x = np.random.RandomState(0).randint(0, 29, size=(3, 12)).astype("int64")
    with torch.no_grad():
        y_t = model(torch.from_numpy(x)).numpy()
    y_k = keras.ops.convert_to_numpy(kmodel(x, training=False))
    assert float(np.max(np.abs(y_t - y_k))) <= 1e-4


LIBRARY_PE = '''import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=50):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.proj(x + self.pe[:, :7])
'''


def test_computed_buffer_sizes_stay_the_constructors_names():
    """Built for the constructor's ``d_model`` (a library class): the numpy code reads
    ``d_model``, so another size gives torch's table for it."""
    import keras
    import torch

    tr = translate(LIBRARY_PE, "pe.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert re.search(r"np\.arange\(\s*0,\s*d_model,\s*2", tr.text), tr.text
    assert re.search(r"np\.zeros\(\s*\(max_len, d_model\)", tr.text), tr.text
    kmod = load_source(tr.text, "keras_model_under_test")
    kmodel = kmod.PositionalEncoding(12)
    kmodel(np.zeros((1, 7, 12), "float32"))
    pe = keras.ops.convert_to_numpy(next(w for w in kmodel.weights if w.shape == (1, 50, 12)))
    np.testing.assert_allclose(pe, load_source(LIBRARY_PE).PositionalEncoding(12).pe.numpy(), atol=1e-6)


def test_an_operation_on_a_constant_that_is_not_followed_is_a_stub():
    """``torch.cumsum`` on a constant of __init__ is not followed: the class is a stub naming it
    (never a buffer of zeros)."""
    src = LIBRARY_PE.replace('self.register_buffer("pe", pe.unsqueeze(0))',
                             'self.register_buffer("pe", torch.cumsum(pe, 0).unsqueeze(0))')
    tr = translate(src, "pe.py", "keras")
    assert any(d.message.startswith("PositionalEncoding:") for d in tr.stubs), [str(d) for d in tr.stubs]


def test_a_negated_constant_of_init_is_followed():
    """``torch.exp(- torch.arange(0, d, 2) * math.log(10000) / d)`` (language_translation's
    PositionalEncoding): a unary minus on a constant of __init__ is part of its numpy
    expression (it was a stub: "bad operand type for unary -"), and the table equals torch's."""
    import keras

    src = LIBRARY_PE.replace(
        "torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))",
        "torch.exp(- torch.arange(0, d_model, 2) * math.log(10000) / d_model)")
    assert "- torch.arange" in src
    tr = translate(src, "pe.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert re.search(r"-np\.arange\(\s*0,\s*d_model,\s*2", tr.text), tr.text
    kmodel = load_source(tr.text, "keras_model_under_test").PositionalEncoding(10)
    kmodel(np.zeros((1, 7, 10), "float32"))
    pe = keras.ops.convert_to_numpy(next(w for w in kmodel.weights if w.shape == (1, 50, 10)))
    np.testing.assert_allclose(pe, load_source(src).PositionalEncoding(10).pe.numpy(), atol=1e-5)
