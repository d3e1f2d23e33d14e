"""TensorFlow's image ops in a script's own loss code (keras.io's zero_dce: ``tf.nn.avg_pool2d``
of channels-last means, ``tf.nn.conv2d`` with constant HWIO kernels): the torch function computes
what TensorFlow computes, on the same channels-last tensors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import libcst as cst

from transpiler.printers.torch import loss_functions

SOURCE = '''def spatial(y_true, y_pred):
    kernel = tf.constant([[[[0, 0, 0]], [[-1, 1, 0]], [[0, 0, 0]]]], dtype=tf.float32)
    mean = tf.reduce_mean(y_true, 3, keepdims=True)
    pool = tf.nn.avg_pool2d(mean, ksize=4, strides=4, padding="VALID")
    peak = tf.nn.max_pool2d(y_pred, ksize=[1, 2, 2, 1], strides=2, padding="VALID")
    d = tf.nn.conv2d(pool, kernel, strides=[1, 1, 1, 1], padding="SAME")
    wide = tf.constant([[[[1.0, -0.5]] * 3] * 2] * 3, dtype=tf.float32)
    e = tf.nn.conv2d(y_pred, wide, strides=1, padding="VALID")
    return tf.reduce_mean(tf.square(d)) + tf.reduce_mean(peak) + tf.reduce_mean(e)
'''


def _translated():
    node = cst.parse_module(SOURCE).body[0]
    new, uses_f = loss_functions.translate_function(node, {"tf": "tensorflow"}, lambda name, logits: name)
    assert uses_f
    return cst.Module([new]).code


def test_avg_pool_max_pool_and_conv2d_in_a_loss_compute_like_tensorflow():
    import tensorflow as tf

    text = _translated()
    assert "tf." not in text, text
    namespace = {"torch": torch, "F": F}
    exec(text, namespace)
    rng = np.random.default_rng(0)
    y_true = rng.normal(size=(2, 8, 12, 3)).astype("float32")
    y_pred = rng.normal(size=(2, 8, 12, 3)).astype("float32")
    ours = namespace["spatial"](torch.from_numpy(y_true), torch.from_numpy(y_pred)).numpy()
    tf_namespace = {"tf": tf}
    exec(SOURCE, tf_namespace)
    theirs = tf_namespace["spatial"](tf.constant(y_true), tf.constant(y_pred)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", ['tf.nn.avg_pool2d(x, ksize=4, strides=4, padding="SAME")',
                                  'tf.nn.conv2d(x, k, strides=2, padding="SAME")',
                                  'tf.nn.avg_pool2d(x, ksize=size, strides=4, padding="VALID")'])
def test_image_ops_torch_computes_otherwise_are_refused(call):
    node = cst.parse_module(f"def f(x, k, size):\n    return {call}\n").body[0]
    with pytest.raises(loss_functions.Untranslatable):
        loss_functions.translate_function(node, {"tf": "tensorflow"}, lambda name, logits: name)
