"""The numeric differences the idiomatic default documents (printers/differences.py), each
measured on the corpus: the largest relative difference of the per-step loss over 20 training
steps, float64, dropout off, the same batches.

* An optimizer's difference: the idiomatic program against the source framework's run from
  the same initial weights (the --exact program agrees to 1e-4: tests/test_training_equivalence.py,
  tests/test_torch_corpus_keras.py, tests/test_optimizers_torch_to_keras.py). Optimizers the
  corpus does not use are measured on a corpus program whose optimizer line is replaced.
* Initial weights: the idiomatic program and the --exact one, each from the weights its own
  code draws (one seed), trained alike (an optimizer both modes write the same way, so only the
  initialisation differs).
* Keras' Embedding slices: Keras as it runs against Keras with the table's gradient densified.

Each catalogue figure must be what is measured here (not below it, nor more than 1.5 times it),
and the translation must list the difference where it occurs. Run this file as a script to
print the measurements.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)

from transpiler.ir import training as T
from transpiler.printers import differences
from transpiler.translate import translate
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERAS_CORPUS = os.path.join(ROOT, "corpus", "keras")
TORCH_CORPUS = os.path.join(ROOT, "corpus", "torch")
#: the optimizer line of corpus/torch/mlp_regression.py, replaced to measure the optimizers the
#: torch corpus does not use (the rest of the program, its StepLR included, as it is)
MLP_OPTIMIZER = "torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)"
REPLACED_OPTIMIZERS = {
    "sgd_momentum": "torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)",
    "rmsprop_epsilon": "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)",
    "adagrad_epsilon": "torch.optim.Adagrad(model.parameters(), lr=0.05)",
    "adamax_epsilon": "torch.optim.Adamax(model.parameters(), lr=0.01)",
    "nadam_schedule": "torch.optim.NAdam(model.parameters(), lr=0.01)",
}


def _rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    assert len(a) == len(b) == 20 and np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    return float((np.abs(a - b) / np.maximum(np.abs(a), 1e-8)).max())


def _torch_loops():
    from transpiler.verify_training_to_keras import LoopFacts

    return {"mnist_cnn": LoopFacts(), "gru_regression": LoopFacts(scheduler="plateau", clip_norm=1.0),
            "lstm_classifier": LoopFacts(clip_norm=1.0), "mlp_regression": LoopFacts(scheduler="epoch")}


def _to_keras_drift(path: str, name: str, **kwargs) -> float:
    from transpiler.verify_training_to_keras import run_both

    t, k = run_both(path, _torch_loops()[name], **kwargs)
    return _rel(t, k)


def _mlp_with(optimizer: str, folder) -> str:
    source = open(os.path.join(TORCH_CORPUS, "mlp_regression.py"), encoding="utf-8").read()
    assert MLP_OPTIMIZER in source
    path = os.path.join(str(folder), "mlp_regression.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source.replace(MLP_OPTIMIZER, optimizer))
    return path


def measure_to_keras(key: str, folder) -> tuple[float, list[str]]:
    """(the drift, the paths measured) of ``differences.TO_KERAS[key]``."""
    if key == "initializers":  # TorchSGD (its coupled L2) in both modes: only the initial weights differ
        from transpiler.verify_training_to_keras import run_both

        path = os.path.join(TORCH_CORPUS, "mlp_regression.py")
        facts = _torch_loops()["mlp_regression"]
        _, idiomatic = run_both(path, facts, own_weights=True)
        _, exact = run_both(path, facts, own_weights=True, exact=True)
        return _rel(exact, idiomatic), [path]
    if key == "adam_epsilon":
        paths = [os.path.join(TORCH_CORPUS, f"{n}.py") for n in ("mnist_cnn", "gru_regression")]
        return max(_to_keras_drift(p, os.path.basename(p)[:-3]) for p in paths), paths
    if key == "lstm_bias_rate":
        path = os.path.join(TORCH_CORPUS, "lstm_classifier.py")
        return _to_keras_drift(path, "lstm_classifier"), [path]
    path = _mlp_with(REPLACED_OPTIMIZERS[key], folder)
    return _to_keras_drift(path, "mlp_regression"), [path]


def measure_to_pytorch(key: str) -> tuple[float, list[str]]:
    """(the drift, the paths measured) of ``differences.TO_PYTORCH[key]``."""
    from transpiler.verify_training import run_both

    if key == "initializers":  # plain SGD in both modes: only the initial weights differ
        path = os.path.join(KERAS_CORPUS, "mlp_regression.py")
        sgd = T.Optimizer("sgd", {**T.OPTIMIZER_DEFAULTS["sgd"], "learning_rate": 0.05})
        _, idiomatic = run_both(path, sgd, own_weights=True)
        _, exact = run_both(path, sgd, own_weights=True, exact=True)
        return _rel(exact, idiomatic), [path]
    if key == "embedding_slices":
        paths = [os.path.join(KERAS_CORPUS, f"{n}.py") for n in ("lstm_classifier", "text_cnn")]
        drifts = []
        for path in paths:
            raw, _ = run_both(path)
            dense, _ = run_both(path, dense_embedding_gradients=True)
            drifts.append(_rel(raw, dense))
        return max(drifts), paths
    names = {"adam_epsilon": ("mlp_regression", "conv1d_timeseries"), "rmsprop_epsilon": ("custom_layers",)}[key]
    paths = [os.path.join(KERAS_CORPUS, f"{n}.py") for n in names]
    return max(_rel(*run_both(p)) for p in paths), paths


def _check(diff: differences.Difference, measured: float) -> None:
    assert measured > 0, "no difference measured: the catalogue entry describes nothing"
    assert measured <= diff.drift <= 1.5 * measured, (
        f"the catalogue states {diff.drift:.1e}, the corpus measures {measured:.3e}: {diff.text}")


@pytest.mark.slow
@pytest.mark.parametrize("key", sampled(sorted(differences.TO_KERAS)))
def test_to_keras_difference_is_what_the_corpus_measures(key, tmp_path):
    measured, paths = measure_to_keras(key, tmp_path)
    _check(differences.TO_KERAS[key], measured)
    line = differences.TO_KERAS[key].line()
    for path in paths:  # the idiomatic translation lists it, the exact one does not
        source = open(path, encoding="utf-8").read()
        assert line in translate(source, path, "keras").differences
        assert translate(source, path, "keras", exact=True).differences == []


@pytest.mark.slow
@pytest.mark.parametrize("key", sampled(sorted(differences.TO_PYTORCH)))
def test_to_pytorch_difference_is_what_the_corpus_measures(key):
    measured, paths = measure_to_pytorch(key)
    _check(differences.TO_PYTORCH[key], measured)
    line = differences.TO_PYTORCH[key].line()
    for path in paths:
        source = open(path, encoding="utf-8").read()
        assert line in translate(source, path).differences
        assert translate(source, path, exact=True).differences == []


def test_every_difference_line_names_its_size_and_the_flag():
    for table in (differences.TO_KERAS, differences.TO_PYTORCH):
        for diff in table.values():
            line = diff.line()
            assert re.search(r"max relative loss drift over 20 steps: \d\.\de[-+]\d\d", line), line
            assert "--exact" in line and diff.measured_on in line


if __name__ == "__main__":
    import sys
    import tempfile

    which = sys.argv[1:] or ["keras", "pytorch"]
    with tempfile.TemporaryDirectory() as folder:
        if "keras" in which:
            for key in sorted(differences.TO_KERAS):
                print("to keras", key, "%.3e" % measure_to_keras(key, folder)[0], flush=True)
        if "pytorch" in which:
            for key in sorted(differences.TO_PYTORCH):
                print("to pytorch", key, "%.3e" % measure_to_pytorch(key)[0], flush=True)
