"""Generated PyTorch programs that failed only when run (no stub printed), classes found on the
keras.io scripts (issue 18, second pass). Each case is a small program written here (the shared
scripts are only read, never copied); each test translates it with ``--exact`` and runs the output.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

from transpiler.translate import translate
import program_runner  # (a warm fork: tests/program_runner.py)

REALWORLD = pathlib.Path(__file__).resolve().parents[2] / "shared" / "realworld" / "keras"


def translated(source: str, stubs: int = 0):
    result = translate(textwrap.dedent(source), "case.py", exact=True)
    assert len(result.stubs) == stubs, [d.message for d in result.stubs]
    return result


def run(text: str, folder, ok: bool = True) -> subprocess.CompletedProcess:
    (folder / "out.py").write_text(text)
    done = program_runner.run([sys.executable, "out.py"], cwd=folder, capture_output=True, text=True, timeout=300,
                              env=program_runner.bare_env(), preload=("torch", "tensorflow"))
    if ok:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


# -- model(x) on numpy arrays, outside a training step ------------------------------------------
# Keras converts the arrays and runs the model in inference mode, returning tensors; the output
# called the torch module on the numpy array ("linear(): argument 'input' must be Tensor").
MODEL_CALL_ON_ARRAYS = """
import numpy as np
import keras
from keras import layers

inp = keras.Input(shape=(6,))
x = layers.Dense(4, activation="relu")(inp)
x = layers.Dropout(0.5)(x)
out = layers.Dense(2, activation="softmax")(x)
model = keras.Model(inp, out)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
x_train = np.random.RandomState(0).rand(8, 6).astype("float32")
y_train = np.arange(8) % 2
model.fit(x_train, y_train, epochs=1, batch_size=4, verbose=0)
preds = model(x_train)
print("direct", tuple(preds.shape), np.asarray(preds).sum(axis=1).round(4).tolist() == [1.0] * 8)
print("same twice", bool(np.allclose(np.asarray(model(x_train)), np.asarray(preds))))


def show(m, data):
    print("in function", tuple(m(data[:3]).shape))


show(model, x_train.astype("float64"))
"""


def test_model_called_on_numpy_arrays_runs_in_inference_mode(tmp_path):
    result = translated(MODEL_CALL_ON_ARRAYS)
    assert "call_model(model, x_train)" in result.text
    out = run(result.text, tmp_path).stdout
    # (Dropout off: two calls agree, as in Keras, where training defaults to False here)
    assert "direct (8, 2) True" in out and "same twice True" in out and "in function (3, 2)" in out


TAPE_MODEL_CALL = """
import numpy as np
import tensorflow as tf
import keras
from keras import layers

inp = keras.Input(shape=(6,))
model = keras.Model(inp, layers.Dense(2)(inp))
optimizer = keras.optimizers.SGD(0.1)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
x_train = np.random.RandomState(0).rand(8, 6).astype("float32")
y_train = np.arange(8) % 2
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(4)
for x, y in dataset:
    with tf.GradientTape() as tape:
        logits = model(x)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
print("after", tuple(model(x_train).shape))
"""


def test_model_call_in_a_gradient_tape_keeps_its_gradients(tmp_path):
    result = translated(TAPE_MODEL_CALL)
    assert "logits = model(x)" in result.text and "call_model(model, x_train)" in result.text
    assert "after (8, 2)" in run(result.text, tmp_path).stdout


# -- tf.data's take() on the loader a function returns --------------------------------------------
TAKE_ON_A_RETURNED_LOADER = """
import numpy as np
import tensorflow as tf

x_all = np.random.RandomState(0).rand(20, 6).astype("float32")
y_all = np.arange(20) % 2


def scale(x, y):
    return x * 2.0, y


def make_dataset(x, y):
    dataset = tf.data.Dataset.from_tensor_slices((x, y))
    dataset = dataset.batch(4)
    dataset = dataset.map(scale)
    return dataset.shuffle(16).prefetch(16)


train_ds = make_dataset(x_all, y_all)
for inputs, targets in train_ds.take(1):
    print("batch", tuple(inputs.shape), tuple(targets.shape))
print("batches", len(list(train_ds.take(2))))
"""


def test_take_on_a_loader_a_function_returns_runs(tmp_path):
    out = run(translated(TAKE_ON_A_RETURNED_LOADER).text, tmp_path).stdout
    assert "batch (4, 6) (4,)" in out and "batches 2" in out


# -- a module-level stub binds its names to a value that raises the stub's message --------------
MODULE_LEVEL_STUB = """
import numpy as np
import tensorflow as tf

noises = [np.zeros(4, "float32"), np.ones(4, "float32")]
noises = tf.stack(noises)
print("before the use")
print(noises.shape[0])
"""


def test_a_module_level_stub_stops_the_program_at_its_names_first_use(tmp_path):
    result = translated(MODULE_LEVEL_STUB, stubs=1)
    done = run(result.text, tmp_path, ok=False)
    assert "before the use" in done.stdout  # (importing and the lines before run as before)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: transpiler:") and "case.py:6" in last, last


def test_untranslated_raises_on_every_use():
    import numpy as np
    import torch

    from transpiler.runtime.torch.untranslated import Untranslated

    value = Untranslated("transpiler: x (f.py:1)")
    uses = [lambda: value.shape, lambda: value[0], lambda: len(value), lambda: value + 1, lambda: 1 + value,
            lambda: list(value), lambda: value(), lambda: str(value), lambda: np.asarray(value),
            lambda: torch.stack([value]), lambda: torch.ones(2) + value, lambda: bool(value)]
    for use in uses:
        with pytest.raises(NotImplementedError, match=r"f\.py:1"):
            use()


# -- a builder's size computed in the builder itself is no guarded parameter -------------------
@pytest.mark.skipif(not (REALWORLD / "captcha_ocr.py").exists(), reason="needs ../shared/realworld")
def test_builder_guards_read_only_defined_names():
    """keras.io captcha_ocr: ``Dense(len(char_to_num.get_vocabulary()) + 1)`` in build_model()
    (no parameters): its guard read a name made up for the size, never defined (NameError)."""
    result = translate((REALWORLD / "captcha_ocr.py").read_text(), "captcha_ocr.py")
    tree = ast.parse(result.text)
    top = {t.id for s in tree.body if isinstance(s, (ast.Assign, ast.AnnAssign))
           for t in ast.walk(s) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    top |= {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    top |= {(a.asname or a.name).split(".")[0] for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
            for a in s.names}
    for fn in [s for s in tree.body if isinstance(s, ast.FunctionDef)]:
        params = {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs, *fn.args.posonlyargs]}
        for stmt in fn.body:
            if isinstance(stmt, ast.If) and any(isinstance(b, ast.Raise) for b in stmt.body):
                read = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
                assert read <= params | top | set(dir(__builtins__)), (fn.name, read - params - top)


# -- for layer in encoder.layers: layer.trainable = ... in a builder called with arguments -------
TRAINABLE_LOOP = """
import numpy as np
import keras
from keras import layers


def create_encoder():
    inp = keras.Input(shape=(6,))
    return keras.Model(inp, layers.Dense(4, activation="relu")(inp))


def create_classifier(encoder, trainable=True):
    for layer in encoder.layers:
        layer.trainable = trainable
    inp = keras.Input(shape=(6,))
    out = layers.Dense(2, activation="softmax")(encoder(inp))
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


x_train = np.random.RandomState(0).rand(8, 6).astype("float32")
y_train = np.arange(8) % 2
encoder = create_encoder()
classifier = create_classifier(encoder)
classifier.fit(x_train, y_train, epochs=1, batch_size=4, verbose=0)
classifier = create_classifier(encoder, trainable=False)
classifier.fit(x_train, y_train, epochs=1, batch_size=4, verbose=0)
"""


def test_freezing_a_models_layers_in_a_builder_is_reported():
    result = translate(textwrap.dedent(TRAINABLE_LOOP), "case.py", exact=True)
    said = [d for d in result.diagnostics if "trainable" in d.message]
    assert said and said[0].span.line == 14, [d.message for d in result.diagnostics]


# -- (N, H, W) arrays to a functional model's Input((H, W, 1)) ------------------------------------
# Keras' functional model adds the missing axis of size 1; the translation's np.transpose of the
# rank-3 array into channels-first failed ("axes don't match array").
ONE_CHANNEL = """
import numpy as np
import keras
from keras import layers

a = keras.Input((8, 8, 1))
b = keras.Input((8, 8, 1))
tower = layers.Conv2D(2, 3, activation="relu")
x = layers.Concatenate()([layers.Flatten()(tower(a)), layers.Flatten()(tower(b))])
out = layers.Dense(1, activation="sigmoid")(x)
model = keras.Model([a, b], out)
model.compile(optimizer="adam", loss="binary_crossentropy")
x1 = np.random.RandomState(0).rand(6, 8, 8).astype("float32")
x2 = np.random.RandomState(1).rand(6, 8, 8).astype("float32")
y = (np.arange(6) % 2).astype("float32")
model.fit([x1, x2], y, epochs=1, batch_size=3, verbose=0)
print("predict", model.predict([x1, x2], verbose=0).shape)
print("evaluate", type(model.evaluate([x1[..., None], x2[..., None]], y, verbose=0)).__name__)
"""


def test_arrays_one_axis_short_of_a_one_channel_input_gain_it(tmp_path):
    out = run(translated(ONE_CHANNEL).text, tmp_path).stdout
    assert "predict (6, 1)" in out and "evaluate float" in out
