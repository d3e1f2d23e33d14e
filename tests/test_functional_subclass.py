"""A ``keras.Model`` subclass with neither ``__init__`` nor ``call()`` (only its own
``train_step`` and ``metrics``) constructed as ``CustomModel(inputs, outputs)``: Keras makes a
Functional model of that class (keras.io's "customizing fit" guide, BERT's
MaskedLanguageModel). The reader reads it as the Functional model of those tensors with the
class's methods: the forward matches Keras numerically, and the generated program trains through
the class's own train_step.
"""

from __future__ import annotations

import sys

import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from harness import check_source, max_error
from program_runner import run
from transpiler.translate import translate

CLASS = '''import numpy as np
import tensorflow as tf
import keras
from keras import layers

loss_fn = keras.losses.MeanSquaredError()
loss_tracker = keras.metrics.Mean(name="loss")


class CustomModel(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = loss_fn(y, y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        loss_tracker.update_state(loss)
        return {"loss": loss_tracker.result()}

    @property
    def metrics(self):
        return [loss_tracker]


def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    outputs = layers.Dense(3)(x)
    return CustomModel(inputs, outputs, name="custom")
'''

PROGRAM = CLASS + '''

model = build_model()
model.compile(optimizer="adam")
xs = np.random.random((64, 8))
ys = np.random.random((64, 3))
model.fit(xs, ys, epochs=2, batch_size=16)
print("predicted", model.predict(xs[:4]).shape)
'''


def test_functional_subclass_forward_matches_keras():
    checked = check_source(CLASS)
    assert max_error(checked) <= 1e-5, checked.translation.text
    assert checked.keras_params == checked.torch_params
    assert "class CustomModel(nn.Module)" in checked.translation.text


def test_functional_subclass_program_trains_through_its_train_step(tmp_path):
    result = translate(PROGRAM, "prog.py")
    assert not result.stubs, [s.message for s in result.stubs]
    assert "def train_step(self, data)" in result.text
    path = tmp_path / "prog_torch.py"
    path.write_text(result.text)
    done = run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Epoch 2/2 - loss:" in done.stdout and "predicted (4, 3)" in done.stdout, done.stdout
