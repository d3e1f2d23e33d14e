"""Real PyTorch programs → Keras (issue 19): multi-file programs, script plumbing
(argparse, seeding, devices) and torchvision data, on corpus-style inputs written here.

Where the real-world scripts of ``../shared/realworld/torch/`` are at hand they are read
(never copied) to check the same rule on them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from transpiler.cli import run
from transpiler.translate import translate

REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "torch"

LIBRARY_MODULE = '''\
"""The model module of a two-file program: classes and a helper, nothing built here."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)) + x


class Net(nn.Module):
    def __init__(self, channels, blocks=2):
        super().__init__()
        self.body = nn.Sequential(*[Block(channels) for _ in range(blocks)])

    def forward(self, x):
        return self.body(x)


def count(n):
    return 2 * n
'''


def _imports(text: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


# -- 1. a file that uses the source framework is translated, model or not ------------------
def test_torch_library_module_without_a_model_exits_0_and_is_written(tmp_path, capsys):
    src = tmp_path / "model.py"
    src.write_text(LIBRARY_MODULE)
    out = tmp_path / "model_keras.py"
    assert run([str(src), "--to", "keras", "-o", str(out)]) == 0
    text = out.read_text()
    assert "torch" not in _imports(text)
    assert "def count(n):" in text  # plain functions keep working
    ns: dict = {}
    exec(compile(text, str(out), "exec"), ns)  # noqa: S102 - the generated module imports cleanly
    assert ns["count"](3) == 6
    # the module classes it cannot build here are marked stubs, never dropped silently
    err = capsys.readouterr().err
    for name in ("Block", "Net"):
        assert f"stub: {name}: an nn.Module class" in err
        with pytest.raises(NotImplementedError, match=name):
            ns[name](4)


def test_keras_helper_module_without_a_model_exits_0_and_is_written(tmp_path):
    src = tmp_path / "helpers.py"
    src.write_text("import keras\n\n\ndef scale(x):\n    return x / 255.0\n")
    out = tmp_path / "helpers_torch.py"
    assert run([str(src), "--to", "pytorch", "-o", str(out)]) == 0
    assert "def scale(x):" in out.read_text()


@pytest.mark.parametrize("target", ["keras", "pytorch"])
def test_a_file_not_using_the_source_framework_still_exits_2(tmp_path, capsys, target):
    src = tmp_path / "plain.py"
    src.write_text("import numpy as np\n\n\ndef f():\n    return np.ones(3)\n")
    out = tmp_path / "out.py"
    assert run([str(src), "--to", target, "-o", str(out)]) == 2
    assert "model found" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.skipif(not REALWORLD.is_dir(), reason="the real-world scripts are not at hand")
@pytest.mark.parametrize("rel", ["super_resolution/model.py", "fast_neural_style/neural_style/transformer_net.py",
                                 "language_translation/src/model.py", "super_resolution/dataset.py"])
def test_realworld_library_modules_are_translated(tmp_path, rel):
    out = tmp_path / "out.py"
    assert run([str(REALWORLD / rel), "--to", "keras", "-o", str(out)]) == 0
    ast.parse(out.read_text())
