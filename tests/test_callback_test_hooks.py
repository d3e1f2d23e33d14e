"""The validation hooks of the script's own callbacks (``on_test_begin``,
``on_test_batch_begin``, ``on_test_batch_end``, ``on_test_end``; keras.io's
super_resolution_sub_pixel reads ``logs["loss"]`` in ``on_test_batch_end``): the generated
fit() calls them during its validation, with the running mean loss per batch and the
results at the end, as Keras does (it was a stub: "the generated fit() calls only the
training hooks"). Numerics: from the same weights on the same batches, the Keras program and
the generated one record the same events with the same losses."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (torch before tensorflow in one process)

from harness import program_pair
from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import keras
from keras import layers


class TestRecorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(["epoch_begin", epoch, 0.0])

    def on_test_begin(self, logs=None):
        self.events.append(["test_begin", -1, 0.0])

    def on_test_batch_begin(self, batch, logs=None):
        self.events.append(["test_batch_begin", batch, 0.0])

    def on_test_batch_end(self, batch, logs=None):
        self.events.append(["test_batch_end", batch, logs["loss"]])

    def on_test_end(self, logs=None):
        self.events.append(["test_end", -1, logs["loss"]])


def build_model():
    inputs = keras.Input(shape=(4,))
    x = layers.Dense(8, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(2)(x))


def train(model, x, y, xv, yv):
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    recorder = TestRecorder()
    CALLBACKS
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, validation_data=(xv, yv),
              callbacks=CALLBACK_ARG)
    return recorder.events


def main():
    rng = np.random.RandomState(0)
    x, y = rng.standard_normal((16, 4)).astype("float32"), rng.standard_normal((16, 2)).astype("float32")
    print(train(build_model(), x, y, x[:10], y[:10]))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("made,given", [
    ("pass", "[recorder]"),
    # a list bound to a name first (the custom object goes to the generated fit() through it)
    ('callbacks = [recorder, keras.callbacks.EarlyStopping(monitor="loss", patience=5)]', "callbacks"),
])
def test_fit_calls_the_validation_hooks_with_the_logs_keras_passes(made, given):
    src = PROGRAM.replace("CALLBACKS", made).replace("CALLBACK_ARG", given)
    result = translate(src, "test_hooks.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 2, "test_hooks")
    rng = np.random.RandomState(1)
    x, y = rng.standard_normal((16, 4)).astype("float32"), rng.standard_normal((16, 2)).astype("float32")
    xv, yv = x[:10] + 0.5, y[:10]
    expected = keras_mod.train(kmodel, x, y, xv, yv)
    got = torch_mod.train(tmodel, x, y, xv, yv)
    assert [e[:2] for e in got] == [e[:2] for e in expected]
    assert [e[0] for e in expected].count("test_batch_end") == 4  # (2 batches of 8 and 2, each epoch)
    assert np.allclose([float(e[2]) for e in got], [float(e[2]) for e in expected], rtol=1e-4, atol=1e-6), \
        (expected, got)
