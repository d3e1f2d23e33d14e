"""``model(x)`` on arrays in the training program runs the model's layers in the mode Keras runs
them in (issue 18, a silent difference found on keras.io's semantic image clustering): without a
``training`` flag each Keras layer takes its own call default, inference for Dropout and
BatchNormalization, training for the image augmentation layers (``RandomFlip``, ``RandomRotation``,
...: ``call(self, data, training=True)``), so a Sequential of augmentations called on images
augments them. Each program here is run as Keras and, translated, as PyTorch; what it prints
(augmented or not, dropout applied or not) must be the same."""

from __future__ import annotations

import sys

import pytest

from transpiler.ir import training_modes
from transpiler.ir.graph import Graph
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

AUGMENT = '''
import numpy as np
import keras
from keras import layers

images = np.random.RandomState(0).rand(6, 16, 16, 3).astype("float32") * 255.0

data_augmentation = keras.Sequential(
    [
        layers.RandomFlip(mode="horizontal"),
        layers.RandomRotation(factor=0.15, fill_mode="nearest"),
    ]
)
augmented = data_augmentation(images)
print("default augments:", float(np.abs(np.asarray(augmented) - images).max()) > 1.0)
print("tensor out:", augmented[0].numpy().shape)
fixed = data_augmentation(images, training=False)
print("training=False keeps:", float(np.abs(np.asarray(fixed) - images).max()) == 0.0)
print("fixed tensor out:", fixed[0].numpy().shape)
forced = data_augmentation(images, training=True)
print("training=True augments:", float(np.abs(np.asarray(forced) - images).max()) > 1.0)
'''

DROPOUT = '''
import numpy as np
import keras
from keras import layers

x = np.random.RandomState(0).rand(8, 6).astype("float32")
model = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(16), layers.Dropout(0.5), layers.Dense(2)])
first = np.asarray(model(x))
print("default at inference:", bool(np.allclose(first, np.asarray(model(x)))))
print("training=True drops:", not bool(np.allclose(np.asarray(model(x, training=True)), first)))
print("inference again:", bool(np.allclose(first, np.asarray(model(x)))))
'''


def _outputs(source: str, tmp_path) -> tuple[str, str]:
    result = translate(source, "case.py", exact=True)
    assert not result.stubs, [d.message for d in result.stubs]
    (tmp_path / "case.py").write_text(source)
    (tmp_path / "out.py").write_text(result.text)
    env = {"PATH": "/usr/bin:/bin", "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    keras_run = program_runner.run([sys.executable, "case.py"], cwd=tmp_path, capture_output=True, text=True,
                                   timeout=300, env=env, preload=())
    assert keras_run.returncode == 0, keras_run.stderr[-2000:]
    torch_run = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True,
                                   timeout=300)
    assert torch_run.returncode == 0, torch_run.stderr[-2000:]
    return keras_run.stdout, torch_run.stdout


def test_augmentation_model_called_on_arrays_augments_as_in_keras(tmp_path):
    text = translate(AUGMENT, "case.py", exact=True).text
    assert "call_model(data_augmentation, images, training=True)" in text
    keras_out, torch_out = _outputs(AUGMENT, tmp_path)
    assert "default augments: True" in keras_out  # (Keras' own behaviour, checked here)
    assert torch_out == keras_out


def test_dropout_model_called_on_arrays_runs_as_in_keras(tmp_path):
    keras_out, torch_out = _outputs(DROPOUT, tmp_path)
    assert "default at inference: True" in keras_out and "training=True drops: True" in keras_out
    assert torch_out == keras_out


def _graph(*nodes) -> Graph:
    graph = Graph("g")
    x = graph.new_value("x", shape=(None, 8, 8, 3))
    for op, attrs in nodes:
        node = graph.add_node(op, op, [x], attrs=attrs)
        x = node.outputs[0]
    return graph


@pytest.mark.parametrize("nodes, mode", [
    ([], "infer"),
    ([("relu", {})], "infer"),
    ([("random_augmentation", {"kind": "RandomFlip", "config": {"mode": "horizontal"}})], "train"),
    ([("random_augmentation", {"kind": "GaussianNoise", "config": {"stddev": 0.1}})], "infer"),
    ([("random_augmentation", {"kind": "RandomFlip", "config": {}}), ("dropout", {"rate": 0.5})], "mixed"),
    ([("random_crop", {"size": (4, 4)}), ("relu", {})], "train"),
    ([("lstm", {"units": 4, "dropout": 0.2})], "infer"),
])
def test_default_mode_of_a_graph(nodes, mode):
    assert training_modes.default_mode(_graph(*nodes)) == mode


TAPE_WITHOUT_FLAG = """
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.RandomState(0)
x = rng.rand(16, 6).astype("float32")
y = rng.rand(16, 2).astype("float32")
model = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(16), layers.Dropout(0.5), layers.Dense(2)])
model.compile(optimizer="sgd", loss="mse")
model.evaluate(x, y, verbose=0)
model.predict(x, verbose=0)
optimizer = keras.optimizers.SGD(learning_rate=0.01)
loss_fn = keras.losses.MeanSquaredError()
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
variables = model.trainable_variables
losses = []
for xb, yb in dataset:
    with tf.GradientTape() as tape:
        first = model(xb, training=True)
        second = model(xb, training=True)
        loss = loss_fn(first, second)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    losses.append(float(loss))
print("tape with training=True drops:", all(value > 0.0 for value in losses))
flagless = []
for xb, yb in dataset:
    with tf.GradientTape() as tape:
        first = model(xb)
        second = model(xb)
        loss = loss_fn(first, second)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    flagless.append(float(loss))
print("tape without a flag at inference:", all(value == 0.0 for value in flagless))
"""

PREDICT_THEN_TAPE = """
import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.RandomState(0)
x = rng.rand(16, 6).astype("float32")
y = rng.rand(16, 2).astype("float32")
encoder = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(16), layers.Dropout(0.5)])
head = keras.Sequential([keras.Input(shape=(16,)), layers.Dense(2)])
head.compile(optimizer="sgd", loss="mse")
features = encoder.predict(x, verbose=0)
head.evaluate(features, y, verbose=0)
optimizer = keras.optimizers.SGD(learning_rate=0.01)
loss_fn = keras.losses.MeanSquaredError()
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
losses = []
for xb, yb in dataset:
    with tf.GradientTape() as tape:
        noisy = encoder(xb, training=True)
        first = head(noisy)
        noisy_again = encoder(xb, training=True)
        second = head(noisy_again)
        loss = loss_fn(first, second)
    grads = tape.gradient(loss, head.trainable_variables)
    optimizer.apply_gradients(zip(grads, head.trainable_variables))
    losses.append(float(loss))
print("after predict, training=True drops:", all(value > 0.0 for value in losses))
flagless = []
for xb, yb in dataset:
    with tf.GradientTape() as tape:
        plain = encoder(xb)
        first = head(plain)
        plain_again = encoder(xb)
        second = head(plain_again)
        loss = loss_fn(first, second)
    grads = tape.gradient(loss, head.trainable_variables)
    optimizer.apply_gradients(zip(grads, head.trainable_variables))
    flagless.append(float(loss))
print("without a flag at inference:", all(value == 0.0 for value in flagless))
"""


def test_tape_without_flag_runs_dropout_at_inference_as_in_keras(tmp_path):
    """``model(x)`` under ``tf.GradientTape()`` without ``training=``: Keras runs Dropout at
    inference (the layer's call default), so two calls agree; the translation set train mode
    for the tape and dropped units."""
    text = translate(TAPE_WITHOUT_FLAG, "case.py", exact=True).text
    assert "call_model(model, xb, grad=True)" in text
    keras_out, torch_out = _outputs(TAPE_WITHOUT_FLAG, tmp_path)
    assert "tape without a flag at inference: True" in keras_out
    assert torch_out == keras_out


def test_predict_and_evaluate_leave_the_model_mode_as_it_was(tmp_path):
    """Keras' predict/evaluate set the mode per call; the generated helpers put the model in
    eval mode and left it there, so a later ``encoder(x, training=True)`` in a tape (a plain
    torch forward, the mode the model is in) ran without dropout."""
    keras_out, torch_out = _outputs(PREDICT_THEN_TAPE, tmp_path)
    assert "after predict, training=True drops: True" in keras_out
    assert torch_out == keras_out
