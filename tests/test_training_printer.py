"""The training printer: schedules, callbacks and fit options behave as in Keras."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import keras

from transpiler.ir import training as T
from transpiler.ir.program import Program
from transpiler.printers.torch_training import TrainingPrinter
from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(__file__))

SCHEDULES = [
    ("exponential_decay", "ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 7, "decay_rate": 0.5}),
    ("exponential_decay", "ExponentialDecay",
     {"initial_learning_rate": 0.1, "decay_steps": 7, "decay_rate": 0.5, "staircase": True}),
    ("inverse_time_decay", "InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 5, "decay_rate": 0.3}),
    ("cosine_decay", "CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 40, "alpha": 0.1}),
    ("piecewise_constant_decay", "PiecewiseConstantDecay", {"boundaries": [10, 20], "values": [0.1, 0.05, 0.01]}),
]


@pytest.mark.parametrize("kind, cls, params", SCHEDULES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SCHEDULES)])
def test_schedule_lambda_matches_keras_per_step(kind, cls, params):
    printer = TrainingPrinter(Program("p.py", "", "keras"))
    full = dict(params)
    if kind == "piecewise_constant_decay":
        full["initial_learning_rate"] = params["values"][0]
    factor = eval(printer.schedule_lambda(T.Schedule(kind, full)), {"math": math})
    keras_schedule = getattr(keras.optimizers.schedules, cls)(**params)
    for step in range(0, 60):
        expected = float(keras_schedule(step))
        assert abs(full["initial_learning_rate"] * factor(step) - expected) <= 1e-7 * max(1.0, expected), step


def _run(path, cwd):
    proc = subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({path!r}, run_name='__main__')"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
def test_callbacks_program_behaves_like_keras(tmp_path):
    source_path = os.path.join(ROOT, "tests", "programs", "callbacks_program.py")
    with open(source_path, encoding="utf-8") as fh:
        result = translate(fh.read(), source_path)
    assert not result.stubs, result.stubs
    text = result.text
    for expected in ("best_val_loss, wait", "torch.save(model.state_dict()", "csv.DictWriter",
                     "ReduceLROnPlateau(", "schedule(epoch, group[\"lr\"])", "validation_split=0.25",
                     "class_weight={0: 1.0, 1: 2.0, 2: 0.5}"):
        assert expected in text, expected
    torch_dir, keras_dir = tmp_path / "torch", tmp_path / "keras"
    torch_dir.mkdir()
    keras_dir.mkdir()
    (torch_dir / "prog.py").write_text(text)
    torch_out = _run(str(torch_dir / "prog.py"), torch_dir)
    keras_out = _run(source_path, keras_dir)
    epochs = [line for line in torch_out.splitlines() if line.startswith("EPOCHS")]
    assert epochs == [line for line in keras_out.splitlines() if line.startswith("EPOCHS")]
    assert epochs == ["EPOCHS 2"]  # min_delta=100: never improves after the first epoch
    assert (torch_dir / "ckpt.pt").exists() and (torch_dir / "log.csv").exists()
    header = (torch_dir / "log.csv").read_text().splitlines()[0].split(",")
    assert header[:2] == ["epoch", "loss"] and "val_loss" in header
    torch_keys = [line for line in torch_out.splitlines() if line.startswith("KEYS")]
    assert torch_keys == ["KEYS ['accuracy', 'loss', 'val_accuracy', 'val_loss']"]


@pytest.mark.slow
def test_tensorboard_callback_runs_with_or_without_tensorboard(tmp_path):
    source_path = os.path.join(ROOT, "tests", "programs", "callbacks_program.py")
    with open(source_path, encoding="utf-8") as fh:
        source = fh.read().replace("keras.callbacks.CSVLogger(", "keras.callbacks.TensorBoard(log_dir=out_dir + '/tb'),\n"
                                   "            keras.callbacks.CSVLogger(")
    result = translate(source, source_path)
    assert "SummaryWriter(" in result.text and not result.stubs
    (tmp_path / "prog.py").write_text(result.text)
    out = _run(str(tmp_path / "prog.py"), tmp_path)
    assert "EPOCHS 2" in out
