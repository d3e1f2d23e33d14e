"""Generated PyTorch programs that failed only when run (no stub printed), found by the
real-world harness on the keras.io scripts (``python -m bench.realworld``, issue 18).

Each class of problem is a small program written here (the shared scripts are never copied);
each test translates it with ``--exact`` and runs the output, which must finish with exit 0
and print what the Keras program prints (shapes, not numbers).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from transpiler.translate import translate
import program_runner  # (a warm fork: tests/program_runner.py)


def translated(source: str):
    result = translate(textwrap.dedent(source), "case.py", exact=True)
    assert [d.message for d in result.stubs] == []
    return result


def run_output(text: str, folder) -> str:
    """Run a generated program in ``folder``; its stdout (its errors are shown when it fails)."""
    (folder / "out.py").write_text(text)
    done = program_runner.run([sys.executable, "out.py"], cwd=folder, capture_output=True, text=True, timeout=300,
                              env=program_runner.bare_env(), preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# -- model.predict([x]) on a one-input model (keras.io eeg_signal_classification) -------------
# Keras takes the one-element list's array as the input; the output transposed the list into
# the channels-first layout (np.transpose of a list of one (N, L, C) array: "axes don't match").
ONE_ELEMENT_LIST = """
import numpy as np
import keras
from keras import layers

inp = keras.Input(shape=(16, 2))
x = layers.Conv1D(4, 3, activation="relu")(inp)
x = layers.GlobalAveragePooling1D()(x)
out = layers.Dense(3, activation="softmax")(x)
model = keras.Model(inp, out)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
x_train = np.random.RandomState(0).rand(8, 16, 2).astype("float32")
y_train = np.arange(8) % 3
model.fit([x_train], y_train, epochs=1, batch_size=4, verbose=0)


def show(model):
    rows = [np.random.RandomState(1).rand(16, 2) for _ in range(5)]
    data_array = [np.asarray(rows).astype(np.float32).reshape(-1, 16, 2)]
    print("in function", np.argmax(model.predict(data_array, verbose=0), axis=1).shape)


show(model)
print("literal", model.predict([x_train], verbose=0).shape)
print("evaluate", type(model.evaluate([x_train], y_train, verbose=0)).__name__)
"""


def test_one_element_list_to_a_one_input_model_is_its_array_when_run(tmp_path):
    result = translated(ONE_ELEMENT_LIST)
    assert "np.transpose([" not in result.text and "np.transpose(data_array," not in result.text
    out = run_output(result.text, tmp_path)
    assert "in function (5,)" in out and "literal (8, 3)" in out and "evaluate float" in out


# -- keras.ops on numpy arrays in a kept function (keras.io siamese_contrastive) --------------
# Keras ops convert numpy arrays; torch.cat refused them ("expected Tensor as element 0").
OPS_ON_ARRAYS = """
import numpy as np
import keras
from keras import layers, ops

inp = keras.Input(shape=(4,))
out = layers.Dense(1, activation="sigmoid")(inp)
model = keras.Model(inp, out)
model.compile(optimizer="sgd", loss="binary_crossentropy")
pairs = np.random.RandomState(0).rand(6, 2, 3, 4).astype("float32")
labels = (np.arange(6) % 2).astype("float32")
model.fit(pairs[:, 0, 0], labels, epochs=1, batch_size=3, verbose=0)


def side_by_side(pairs, i):
    return ops.concatenate([pairs[i][0], pairs[i][1]], axis=1)


def stacked(pairs):
    return ops.stack((pairs[0][0], pairs[1][0]))


print("joined", tuple(np.asarray(side_by_side(pairs, 2)).shape))
print("stacked", tuple(np.asarray(stacked(pairs)).shape))
"""


def test_keras_ops_concatenate_on_numpy_arrays_in_a_function_runs(tmp_path):
    result = translated(OPS_ON_ARRAYS)
    assert "torch.cat(" in result.text and "ops.concatenate" not in result.text
    out = run_output(result.text, tmp_path)
    assert "joined (3, 8)" in out and "stacked (2, 3, 4)" in out


# -- self.add_loss() in a layer's call() (keras.io endpoint_layer_pattern) ---------------------
# The layer was specialised for its call with targets and the add_loss branch was dropped
# without a word: the model "trained" on nothing. It is a marked stub now; the same layer
# called without targets (no add_loss on that path) still translates and runs.
ENDPOINT_LAYER = """
import numpy as np
import keras


class Endpoint(keras.layers.Layer):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    def call(self, logits, targets=None):
        if targets is not None:
            self.add_loss(self.loss_fn(targets, logits))
        return keras.ops.sigmoid(logits)


inputs = keras.Input((8,), name="inputs")
targets = keras.Input((1,), name="targets")
logits = keras.layers.Dense(1)(inputs)
model = keras.Model([inputs, targets], Endpoint()(logits, targets))

inputs2 = keras.Input((8,), name="inputs")
logits2 = keras.layers.Dense(1)(inputs2)
inference_model = keras.Model(inputs2, Endpoint()(logits2, targets=None))
print("predicted", inference_model.predict(np.ones((3, 8), "float32"), verbose=0).shape)
"""


def test_add_loss_in_a_layer_call_is_a_marked_stub_never_dropped(tmp_path):
    result = translate(textwrap.dedent(ENDPOINT_LAYER), "case.py", exact=True)
    messages = [d.message for d in result.stubs]
    assert any("add_loss()" in m and "Endpoint" in m for m in messages), messages
    assert 'raise NotImplementedError(' in result.text and "add_loss" in result.text
    (tmp_path / "out.py").write_text(result.text)
    done = subprocess.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "predicted (3, 1)" in done.stdout, done.stderr[-2000:]


# -- a preview of a channels-first loader's batch (keras.io cutmix) ----------------------------
# The loader puts images in the model's channels-first layout for fit(); the program's own
# ``next(iter(ds))`` handed an image (3, H, W) to matplotlib ("Invalid shape for image data").
PREVIEW = """
import numpy as np
import tensorflow as tf
import keras
from keras import layers

x = np.random.RandomState(0).rand(12, 8, 6, 3).astype("float32")
y = (np.arange(12) % 2).astype("float32")


def scale(image, label):
    return image * 2.0, label


train_ds = tf.data.Dataset.from_tensor_slices((x, y)).map(scale).batch(4)
images, labels = next(iter(train_ds))
print("preview", tuple(images[0].shape))
for images, labels in train_ds.take(1):
    print("taken", tuple(images.shape))

inp = keras.Input(shape=(8, 6, 3))
h = layers.Conv2D(2, 3, activation="relu")(inp)
h = layers.GlobalAveragePooling2D()(h)
model = keras.Model(inp, layers.Dense(1, activation="sigmoid")(h))
model.compile(optimizer="sgd", loss="binary_crossentropy")
model.fit(train_ds, epochs=1, verbose=0)
print("trained")
"""


def test_a_preview_of_a_channels_first_loader_sees_keras_layout(tmp_path):
    result = translated(PREVIEW)
    out = run_output(result.text, tmp_path)
    assert "preview (8, 6, 3)" in out and "taken (4, 8, 6, 3)" in out and "trained" in out, out


# -- the checkpoint of a model that uses another model of the script (mlp_image_classification) --
# select_keras_model took the first model some of whose layers the checkpoint holds (the small
# Sequential the classifier calls), so the converted checkpoint had 2 of the classifier's tensors
# and the harness loaded it nowhere; a layer called in a loop between other layers made the call
# order's depth-first walk recurse without end.
TWO_MODELS = """
import numpy as np
import keras
from keras import layers

pre = keras.Sequential([keras.Input((8,)), layers.Dense(8)], name="pre")
inp = keras.Input((8,))
x = pre(inp)
shared = layers.Dense(8, activation="relu")
for i in range(3):
    x = shared(x)
    x = layers.Dense(8)(x)
model = keras.Model(inp, layers.Dense(2)(x))
model.compile(optimizer="sgd", loss="mse")
model.save_weights("model.weights.h5")
"""


def test_checkpoint_goes_to_the_model_using_most_of_it(tmp_path):
    (tmp_path / "two.py").write_text(textwrap.dedent(TWO_MODELS))
    made = subprocess.run([sys.executable, "two.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    done = subprocess.run([sys.executable, "-m", "transpiler", "two.py", "--to", "pytorch", "-o", "two_torch.py",
                           "--weights", "model.weights.h5", "--weights-out", "initial.pt"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    assert "(12 tensors" in done.stderr, done.stderr[-2000:]  # pre's Dense, shared, 3 Dense, the head
