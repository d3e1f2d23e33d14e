"""A module constructor that fills in its configuration object through a method of its own
(``config = self._set_model_config(config)``, minGPT's GPT), reports its parameter count
(``print("... %.2fM" % (sum(p.numel() for p in self.parameters()) / 1e6,))``) and returns
its loss from forward only when given targets (issue 19). The class is traced for the config
as an object of sizes (ir/fields.py); the print is reported, not dropped silently; the
translated Keras class equals the torch module on the same weights."""

from __future__ import annotations

import sys
import types

import numpy as np

from torch_keras_harness import randomize_torch  # (imports torch first)
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

SRC = '''from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class NetConfig:
    kind: str = "small"
    width: int = None
    vocab: int = 11


class Net(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        config = self._fill(config)
        self.emb = nn.Embedding(config.vocab, config.width)
        self.norm = nn.LayerNorm(config.width)
        self.head = nn.Linear(config.width, config.vocab)
        n_params = sum(p.numel() for p in self.parameters())
        print("number of parameters: %.2fM" % (n_params / 1e6,))

    def _fill(self, config):
        if config.width is None:
            config.width = {"small": 8, "large": 32}[config.kind]
        return config

    def forward(self, idx):
        return self.head(torch.relu(self.norm(self.emb(idx))))
'''

WITH_LOSS = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class LM(nn.Module):
    def __init__(self, vocab=13, width=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx, targets=None):
        logits = self.head(self.emb(idx))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss
'''


def _load(src: str, name: str):
    module = types.ModuleType(name)
    sys.modules[name] = module  # (a dataclass needs its module registered)
    try:
        exec(compile(src, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def test_config_filled_by_a_method_of_the_module_is_translated_and_equals_torch():
    import keras
    import torch

    tr = translate(SRC, "net.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "def __init__(self, config: NetConfig" in tr.text
    md = next(m for m in tr.program.models if m.class_name == "Net")
    tmod, kmod = _load(SRC, "torch_rebinding_under_test"), _load(tr.text, "keras_rebinding_under_test")
    # (a config other than the default: width given, so _fill leaves it; vocab differs)
    model = tmod.Net(tmod.NetConfig(width=6, vocab=9))
    randomize_torch(model)
    model.eval()
    kmodel = kmod.Net(kmod.NetConfig(width=6, vocab=9))
    x = np.random.RandomState(0).randint(0, 9, size=(2, 5)).astype("int64")
    kmodel(x)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    with torch.no_grad():
        y_t = model(torch.from_numpy(x)).numpy()
    y_k = keras.ops.convert_to_numpy(kmodel(x, training=False))
    assert y_t.shape == y_k.shape == (2, 5, 9)
    assert float(np.max(np.abs(y_t - y_k))) <= 1e-4


def test_the_print_of_a_constructor_is_reported():
    tr = translate(SRC, "net.py", "keras")
    messages = [d.message for d in tr.diagnostics]
    assert any("print(...) in a module's code is not translated" in m for m in messages), messages
    assert "number of parameters" not in tr.text.split("class Net")[1]


def test_forward_returning_none_without_targets_is_a_stub_naming_the_output():
    """``return logits, loss`` with ``loss = None`` unless targets are given: a Keras model's
    outputs are tensors, so the class is a stub that says which output and for which
    argument (never a model silently missing its loss)."""
    tr = translate(WITH_LOSS, "lm.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any("output 2 is None" in m and "targets=None" in m for m in messages), messages


SIZED_WITH_LOSS = WITH_LOSS.replace("def __init__(self, vocab=13, width=8):", "def __init__(self, vocab, width):")


def test_a_class_built_for_its_sizes_returns_the_none_of_its_default_call():
    """The same module with required sizes (a library class, printed for its constructor's
    sizes): the Keras class returns ``[logits, None]`` as torch's ``(logits, None)``, with a
    warning that the targets call is not translated; logits equal torch's on the same weights."""
    import keras
    import torch

    tr = translate(SIZED_WITH_LOSS, "lm.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    messages = [d.message for d in tr.diagnostics]
    assert any("forward returns None as output 2 for targets" in m for m in messages), messages
    md = next(m for m in tr.program.models if m.class_name == "LM")
    tmod, kmod = _load(SIZED_WITH_LOSS, "torch_lm_under_test"), _load(tr.text, "keras_lm_under_test")
    model = tmod.LM(9, 6)
    randomize_torch(model)
    model.eval()
    kmodel = kmod.LM(9, 6)
    x = np.random.RandomState(0).randint(0, 9, size=(2, 5)).astype("int64")
    kmodel(x)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    with torch.no_grad():
        logits_t, loss_t = model(torch.from_numpy(x))
    logits_k, loss_k = kmodel(x, training=False)
    assert loss_t is None and loss_k is None
    assert float(np.max(np.abs(logits_t.numpy() - keras.ops.convert_to_numpy(logits_k)))) <= 1e-4
