"""Inputs whose number of axes only the data decides (issue 18, lazily built models;
frontend_ast/keras/lazy_inputs.py).

``keras.Input(shape=(None, *x.shape[2:]))`` where ``x`` comes from ``np.load`` of a file the
translation cannot read: the first layer the input is handed to decides how many axes it has
when its kind takes one number only (ConvLSTM2D: 5, Conv2D: 4); each starred axis is a run-time
size printed as the code reading it. A first layer that takes any number (Dense) decides
nothing: the model stays a stub with the reason, never a crash or a guessed shape. The
programs are run (the generated one and Keras on the same weights).
"""

from __future__ import annotations

import os
import re
import sys

import pytest

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

STANDIN = re.compile(r"\b\d{7,}\b")  # (a run-time size's stand-in number is over a million)

DATA = '''
import os
import tempfile

import numpy as np
import keras
from keras import layers

folder = tempfile.mkdtemp()
path = os.path.join(folder, "clips.npy")
np.save(path, np.random.default_rng(0).random((5, 6, 8, 8)).astype("float32"))

clips = np.load(path)                      # (frames, samples, height, width): not read statically
clips = np.swapaxes(clips, 0, 1)
clips = np.expand_dims(clips, axis=-1)
x_train, y_train = clips[:, :-1], clips[:, 1:]
'''

VIDEO = DATA + '''
inp = layers.Input(shape=(None, *x_train.shape[2:]))
h = layers.ConvLSTM2D(filters=4, kernel_size=(3, 3), padding="same", return_sequences=True)(inp)
h = layers.BatchNormalization()(h)
out = layers.Conv3D(filters=1, kernel_size=(3, 3, 3), activation="sigmoid", padding="same")(h)
model = keras.Model(inp, out)
model.compile(loss="binary_crossentropy", optimizer="adam")
history = model.fit(x_train, y_train, batch_size=2, epochs=1, verbose=0)
print("LOSS", float(history.history["loss"][0]))
'''

FRAMES = DATA + '''
frames = x_train[:, 0]


def build(shape):
    inputs = keras.Input(shape=shape)
    h = layers.Conv2D(3, 3, padding="same", activation="relu")(inputs)
    h = layers.GlobalAveragePooling2D()(h)
    return keras.Model(inputs, layers.Dense(2)(h))


model = build((*frames.shape[1:],))
'''

DENSE_FIRST = DATA + '''
inp = layers.Input(shape=(*x_train.shape[2:],))
out = layers.Dense(3)(inp)
model = keras.Model(inp, out)
'''


def test_the_first_layer_decides_the_number_of_axes_and_the_axes_are_run_time_sizes():
    result = translate(VIDEO, "video.py")
    assert [d.message for d in result.stubs] == []
    assert any("4 axes after the batch axis" in d.message for d in result.diagnostics if d.severity == "warning")
    assert "model = Net(x_train.shape[4])" in result.text  # (the channels: the ConvLSTM's in_channels)
    assert "def forward(self, inp" in result.text  # (the input keeps its name)
    assert not STANDIN.search(result.text)


def test_the_generated_program_runs(tmp_path):
    result = translate(VIDEO, "video.py")
    script = tmp_path / "video_torch.py"
    script.write_text(result.text)
    done = program_runner.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_builder_given_a_starred_shape_of_the_data():
    result = translate(FRAMES, "frames.py")
    assert [d.message for d in result.stubs] == []
    assert any("3 axes after the batch axis" in d.message for d in result.diagnostics if d.severity == "warning")
    assert not STANDIN.search(result.text)


@pytest.mark.parametrize("source", [VIDEO, FRAMES])
def test_matches_keras_on_the_same_weights(source):
    import torch  # noqa: F401  (torch before TensorFlow)
    import keras

    from harness import load_source_module, randomize_keras_weights
    from transpiler import verify

    source = source.replace("history = model.fit(", "pass  # model.fit(").replace('print("LOSS"', "pass  # (")
    result = translate(source, "case.py")
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    program = load_source_module(source)
    kmodel = program.model
    verify.ensure_built(kmodel, md.graph)
    randomize_keras_weights(kmodel, 0)
    tmodel = generated.model
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    data = program.x_train if "frames" not in vars(program) else program.frames
    inputs = [data[:2].astype("float32")]  # (the data's own shape: the graph's holds stand-in sizes)
    assert max(c.max_abs for c in verify.run_both(kmodel, tmodel, md.graph, inputs)) <= 1e-4


def test_a_first_layer_taking_any_number_of_axes_decides_nothing():
    """Dense takes inputs of any number of axes: the input stays unknown, its model a stub
    with the reason (never a guessed shape, never a stand-in number)."""
    result = translate(DENSE_FIRST, "dense.py")
    messages = " ".join(d.message for d in result.stubs)
    assert "Input(shape=(..., *x_train.shape[2:], ...)): the number of axes is only known when the program " \
        "runs (no layer it is handed to fixes it)" in messages
    assert not STANDIN.search(result.text)


WHOLE_SHAPE = DATA + '''
inp = keras.Input(shape=x_train.shape[1:])
h = layers.ConvLSTM2D(filters=2, kernel_size=3, padding="same")(inp)
model = keras.Model(inp, layers.Dense(1)(layers.Flatten()(h)))
'''


def test_the_whole_shape_of_the_data_is_decided_the_same_way():
    """``Input(shape=x_train.shape[1:])``: every axis the star gives, the time axis too."""
    result = translate(WHOLE_SHAPE, "whole.py")
    assert [d.message for d in result.stubs] == []
    # (the time axis is no constructor argument: nothing in the module depends on it)
    assert "model = Net(x_train.shape[2], x_train.shape[3], x_train.shape[4])" in result.text
    assert not STANDIN.search(result.text)


def test_the_whole_shape_program_runs_a_forward(tmp_path):
    result = translate(WHOLE_SHAPE, "whole.py")
    script = tmp_path / "whole_torch.py"
    script.write_text(result.text + "\nimport torch\nout = model(torch.as_tensor(x_train[:2]).permute(0, 4, 1, 2, 3))"
                      "\nassert tuple(out.shape) == (2, 1), out.shape\n")
    done = program_runner.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


SEQUENTIAL = DATA + '''
model = keras.Sequential([
    layers.Input(shape=(None, *x_train.shape[2:])),
    layers.ConvLSTM2D(filters=3, kernel_size=3, padding="same", return_sequences=True),
    layers.Conv3D(filters=1, kernel_size=3, padding="same", activation="sigmoid"),
])
model.compile(loss="binary_crossentropy", optimizer="adam")
model.fit(x_train, y_train, batch_size=2, epochs=1, verbose=0)
'''


def test_a_sequential_input_is_decided_by_its_first_layer(tmp_path):
    result = translate(SEQUENTIAL, "sequential.py")
    assert [d.message for d in result.stubs] == []
    assert "model = Net(x_train.shape[4])" in result.text
    script = tmp_path / "sequential_torch.py"
    script.write_text(result.text)
    done = program_runner.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


REALWORLD_KERAS = os.path.join(os.environ.get("RW_REALWORLD_DIR") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "realworld")), "keras")


@pytest.mark.skipif(not os.path.isdir(REALWORLD_KERAS), reason="no ../shared/realworld set here")
def test_keras_io_conv_lstm_translates_without_stubs():
    """keras.io conv_lstm (read from ../shared/realworld, never copied): its Input of
    ``(None, *x_train.shape[2:])`` on np.load'ed frames, 9 stubs before."""
    path = os.path.join(REALWORLD_KERAS, "conv_lstm.py")
    with open(path, encoding="utf-8") as fh:
        result = translate(fh.read(), path)
    assert [d.message for d in result.stubs] == []
    assert "model = Net(x_train.shape[4])" in result.text
    compile(result.text, path, "exec")
