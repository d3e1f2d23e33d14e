"""A keras.Model subclass with its own train_step, as keras.io's contrastive learners write
it (semantic_image_clustering's RepresentationLearner): the step calls a helper method of
the model (``self.compute_contrastive_loss``), reads plain settings ``__init__`` stored
(``self.temperature``), is fitted on images (channels-first in torch, read only through
``self(x)`` and the batch size), and the model is compiled with a learning-rate schedule.
Each used to make the step, its fit() and compile() marked stubs; now the program is
translated whole, runs, and its optimizer follows Keras' schedule step by step."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
import torch

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from transpiler.printers.torch import custom_step
from transpiler.translate import translate

SOURCE = '''
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class Learner(keras.Model):
    def __init__(self, units, temperature=0.5, l2_normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.conv = layers.Conv2D(4, 3, activation="relu")
        self.pool = layers.GlobalAveragePooling2D()
        self.head = layers.Dense(units)
        self.temperature = temperature
        self.l2_normalize = l2_normalize
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def contrastive_loss(self, features, batch_size):
        if self.l2_normalize:
            features = keras.utils.normalize(features)
        logits = tf.linalg.matmul(features, features, transpose_b=True) / self.temperature
        targets = keras.ops.tile(tf.eye(batch_size), [1, 1])
        return keras.losses.categorical_crossentropy(y_true=targets, y_pred=logits, from_logits=True)

    def call(self, inputs):
        return self.head(self.pool(self.conv(inputs)))

    def train_step(self, inputs):
        batch_size = keras.ops.shape(inputs)[0]
        with tf.GradientTape() as tape:
            features = self(inputs, training=True)
            loss = self.contrastive_loss(features, batch_size)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.loss_tracker.update_state(loss)
        return {m.name: m.result() for m in self.metrics}


x_data = np.concatenate([np.random.rand(10, 8, 8, 3), np.random.rand(6, 8, 8, 3)]).astype("float32")
learner = Learner(5, temperature=0.1)
schedule = keras.optimizers.schedules.CosineDecay(initial_learning_rate=0.001, decay_steps=10, alpha=0.1)
learner.compile(optimizer=keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.0001))
history = learner.fit(x=x_data, batch_size=4, epochs=1, shuffle=False)
print("loss", history.history["loss"][-1])
'''


@pytest.fixture(scope="module")
def translated():
    return translate(SOURCE, "learner.py")


def test_the_step_its_helper_and_the_schedule_translate_without_stubs(translated):
    assert not translated.stubs, [str(d) for d in translated.stubs]
    text = translated.text
    assert "def contrastive_loss(self, features, batch_size):" in text
    assert "self.temperature = 0.1" in text and "self.l2_normalize = False" in text
    assert "torch.eye(batch_size" in text and "torch.tile(" in text
    assert "register_step_post_hook" in text


def test_the_program_runs_and_follows_keras_schedule(translated, tmp_path):
    """4 batches of 4: after 4 optimizer steps the rate is Keras' CosineDecay at step 4."""
    out = tmp_path / "learner_torch.py"
    out.write_text(translated.text + '\nprint("LR", learner.optimizer.param_groups[0]["lr"])\n')
    proc = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("loss ", "LR ")))
    assert math.isfinite(float(lines["loss"]))
    decayed = (1 - 0.1) * 0.5 * (1 + math.cos(math.pi * 4 / 10)) + 0.1  # Keras' formula, alpha=0.1
    assert float(lines["LR"]) == pytest.approx(0.001 * decayed, rel=1e-9)


@pytest.mark.parametrize("body, free", [
    ("batch = keras.ops.shape(data)[0]\n    y = self(data, training=True)\n    return {'n': batch}", True),
    ("if isinstance(data, tuple):\n        data = data[0]\n    x, y = data[0], data[1]\n"
     "    return {'n': len(x), 'm': y.shape[0], 'p': self(x)}", True),
    ("return {'m': keras.ops.mean(data, axis=-1)}", False),  # an axis of the images
    ("x = data[:, 0]\n    return {'p': self(x)}", False),  # an index of an axis
    ("return {'p': self.encoder(data)}", False),  # a part whose layout is not the model's input's
])
def test_a_step_reads_its_images_layout_free_only_through_the_model_and_the_batch_size(body, free):
    assert custom_step.layout_free(f"def train_step(self, data):\n    {body}\n") is free


def test_a_schedule_handed_to_a_wrapper_models_compile_steps_with_its_optimizer(tmp_path):
    """A model wrapping others (tests/programs/wrapped_models_gan_distiller.py's Distiller)
    compiled with a schedule: its optimizer factory makes optimizers that follow it, one
    schedule step per optimizer step (64 samples in batches of 16, 2 epochs: 8 steps)."""
    import os

    path = os.path.join(os.path.dirname(__file__), "programs", "wrapped_models_gan_distiller.py")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    plain = "optimizer=keras.optimizers.SGD(learning_rate=0.1),"
    assert plain in source
    source = source.replace(plain, "optimizer=keras.optimizers.SGD(learning_rate=keras.optimizers.schedules."
                                   "ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)),")
    result = translate(source, path)
    assert not result.stubs, [str(d) for d in result.stubs]
    lines = result.text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("fit_train_step(distiller,"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f'{indent}print("LR", distiller.optimizer.param_groups[0]["lr"])')
    out = tmp_path / "distiller_torch.py"
    out.write_text("\n".join(lines) + "\n")
    proc = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rate = next(float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("LR "))
    assert rate == pytest.approx(0.1 * 0.5 ** (8 / 2), rel=1e-9)  # Keras' ExponentialDecay at step 8


@pytest.mark.parametrize("call, want", [
    ("tf.eye(n)", lambda t, n: torch.eye(n)),
    ("tf.eye(n, 2 * n)", lambda t, n: torch.eye(n, 2 * n)),
    ("keras.ops.eye(n, dtype='float64')", lambda t, n: torch.eye(n, dtype=torch.float64)),
    ("keras.ops.tile(t, [2, 1])", lambda t, n: torch.cat([t, t])),
    ("tf.tile(t, multiples=[1, 3])", lambda t, n: torch.cat([t, t, t], dim=1)),
    ("tf.range(n)", lambda t, n: torch.arange(n)),
    ("tf.range(1, n, 2)", lambda t, n: torch.arange(1, n, 2)),
    ("tf.range(start=0, limit=n, delta=1)", lambda t, n: torch.arange(n)),
])
def test_eye_tile_and_range_in_a_step_or_loss_function(call, want):
    """The functions contrastive losses build their targets with, in a function the loss table
    translates (a train_step's helper, a custom loss): the same numbers as TensorFlow's."""
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    source = f"import tensorflow as tf\nimport keras\n\ndef f(t, n):\n    return {call}\n"
    module = cst.parse_module(source)
    new, _ = loss_functions.translate_function(module.body[2], loss_functions.module_aliases(module), None)
    namespace = {"torch": torch}
    exec(cst.Module([new]).code, namespace)
    t = torch.arange(6.0).reshape(2, 3)
    got, expected = namespace["f"](t, 4), want(t, 4)
    assert got.dtype == expected.dtype and torch.equal(got, expected)
    import tensorflow as tf

    keras_value = eval(call, {"tf": tf, "keras": __import__("keras"), "t": tf.constant(t.numpy()), "n": 4})
    assert np.array_equal(np.asarray(keras_value), got.numpy())


CALLBACKS = '''
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class Counter(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.batches = 0
        self.epochs = []

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(sorted(logs))


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(keras.ops.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    def test_step(self, data):
        x, y = data
        self.loss_tracker.update_state(keras.ops.mean(keras.ops.square(self(x) - y)))
        return {"loss": self.loss_tracker.result()}


x = np.random.rand(12, 3).astype("float32")
y = np.random.rand(12, 1).astype("float32")
counter = Counter()
net = Net()
net.compile(optimizer=keras.optimizers.SGD(0.1))
net.fit(x, y, batch_size=4, epochs=2, validation_data=(x, y), callbacks=[counter], verbose=0)
print("BATCHES", counter.batches)
print("KEYS", counter.epochs[-1])
'''


def test_own_step_fit_calls_the_scripts_callbacks_and_validates(tmp_path):
    """fit(callbacks=[a Callback subclass], validation_data=(x, y)) of a model with its own
    train_step and test_step: every batch and epoch hook Keras calls, the val_ logs."""
    result = translate(CALLBACKS, "net.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    out = tmp_path / "net_torch.py"
    out.write_text(result.text)
    proc = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "BATCHES 6" in proc.stdout  # 3 batches, 2 epochs: as Keras counts them
    assert "KEYS ['loss', 'val_loss']" in proc.stdout
