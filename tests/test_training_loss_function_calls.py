"""Keras loss functions applied to tensors in a custom GradientTape loop
(``loss = keras.losses.sparse_categorical_crossentropy(labels, preds)``, keras.io's reptile):
the call is the runtime's per-sample loss function of (output, target) and ``tape.gradient``
of those per-sample values is the gradient of their sum, as in TensorFlow (the statement was
a stub: "positional arguments are not supported"). Numerics: the Keras program and the
generated one, from the same weights on the same batches, report the same losses step by
step."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (torch before tensorflow in one process)

from harness import program_pair
from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import tensorflow as tf
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(3, activation=ACTIVATION)(x))


def train(model, x, y):
    optimizer = keras.optimizers.SGD(learning_rate=0.05)
    losses = []
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            preds = model(xb)
            loss = LOSS
            mean = tf.reduce_mean(loss)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        losses.append(float(mean))
    return losses


def main():
    rng = np.random.default_rng(0)
    print(train(build_model(), rng.normal(size=(64, 8)).astype("float32"), rng.integers(0, 3, size=64)))


if __name__ == "__main__":
    main()
'''

CASES = [
    ("softmax", "keras.losses.sparse_categorical_crossentropy(yb, preds)", "int"),
    (None, "keras.losses.sparse_categorical_crossentropy(yb, preds, from_logits=True)", "int"),
    (None, "keras.losses.mean_squared_error(yb, preds)", "float"),
]


@pytest.mark.parametrize("activation,loss,labels", CASES)
def test_a_loss_function_on_tensors_in_a_tape_trains_like_keras(activation, loss, labels):
    src = PROGRAM.replace("ACTIVATION", repr(activation)).replace("LOSS", loss)
    result = translate(src, "loss_calls.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert ".sum().backward()" in result.text  # (per-sample values: the gradient of their sum)
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 3, "loss_calls")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = rng.integers(0, 3, size=64) if labels == "int" else rng.normal(size=(64, 3)).astype("float32")
    expected = np.array(keras_mod.train(kmodel, x, y))
    got = np.array(torch_mod.train(tmodel, x, y))
    assert expected.shape == got.shape == (4,)
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (expected, got)
    assert not np.allclose(expected[0], expected[-1])  # (it trained)


def test_a_loss_function_with_arguments_not_translated_is_a_stub():
    src = PROGRAM.replace("ACTIVATION", "None").replace(
        "LOSS", "keras.losses.sparse_categorical_crossentropy(yb, preds, ignore_class=1)")
    result = translate(src, "loss_calls.py")
    assert any("sparse_categorical_crossentropy" in str(d) for d in result.stubs), [str(d) for d in result.stubs]


def test_einsum_and_arange_in_a_tape_train_like_keras():
    """metric_learning's step: similarities by ``ops.einsum("ae,pe->ap", ...)`` and the labels
    ``ops.arange(n)`` (they had no torch translation)."""
    src = PROGRAM.replace("ACTIVATION", "None").replace("            loss = LOSS\n", (
        '            similarities = keras.ops.einsum("ae,pe->ap", preds, preds) / 0.2\n'
        "            labels = keras.ops.arange(16)\n"
        "            loss = keras.losses.sparse_categorical_crossentropy(labels, similarities, from_logits=True)\n"))
    result = translate(src, "einsum_step.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "torch.einsum(" in result.text and "torch.arange(16)" in result.text
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 3, "einsum_step")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = rng.integers(0, 3, size=64)
    expected = np.array(keras_mod.train(kmodel, x, y))
    got = np.array(torch_mod.train(tmodel, x, y))
    assert expected.shape == got.shape == (4,)
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (expected, got)
