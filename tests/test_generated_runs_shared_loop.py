"""Keras -> PyTorch programs that failed only when run (issue 18): one training loop shared by
models that differ, and a model called on arrays at module level.

* Keras' ``fit``/``evaluate`` are one generated ``fit``/``evaluate`` pair per program. When one
  compiled model's final softmax moves into its cross-entropy loss, that loop asks the model
  for logits (``model(x, return_logits=True)``); a second compiled model without a final
  activation to skip had no such parameter ("forward() got an unexpected keyword argument
  'return_logits'"). Every compiled model of such a program now takes it.
* ``model(np.array([...]))[0].numpy()`` outside a training step: the result is a tensor, as in
  Keras, so ``.numpy()`` on it works.

Each case is a small program written here; each test translates it and runs the output.
"""

from __future__ import annotations

import sys
import textwrap

from tests import program_runner
from transpiler.translate import translate


def _translated(source: str) -> str:
    result = translate(textwrap.dedent(source), "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    return result.text


def _run(text: str, folder) -> str:
    (folder / "out.py").write_text(text)
    done = program_runner.run([sys.executable, "out.py"], cwd=folder, capture_output=True, text=True, timeout=300,
                              env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


HEAD = """
import numpy as np
import keras
from keras import layers

x_train = np.random.RandomState(0).rand(16, 6).astype("float32")
y_class = np.arange(16) % 3
y_value = np.random.RandomState(1).rand(16, 2).astype("float32")

inp = keras.Input(shape=(6,))
classifier = keras.Model(inp, layers.Dense(3, activation="softmax")(inp))
classifier.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
classifier.fit(x_train, y_class, epochs=1, batch_size=8, verbose=0)
"""

FUNCTIONAL_SECOND = HEAD + """
inp2 = keras.Input(shape=(6,))
regressor = keras.Model(inp2, layers.Dense(2, activation="relu")(inp2))
regressor.compile(optimizer="adam", loss="mse")
regressor.fit(x_train, y_value, epochs=2, batch_size=8, verbose=0)
print("regressor", regressor.evaluate(x_train, y_value, verbose=0) >= 0)
print("classifier", len(classifier.evaluate(x_train, y_class, verbose=0)))
print("probabilities", np.allclose(np.asarray(classifier.predict(x_train, verbose=0)).sum(axis=1), 1.0, atol=1e-5))
"""

SUBCLASSED_SECOND = HEAD + """

class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(4, activation="relu")
        self.out = layers.Dense(2)

    def call(self, x):
        return self.out(self.hidden(x))


regressor = Regressor()
regressor.compile(optimizer="adam", loss="mse")
regressor.fit(x_train, y_value, epochs=1, batch_size=8, verbose=0)
print("regressor", regressor.evaluate(x_train, y_value, verbose=0) >= 0)
"""


def test_model_without_final_activation_trains_in_the_loop_of_one_with_it(tmp_path):
    text = _translated(FUNCTIONAL_SECOND)
    assert text.count("return_logits=False):") == 2  # (both classes the shared loop calls)
    out = _run(text, tmp_path)
    assert "regressor True" in out and "classifier 2" in out and "probabilities True" in out


def test_subclassed_model_trains_in_the_loop_of_a_model_with_logits(tmp_path):
    text = _translated(SUBCLASSED_SECOND)
    assert "model(*inputs, return_logits=True)" in text
    assert "regressor True" in _run(text, tmp_path)


def test_a_program_without_logits_keeps_plain_forwards():
    text = _translated(FUNCTIONAL_SECOND.replace('activation="softmax"', 'activation="relu"')
                       .replace("sparse_categorical_crossentropy", "mse").replace("y_class", "y_value")
                       .replace("Dense(3", "Dense(2"))
    assert "return_logits" not in text


MODULE_LEVEL_CALL = """
import numpy as np
import keras
from keras import layers

augment = keras.Sequential([layers.RandomFlip(mode="horizontal"), layers.RandomRotation(factor=0.1)])
inputs = keras.Input(shape=(8, 8, 3))
outputs = layers.Dense(2)(layers.Flatten()(augment(inputs)))
model = keras.Model(inputs, outputs)

image = (np.random.RandomState(0).rand(8, 8, 3) * 255).astype("uint8")
for i in range(2):
    augmented = augment(np.array([image]))
    print("image", augmented[0].numpy().astype("uint8").shape)
scores = model(np.array([image, image]).astype("float32"))
print("scores", scores.numpy().shape, keras.ops.argmax(scores, axis=-1).numpy().shape)
"""


def test_model_called_on_an_array_at_module_level_gives_a_tensor(tmp_path):
    out = _run(_translated(MODULE_LEVEL_CALL), tmp_path)
    assert out.count("image (8, 8, 3)") == 2 and "scores (2, 2) (2,)" in out
