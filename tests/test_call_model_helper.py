"""A torch function that calls a model the way Keras' ``model(x, training=...)`` does on arrays
(the generated runtime ``call_model``: the model's mode set from a keyword parameter and
restored, gradients on or off, each input converted to a tensor) is recognised by its structure
(frontend_ast/torch/model_call_helper.py) and read back to Keras as ``model(x, training=...)``;
the helper and its conversion function go. A function that does more, or a call passing what
Keras' call has no place for, is read as before (kept, its torch-only lines marked stubs)."""

from __future__ import annotations

import ast
import os
import sys

import libcst as cst
import pytest

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from transpiler.frontend_ast.torch import helpers as torch_helpers
from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = '''import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(self.drop(x))


def to_tensor(value):
    return torch.as_tensor(np.asarray(value, dtype=np.float32))


def run_net(net, *arrays, train_mode=False, with_grad=False):
    previous = net.training
    net.train(train_mode)
    try:
        with torch.set_grad_enabled(with_grad):
            return net(*[to_tensor(a) for a in arrays])
    finally:
        net.train(previous)


def main():
    x = np.random.default_rng(0).standard_normal((4, 6)).astype("float32")
    net = Net()
    out = run_net(net, x)
    noisy = run_net(net, x, train_mode=True)
    same = np.allclose(np.asarray(out), np.asarray(run_net(net, x)))
    print("shapes", np.asarray(out).shape, np.asarray(noisy).shape, "inference repeats:", same)


if __name__ == "__main__":
    main()
'''


def test_the_helper_is_recognised_by_structure_not_by_name():
    helpers = torch_helpers.analyse(cst.parse_module(SCRIPT))
    assert helpers["run_net"].kind == "call_model"
    assert helpers["run_net"].roles == {"model": "net", "inputs": "arrays", "training": "train_mode",
                                        "grad": "with_grad"}
    assert helpers["run_net"].config == "to_tensor"
    assert helpers["to_tensor"].kind == "model_input"


def test_the_generated_runtime_helper_is_recognised():
    """The runtime's own ``call_model`` (what a Keras → torch translation prints)."""
    path = os.path.join(ROOT, "transpiler", "runtime", "torch", "training.py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    tree = ast.parse(text)
    wanted = {"call_model", "_as_model_input"}
    defs = [ast.get_source_segment(text, n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert len(defs) == 2
    helpers = torch_helpers.analyse(cst.parse_module("import numpy as np\nimport torch\n\n\n" + "\n\n\n".join(defs)))
    assert helpers["call_model"].kind == "call_model" and helpers["call_model"].config == "_as_model_input"
    assert helpers["_as_model_input"].kind == "model_input"


def test_calls_read_back_as_keras_model_calls_and_the_program_runs(tmp_path):
    result = translate(SCRIPT, "case.py", "keras")
    assert not result.stubs, [str(d) for d in result.stubs]
    text = result.text
    assert "net(x, training=False)" in text and "net(x, training=True)" in text
    assert "def run_net" not in text and "def to_tensor" not in text and "run_net(" not in text
    path = tmp_path / "case_keras.py"
    path.write_text(text)
    proc = program_runner.run([sys.executable, str(path)], capture_output=True, text=True, timeout=240,
                              cwd=str(tmp_path), preload=())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "shapes (4, 3) (4, 3) inference repeats: True" in proc.stdout, proc.stdout


@pytest.mark.parametrize("change", [
    # a keyword the helper hands on to the model (Keras' call has no place for it)
    ("def run_net(net, *arrays, train_mode=False, with_grad=False):",
     "def run_net(net, *arrays, train_mode=False, with_grad=False, **extra):",
     "return net(*[to_tensor(a) for a in arrays])", "return net(*[to_tensor(a) for a in arrays], **extra)",
     "out = run_net(net, x)", "out = run_net(net, x, scale=2)"),
    # a conversion that changes the data (not only arrays to tensors)
    ("return torch.as_tensor(np.asarray(value, dtype=np.float32))",
     "return torch.as_tensor(np.asarray(value, dtype=np.float32)) * 2"),
    ("return torch.as_tensor(np.asarray(value, dtype=np.float32))",
     "return torch.as_tensor(np.asarray(value, dtype=np.float32) - 1)"),
    # the mode is not the helper's parameter
    ("net.train(train_mode)", "net.train(True)"),
])
def test_a_helper_that_is_not_keras_call_stays(change):
    source = SCRIPT
    for old, new in zip(change[::2], change[1::2]):
        assert old in source
        source = source.replace(old, new)
    result = translate(source, "case.py", "keras")
    assert "def run_net" in result.text
