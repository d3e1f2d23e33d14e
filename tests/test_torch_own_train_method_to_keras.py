"""A module class with its own ``train(x)`` (or ``eval(...)``) method replaces nn.Module's
``train(mode)``: ``model.train(x_pos, x_neg)`` is a call of the user's method, not a mode
switch (pytorch/examples' forward-forward MNIST). Before: a stub "model.train(x_pos): a mode
known only when the program runs". The translated program runs and prints what torch's does."""

from __future__ import annotations

import subprocess
import sys

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from transpiler.translate import translate

PROGRAM = '''\
import torch
import torch.nn as nn

INPUT_SHAPE = (4,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def train(self, x):
        return torch.relu(self.fc(x))

    def forward(self, x):
        return self.train(x).sum(1, keepdim=True)


model = Net()
x = torch.ones(3, 4)
print("forward", tuple(model(x).shape))
print("own", tuple(model.train(x).shape))
'''

NOT_BUILT = '''\
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(dims, dims[1:])]

    def train(self, x_pos, x_neg):
        for layer in self.layers:
            x_pos, x_neg = layer(x_pos), layer(x_neg)
        return x_pos, x_neg

    def predict(self, x):
        return self.layers[0](x).argmax(1)


net = Stack(DIMS)
net.train(torch.ones(2, 4), torch.zeros(2, 4))
print(net.predict(torch.ones(2, 4)))
'''


def _run(tmp_path, src, name):
    (tmp_path / f"{name}.py").write_text(src)
    return program_runner.run([sys.executable, f"{name}.py"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300, preload=("torch", "tensorflow"))


def test_own_train_method_is_called_as_written(tmp_path):
    want = _run(tmp_path, PROGRAM, "source")
    assert want.returncode == 0, want.stderr
    tr = translate(PROGRAM, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    got = _run(tmp_path, tr.text, "translated")
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stdout == want.stdout == "forward (3, 1)\nown (3, 2)\n"


def test_own_train_method_of_a_class_not_translated_is_not_a_mode():
    tr = translate(NOT_BUILT.replace("DIMS", "[4, 3, 2]"), "prog.py", "keras")
    assert not [d for d in tr.stubs if "a mode known only" in d.message], [str(d) for d in tr.stubs]
    # the class is one stub (the program stops where it is built); its own methods' calls are none
    assert not [d for d in tr.stubs if "model." in d.message], [str(d) for d in tr.stubs]
    assert "net.train(" in tr.text and "net.predict(" in tr.text
    # nn.Module's own train(mode) of a class without one still is
    plain = NOT_BUILT.replace("def train(self, x_pos, x_neg)", "def fit(self, x_pos, x_neg)") \
        .replace("net.train(torch.ones(2, 4), torch.zeros(2, 4))", "net.train(flag)").replace("DIMS", "[4, 2]") \
        .replace("print(net.predict(torch.ones(2, 4)))", "")
    tr = translate("flag = True\n" + plain, "prog.py", "keras")
    assert [d for d in tr.stubs if "a mode known only" in d.message], [str(d) for d in tr.stubs]
