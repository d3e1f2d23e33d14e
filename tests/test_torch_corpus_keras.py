"""The torch corpus translated to Keras as whole programs: training equivalence with the
torch program (same initial weights, same batches with shuffle off, per-step losses within
1e-4 relative for 20 steps, float64, dropout off), and every transpiled script imports no
torch and runs to completion as ``python OUT.py``.

What each source loop does besides the optimizer step (how often its scheduler steps, its
clipping, its early stopping) is stated here per program (``LOOPS``), read off the corpus
scripts by hand; the torch side of the comparison runs the source's own optimizer, loss
and scheduler objects (``transpiler.verify_training_to_keras``).
"""

from __future__ import annotations

import ast
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from transpiler.translate import translate
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = sorted(glob.glob(os.path.join(ROOT, "corpus", "torch", "*.py")))
RTOL = 1e-4
RUN_TIMEOUT = 300


def _name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _loops():
    from transpiler.verify_training_to_keras import LoopFacts

    return {
        "mnist_cnn": LoopFacts(),
        "mlp_regression": LoopFacts(scheduler="epoch"),
        "lstm_classifier": LoopFacts(clip_norm=1.0),
        "gru_regression": LoopFacts(scheduler="plateau", clip_norm=1.0),
        "resnet_small": LoopFacts(scheduler="epoch"),
        # warmup_steps is the loop's len(train_loader) (the harness's epochs are 2 steps); validated
        # on a training batch, so that early stopping lets the 20 steps run
        "residual_mlp": LoopFacts(scheduler="step", early_stopping_patience=3,
                                  names={"warmup_steps": 2, "patience": 3}, validate_on_training_data=True),
        # AdamW's parameter groups: the source's own split, restated
        "text_classifier": LoopFacts(model_names=_text_classifier_groups),
        # Adam's parameter groups (the temperature's own learning rate): the source's list, restated
        "custom_param": LoopFacts(model_names=lambda model: {
            "others": [p for n, p in model.named_parameters() if n != "log_temperature"]}),
    }


def _text_classifier_groups(model):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if name.endswith("bias") or name.startswith("embedding") else decay).append(param)
    return {"decay": decay, "no_decay": no_decay}


KNOWN = {
}
#: programs whose loop is a custom step (GradientTape), compared as whole programs: the loss
#: values each step computes (dcgan: D on real, D on fake, G; vae: the loss backward() starts from)
CUSTOM_STEPS = {"dcgan": 3, "vae": 1}


def _param(path, known=KNOWN):
    name = _name(path)
    marks = [pytest.mark.xfail(strict=True, reason=known[name])] if name in known else []
    return pytest.param(path, id=name, marks=marks)


@pytest.mark.parametrize("path", sampled([_param(p) for p in CORPUS if _name(p) not in CUSTOM_STEPS], every=4))
def test_training_loop_trains_like_torch(path):
    from transpiler.verify_training_to_keras import run_both

    name = _name(path)
    assert name in _loops(), f"{name}: no usual training loop (compile/fit) to compare"
    t, k = run_both(path, _loops()[name], exact=True)
    assert len(t) == len(k) == 20, (len(t), len(k))
    rel = np.abs(t - k) / np.maximum(np.abs(t), 1e-8)
    assert rel.max() <= RTOL, list(zip(t, k))


@pytest.mark.parametrize("path", [pytest.param(p, id=_name(p)) for p in CORPUS if _name(p) in CUSTOM_STEPS])
def test_custom_step_trains_like_torch(path):
    """The whole program on both sides (same initial weights, batches and noise, float64):
    every value of the loss object in the first 20 steps."""
    from transpiler.verify_training_to_keras import run_programs

    t, k = run_programs(path, exact=True)
    n = 20 * CUSTOM_STEPS[_name(path)]
    assert len(t) >= n and len(k) == len(t)
    rel = np.abs(t[:n] - k[:n]) / np.maximum(np.abs(t[:n]), 1e-8)
    assert rel.max() <= RTOL, list(zip(t[:n], k[:n]))


# -- the whole programs ---------------------------------------------------------------------
RUN_KNOWN: dict[str, str] = {}  # every torch corpus program runs as translated


@pytest.mark.parametrize("path", [pytest.param(p, id=_name(p)) for p in CORPUS])
def test_transpiled_program_imports_no_torch(path):
    with open(path, encoding="utf-8") as fh:
        tr = translate(fh.read(), path, "keras")
    tree = ast.parse(tr.text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "torch" for a in node.names), ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] != "torch", ast.unparse(node)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not names & {"torch", "nn", "F", "DataLoader", "TensorDataset"}
    if _name(path) not in RUN_KNOWN:
        assert not tr.stubs, [str(d) for d in tr.stubs]


@pytest.mark.slow
@pytest.mark.parametrize("path", sampled([_param(p, RUN_KNOWN) for p in CORPUS], every=4))
def test_transpiled_program_runs_to_completion(path, tmp_path):
    with open(path, encoding="utf-8") as fh:
        tr = translate(fh.read(), path, "keras")
    out = tmp_path / f"{_name(path)}_keras.py"
    out.write_text(tr.text)
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1",
               PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    run_dir = tmp_path / "cwd"
    run_dir.mkdir()
    proc = program_runner.run([sys.executable, str(out)], cwd=run_dir, env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, preload=("torch", "tensorflow"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip()
    assert not list(run_dir.iterdir()), "writes nothing into the working directory"
