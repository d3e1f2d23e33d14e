"""A PyTorch program of several files → Keras, as a directory (issue 19 item 5): the files
keep their names so that ``from model import Net`` keeps working, files that do not use
torch are copied unchanged, and without ``-o`` the program goes to ``<dir>_keras/``."""

from __future__ import annotations

import subprocess
import sys

from transpiler.cli import run
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

MODEL = '''\
import torch.nn as nn

INPUT_SHAPE = (4,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def build_model():
    return Net()
'''

UTILS = '''\
def scale(x):
    return x / 2.0
'''

MAIN = '''\
import numpy as np
import torch

from model import build_model
from utils import scale

INPUT_SHAPE = (4,)


def main():
    model = build_model()
    x = torch.from_numpy(scale(np.ones((3, 4), dtype="float32")))
    print(model(x).shape)


if __name__ == "__main__":
    main()
'''


def _program(tmp_path):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "model.py").write_text(MODEL)
    (src / "utils.py").write_text(UTILS)
    (src / "main.py").write_text(MAIN)
    return src


def test_directory_without_output_goes_to_a_keras_sibling_folder(tmp_path):
    src = _program(tmp_path)
    assert run([str(src), "--to", "keras", "-q"]) == 0
    out = tmp_path / "prog_keras"
    assert sorted(p.name for p in out.iterdir()) == ["main.py", "model.py", "utils.py"]
    assert not list(src.glob("*_keras.py"))  # nothing written beside the sources
    assert (out / "utils.py").read_text() == UTILS  # no torch: copied as it is
    assert "from model import build_model" in (out / "main.py").read_text()


def test_directory_with_output_keeps_file_names_and_the_program_runs(tmp_path):
    src = _program(tmp_path)
    out = tmp_path / "keras_out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q"]) == 0
    for name in ("main.py", "model.py"):
        assert "import torch" not in (out / name).read_text(), name
    done = program_runner.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(3, 2)" in done.stdout


def test_a_rerun_does_not_overwrite_a_changed_copy(tmp_path):
    src = _program(tmp_path)
    assert run([str(src), "--to", "keras", "-q"]) == 0
    copy = tmp_path / "prog_keras" / "utils.py"
    copy.write_text("# edited by the user\n")
    assert run([str(src), "--to", "keras", "-q"]) == 0
    assert copy.read_text() == "# edited by the user\n"
