"""torch → Keras weights of a class read for placeholder sizes (weights/size_binding.py).

A library module's class whose constructor takes sizes (``Net(n_in, n_hidden, n_out)``,
``Upscaler(factor)`` with ``factor ** 2`` output channels) is translated for named
placeholder sizes: a checkpoint saved from ``Net(5, 7, 3)`` converts for the sizes its
tensors' shapes give, and the generated Keras model built with them computes torch's outputs.
"""

from __future__ import annotations

import importlib.util
import sys

import torch  # noqa: F401  (torch before Keras in one process)
import numpy as np
import pytest

from transpiler.cli import run

MLP = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))
'''

UPSCALER = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, factor ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(factor)

    def forward(self, x):
        return self.shuffle(self.conv2(nn.functional.relu(self.conv1(x))))
'''

CASES = {
    "linear": (MLP, (5, 7, 3), (4, 5), None, "Net(n_in=5, n_hidden=7, n_out=3)"),
    "conv_squared": (UPSCALER, (3,), (2, 2, 6, 5), (0, 2, 3, 1), "Net(factor=3)"),
}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_checkpoint_converts_for_the_sizes_its_shapes_give(tmp_path, case, capsys):
    source, args, shape, to_keras, call = CASES[case]
    (tmp_path / "model.py").write_text(source)
    torch_model = _load(tmp_path / "model.py", f"torch_{case}").Net(*args)
    torch.save(torch_model.state_dict(), tmp_path / "net.pt")
    out = tmp_path / "out.py"
    assert run([str(tmp_path / "model.py"), "--to", "keras", "-o", str(out), "--weights",
                str(tmp_path / "net.pt"), "--weights-out", str(tmp_path / "net.weights.h5")]) == 0
    err = capsys.readouterr().err
    assert f"was saved from {call} (bound from its shapes)" in err, err

    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(x)).numpy()
    keras_x = x if to_keras is None else x.transpose(to_keras)
    keras_model = _load(out, f"keras_{case}").Net(*args)
    keras_model(keras_x[:1])  # (its layers build on the first call)
    keras_model.load_weights(str(tmp_path / "net.weights.h5"))
    got = np.asarray(keras_model(keras_x))
    if to_keras is not None:
        got = got.transpose(np.argsort(to_keras))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    sys.modules.pop(f"keras_{case}", None)


def test_shapes_no_size_explains_are_an_error(tmp_path, capsys):
    (tmp_path / "model.py").write_text(MLP)
    state = _load(tmp_path / "model.py", "torch_bad").Net(5, 7, 3).state_dict()
    state["fc2.weight"] = torch.zeros(3, 6)  # (fc1 says n_hidden = 7)
    torch.save(state, tmp_path / "net.pt")
    code = run([str(tmp_path / "model.py"), "--to", "keras", "-o", str(tmp_path / "out.py"), "--weights",
                str(tmp_path / "net.pt"), "--weights-out", str(tmp_path / "net.weights.h5")])
    assert code != 0
    assert "net.pt" in capsys.readouterr().err
    assert not (tmp_path / "net.weights.h5").exists()
