"""Generated PyTorch programs that used to fail only when run (keras.io programs, issue 18):

* ``tf.data.Dataset.from_tensor_slices(x).batch(n)`` over ONE array: tf.data gives batches of
  ``x`` (tensors), the loader gave 1-element lists (the model was then called on a list);
  ``model.predict(ds)`` on such a pipeline (or on one of (x, y)) predicts on its ``x``;
* model calls nested in a gradient tape (``head(encoder(x, training=True), training=True)``):
  the inner call kept its ``training=`` keyword (torch's forward takes none);
* a tape training several models (``a.trainable_variables + b.trainable_variables``): a marked
  stub, not an internal error.

Each program is translated and run; where Keras' numbers are deterministic, compared with them.
"""

from __future__ import annotations

import sys

import numpy as np
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from program_runner import run
from transpiler.translate import translate

ONE_ARRAY = '''import numpy as np
import tensorflow as tf
import keras
from keras import layers

x = np.linspace(0, 1, 40 * 5, dtype="float32").reshape(40, 5)
y = x.sum(axis=1, keepdims=True)
model = keras.Sequential([keras.Input(shape=(5,)), layers.Dense(3, activation="relu"), layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=1, batch_size=8, shuffle=False)
ds = tf.data.Dataset.from_tensor_slices(x).batch(16)
pairs = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
shapes = []
for batch in ds:
    shapes.append(tuple(batch.shape))
    out = model(batch)
print("SHAPES", shapes)
print("OUT", tuple(out.shape))
a = model.predict(ds)
b = model.predict(pairs)
c = model.predict(x, batch_size=16)
print("PREDICT", a.shape, b.shape, float(np.abs(a - c).max()), float(np.abs(b - c).max()))
'''


def _run_translation(source, tmp_path, name="prog"):
    result = translate(source, f"{name}.py")
    assert not result.stubs, [s.message for s in result.stubs]
    path = tmp_path / f"{name}_torch.py"
    path.write_text(result.text)
    done = run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:] + "\n" + result.text
    return result, done.stdout


def test_a_pipeline_over_one_array_gives_tensors_and_predict_reads_its_arrays(tmp_path):
    result, out = _run_translation(ONE_ARRAY, tmp_path)
    assert "SHAPES [(16, 5), (16, 5), (8, 5)]" in out, out  # (tensors: the last batch smaller)
    assert "OUT (8, 1)" in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("PREDICT"))
    parts = line.split()
    assert parts[1:5] == ["(40,", "1)", "(40,", "1)"], line
    assert float(parts[5]) == 0.0 and float(parts[6]) == 0.0, line
    assert "predict(model, x, batch_size=16)" in result.text, result.text


NESTED = '''import numpy as np
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
x_train = rng.random((48, 6)).astype("float32")
y_train = (x_train.sum(axis=1) > 3).astype("int64")

encoder = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(8, activation="relu"), layers.Dropout(0.5)],
                           name="encoder")
head = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(2)], name="head")
optimizer = keras.optimizers.SGD(0.1)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(16)
for step, (xb, yb) in enumerate(ds):
    with tf.GradientTape() as tape:
        logits = head(encoder(xb, training=True), training=True)
        loss = loss_fn(yb, logits)
    grads = tape.gradient(loss, head.trainable_variables)
    optimizer.apply_gradients(zip(grads, head.trainable_variables))
    print("STEP", step, float(loss))
'''


def test_model_calls_nested_in_a_tape_run_each_in_its_mode(tmp_path):
    result, out = _run_translation(NESTED, tmp_path)
    assert "training=True)" not in result.text.replace("training=True, grad=True)", ""), result.text
    # the encoder is not the model the tape trains: its call sets its mode (dropout on) itself
    assert "call_model(encoder, xb, training=True, grad=True)" in result.text, result.text
    losses = [float(ln.split()[2]) for ln in out.splitlines() if ln.startswith("STEP")]
    assert len(losses) == 3 and all(np.isfinite(losses)), out


def test_a_tape_training_two_models_is_a_stub_not_an_internal_error():
    source = NESTED.replace("head.trainable_variables", "encoder.trainable_variables + head.trainable_variables")
    result = translate(source, "prog.py")
    assert any("GradientTape" in s.message or "apply_gradients" in s.message for s in result.stubs), \
        [s.message for s in result.stubs]


GATE = '''import numpy as np
import keras
from keras import layers


class Gate(keras.layers.Layer):
    def __init__(self, channels, **kwargs):
        super().__init__(**kwargs)
        self.channels = channels

    def build(self, input_shape):
        self.kernel_gen = keras.Sequential(
            [layers.Conv2D(filters=1, kernel_size=1), layers.ReLU(), layers.Conv2D(filters=self.channels, kernel_size=1)]
        )

    def call(self, x):
        return x * keras.ops.sigmoid(self.kernel_gen(x))


gated = Gate(channels=3)(np.zeros((1, 8, 8, 3), "float32"))
print("EAGER", tuple(gated.shape))

inputs = keras.Input((8, 8, 3))
x = Gate(channels=3)(inputs)
x = layers.GlobalAveragePooling2D()(x)
model = keras.Model(inputs, layers.Dense(2)(x))
'''


def test_a_layer_of_the_script_called_outside_any_model_is_a_stub(tmp_path):
    """``Gate(channels=3)(array)`` at module level: the module class is specialised for the
    model's calls (no constructor arguments, channels-first tensors): a marked stub that raises
    where the result is used, not a TypeError."""
    result = translate(GATE, "prog.py")
    assert any("called outside any model" in s.message for s in result.stubs), [s.message for s in result.stubs]
    assert len(result.program.models) == 1
    path = tmp_path / "prog_torch.py"
    path.write_text(result.text)
    done = run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "NotImplementedError: transpiler: Gate(...)(...)" in done.stderr, done.stderr


def _defined_before_use(text: str) -> list[str]:
    """Module-level classes a class or statement builds before the class is defined."""
    import ast

    tree = ast.parse(text)
    where = {s.name: i for i, s in enumerate(tree.body) if isinstance(s, ast.ClassDef)}
    late = []
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and where.get(node.func.id, -1) > i:
                late.append(f"{node.func.id} used at line {node.lineno}")
    return late


def test_a_model_a_layer_class_builds_is_defined_before_that_class():
    """keras.io's involution: each Involution layer builds a Sequential (``self.kernel_gen``);
    its module class went before the last model's class, after the Involution classes that
    build it (NameError when the first one was built)."""
    import pathlib

    import pytest

    source = pathlib.Path("/work/shared/realworld/keras/involution.py")
    if not source.exists():
        pytest.skip("the shared real-world scripts are not here")
    result = translate(source.read_text(), str(source))
    assert "class KernelGen(nn.Module)" in result.text
    assert _defined_before_use(result.text) == []
