"""Keras metric objects in a custom GradientTape loop (Keras' "training loop from scratch"
guide): ``keras.metrics.Mean()`` and the accuracies (``SparseCategoricalAccuracy()``, ...)
become the generated ``Mean`` / ``MeanMetricWrapper`` with Keras' ``update_state`` /
``result`` / ``reset_state`` (the assignment was a stub). Numerics: the Keras program and the
generated one, from the same weights on the same batches, report the same metric values epoch
by epoch; a metric object not translated in a loop is a stub."""

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
    return keras.Model(inputs, layers.Dense(3)(x))


def train(model, x, y):
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    optimizer = keras.optimizers.Adam(1e-2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = keras.metrics.Mean(name="train_loss")
    train_acc = METRIC
    history = []
    for epoch in range(3):
        for xb, yb in dataset:
            with tf.GradientTape() as tape:
                logits = model(xb, training=True)
                loss_value = loss_fn(yb, logits)
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            train_loss.update_state(loss_value)
            train_acc.update_state(yb, logits)
        history.append((float(train_loss.result()), float(train_acc.result())))
        train_loss.reset_state()
        train_acc.reset_state()
    return history


def main():
    rng = np.random.default_rng(0)
    print(train(build_model(), rng.normal(size=(64, 8)).astype("float32"), rng.integers(0, 3, size=64)))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("metric", ["keras.metrics.SparseCategoricalAccuracy()",
                                    'keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")'])
def test_metric_objects_in_a_custom_loop_report_what_keras_reports(metric):
    src = PROGRAM.replace("METRIC", metric)
    result = translate(src, "loop_metrics.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert 'train_loss = Mean(name="train_loss")' in result.text and "MeanMetricWrapper(" in result.text
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 2, "loop_metrics")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(48, 8)).astype("float32")
    y = rng.integers(0, 3, size=48)
    expected = np.array(keras_mod.train(kmodel, x, y))
    got = np.array(torch_mod.train(tmodel, x, y))
    assert expected.shape == got.shape == (3, 2)
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (expected, got)


def test_a_metric_object_not_translated_in_a_loop_is_a_stub():
    src = PROGRAM.replace("METRIC", "keras.metrics.AUC()")
    result = translate(src, "loop_metrics.py")
    assert any("the metric object auc in a custom loop" in d.message for d in result.stubs), \
        [str(d) for d in result.stubs]
