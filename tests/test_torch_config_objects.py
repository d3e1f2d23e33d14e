"""Modules sized by a configuration object (issue 19: minGPT's ``GPT(config)`` reading
``config.n_embd``, legacy/snli's argparse ``config``): the class is translated for the
object, each attribute it reads a size named ``config.<attr>`` (ir/fields.py); the Keras
class takes the same config and reads the same attributes. Numeric checks: the Keras model
equals the torch module on the same weights for a config other than the one traced."""

from __future__ import annotations

import os
import re
import types

import numpy as np
import pytest

from torch_keras_harness import randomize_torch  # (imports torch first)
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "corpus", "torch", "library", "config_models.py")


def _source() -> str:
    with open(PATH) as fh:
        return fh.read()


def _load(src: str, name: str):
    """The module of ``src``, registered in sys.modules while it runs (a dataclass needs it)."""
    import sys

    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(src, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def _compare(src, tr, cls: str, make_config, x: np.ndarray) -> float:
    """Max |torch - Keras| of ``cls(config)`` on ``x`` (the same weights; ``make_config(module)``
    makes the config from the loaded module, the same object for both sides)."""
    import keras
    import torch

    md = next(m for m in tr.program.models if m.class_name == cls)
    tmod = _load(src, "torch_config_model_under_test")
    kmod = _load(tr.text, "keras_config_model_under_test")
    model = getattr(tmod, cls)(make_config(tmod))
    randomize_torch(model)
    model.eval()
    kmodel = getattr(kmod, cls)(make_config(kmod))
    kmodel(x)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    with torch.no_grad():
        y_t = model(torch.from_numpy(x)).numpy()
    y_k = keras.ops.convert_to_numpy(kmodel(x, training=False))
    assert y_t.shape == y_k.shape, (y_t.shape, y_k.shape)
    return float(np.max(np.abs(y_t - y_k)))


def test_dataclass_config_model_equals_torch_for_the_callers_config():
    src = _source()
    tr = translate(src, PATH, "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    # the sizes stay expressions of the config's attributes, the blocks get the config whole
    assert re.search(r"layers\.Dense\(\s*config\.expansion \* config\.n_embd,", tr.text)
    assert "def __init__(self, config: TinyGPTConfig, **kwargs):" in tr.text
    x = np.random.RandomState(0).randint(0, 13, size=(2, 7)).astype("int64")
    # (a config other than the default one: n_embd was never given, vocab_size and expansion differ)
    err = _compare(src, tr, "TinyLM", lambda m: m.TinyGPTConfig(vocab_size=13, n_embd=12, expansion=3), x)
    assert err <= 1e-4, err


def test_namespace_config_model_equals_torch():
    src = _source()
    tr = translate(src, PATH, "keras")
    x = np.random.RandomState(1).randn(3, 5).astype("float32")
    err = _compare(src, tr, "NamespaceEncoder",
                   lambda m: types.SimpleNamespace(d_in=5, d_hidden=9, n_out=4), x)
    assert err <= 1e-4, err


def test_a_config_default_the_translation_took_as_it_is_is_guarded():
    """``nn.Dropout(config.resid_pdrop)``: the rate is printed as the default's number, so
    a config with another rate is refused when the Keras class is made, never silently
    built with the default."""
    src = _source()
    tr = translate(src, PATH, "keras")
    mod = _load(tr.text, "keras_config_model_under_test")
    mod.MLPBlock(mod.TinyGPTConfig(n_embd=8))  # (the default rate: built)
    with pytest.raises(NotImplementedError, match="resid_pdrop=0.1"):
        mod.MLPBlock(mod.TinyGPTConfig(n_embd=8, resid_pdrop=0.3))


LOOPED = '''import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(config.width, config.width) for _ in range(config.depth)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
'''


def test_a_config_size_used_as_a_loop_count_is_a_stub_naming_it():
    """``range(config.depth)`` decides the structure: the traced placeholder's number would be
    printed, so the class is a stub saying which attribute (never a model of 163 layers)."""
    tr = translate(LOOPED, "stack.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any(m.startswith("Stack:") and "config.depth" in m for m in messages), messages
    assert "raise NotImplementedError" in tr.text


def test_a_parameter_used_as_a_number_is_not_taken_for_a_config():
    """A required parameter the constructor uses as a size is not a config object, even when
    it also reads an attribute of something else with that prefix (``nn.Linear(width, ...)``)."""
    src = '''import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 2 * width)

    def forward(self, x):
        return self.fc(x)
'''
    tr = translate(src, "net.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert re.search(r"layers\.Dense\(\s*2 \* width\b", tr.text) or re.search(r"layers\.Dense\(\s*width \* 2\b", tr.text)


SCRIPT = '''import argparse

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.inp = nn.Linear(config.d_in, config.d_hidden)
        self.out = nn.Linear(config.d_hidden, 3)

    def forward(self, x):
        return self.out(torch.relu(self.inp(x)))


parser = argparse.ArgumentParser()
parser.add_argument("--d_in", type=int, default=6)
parser.add_argument("--d_hidden", type=int, default=10)
config = parser.parse_args([])
model = Encoder(config)
y = model(torch.randn(4, config.d_in))
'''


def test_a_script_building_a_model_from_its_argparse_config_keeps_the_config():
    """``model = Encoder(parser.parse_args())``: a run-time config object (lazy_inputs.call_sizes);
    the Keras class reads the same attributes, and the translated script runs."""
    tr = translate(SCRIPT, "train.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert re.search(r"layers\.Dense\(\s*config\.d_hidden,", tr.text)
    x = np.random.RandomState(2).randn(4, 7).astype("float32")
    err = _compare(SCRIPT, tr, "Encoder", lambda m: types.SimpleNamespace(d_in=7, d_hidden=5), x)
    assert err <= 1e-4, err


ATTENTION_BLOCK = '''import torch
import torch.nn as nn


class AttentionBlock(nn.Module):
    """minGPT-ddp's MultiheadAttentionLayer / Block without the mask: sizes from a config."""

    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        self.ln = nn.LayerNorm(config.n_embd)
        self.attn = nn.MultiheadAttention(embed_dim=config.n_embd, num_heads=config.n_head, batch_first=True)

    def forward(self, x):
        _, seq_size, _ = x.size()
        h = self.ln(x)
        y = self.attn(h, h, h, need_weights=False)[0]
        return x + self.proj(y)
'''


def test_attention_sized_by_a_config_keeps_its_head_size_an_expression():
    """``nn.MultiheadAttention(config.n_embd, config.n_head)`` with neither given: the numbers
    the reader makes up for them need not divide (it was a stub "embed_dim 167 is not a
    multiple of num_heads 179"); key_dim prints as ``config.n_embd // config.n_head``. The
    input is the (N, L, E) sequence the attention reads, though nn.Linear is built first
    (it was (N, E): "cannot unpack into '_, seq_size, _'"). Equal to torch for two configs."""
    import keras
    import torch

    tr = translate(ATTENTION_BLOCK, "block.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert re.search(r"key_dim=config\.n_embd // config\.n_head", tr.text), tr.text
    tmod, kmod = _load(ATTENTION_BLOCK, "torch_attention_block"), _load(tr.text, "keras_attention_block")
    for e, heads in ((12, 3), (8, 4)):
        config = types.SimpleNamespace(n_embd=e, n_head=heads)
        model = tmod.AttentionBlock(config)
        randomize_torch(model)
        model.eval()
        kmodel = kmod.AttentionBlock(config)
        x = np.random.RandomState(e).randn(2, 5, e).astype("float32")
        kmodel(x)
        sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        d = e // heads
        kattn = next(layer for layer in kmodel._flatten_layers() if isinstance(layer, keras.layers.MultiHeadAttention))
        wq, wk, wv = np.split(sd["attn.in_proj_weight"], 3)
        bq, bk, bv = np.split(sd["attn.in_proj_bias"], 3)
        kattn.set_weights([wq.T.reshape(e, heads, d), bq.reshape(heads, d), wk.T.reshape(e, heads, d),
                           bk.reshape(heads, d), wv.T.reshape(e, heads, d), bv.reshape(heads, d),
                           sd["attn.out_proj.weight"].T.reshape(heads, d, e), sd["attn.out_proj.bias"]])
        kln = next(layer for layer in kmodel._flatten_layers() if isinstance(layer, keras.layers.LayerNormalization))
        kln.set_weights([sd["ln.weight"], sd["ln.bias"]])
        kproj = next(layer for layer in kmodel._flatten_layers() if isinstance(layer, keras.layers.Dense))
        kproj.set_weights([sd["proj.weight"].T, sd["proj.bias"]])
        with torch.no_grad():
            y_t = model(torch.from_numpy(x)).numpy()
        y_k = keras.ops.convert_to_numpy(kmodel(x, training=False))
        assert y_t.shape == y_k.shape == (2, 5, e)
        assert float(np.max(np.abs(y_t - y_k))) <= 1e-4
