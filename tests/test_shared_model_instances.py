"""A model of the program used as a layer of another (issue 18, found on keras.io's supervised
contrastive learning): ``classifier = create_classifier(encoder)`` after pretraining ``encoder``.
Keras shares the encoder's layers and weights between the two models, so the classifier starts
from the trained encoder and training it moves the encoder. The torch module of the classifier
takes the program's encoder instance as a constructor argument (``Classifier(encoder)``), rather
than a fresh copy with weights of its own. The program is run as Keras and, translated, as
PyTorch; both must print the same."""

from __future__ import annotations

import sys

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

SHARED = '''
import numpy as np
import keras
from keras import layers

# (seeded: unseeded, a draw whose ReLU units all stay dead on the four probe samples printed
# "moves the encoder: False" on one side now and then)
keras.utils.set_random_seed(0)

x_train = np.random.RandomState(0).rand(64, 8).astype("float32")
y_train = (x_train.sum(axis=1) > 4).astype("int64")


def create_encoder():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    outputs = layers.Dense(4, activation="relu")(x)
    return keras.Model(inputs, outputs, name="encoder")


def create_classifier(encoder):
    inputs = keras.Input(shape=(8,))
    features = encoder(inputs)
    outputs = layers.Dense(2, activation="softmax")(features)
    model = keras.Model(inputs, outputs, name="classifier")
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    return model


def add_head(encoder):
    inputs = keras.Input(shape=(8,))
    features = encoder(inputs)
    outputs = layers.Dense(1)(features)
    return keras.Model(inputs, outputs, name="with_head")


encoder = create_encoder()
pretrain = add_head(encoder)
pretrain.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
before = np.asarray(encoder(x_train[:4]))
pretrain.fit(x_train, y_train.astype("float32"), epochs=1, batch_size=16, verbose=0)
after = np.asarray(encoder(x_train[:4]))
print("pretraining trains the encoder:", not bool(np.allclose(before, after)))
classifier = create_classifier(encoder)
classifier.fit(x_train, y_train, epochs=1, batch_size=16, verbose=0)
print("classifier training moves the encoder:", not bool(np.allclose(np.asarray(encoder(x_train[:4])), after)))
print("same parameter count:", classifier.count_params() == encoder.count_params() + 10)
'''


def test_a_model_built_around_the_programs_encoder_holds_that_instance():
    result = translate(SHARED, "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    text = result.text
    assert "def __init__(self, encoder):" in text and "self.encoder = encoder" in text
    assert "return WithHead(encoder)" in text and "Classifier(encoder)" in text
    assert "holds a copy" not in "\n".join(d.message for d in result.diagnostics)


def test_trained_encoder_weights_flow_into_the_classifier_as_in_keras(tmp_path):
    result = translate(SHARED, "case.py", exact=True)
    (tmp_path / "case.py").write_text(SHARED)
    (tmp_path / "out.py").write_text(result.text)
    env = {"PATH": "/usr/bin:/bin", "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    keras_run = program_runner.run([sys.executable, "case.py"], cwd=tmp_path, capture_output=True, text=True,
                                   timeout=300, env=env, preload=())
    assert keras_run.returncode == 0, keras_run.stderr[-2000:]
    torch_run = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True,
                                   timeout=300)
    assert torch_run.returncode == 0, torch_run.stderr[-2000:]
    assert "pretraining trains the encoder: True" in keras_run.stdout
    assert "classifier training moves the encoder: True" in keras_run.stdout
    assert torch_run.stdout == keras_run.stdout


OTHER_LAYOUT = '''
import numpy as np
import keras
from keras import layers

x = np.random.RandomState(0).rand(16, 8, 8, 3).astype("float32")
y = np.arange(16) % 2
augment = keras.Sequential([keras.Input(shape=(8, 8, 3)), layers.RandomFlip("horizontal")])
inputs = keras.Input(shape=(8, 8, 3))
h = augment(inputs)
h = layers.Conv2D(4, 3, activation="relu")(h)
h = layers.GlobalAveragePooling2D()(h)
outputs = layers.Dense(2, activation="softmax")(h)
model = keras.Model(inputs, outputs)
model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
model.fit(x, y, epochs=1, batch_size=8, verbose=0)
print("augmented shape", tuple(np.asarray(augment(x)).shape))
'''


def test_a_shared_model_whose_module_takes_another_layout_is_a_copy_and_said_so():
    # (alone, ``augment`` keeps Keras' channels-last images; inside the conv model its copy
    # works channels-first: the instance cannot be passed, and the report says so)
    result = translate(OTHER_LAYOUT, "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "self.augment = Augment_2()" in result.text
    assert any("holds a copy of its own (its layouts differ" in d.message for d in result.diagnostics)


def test_a_builder_read_per_call_gets_the_calls_own_encoder(tmp_path):
    # (the builder is called twice, so each call's model is printed in place of the call:
    # its encoder is the call's argument, ``enc``, a second encoder, not the module's ``encoder``)
    source = SHARED.replace("classifier = create_classifier(encoder)",
                            "enc = create_encoder()\nclassifier = create_classifier(enc)\n"
                            "classifier2 = create_classifier(enc)")
    result = translate(source, "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "classifier = Classifier(enc)" in result.text and "classifier2 = Classifier2(enc)" in result.text
    (tmp_path / "out.py").write_text(result.text)
    done = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # (training the classifier moves ``enc``, not the pretrained ``encoder`` the program prints)
    assert "classifier training moves the encoder: False" in done.stdout
