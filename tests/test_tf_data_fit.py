"""fit/evaluate on a tf.data pipeline with .map(): the generated program trains on the
pipeline's loader, whose batches are the ones tf.data yields (shuffle off)."""

from __future__ import annotations

import numpy as np
import pytest

from transpiler import verify
from transpiler.translate import translate

SOURCE = '''import numpy as np
import tensorflow as tf
import keras


def scale(image, label):
    return tf.cast(image, tf.float32) / 255.0, label


x = np.arange(40 * 6, dtype="float32").reshape(40, 6) % 255
y = (np.arange(40) % 3).astype("int64")
model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(3)])
model.compile(optimizer=keras.optimizers.SGD(0.1),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
train_ds = tf.data.Dataset.from_tensor_slices((x, y))
train_ds = train_ds.map(scale, num_parallel_calls=tf.data.AUTOTUNE).batch(16).prefetch(tf.data.AUTOTUNE)
test_ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a / 255.0, b)).batch(16)
history = model.fit(train_ds, epochs=2, validation_data=test_ds, verbose=0)
loss, acc = model.evaluate(test_ds, verbose=0)
'''


def test_fit_on_a_mapped_tf_data_pipeline_trains_on_its_loader():
    result = translate(SOURCE, "p.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "train_ds = make_loader(x, y, batch_size=16, element_map=scale)" in result.text
    assert "fit(model, optimizer, loss_fn, train_ds, None," in " ".join(result.text.split()).replace("( ", "(")
    assert "validation_data=(test_ds, None)" in result.text
    torch_module = verify.load_generated(result.text, "tf_data_fit_generated")
    keras_module = verify.load_generated(SOURCE, "tf_data_fit_source")
    assert len(torch_module.history.history["loss"]) == 2 and "val_loss" in torch_module.history.history
    assert np.isfinite(torch_module.loss)
    for name in ("train_ds", "test_ds"):  # the same batches as tf.data, in order
        expected = [(a.numpy(), b.numpy()) for a, b in getattr(keras_module, name)]
        got = [(a.numpy(), b.numpy()) for a, b in getattr(torch_module, name)]
        assert len(got) == len(expected) == 3
        for (ga, gb), (ea, eb) in zip(got, expected):
            np.testing.assert_allclose(ga, ea, rtol=0, atol=1e-6)
            np.testing.assert_array_equal(gb, eb)


@pytest.mark.parametrize("fit_args, message", [
    ("validation_split=0.25", "validation_split, class_weight or sample_weight"),
    ("class_weight={0: 1.0, 1: 2.0, 2: 1.0}", "validation_split, class_weight or sample_weight"),
])
def test_fit_on_a_mapped_pipeline_with_unsupported_options_is_stubbed(fit_args, message):
    source = SOURCE.replace("validation_data=test_ds", fit_args)
    result = translate(source, "p.py")
    assert any(message in d.message for d in result.stubs), [d.message for d in result.stubs]


@pytest.mark.parametrize("batch", ["batch(16, drop_remainder=True)", "batch(batch_size=16, drop_remainder=True)"])
def test_drop_remainder_leaves_out_the_last_batch_in_fit_and_loops(batch):
    """batch(n, drop_remainder=True): 40 elements give 2 batches of 16, in the loader and in
    fit (which then trains on the loader, not on a fresh one from the arrays)."""
    source = SOURCE.replace(".batch(16).prefetch", f".{batch}.prefetch").replace(
        "test_ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a / 255.0, b)).batch(16)",
        f"test_ds = tf.data.Dataset.from_tensor_slices((x / 255.0, y)).{batch}")
    result = translate(source, "p.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "drop_last=True" in result.text
    torch_module = verify.load_generated(result.text, "tf_data_drop_generated")
    keras_module = verify.load_generated(source, "tf_data_drop_source")
    for name in ("train_ds", "test_ds"):
        expected = [(a.numpy(), b.numpy()) for a, b in getattr(keras_module, name)]
        got = [(a.numpy(), b.numpy()) for a, b in getattr(torch_module, name)]
        assert len(got) == len(expected) == 2
        for (ga, gb), (ea, eb) in zip(got, expected):
            np.testing.assert_allclose(ga, ea, rtol=0, atol=1e-6)
            np.testing.assert_array_equal(gb, eb)


IMAGES = '''import numpy as np
import tensorflow as tf
import keras

x = (np.arange(10 * 5 * 4 * 3) % 251).astype("float32").reshape(10, 5, 4, 3)
y = (np.arange(10) % 2).astype("int64")
inputs = keras.Input(shape=(5, 4, 3))
h = keras.layers.Conv2D(2, 3, padding="same")(inputs)
outputs = keras.layers.Dense(2)(keras.layers.Flatten()(h))
model = keras.Model(inputs, outputs)
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
train_ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a / 255.0 * tf.constant([1.0, 2.0, 3.0]), b)).batch(4)
model.fit(train_ds, epochs=1, verbose=0)
'''


def test_map_on_channels_last_images_runs_before_the_layout_change():
    """.map() on (H, W, C) images for a model PyTorch runs channels-first: the map sees the
    elements Keras' map sees (a per-channel scale here), each batch is then permuted."""
    result = translate(IMAGES, "p.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "layout=(0, 3, 1, 2)" in result.text
    torch_module = verify.load_generated(result.text, "tf_data_layout_generated")
    keras_module = verify.load_generated(IMAGES, "tf_data_layout_source")
    expected = [(a.numpy(), b.numpy()) for a, b in keras_module.train_ds]
    got = [(a.numpy(), b.numpy()) for a, b in torch_module.train_ds]
    assert len(got) == len(expected) == 3
    for (ga, gb), (ea, eb) in zip(got, expected):
        np.testing.assert_allclose(np.transpose(ga, (0, 2, 3, 1)), ea, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(gb, eb)


@pytest.mark.parametrize("fn", ["lambda a, b: (a[:, ::-1, :], b)", "flip"])
def test_map_slicing_with_a_negative_step_is_stubbed(fn):
    """torch tensors refuse ``t[::-1]`` when run: such a .map() is a stub, not code that fails."""
    source = IMAGES.replace("lambda a, b: (a / 255.0 * tf.constant([1.0, 2.0, 3.0]), b)", fn).replace(
        "train_ds =", "def flip(a, b):\n    return tf.cast(a, tf.float32)[:, ::-1], b\n\n\ntrain_ds =")
    result = translate(source, "p.py")
    assert any("negative step" in d.message for d in result.stubs), [d.message for d in result.stubs]
