"""``keras.models.clone_model(model)`` → the runtime's ``clone_model``: ``copy.deepcopy`` of
the module, every module re-initialised (Keras builds new layers from the config; the
weights are not copied). What the program does with the clone (compile, fit, evaluate) is
translated like the original's (issue 18 item 3)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

CLONE = '''
import numpy as np
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(8,)), layers.Dense(16, activation="relu"),
                             layers.BatchNormalization(), layers.Dense(1)])


def main():
    x = np.random.rand(64, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    fresh = keras.models.clone_model(model)
    fresh.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    fresh.fit(x, y, epochs=2, batch_size=16, verbose=0)
    print("trained:", model.evaluate(x, y, verbose=0), "clone:", fresh.evaluate(x, y, verbose=0))


if __name__ == "__main__":
    main()
'''


def test_clone_model_and_its_training_are_translated():
    result = translate(CLONE, "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    text = result.text
    assert "fresh = clone_model(model)" in text
    assert "def clone_model(model):" in text and "copy.deepcopy(model)" in text
    assert "torch.optim.SGD(fresh.parameters(), lr=0.01)" in text
    assert "import keras" not in text and "keras.models" not in text.split('"""')[-1]


def test_clone_model_program_runs(tmp_path):
    result = translate(CLONE, "case.py")
    (tmp_path / "out.py").write_text(result.text)
    done = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trained:" in done.stdout and "clone:" in done.stdout


def test_runtime_clone_model_reinitialises_a_copy_and_leaves_the_original():
    torch = pytest.importorskip("torch")
    from transpiler.runtime.torch.training import clone_model

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(0.5)  # "trained" weights
        model[1].running_mean.fill_(2.0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    clone = clone_model(model)
    assert clone is not model and type(clone) is type(model)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key  # the original is untouched
        assert clone.state_dict()[key].shape == value.shape
    assert not torch.equal(clone[0].weight, model[0].weight)  # drawn again, not copied
    assert torch.equal(clone[1].running_mean, torch.zeros(3))  # statistics reset too
    assert all(p.data_ptr() != q.data_ptr() for p, q in zip(clone.parameters(), model.parameters()))


def test_clone_model_with_a_clone_function_is_a_stub():
    source = CLONE.replace("keras.models.clone_model(model)",
                           "keras.models.clone_model(model, clone_function=lambda layer: layer)")
    result = translate(source, "case.py")
    assert any("clone_model" in (d.source_line or "") or "clone_model" in d.message for d in result.stubs)
