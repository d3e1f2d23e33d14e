"""``model.train_on_batch(x, y)`` / ``model.test_on_batch(x, y)`` (Keras → PyTorch): one
step (one evaluation) on the arrays as one batch, through the generated ``fit``/``evaluate``
with ``batch_size=len(x)``; ``batch_logs`` returns what Keras' train_on_batch returns (the
loss, or the loss and the metrics after it). Numerics: the Keras program and the generated
one, from the same weights on the same batches, return the same values call by call."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (torch before tensorflow in one process)

from harness import program_pair
from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(5,)), layers.Dense(8, activation="tanh"), layers.Dense(3)])


def train(model, x, y):
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), METRICS)
    out = []
    for start in range(0, len(x), 16):
        out.append(model.train_on_batch(x[start:start + 16], y[start:start + 16]))
    out.append(model.test_on_batch(x, y))
    return out


def main():
    rng = np.random.default_rng(0)
    print(train(build_model(), rng.normal(size=(32, 5)).astype("float32"), rng.integers(0, 3, size=32)))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("metrics", ["metrics=[]", 'metrics=["accuracy"]'])
def test_train_on_batch_and_test_on_batch_return_what_keras_returns(metrics):
    src = PROGRAM.replace("METRICS", metrics)
    result = translate(src, "on_batch.py", exact=True)  # (the same numbers as Keras: --exact)
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "batch_logs(" in result.text and "batch_size=len(x[start : start + 16])" in result.text
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 3, "on_batch")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 5)).astype("float32")
    y = rng.integers(0, 3, size=48)
    expected = keras_mod.train(kmodel, x, y)
    got = torch_mod.train(tmodel, x, y)
    assert len(got) == len(expected) == 4
    for k, t in zip(expected, got):
        k, t = np.atleast_1d(np.asarray(k, dtype="float64")), np.atleast_1d(np.asarray(t, dtype="float64"))
        assert k.shape == t.shape, (k, t)  # a scalar loss, or [loss, accuracy]
        assert np.allclose(t, k, rtol=1e-4, atol=1e-6), (k, t)


def test_train_on_batch_with_sample_weight_is_a_marked_stub():
    src = PROGRAM.replace("METRICS", "metrics=[]").replace(
        "y[start:start + 16])", "y[start:start + 16], sample_weight=np.ones(16))")
    result = translate(src, "on_batch.py")
    assert any("train_on_batch(sample_weight) is not supported yet" in d.message for d in result.stubs), \
        [str(d) for d in result.stubs]
