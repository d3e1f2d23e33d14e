"""Tensor math of a script's own plain classes and pipeline functions (issue 18, keras.io ddpm):
a class with no framework base holding ``tf.constant`` schedules and ``tf.gather`` /
``tf.reshape`` / ``tf.random.normal`` methods (ddpm's ``GaussianDiffusion``) translates whole to
torch (printers/torch/tensor_definitions.py), as module-level functions do; ``tf.image.resize(...,
antialias=True)`` and ``tf.minimum`` of two Python ints (``tf.shape(img)[0]``) in a mapped
function translate. The generated program runs and computes what TensorFlow computes."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from transpiler.runtime.torch import image_ops
from transpiler.translate import translate

SCRIPT = '''import numpy as np
import tensorflow as tf
import keras
from keras import layers


class Schedule:
    """Per-timestep coefficients."""

    def __init__(self, timesteps=10):
        betas = np.linspace(1e-4, 0.02, timesteps, dtype=np.float64)
        alphas_cumprod = np.cumprod(1.0 - betas, axis=0)
        self.sqrt_alphas_cumprod = tf.constant(np.sqrt(alphas_cumprod), dtype=tf.float32)
        self.sqrt_one_minus = tf.constant(np.sqrt(1.0 - alphas_cumprod), dtype=tf.float32)

    def _extract(self, a, t, x_shape):
        batch_size = x_shape[0]
        out = tf.gather(a, t)
        return tf.reshape(out, [batch_size, 1, 1, 1])

    def q_sample(self, x_start, t, noise):
        shape = tf.shape(x_start)
        return self._extract(self.sqrt_alphas_cumprod, t, shape) * x_start + self._extract(
            self.sqrt_one_minus, t, shape) * noise

    def mask(self, x, t):
        return tf.reshape(1 - tf.cast(tf.equal(t, 0), tf.float32), [tf.shape(x)[0], 1, 1, 1])


def square_crop(img):
    height = tf.shape(img)[0]
    width = tf.shape(img)[1]
    crop_size = tf.minimum(height, width)
    img = tf.image.crop_to_bounding_box(img, (height - crop_size) // 2, (width - crop_size) // 2,
                                        crop_size, crop_size)
    img = tf.image.resize(img, size=(4, 4), antialias=True)
    return tf.clip_by_value(img / 127.5 - 1.0, -1.0, 1.0)


inputs = keras.Input(shape=(4, 4, 3))
model = keras.Model(inputs, layers.Conv2D(3, 1)(inputs))
model.compile(optimizer="adam", loss="mse")

schedule = Schedule(timesteps=10)
x0 = np.arange(2 * 4 * 4 * 3, dtype="float32").reshape(2, 4, 4, 3) / 96.0
noise = np.ones((2, 4, 4, 3), dtype="float32")
t = np.array([0, 7])
sampled = np.asarray(schedule.q_sample(x0, t, noise))
kept = np.asarray(schedule.mask(x0, t))
image = np.arange(6 * 9 * 3, dtype="float32").reshape(6, 9, 3) * 1.5
cropped = np.asarray(square_crop(image))
'''


def _run(text: str, tmp_path) -> dict:
    path = tmp_path / "program.py"
    path.write_text(text + "\nnp.savez('out.npz', sampled=sampled, kept=kept, cropped=cropped)\n")
    done = program_runner.run([sys.executable, str(path)], cwd=str(tmp_path), capture_output=True, text=True,
                              timeout=300, preload=("torch",))
    assert done.returncode == 0, done.stderr[-3000:]
    with np.load(os.path.join(tmp_path, "out.npz")) as data:
        return {k: data[k] for k in data.files}


def test_plain_class_and_pipeline_function_translate_and_compute_what_tensorflow_does(tmp_path):
    result = translate(SCRIPT, "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "class Schedule:" in result.text and "tensor_gather(" in result.text
    assert "antialias=True" in result.text
    (tmp_path / "torch").mkdir()
    (tmp_path / "tf").mkdir()
    ours = _run(result.text, tmp_path / "torch")
    theirs = _run(SCRIPT, tmp_path / "tf")
    for name in ("sampled", "kept", "cropped"):
        assert ours[name].shape == theirs[name].shape, name
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-5, err_msg=name)


def test_a_class_with_a_framework_base_is_not_a_plain_class():
    source = SCRIPT.replace("class Schedule:", "class Schedule(keras.callbacks.Callback):")
    result = translate(source, "case.py")
    assert "class Schedule(Callback" in result.text or result.stubs


@pytest.mark.parametrize("shape,size", [((64, 48, 3), (32, 32)), ((30, 40, 3), (64, 64)), ((2, 100, 80, 3), (37, 23)),
                                        ((50, 70, 1), (50, 30))])
def test_antialiased_resize_equals_tensorflow(shape, size):
    tf = pytest.importorskip("tensorflow")
    image = np.random.RandomState(0).rand(*shape).astype("float32") * 255
    ours = image_ops.image_resize(torch.as_tensor(image), size, method="bilinear", antialias=True).numpy()
    theirs = tf.image.resize(image, size, antialias=True).numpy()
    assert ours.shape == theirs.shape
    print(f"antialiased resize {shape} -> {size}: max abs error {np.abs(ours - theirs).max():.2e} (0..255)")
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-3)
