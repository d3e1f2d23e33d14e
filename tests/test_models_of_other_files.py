"""A model whose class this file does not translate is still a model of the program: a class
imported from another file of it (``from model import RNNModel`` where main.py builds it under
a run-time condition, ``from src.model import Translator``), or a class of this file whose
translation is a marked stub. Its optimizer (``AdamW(model.parameters())``), its placement
(``.to(device)``), its mode, its training step and its weights file translate; a call of it
on values this file does not show to be arrays, or of a class with channels-last layers
(whose input layout only its own translation knows), is a marked stub saying so.

Numerics: main.py and model.py translated as a program (``transpile DIR``), both sides from
the same initial weights: the losses equal torch's within 1e-4 relative."""

from __future__ import annotations

import contextlib
import io
import sys
import types

import numpy as np
import pytest
import torch  # noqa: F401  (first: torch before tensorflow in one process)

from transpiler.cli import run
from transpiler.translate import translate

RTOL = 1e-4

MODEL = '''\
import torch
import torch.nn as nn


class TextNet(nn.Module):
    def __init__(self, ntoken, emsize):
        super().__init__()
        self.emb = nn.Embedding(ntoken, emsize)
        self.fc = nn.Linear(emsize, 3)

    def forward(self, x):
        return self.fc(self.emb(x).mean(1))
'''

CONV_MODEL = '''\
import torch.nn as nn


class TextNet(nn.Module):
    def __init__(self, ntoken, emsize):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)

    def forward(self, x):
        return self.conv(x).mean((2, 3))
'''

MAIN = '''\
import argparse
import numpy as np
import torch
import torch.nn as nn
from model import TextNet

parser = argparse.ArgumentParser()
parser.add_argument('--model', type=str, default='small')
args = parser.parse_args([])
device = torch.device("cpu")
if args.model == 'small':
    model = TextNet(100, 16).to(device)
else:
    model = TextNet(100, 32).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
rng = np.random.default_rng(0)
x = torch.from_numpy(rng.integers(0, 100, size=(64, 8)))
y = torch.from_numpy(rng.integers(0, 3, size=64))
for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print("loss", epoch, loss.item())
torch.save(model.state_dict(), "textnet.pt")
'''


def _program(tmp_path, model=MODEL, main=MAIN, folder=""):
    src = tmp_path / "prog"
    (src / folder).mkdir(parents=True)
    (src / folder / "model.py").write_text(model)
    if folder:
        main = main.replace("from model import", f"from {folder}.model import")
    (src / "main.py").write_text(main)
    return src


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


@pytest.mark.parametrize("folder", ["", "src"], ids=["sibling", "package"])
def test_a_model_of_another_file_is_trained_here(tmp_path, folder):
    src = _program(tmp_path, folder=folder)
    result = translate((src / "main.py").read_text(), str(src / "main.py"), "keras")
    assert not _stubs(result), _stubs(result)
    text = result.text
    assert f"from {folder + '.' if folder else ''}model import TextNet\n" in text
    assert "model = TextNet(100, 16)\n" in text and ".to(device)" not in text
    assert "optimizer = keras.optimizers.AdamW(" in text
    assert "loss = criterion(y, model(x, training=True))" in text
    assert 'model.save_weights("textnet.weights.h5")' in text


def test_a_model_with_channels_last_layers_is_fed_by_a_stub(tmp_path):
    src = _program(tmp_path, model=CONV_MODEL)
    result = translate((src / "main.py").read_text(), str(src / "main.py"), "keras")
    stubs = _stubs(result)
    assert len(stubs) == 1 and "channels-last layers" in stubs[0] and "model.py" in stubs[0], stubs
    assert "optimizer = keras.optimizers.AdamW(" in result.text


def test_a_model_fed_values_this_file_does_not_translate_is_a_stub(tmp_path):
    main = MAIN.replace("loss = criterion(model(x), y)", "loss = criterion(model(x, lengths), y)").replace(
        "rng = np.random", "lengths = object()\nrng = np.random")
    src = _program(tmp_path, main=main)
    stubs = _stubs(translate(main, str(src / "main.py"), "keras"))
    assert any("lengths is not data this file shows to be arrays" in s for s in stubs), stubs


def _losses(module_name: str, text: str, model_module) -> list[float]:
    saved = sys.modules.get("model")
    sys.modules["model"] = model_module
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(text, f"<{module_name}>", "exec"), {"__name__": module_name})
    finally:
        if saved is None:
            sys.modules.pop("model", None)
        else:
            sys.modules["model"] = saved
    return [float(line.split()[-1]) for line in out.getvalue().splitlines() if line.startswith("loss")]


def test_a_model_of_another_file_trains_like_torch(tmp_path, monkeypatch):
    src = _program(tmp_path)
    out = tmp_path / "keras_out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q", "--exact"]) == 0
    monkeypatch.chdir(tmp_path)

    torch_model = types.ModuleType("model")
    exec(compile(MODEL, "<torch_model>", "exec"), torch_model.__dict__)
    initial = {}
    torch_init = torch_model.TextNet.__init__

    def recording_init(self, *args, **kwargs):
        torch_init(self, *args, **kwargs)
        initial.update({k: v.detach().numpy().copy() for k, v in self.state_dict().items()})

    torch_model.TextNet.__init__ = recording_init
    t = _losses("torch_main", MAIN, torch_model)

    keras_model = types.ModuleType("model")
    exec(compile((out / "model.py").read_text(), "<keras_model>", "exec"), keras_model.__dict__)

    class SameWeights(keras_model.TextNet):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self(np.zeros((1, 8), "int64"))  # (its layers build on the first call)
            self.get_layer("emb").set_weights([initial["emb.weight"]])
            self.get_layer("fc").set_weights([initial["fc.weight"].T, initial["fc.bias"]])

    keras_model.TextNet = SameWeights
    k = _losses("keras_main", (out / "main.py").read_text(), keras_model)
    assert len(t) == 3 and len(k) == 3
    np.testing.assert_allclose(k, t, rtol=RTOL)
