"""keras.ops on arrays outside any model (keras.io scripts inspect patches and predictions
with them): the generated PyTorch program computes them with torch, as Keras' torch backend
would, and gets the same numbers as the Keras program."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from transpiler.translate import translate

SCRIPT = """import numpy as np
import keras
from keras import layers, ops


def build_model():
    inp = keras.Input(shape=(4,))
    return keras.Model(inp, layers.Dense(3)(inp))


x = np.arange(24, dtype="float32").reshape(6, 4) - 10.0
a = ops.reshape(x, (4, 6))
b = ops.convert_to_numpy(ops.expand_dims(a, 0))
c = ops.convert_to_numpy(ops.argmax(x, axis=1))
d = ops.convert_to_numpy(ops.transpose(a))
e = ops.convert_to_numpy(ops.squeeze(b))
f = keras.ops.convert_to_numpy(keras.ops.sqrt(ops.abs(x)))
g = ops.convert_to_numpy(ops.reshape(x, newshape=(2, 12))).astype("int32")
for i, row in enumerate(x):
    h = ops.convert_to_numpy(ops.square(row))
"""

NAMES = "abcdefgh"


def _run(text: str) -> dict:
    namespace = {"__name__": "array_ops_program"}
    exec(compile(text, "program.py", "exec"), namespace)
    return namespace


def test_keras_ops_on_arrays_compute_like_keras():
    result = translate(SCRIPT, "p.py")
    assert not result.stubs, result.stubs
    assert "torch.reshape(torch.as_tensor(x), (4, 6))" in result.text
    ours, theirs = _run(result.text), _run(SCRIPT)
    for name in NAMES:
        mine = np.asarray(ours[name])
        keras_value = np.asarray(theirs[name])
        assert mine.shape == keras_value.shape, name
        np.testing.assert_allclose(mine, keras_value, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("line", ["y = ops.reshape(x, (4, 6), extra=1)", "y = ops.slice(x, (0, 0), (2, 2))",
                                  "y = ops.transpose(*x)"])
def test_keras_ops_on_arrays_outside_the_table_stay_stubs(line):
    """Arguments or functions the table does not cover: a marked stub, never a guess."""
    src = "import numpy as np\nfrom keras import ops\n\nx = np.zeros((6, 4))\n" + line + "\n"
    result = translate(src, "p.py")
    assert any("not translated yet" in str(s) for s in result.stubs), result.text
