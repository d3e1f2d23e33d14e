"""``transpile verify model.onnx model.py [--weights W]``: onnxruntime against the generated
code, both targets; a wrong checkpoint fails, missing files are input errors."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from test_onnx_frontend import conv_net  # noqa: E402
from transpiler.cli import run  # noqa: E402


@pytest.mark.parametrize("target", ["pytorch", "keras"])
def test_verify_onnx_passes_for_the_transpiled_model(tmp_path, target, capsys):
    src = conv_net(tmp_path)
    out = str(tmp_path / "model.py")
    assert run([src, "--to", target, "-o", out, "-q"]) == 0
    capsys.readouterr()
    assert run(["verify", src, out, "--batches", "2"]) == 0
    report = capsys.readouterr().out
    assert "onnxruntime" in report and "pass" in report and "FAIL" not in report


def test_verify_onnx_fails_on_weights_that_are_not_the_models(tmp_path, capsys):
    import numpy as np
    from safetensors.numpy import load_file, save_file

    src = conv_net(tmp_path)
    out = str(tmp_path / "model.py")
    assert run([src, "--to", "pytorch", "-o", out, "-q"]) == 0
    state = load_file(str(tmp_path / "model.safetensors"))
    key = next(k for k in sorted(state) if k.endswith("weight"))
    state[key] = (state[key] * np.float32(1.01)).astype(state[key].dtype)
    wrong = str(tmp_path / "wrong.safetensors")
    save_file(state, wrong)
    capsys.readouterr()
    assert run(["verify", src, out, "--weights", wrong, "--batches", "1"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_verify_onnx_without_the_weights_is_an_input_error(tmp_path, capsys):
    src = conv_net(tmp_path)
    out = tmp_path / "model.py"
    assert run([src, "--to", "pytorch", "-o", str(out), "-q"]) == 0
    (tmp_path / "model.safetensors").unlink()
    capsys.readouterr()
    assert run(["verify", src, str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
