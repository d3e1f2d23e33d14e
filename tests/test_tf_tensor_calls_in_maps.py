"""tf.transpose / squeeze / gather / repeat / split / complex / signal.fft and a cast to
complex64 in the functions a tf.data pipeline maps (Keras -> PyTorch; keras.io
speaker_recognition_using_cnn's noise mixing and FFT): the printer's table
(printers/torch/data_tensors.py) spells each with torch or the runtime's functions
(runtime/torch/image_ops.py tensor_gather / tensor_split), and the translated functions give
TensorFlow's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import torch

from transpiler.runtime.torch import image_ops


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


@pytest.mark.parametrize("indices,axis", [([2, 0, 2], 0), ([[1, 0], [3, 3]], 1), (1, 2), ([0, 1], -1), (2, 1)])
def test_gather_equals_tensorflow(tf, indices, axis):
    params = np.arange(4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)
    theirs = tf.gather(params, indices, axis=axis).numpy()
    ours = image_ops.tensor_gather(torch.from_numpy(params), indices, axis=axis).numpy()
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("splits,axis", [(3, 0), ([1, 4], 1), (2, -1)])
def test_split_equals_tensorflow(tf, splits, axis):
    value = np.arange(6 * 5 * 2, dtype=np.float32).reshape(6, 5, 2)
    theirs = [t.numpy() for t in tf.split(value, splits, axis=axis)]
    ours = [t.numpy() for t in image_ops.tensor_split(value, splits, axis=axis)]
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


def test_split_into_parts_that_do_not_divide_the_axis_raises_as_tensorflow():
    with pytest.raises(ValueError, match="do not divide"):
        image_ops.tensor_split(np.zeros((5, 2)), 2)


AUDIO_FUNCTIONS = '''import tensorflow as tf


def mix(audio, noises, picks, scale=0.5):
    noise = tf.gather(noises, picks, axis=0)
    prop = tf.math.reduce_max(audio, axis=1) / tf.math.reduce_max(noise, axis=1)
    prop = tf.repeat(tf.expand_dims(prop, axis=1), tf.shape(audio)[1], axis=1)
    return audio + noise * prop * scale


def audio_to_fft(audio):
    audio = tf.squeeze(audio, axis=-1)
    fft = tf.signal.fft(tf.cast(tf.complex(real=audio, imag=tf.zeros_like(audio)), tf.complex64))
    fft = tf.expand_dims(fft, axis=-1)
    return tf.math.abs(fft[:, : (audio.shape[1] // 2), :])


def chunks(sample, slices):
    return tf.split(sample[: slices * 4], slices)


def swap(image):
    return tf.transpose(image, perm=[1, 0, 2]), tf.transpose(image)
'''


def _translated_namespace():
    import libcst as cst

    from transpiler.printers.torch import data_image_ops, loss_functions

    module = cst.parse_module(AUDIO_FUNCTIONS)
    aliases = loss_functions.module_aliases(module)
    texts = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            new, _ = loss_functions.translate_function(stmt, aliases, lambda *a: "")
            texts.append(cst.Module([]).code_for_node(new))
    text = "\n".join(texts)
    assert "tf." not in text
    namespace = {"torch": torch, **{h: getattr(image_ops, h) for h in data_image_ops.helpers_used(text)}}
    exec(text, namespace)
    return text, namespace


def test_audio_functions_give_tensorflows_numbers(tf):
    text, ns = _translated_namespace()
    assert "tensor_gather(noises, picks)" in text and "torch.fft.fft(" in text and "torch.complex64" in text
    rng = np.random.RandomState(0)
    audio = rng.uniform(-1, 1, (3, 16, 1)).astype(np.float32)
    noises = rng.uniform(-1, 1, (5, 16, 1)).astype(np.float32)
    picks = np.array([4, 0, 4], dtype=np.int32)
    ours = ns["mix"](torch.from_numpy(audio), torch.from_numpy(noises), torch.from_numpy(picks))
    exec_ns: dict = {}
    exec(AUDIO_FUNCTIONS, exec_ns)
    theirs = exec_ns["mix"](tf.constant(audio), tf.constant(noises), tf.constant(picks)).numpy()
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6, atol=1e-6)
    ours_fft = ns["audio_to_fft"](torch.from_numpy(audio)).numpy()
    theirs_fft = exec_ns["audio_to_fft"](tf.constant(audio)).numpy()
    assert ours_fft.shape == theirs_fft.shape == (3, 8, 1)
    np.testing.assert_allclose(ours_fft, theirs_fft, rtol=1e-5, atol=1e-5)
    ours_chunks = ns["chunks"](torch.from_numpy(audio[0]), 4)
    theirs_chunks = exec_ns["chunks"](tf.constant(audio[0]), 4)
    assert [tuple(c.shape) for c in ours_chunks] == [tuple(c.shape) for c in theirs_chunks] == [(4, 1)] * 4
    image = rng.rand(2, 3, 4).astype(np.float32)
    for o, t in zip(ns["swap"](image), exec_ns["swap"](tf.constant(image))):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


@pytest.mark.parametrize("call", ["tf.gather(x, i, batch_dims=1)", "tf.split(x, 2, num=2)",
                                  "tf.repeat(x, 2, axis=0, bogus=1)"])
def test_tensor_calls_with_other_options_are_untranslatable(call):
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    module = cst.parse_module(f"import tensorflow as tf\ndef f(x, i):\n    return {call}\n")
    with pytest.raises(loss_functions.Untranslatable):
        loss_functions.translate_function(module.body[1], loss_functions.module_aliases(module), lambda *a: "")
