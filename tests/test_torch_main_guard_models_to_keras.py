"""A script without a ``main()`` that builds its model under ``if __name__ == "__main__":``
with constructor arguments (``net = Net([784, 500, 500])``, pytorch/examples' GAT and
forward-forward MNIST): the model is built from those arguments, as one built at module level
or in ``main()`` is. Before: a stub "Net: ... its constructor takes dims (no default), which
this file does not give". The translated program runs and prints what torch's does."""

from __future__ import annotations

import sys

import pytest

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from transpiler.translate import translate

PROGRAM = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


if __name__ == "__main__":
    GUARDED
'''

BUILD = '''net = Net([4, 8, 2])
    x = torch.ones(3, 4)
    print("out", tuple(net(x).shape))'''


def _run(tmp_path, src, name):
    (tmp_path / f"{name}.py").write_text(src)
    return program_runner.run([sys.executable, f"{name}.py"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300, preload=("torch", "tensorflow"))


def test_model_built_under_the_main_guard(tmp_path):
    src = PROGRAM.replace("GUARDED", BUILD)
    want = _run(tmp_path, src, "source")
    assert want.returncode == 0, want.stderr
    tr = translate(src, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert [m.class_name for m in tr.program.models] == ["Net"]
    got = _run(tmp_path, tr.text, "translated")
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stdout == want.stdout == "out (3, 2)\n"


def test_model_built_in_a_block_of_the_main_guard(tmp_path):
    src = PROGRAM.replace("GUARDED", "if True:\n        " + BUILD.replace("\n    ", "\n        "))
    tr = translate(src, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    got = _run(tmp_path, tr.text, "translated")
    assert got.returncode == 0, got.stderr[-3000:]
    assert got.stdout == "out (3, 2)\n"


def test_other_if_blocks_are_not_a_main_guard():
    src = PROGRAM.replace('if __name__ == "__main__":', 'if __name__ != "__main__":').replace("GUARDED", BUILD)
    tr = translate(src, "prog.py", "keras")
    assert [d for d in tr.stubs if "Net" in d.message], [str(d) for d in tr.stubs]


@pytest.mark.parametrize("guard", ['if __name__ == ("__""main__"):', 'if (__name__) == "__main__":',
                                   "if '__main__' == __name__:"], ids=["split_string", "parenthesised", "swapped"])
def test_main_guard_is_recognised_however_it_is_spelled(guard):
    """(issue 22, whole-program fuzz: mnist_forward_forward's odd_syntax-2 mutant lost its model
    when the guard's string was written ``("__""main__")``)"""
    src = PROGRAM.replace('if __name__ == "__main__":', guard).replace("GUARDED", BUILD)
    tr = translate(src, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert [m.class_name for m in tr.program.models] == ["Net"]
