"""keras.utils.timeseries_dataset_from_array without TensorFlow (runtime/torch/timeseries.py):
the same windows and targets in the same batches as Keras on the same arrays; a script that
builds its data with it (keras.io's weather forecasting, reduced) translates with no stub and
its generated program trains on those batches."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler.runtime.torch.timeseries import timeseries_dataset_from_array
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SCRIPT = os.path.join(ROOT, "corpus", "keras", "timeseries_windows.py")

ARGS = [
    dict(sequence_length=5, batch_size=4),
    dict(sequence_length=4, sampling_rate=3, batch_size=7),
    dict(sequence_length=3, sequence_stride=4, sampling_rate=2, batch_size=3),
    dict(sequence_length=6, start_index=5, end_index=40, batch_size=8),
]


def _keras_batches(data, targets, **kwargs):
    keras = pytest.importorskip("keras")
    ds = keras.utils.timeseries_dataset_from_array(data, targets, **kwargs)
    return [tuple(np.asarray(t) for t in b) if isinstance(b, tuple) else (np.asarray(b),) for b in ds]


@pytest.mark.parametrize("kwargs", ARGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("with_targets", [True, False], ids=["targets", "no-targets"])
def test_batches_equal_keras(kwargs, with_targets):
    rng = np.random.RandomState(0)
    data = rng.randn(50, 3)
    targets = rng.randint(0, 4, 50) if with_targets else None
    theirs = _keras_batches(data, targets, **kwargs)
    ours = [tuple(t.numpy() for t in b) if isinstance(b, (tuple, list)) else (b.numpy(),)
            for b in timeseries_dataset_from_array(data, targets, **kwargs)]
    assert len(ours) == len(theirs) > 1
    for a, b in zip(ours, theirs):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert x.shape == y.shape
            np.testing.assert_allclose(x, y, rtol=1e-6)  # (float32 here, Keras keeps float64)


def test_shuffled_pass_holds_keras_windows():
    """shuffle=True: every pass holds Keras' windows, each once, with their own targets (the
    order differs: see the module's docstring)."""
    data = np.arange(60, dtype=np.float32).reshape(30, 2)
    targets = np.arange(30)
    kwargs = dict(sequence_length=4, batch_size=5, shuffle=True, seed=3)
    theirs = _keras_batches(data, targets, **kwargs)
    ours = list(timeseries_dataset_from_array(data, targets, **kwargs))
    key = lambda x, y: (tuple(np.asarray(x).ravel().tolist()), int(y))  # noqa: E731
    theirs_set = sorted(key(x, y) for xb, yb in theirs for x, y in zip(xb, yb))
    ours_set = sorted(key(x, y) for xb, yb in ours for x, y in zip(xb.numpy(), yb.numpy()))
    assert ours_set == theirs_set and len(ours_set) == 27


def test_take_gives_the_first_batches():
    data = np.arange(40, dtype=np.float32).reshape(20, 2)
    batches = timeseries_dataset_from_array(data, None, sequence_length=3, batch_size=4)
    first = list(batches.take(2))
    assert len(first) == 2 and np.array_equal(first[1].numpy(), list(batches)[1].numpy())
    assert len(list(batches.take(-1))) == len(batches)


def test_timeseries_script_translates_without_stub_and_runs(tmp_path):
    """fit(dataset_train, validation_data=dataset_val) on the loaders, and the script's own
    ``for batch in dataset_train.take(1)`` giving the model's input size."""
    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    assert "timeseries_dataset_from_array(" in result.text
    out = tmp_path / "timeseries_windows_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Input shape: (16, 12, 3)" in run.stdout and "val_loss" in run.stdout
