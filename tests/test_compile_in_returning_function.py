"""A function taking a model that compiles and returns a new one (keras.io
supervised_contrastive_learning: ``create_classifier(encoder, trainable=True)`` builds a
classifier on the encoder, compiles it and returns it): Keras' ``fit``/``evaluate`` of
its result trained with that compile; the translation said "the model was never compiled
in this script" and stubbed them. The compile now lands where the function's result
does (training_returns.py), once per call; a compile reading the function's own names
stays where it is and its fit stays a marked stub.

The generated program runs; its per-epoch losses equal Keras' (constant initial weights
on both sides, SGD, no shuffling)."""

import os
import re
import sys

import pytest

from transpiler.translate import translate
import program_runner  # (a warm fork: tests/program_runner.py)

PROGRAM = '''
import numpy as np
import keras
from keras import layers

rng = np.random.RandomState(0)
x_train = rng.rand(64, 8).astype("float32")
y_train = rng.randint(0, 3, size=(64,))


def create_encoder():
    inputs = keras.Input(shape=(8,))
    outputs = layers.Dense(16, activation="relu", kernel_initializer="ones")(inputs)
    return keras.Model(inputs, outputs)


def create_classifier(encoder, trainable=True):
    for layer in encoder.layers:
        layer.trainable = trainable
    inputs = keras.Input(shape=(8,))
    features = encoder(inputs)
    outputs = layers.Dense(3, activation="softmax", kernel_initializer="zeros")(features)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer=keras.optimizers.SGD(LEARNING_RATE), loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])
    return model


encoder = create_encoder()
classifier = create_classifier(encoder)
history = classifier.fit(x=x_train, y=y_train, batch_size=16, epochs=3, shuffle=False, verbose=0)
print("LOSSES", [float(v) for v in history.history["loss"]])
classifier = create_classifier(encoder, trainable=False)
print("EVAL", classifier.evaluate(x_train, y_train, verbose=0)[0])
'''

GLOBAL_RATE = PROGRAM.replace("rng = np", "LEARNING_RATE = 0.02\nrng = np", 1)
#: the learning rate is the function's parameter: the compile cannot move out of it
PARAMETER_RATE = PROGRAM.replace("trainable=True):", "trainable=True, LEARNING_RATE=0.02):")


def _run(path, backend=None):
    env = dict(os.environ, KERAS_BACKEND=backend) if backend else dict(os.environ)
    out = program_runner.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                             cwd=os.path.dirname(path), env=env, preload=("torch", "tensorflow"))
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _numbers(text, tag):
    line = next(ln for ln in text.splitlines() if ln.startswith(tag))
    return [float(v) for v in re.findall(r"[-+]?\d+\.\d+(?:e[-+]?\d+)?", line)]


def test_compile_in_a_function_returning_the_model_trains_like_keras(tmp_path):
    result = translate(GLOBAL_RATE, "train.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    # once per call, where its result lands, as Keras compiles once per call
    assert result.text.count("# compiled in create_classifier()") == 2
    assert result.text.count("torch.optim.SGD(") == 2
    torch_path = tmp_path / "train_torch.py"
    torch_path.write_text(result.text)
    keras_path = tmp_path / "train.py"
    keras_path.write_text(GLOBAL_RATE)
    got, want = _run(torch_path), _run(keras_path, "tensorflow")
    assert _numbers(got, "LOSSES") == pytest.approx(_numbers(want, "LOSSES"), rel=1e-4)
    assert _numbers(got, "EVAL") == pytest.approx(_numbers(want, "EVAL"), rel=1e-4)


def test_a_single_call_keeps_the_function_and_moves_its_compile_out(tmp_path):
    program = GLOBAL_RATE[:GLOBAL_RATE.index("classifier = create_classifier(encoder, trainable=False)")]
    result = translate(program, "train.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "# compiled where create_classifier()'s result lands" in result.text  # (in the kept function)
    path = tmp_path / "train_torch.py"
    path.write_text(result.text)
    keras_path = tmp_path / "train.py"
    keras_path.write_text(program)
    assert _numbers(_run(path), "LOSSES") == pytest.approx(_numbers(_run(keras_path, "tensorflow"), "LOSSES"), rel=1e-4)


def test_compile_reading_the_functions_parameters_stays_a_stub(tmp_path):
    result = translate(PARAMETER_RATE, "train.py")
    messages = [str(d) for d in result.stubs]
    assert any("classifier.fit()" in m and "never compiled" in m for m in messages), messages
    assert "compiled where" not in result.text  # (the compile stays in the function)
    compile(result.text, "train_torch.py", "exec")



TRAINS_INSIDE = '''
import numpy as np
import keras
from keras import layers

x_train = np.random.rand(32, 8).astype("float32")
y_train = np.random.randint(0, 3, size=(32,))


def create_encoder():
    inputs = keras.Input(shape=(8,))
    return keras.Model(inputs, layers.Dense(4, activation="relu")(inputs))


def run_experiment(encoder):
    model = encoder
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    model.fit(x_train, np.zeros((32, 4), dtype="float32"), epochs=1, verbose=0)
    return model


trained = run_experiment(create_encoder())
print(trained.count_params())
'''


def test_a_function_that_compiles_and_trains_what_it_returns_keeps_its_compile():
    """keras.io mobilevit's run_experiment(): compile and fit inside, then return the model
    (the compile was moved out and the translation crashed: AttributeError)."""
    result = translate(TRAINS_INSIDE, "train.py")
    assert not [d for d in result.stubs if "fit()" in str(d) or "compile" in str(d)], [str(d) for d in result.stubs]
    body = result.text[result.text.index("def run_experiment("):]
    body = body[:body.index("\ntrained = ")]
    assert "torch.optim.SGD(" in body and "fit(" in body  # (compiled and trained in the function)
    compile(result.text, "train_torch.py", "exec")
