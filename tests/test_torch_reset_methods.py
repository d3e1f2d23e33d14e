"""A module method that only re-initialises layers it holds (``self.proj.reset_parameters()``,
minGPT's ``EmbeddingStem.reset_parameters``; issue 19): a function over the Keras model drawing
those layers' weights again from their initializers, run on the generated module; a method doing
anything else stays a stub (frontend_ast/torch/reset_methods.py, printers/keras/reset_methods.py)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from transpiler.translate import translate

SRC = '''import torch
from torch import nn


class Stem(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.norm = nn.LayerNorm(d)
        self.proj = nn.Linear(d, d)

    def reset_parameters(self):
        """Draw the weights again."""
        self.emb.reset_parameters()
        self.norm.reset_parameters()
        self.proj.reset_parameters()

    def forward(self, idx):
        return self.proj(self.norm(self.emb(idx)))


class Net(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.stem = Stem(vocab, d)
        self.head = nn.Linear(d, 2)

    def forward(self, idx):
        return self.head(self.stem(idx))
'''

#: the method does something else too: a stub
OTHER = SRC.replace("        self.proj.reset_parameters()\n", "        self.proj.reset_parameters()\n        print('reset')\n")

#: the class held twice in the model: which one the method means is not one layer; a stub
TWICE = SRC.replace("        self.head = nn.Linear(d, 2)\n",
                    "        self.head = nn.Linear(d, 2)\n        self.stem2 = Stem(vocab, d)\n").replace(
    "return self.head(self.stem(idx))", "return self.head(self.stem(idx) + self.stem2(idx))")


def _load(text: str, name: str):
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def translated():
    return translate(SRC, "stem.py", "keras")


def test_reset_method_is_a_function_over_the_keras_model(translated):
    tr = translated
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "def stem_reset_parameters(model):" in tr.text and "def net_reset_parameters(model):" in tr.text
    assert "layer = model.stem.emb\n" in tr.text and "layer = model.emb\n" in tr.text
    assert "layer.embeddings_initializer(layer.embeddings.shape, layer.embeddings.dtype)" in tr.text


@pytest.mark.parametrize("cls,function", [("Stem", "stem_reset_parameters"), ("Net", "net_reset_parameters")])
def test_reset_function_draws_the_weights_again(translated, cls, function):
    import keras

    mod = _load(translated.text, f"reset_{cls}")
    model = getattr(mod, cls)(11, 6)
    idx = np.array([[1, 2, 3], [4, 5, 6]], "int64")
    model(idx)
    before = [np.array(w) for w in model.get_weights()]
    for w in model.weights:
        w.assign(np.full(w.shape, 7.0, "float32"))
    getattr(mod, function)(model)
    after = [np.array(w) for w in model.get_weights()]
    assert len(after) == len(before) == (7 if cls == "Net" else 5)
    redrawn = [a for a in after if not np.all(a == 7.0)]
    assert len(redrawn) == 5  # (the stem's embedding, norm gamma and beta, proj kernel and bias; not head's)
    stem = model.stem if cls == "Net" else model  # (Net holds the Stem block: model.stem.norm)
    norm = stem.norm
    assert np.all(keras.ops.convert_to_numpy(norm.gamma) == 1.0) and np.all(keras.ops.convert_to_numpy(norm.beta) == 0.0)
    emb = stem.emb
    drawn = keras.ops.convert_to_numpy(emb.embeddings)
    assert drawn.shape == (11, 6) and np.std(drawn) > 0 and np.all(np.abs(drawn) < 7.0)


@pytest.mark.parametrize("src", [OTHER, TWICE], ids=["does_more", "class_held_twice"])
def test_other_methods_stay_stubs(src):
    tr = translate(src, "stem.py", "keras")
    assert any("reset_parameters is not part of the Keras model" in d.message for d in tr.stubs), \
        [d.message for d in tr.stubs]
