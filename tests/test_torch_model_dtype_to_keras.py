"""``model.double()`` / ``model.half()`` (time_sequence_prediction: ``seq.double()`` on float64
data): the Keras model made again in that dtype with the same weights, cast (runtime
``keras.modules.cast_model``; Keras variables keep the dtype they were made with). Before, a
stub "model.double() is not translated". The generated program runs and computes in float64;
the cast model gives the float32 model's numbers (functional, Sequential and subclass models,
built or not yet built)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from transpiler.translate import translate

SCRIPT = '''import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return torch.tanh(self.fc(x))


model = Net()
model.double()
x = torch.from_numpy(np.linspace(-1, 1, 12).reshape(4, 3))
y = model(x)
'''


def test_model_double_statement_runs_in_float64(tmp_path):
    tr = translate(SCRIPT, "train.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert '(model := cast_model(model, "float64"))' in tr.text
    out = tmp_path / "train_keras.py"
    out.write_text(tr.text + '\nprint("RESULT", np.asarray(y).dtype, np.asarray(y).shape)'
                   '\nprint("WEIGHTS", sorted({str(w.dtype) for w in model.weights}))\n')
    env = dict(os.environ, KERAS_BACKEND=os.environ.get("KERAS_BACKEND", "tensorflow"))
    run = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "RESULT float64 (4, 2)" in run.stdout, run.stdout
    assert "WEIGHTS ['float64']" in run.stdout, run.stdout


def test_cast_model_keeps_the_numbers_of_every_model_kind():
    import keras

    from transpiler.runtime.keras.modules import cast_model

    class Sub(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.fc = keras.layers.Dense(2, name="fc")

        def call(self, x):
            return keras.ops.tanh(self.fc(x))

    x = np.linspace(-1, 1, 12).reshape(4, 3)
    inp = keras.Input((3,))
    functional = keras.Model(inp, keras.layers.Dense(2)(inp))
    sequential = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    built = Sub()
    built(x.astype("float32"))
    for model in (functional, sequential, built):
        cast = cast_model(model, "float64")
        assert {str(w.dtype) for w in cast.weights} == {"float64"}
        y64 = keras.ops.convert_to_numpy(cast(x))
        assert y64.dtype == np.float64
        np.testing.assert_allclose(y64, keras.ops.convert_to_numpy(model(x.astype("float32"))), atol=1e-6)
    fresh = cast_model(Sub(), "float64")  # (not built yet: built in float64 on its first call)
    assert keras.ops.convert_to_numpy(fresh(x)).dtype == np.float64
