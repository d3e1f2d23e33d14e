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


TF_SCRIPT = """import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops


def build_model():
    inp = keras.Input(shape=(4,))
    return keras.Model(inp, layers.Dense(3)(inp))


x = (np.arange(24, dtype="float32").reshape(2, 3, 4) - 10.0) / 7.0
a = tf.reduce_sum(x, axis=[-1, -2]).numpy()
b = tf.math.reduce_mean(x, axis=1, keepdims=True).numpy()
c = tf.reduce_max(x).numpy()
d = tf.argmax(x, 0).numpy()
e = tf.argmax(x, axis=-1).numpy()
f = tf.squeeze(tf.expand_dims(x, axis=0), axis=0).numpy()
g = tf.cast(x * 255, dtype=np.uint8).numpy()
h = tf.cast(x, tf.int32).numpy()
values, indices = ops.top_k(x, k=2, sorted=True)
i = ops.convert_to_numpy(values)
j = ops.convert_to_numpy(indices)
k = ops.convert_to_numpy(keras.activations.softmax(ops.expand_dims(x[0], 0))[0])
l = tf.reduce_min(x, keepdims=True).numpy()
img_a = np.arange(60, dtype="float32").reshape(4, 5, 3) * 4.0
img_b = (img_a + np.arange(3, dtype="float32") * 3.0 - 2.0).clip(0, 255)
m = float(tf.image.psnr(img_a, img_b, max_val=255))
n = float(tf.image.psnr(img_a.astype("uint8"), img_b.astype("uint8"), 255))
o = tf.reshape(tf.transpose(tf.reshape(x, (-1, 3, 2, 2)), perm=(0, 2, 1, 3)), (-1, 2, 2)).numpy()
p = tf.transpose(x).numpy()
"""


def test_tensorflow_functions_on_arrays_compute_like_tensorflow():
    """keras.io's involution (``tf.reduce_sum(kernel, axis=[-1, -2, -3])``), miniature GPT's
    sampler (``ops.top_k``, ``keras.activations.softmax``), ``tf.argmax(preds, -1).numpy()`` (an
    explicit axis only), zero_dce's ``tf.cast(x * 255, dtype=np.uint8)``, super_resolution's
    ``tf.image.psnr`` (of float and of uint8 images), swin's window partition (tf.reshape,
    tf.transpose): torch computes the same."""
    result = translate(TF_SCRIPT, "p.py")
    assert not result.stubs, result.stubs
    ours, theirs = _run(result.text), _run(TF_SCRIPT)
    for name in "abcdefghijklmnop":
        mine, tf_value = np.asarray(ours[name]), np.asarray(theirs[name])
        assert mine.shape == tf_value.shape, name
        assert mine.dtype == tf_value.dtype or mine.dtype.kind == tf_value.dtype.kind == "i", name
        np.testing.assert_allclose(mine, tf_value, rtol=1e-5 if name in 'mn' else 1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("line", ["y = tf.cast(x, dtype=some_dtype)", "y = tf.reduce_sum(x, axis=0, name='s', extra=1)",
                                  "y = tf.reduce_logsumexp(x, axis=0)", "y = tf.argmax(x)"])
def test_tensorflow_functions_outside_the_table_stay_stubs(line):
    src = "import numpy as np\nimport tensorflow as tf\n\nx = np.zeros((6, 4))\nsome_dtype = 'float32'\n" + line + "\n"
    result = translate(src, "p.py")
    assert any("not translated yet" in str(s) for s in result.stubs), result.text
