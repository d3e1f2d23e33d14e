"""The hostile-input suite for ONNX out (``--to onnx``), the newest input path (issue 22): no
two paths of a run are one file, special files are refused by their type, hostile checkpoints
are refused as by the other converters, bad scripts give one error, and nothing is written on
any refusal; the output is the same bytes under any hash seed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("onnx")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from test_hostile_input import _dense_weights  # noqa: E402 (the same hand-written checkpoints)

SMALL = '''\
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3)])


model = build_model()
'''


def _cli(args, cwd, env=None, timeout=120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    return subprocess.run([sys.executable, "-m", "transpiler", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _one_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("transpile: error:") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "a bug in transpiler" not in proc.stderr, proc.stderr
    assert all(w in proc.stderr for w in words), proc.stderr


@pytest.fixture
def script(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(SMALL)
    return src


def test_output_onto_the_checkpoint_is_refused_and_the_checkpoint_kept(tmp_path, script):
    ckpt = tmp_path / "w.onnx"
    ckpt.write_bytes(b"checkpoint bytes")
    _one_error(_cli([script, "--to", "onnx", "-o", ckpt, "--weights", ckpt], tmp_path), "same file")
    assert ckpt.read_bytes() == b"checkpoint bytes"


def test_output_through_a_symlink_onto_the_source_is_refused(tmp_path, script):
    (tmp_path / "alias.onnx").symlink_to(script)
    _one_error(_cli([script, "--to", "onnx", "-o", tmp_path / "alias.onnx"], tmp_path), "same file")
    assert script.read_text() == SMALL


def test_fifo_output_is_refused_by_its_type(tmp_path, script):
    os.mkfifo(tmp_path / "pipe.onnx")
    _one_error(_cli([script, "--to", "onnx", "-o", tmp_path / "pipe.onnx"], tmp_path), "FIFO")


def test_fifo_source_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "train.py")
    _one_error(_cli([tmp_path / "train.py", "--to", "onnx", "-o", tmp_path / "m.onnx"], tmp_path), "FIFO")


def test_syntax_error_is_one_error_at_its_line(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(SMALL + "def broken(:\n")
    proc = _cli([src, "--to", "onnx", "-o", tmp_path / "m.onnx"], tmp_path)
    _one_error(proc, f"train.py:{SMALL.count(chr(10)) + 1}")
    assert not (tmp_path / "m.onnx").exists()


def test_deeply_nested_expression_is_one_error_or_an_export(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(SMALL + "x = " + "- " * 1000 + "1\n")
    proc = _cli([src, "--to", "onnx", "-o", tmp_path / "m.onnx"], tmp_path)
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, proc.stderr
    assert "a bug in transpiler" not in proc.stderr, proc.stderr


def test_hdf5_external_storage_is_refused(tmp_path, script):
    import numpy as np

    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(12, dtype="float32").tobytes())
    _dense_weights(tmp_path / "w.weights.h5",
                   lambda g: g.create_dataset("0", shape=(4, 3), dtype="float32", external=[(str(secret), 0, 48)]))
    proc = _cli([script, "--to", "onnx", "-o", tmp_path / "m.onnx", "--weights", tmp_path / "w.weights.h5"], tmp_path)
    _one_error(proc, "external files")
    assert not (tmp_path / "m.onnx").exists()


def test_hdf5_external_link_is_refused(tmp_path, script):
    import h5py

    _dense_weights(tmp_path / "other.weights.h5")

    def link(g):
        g["0"] = h5py.ExternalLink(str(tmp_path / "other.weights.h5"), "/layers/dense/vars/0")

    _dense_weights(tmp_path / "w.weights.h5", link)
    proc = _cli([script, "--to", "onnx", "-o", tmp_path / "m.onnx", "--weights", tmp_path / "w.weights.h5"], tmp_path)
    _one_error(proc)
    assert not (tmp_path / "m.onnx").exists()


def test_checkpoint_of_other_shapes_is_refused(tmp_path, script):
    import numpy as np

    _dense_weights(tmp_path / "w.weights.h5", lambda g: g.create_dataset("0", data=np.ones((5, 3), "float32")))
    proc = _cli([script, "--to", "onnx", "-o", tmp_path / "m.onnx", "--weights", tmp_path / "w.weights.h5"], tmp_path)
    _one_error(proc, "shape")


def test_well_formed_checkpoint_exports_the_same_bytes_under_any_hash_seed(tmp_path, script):
    """(the control for the refusals above)"""
    _dense_weights(tmp_path / "w.weights.h5")
    outs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"m{seed}.onnx"
        proc = _cli([script, "--to", "onnx", "-o", out, "--weights", tmp_path / "w.weights.h5"], tmp_path,
                    env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".transpile-")]
