"""Directory mode keeps issue 22 item 5's rule for the files it copies unchanged (a PyTorch
program's ``utils.py`` that does not import torch): only regular files are read, and at most
the source size limit of each. A FIFO at the copy's place in the output folder blocked the
run forever (it was opened and read to compare), and a file of any size was read whole."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

from test_torch_directory_to_keras import MAIN, MODEL, UTILS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _program(tmp_path, utils: str = UTILS):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "model.py").write_text(MODEL)
    (src / "utils.py").write_text(utils)
    (src / "main.py").write_text(MAIN)
    return src


def _transpile(args, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "transpiler", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_fifo_where_a_copied_file_goes_is_refused_not_read(tmp_path):
    src = _program(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "utils.py")
    proc = _transpile([src, "--to", "keras", "-o", out], tmp_path)  # (a hang: TimeoutExpired)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert stat.S_ISFIFO(os.stat(out / "utils.py").st_mode)
    assert (out / "model.py").exists() and (out / "main.py").exists()  # (the rest translated)


def test_oversized_file_to_copy_is_refused_with_the_limit(tmp_path):
    from transpiler.cli import MAX_SOURCE_BYTES

    src = _program(tmp_path, UTILS + "#" * MAX_SOURCE_BYTES + "\n")
    out = tmp_path / "out"
    proc = _transpile([src, "--to", "keras", "-o", out], tmp_path)
    assert proc.returncode == 2 and f"{MAX_SOURCE_BYTES}-byte limit" in proc.stderr, proc.stderr
    assert not (out / "utils.py").exists()
    assert (out / "model.py").exists()


def test_small_file_is_still_copied_unchanged(tmp_path):
    src = _program(tmp_path)
    out = tmp_path / "out"
    proc = _transpile([src, "--to", "keras", "-o", out], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "utils.py").read_text() == UTILS
    proc = _transpile([src, "--to", "keras", "-o", out], tmp_path)  # (again: the same copy is kept)
    assert proc.returncode == 0 and (out / "utils.py").read_text() == UTILS
