"""``transpile model.onnx --to {pytorch,keras}``: suffix dispatch, weights beside the output,
directory mode, errors and --strict."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402

from onnx_harness import input_for, onnxruntime_run, run_generated  # noqa: E402
from test_onnx_frontend import _io, _save, conv_net  # noqa: E402
from transpiler.cli import run  # noqa: E402


def test_cli_onnx_to_pytorch_with_weights_out(tmp_path):
    src = conv_net(tmp_path)
    out, weights = tmp_path / "model.py", tmp_path / "model.safetensors"
    assert run([src, "--to", "pytorch", "-o", str(out), "--weights-out", str(weights)]) == 0
    x = input_for(src, seed=3)
    y, _ = run_generated(out.read_text(), "pytorch", str(weights), x, str(tmp_path))
    assert np.max(np.abs(y - onnxruntime_run(src, x))) <= 1e-4


def test_cli_onnx_to_keras_weights_beside_the_output(tmp_path):
    src = conv_net(tmp_path)
    out = tmp_path / "net_keras.py"
    assert run([src, "--to", "keras", "-o", str(out)]) == 0
    weights = tmp_path / "net_keras.weights.h5"
    assert weights.exists()
    x = input_for(src, seed=4)
    y, _ = run_generated(out.read_text(), "keras", str(weights), x, str(tmp_path))
    assert np.max(np.abs(y - onnxruntime_run(src, x))) <= 1e-4


def test_cli_onnx_check_is_clean_after_writing(tmp_path):
    src = conv_net(tmp_path)
    out = tmp_path / "m.py"
    assert run([src, "--to", "pytorch", "-o", str(out)]) == 0
    assert run([src, "--to", "pytorch", "-o", str(out), "--check"]) == 0
    out.write_text(out.read_text() + "# edited\n")
    assert run([src, "--to", "pytorch", "-o", str(out), "--check"]) == 1


def test_cli_directory_mode_translates_onnx_files(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    conv_net(folder)
    assert run([str(folder), "--to", "pytorch"]) == 0
    assert (folder / "conv_net_torch.py").exists()
    assert (folder / "conv_net_torch.safetensors").exists()
    mirror = tmp_path / "keras_out"
    assert run([str(folder), "--to", "keras", "-o", str(mirror)]) == 0
    assert (mirror / "conv_net.py").exists() and (mirror / "conv_net.weights.h5").exists()


def test_cli_broken_onnx_file_is_exit_2_without_output(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf \xff\x00")
    assert run([str(bad), "--to", "pytorch", "-o", str(tmp_path / "out.py")]) == 2
    err = capsys.readouterr().err
    assert "bad.onnx" in err and "Traceback" not in err
    assert not (tmp_path / "out.py").exists()


def test_cli_onnx_stub_is_exit_3_under_strict(tmp_path):
    nodes = [helper.make_node("Hardmax", ["x"], ["y"], name="pick")]
    src = _save(tmp_path, "stubbed", nodes, [_io("x", [1, 4])], [_io("y", [1, 4])], [])
    out = tmp_path / "s.py"
    assert run([src, "--to", "pytorch", "-o", str(out), "--strict"]) == 3
    assert "NotImplementedError" in out.read_text()
    assert not os.path.exists(tmp_path / "s.safetensors")


def test_cli_verify_of_an_onnx_model_is_a_clear_error(tmp_path, capsys):
    src = conv_net(tmp_path)
    assert run([src, "--to", "pytorch", "-o", str(tmp_path / "v.py"), "--verify"]) == 2
    assert "--verify does not take an ONNX model" in capsys.readouterr().err
    assert not (tmp_path / "v.py").exists()
