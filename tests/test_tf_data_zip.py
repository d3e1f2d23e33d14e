"""``tf.data.Dataset.zip`` of batched pipelines mapped over pairs of batches (keras.io's MixUp,
reduced: frontend_ast/keras/data_zip.py → ``ZippedLoader`` + ``MappedLoader``), and the ops
such map functions call (tf.random.gamma, one_hot, tf.image's bounding boxes:
runtime/torch/image_ops.py): the generated loader yields Keras' batches, the random draws
come from the same distributions."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch

from transpiler.runtime.torch import image_ops
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MIXUP = '''
import numpy as np
import keras
from keras import layers
from tensorflow import data as tf_data
from tensorflow.random import gamma as tf_random_gamma

rng = np.random.RandomState(0)
x_train = rng.rand(40, 6, 6, 2).astype("float32")
labels = rng.randint(0, 3, (40,))
y_train = keras.ops.one_hot(labels, 3)
y_reversed = keras.ops.one_hot(labels[::-1].copy(), 3)

ds_one = tf_data.Dataset.from_tensor_slices((x_train, y_train)).batch(8)
ds_two = tf_data.Dataset.from_tensor_slices((x_train[::-1].copy(), y_reversed)).batch(8)
train_ds = tf_data.Dataset.zip((ds_one, ds_two))


def sample_beta_distribution(size, concentration_0=0.2, concentration_1=0.2):
    gamma_1_sample = tf_random_gamma(shape=[size], alpha=concentration_1)
    gamma_2_sample = tf_random_gamma(shape=[size], alpha=concentration_0)
    return gamma_1_sample / (gamma_1_sample + gamma_2_sample)


def mix_up(ds_one, ds_two, alpha=0.2):
    images_one, labels_one = ds_one
    images_two, labels_two = ds_two
    batch_size = keras.ops.shape(images_one)[0]
    l = sample_beta_distribution(batch_size, alpha, alpha)
    x_l = keras.ops.reshape(l, (batch_size, 1, 1, 1))
    y_l = keras.ops.reshape(l, (batch_size, 1))
    images = images_one * x_l + images_two * (1 - x_l)
    labels = labels_one * y_l + labels_two * (1 - y_l)
    return (images, labels)


def fixed_mix(ds_one, ds_two):
    images_one, labels_one = ds_one
    images_two, labels_two = ds_two
    return images_one * 0.75 + images_two[:, ::1, :, :1] * 0.25, labels_one * 0.75 + labels_two * 0.25


train_ds_mu = train_ds.map(lambda one, two: mix_up(one, two, alpha=0.2), num_parallel_calls=tf_data.AUTOTUNE)
fixed_ds = train_ds.map(fixed_mix)


def build_model():
    inputs = keras.Input(shape=(6, 6, 2))
    x = layers.Conv2D(4, 3, activation="relu")(inputs)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


if __name__ == "__main__":
    model = build_model()
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    model.fit(train_ds_mu, epochs=1)
    model.fit(fixed_ds, epochs=1)
    print("mixed labels", float(next(iter(train_ds_mu))[1].numpy().sum()))
'''


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def translated():
    return translate(MIXUP, "mixup_case.py")


def test_zip_of_batched_pipelines_mapped_translates_without_stub(translated):
    stubs = [str(d) for d in translated.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    assert "ZippedLoader(ds_one, ds_two)" in translated.text
    assert "gamma_sample(" in translated.text and "import tensorflow" not in translated.text


def test_zipped_and_mapped_loader_yields_keras_batches(translated, tf):
    """The deterministic map over the zip: the same (x, y) batches as tf.data's (the model
    takes channels-first images: the mapped loader permutes what the map returns)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    generated = verify.load_generated(translated.text)
    original = load_source_module(MIXUP)
    ours = [(x.numpy(), y.numpy()) for x, y in generated.fixed_ds]
    theirs = [(x.numpy(), y.numpy()) for x, y in original.fixed_ds]
    assert len(ours) == len(theirs) == 5
    for (ox, oy), (tx, ty) in zip(ours, theirs):
        np.testing.assert_allclose(ox, tx.transpose(0, 3, 1, 2), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(oy, ty, rtol=1e-6, atol=1e-7)
    # the random map: each image a convex mix of the two zipped images, with its label's weight
    x, y = next(iter(generated.train_ds_mu))
    a, b = generated.x_train[:8].transpose(0, 3, 1, 2), generated.x_train[::-1][:8].transpose(0, 3, 1, 2)
    weight = (x.numpy() - b) / np.where(np.abs(a - b) > 1e-3, a - b, np.nan)
    lam = np.nanmedian(weight.reshape(8, -1), axis=1)
    assert np.all((lam >= -1e-4) & (lam <= 1 + 1e-4))
    np.testing.assert_allclose(x.numpy(), lam[:, None, None, None] * a + (1 - lam[:, None, None, None]) * b,
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y.numpy().sum(axis=1), 1.0, rtol=1e-5)


def test_mixup_program_runs(translated, tmp_path):
    out = tmp_path / "mixup_case_torch.py"
    out.write_text(translated.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "mixed labels 8.0" in run.stdout


def test_fit_on_an_unmapped_zip_stays_a_stub():
    source = MIXUP.replace("model.fit(train_ds_mu, epochs=1)", "model.fit(train_ds, epochs=1)")
    result = translate(source, "mixup_case.py")
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert any("fit()" in s for s in stubs), stubs


def test_gamma_sample_draws_tensorflows_distribution(tf):
    from scipy import stats

    torch.manual_seed(0)
    tf.random.set_seed(0)
    for alpha, beta in ((0.2, None), (2.5, 4.0), ([0.5, 3.0], 0.5)):
        ours = image_ops.gamma_sample([4000], alpha, beta).numpy()
        theirs = tf.random.gamma([4000], alpha, beta).numpy()
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
        for column in range(ours.reshape(4000, -1).shape[1]):
            a, b = ours.reshape(4000, -1)[:, column], theirs.reshape(4000, -1)[:, column]
            assert stats.ks_2samp(a, b).pvalue > 1e-3, (alpha, beta, column)
    # a rate, not a scale: Gamma(2, rate 4) has mean 0.5
    assert abs(image_ops.gamma_sample([20000], 2.0, 4.0).mean().item() - 0.5) < 0.02


@pytest.mark.parametrize("shape", [(9, 11, 3), (2, 9, 11, 1)])
def test_bounding_box_crop_and_pad_equal_tensorflow(tf, shape):
    image = np.random.RandomState(1).rand(*shape).astype("float32")
    box = (2, 3, 4, 5)
    ours = image_ops.image_crop_to_bounding_box(torch.as_tensor(image), *box)
    theirs = tf.image.crop_to_bounding_box(image, *box).numpy()
    assert np.array_equal(ours.numpy(), theirs)
    size = (torch.tensor(1), torch.tensor(2), 12, 14)  # (offsets as 0-d tensors, as CutMix computes them)
    ours = image_ops.image_pad_to_bounding_box(torch.as_tensor(theirs), *size)
    theirs = tf.image.pad_to_bounding_box(theirs, 1, 2, 12, 14).numpy()
    assert np.array_equal(ours.numpy(), theirs)
    with pytest.raises(ValueError):
        image_ops.image_crop_to_bounding_box(torch.as_tensor(image), 7, 0, 4, 4)


def test_one_hot_equals_keras(tf):
    import keras

    labels = np.array([0, 2, 1, 5, -1])
    ours = image_ops.one_hot_float(torch.as_tensor(labels), 3)
    theirs = keras.ops.convert_to_numpy(keras.ops.one_hot(labels, 3))
    assert ours.dtype == torch.float32 and np.array_equal(ours.numpy(), theirs)


CUTMIX = '''
import numpy as np
import keras
from keras import layers
from tensorflow import data as tf_data
from tensorflow import image as tf_image

AUTO = tf_data.AUTOTUNE
rng = np.random.RandomState(0)
x_train = rng.randint(0, 256, (21, 8, 8, 3)).astype("uint8")
y_train = keras.utils.to_categorical(rng.randint(0, 4, (21,)), num_classes=4)


def preprocess_image(image, label):
    image = tf_image.convert_image_dtype(image, "float32") / 255.0
    return image, keras.ops.cast(label, dtype="float32")


def paste(one, two):
    (image1, label1), (image2, label2) = one, two
    crop = tf_image.crop_to_bounding_box(image2, 1, 2, 4, 3)
    patch = tf_image.pad_to_bounding_box(crop, 1, 2, 8, 8)
    hole = tf_image.pad_to_bounding_box(tf_image.crop_to_bounding_box(image1, 1, 2, 4, 3), 1, 2, 8, 8)
    return image1 - hole + patch[:, :, :1], label1 * 0.8 + label2 * 0.2


ds_one = tf_data.Dataset.from_tensor_slices((x_train, y_train)).map(preprocess_image, num_parallel_calls=AUTO)
ds_two = tf_data.Dataset.from_tensor_slices((x_train[::-1].copy(), y_train[::-1].copy())).map(preprocess_image)
train_ds = tf_data.Dataset.zip((ds_one, ds_two))
pasted = train_ds.map(paste, num_parallel_calls=AUTO).batch(4).prefetch(AUTO)
shuffled = (
    train_ds.shuffle(8)
    .map(paste, num_parallel_calls=AUTO)
    .batch(5, drop_remainder=True)
    .prefetch(AUTO)
)


def build_model():
    inputs = keras.Input(shape=(8, 8, 3))
    x = layers.Conv2D(4, 3, activation="relu")(inputs)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(4, activation="softmax")(x))


if __name__ == "__main__":
    model = build_model()
    model.compile(loss="categorical_crossentropy", optimizer="adam")
    model.fit(shuffled, epochs=1)
    print("batches", len([b for b in shuffled]))
'''


@pytest.fixture(scope="module")
def cutmix_translated():
    return translate(CUTMIX, "cutmix_case.py")


def test_zip_before_batching_translates_without_stub(cutmix_translated):
    stubs = [str(d) for d in cutmix_translated.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    text = cutmix_translated.text
    assert "ElementPipeline.zip(" in text and "AUTO)" not in text and "=AUTO" not in text


def test_element_pipeline_yields_keras_batches(cutmix_translated, tf):
    """Zipped element by element, mapped, batched: the batches tf.data gives (unshuffled), in
    the model's layout; shuffled: batches of the same elements (drop_remainder kept)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    generated = verify.load_generated(cutmix_translated.text)
    original = load_source_module(CUTMIX)
    ours = [(x.numpy(), y.numpy()) for x, y in generated.pasted]
    theirs = [(x.numpy(), y.numpy()) for x, y in original.pasted]
    assert [o[0].shape for o in ours] == [t[0].transpose(0, 3, 1, 2).shape for t in theirs]
    for (ox, oy), (tx, ty) in zip(ours, theirs):
        np.testing.assert_allclose(ox, tx.transpose(0, 3, 1, 2), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(oy, ty, rtol=1e-6, atol=1e-7)
    torch.manual_seed(0)
    shuffled = [(x.numpy(), y.numpy()) for x, y in generated.shuffled]
    assert len(shuffled) == len(generated.shuffled) == 4 and all(x.shape[0] == 5 for x, _ in shuffled)
    every = {tuple(np.round(x.ravel(), 5)) for x in np.concatenate([o[0] for o in ours])}
    assert all(tuple(np.round(x.ravel(), 5)) in every for x in np.concatenate([s[0] for s in shuffled]))


def test_element_pipeline_program_runs(cutmix_translated, tmp_path):
    out = tmp_path / "cutmix_case_torch.py"
    out.write_text(cutmix_translated.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "batches 4" in run.stdout


def test_shuffle_buffer_draws_as_tf_data(tf):
    """tf.data's shuffle(buffer_size): the first element comes from the first buffer_size
    elements (a full reshuffle would not), every order of a full buffer is possible."""
    from transpiler.runtime.torch.pipelines import ElementPipeline

    data = np.arange(30)
    firsts, theirs = set(), set()
    for seed in range(60):
        torch.manual_seed(seed)
        order = [int(v) for v in ElementPipeline.from_tensor_slices(data).shuffle(4)]
        assert sorted(order) == list(range(30))
        firsts.add(order[0])
        theirs.add(int(next(iter(tf.data.Dataset.from_tensor_slices(data).shuffle(4, seed=seed)))))
    assert firsts == theirs == {0, 1, 2, 3}
    torch.manual_seed(0)
    full = {int(next(iter(ElementPipeline.from_tensor_slices(data).shuffle(100)))) for _ in range(60)}
    assert len(full) > 10


CHAIN = '''
import numpy as np
import keras
import tensorflow as tf
from keras import layers

rng = np.random.RandomState(0)
x = rng.rand(10, 3).astype("float32")
y = rng.randint(0, 2, (10,))
base = tf.data.Dataset.from_tensor_slices(x)
scaled = base.map(lambda v: v * 2.0 + 1.0)
labels = tf.data.Dataset.from_tensor_slices(y)
pairs = tf.data.Dataset.zip((scaled, labels)).batch(4)


def build_model():
    inputs = keras.Input(shape=(3,))
    return keras.Model(inputs, layers.Dense(2, activation="softmax")(inputs))


if __name__ == "__main__":
    model = build_model()
    model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
    model.fit(pairs, epochs=1)
'''


def test_pipeline_made_from_another_then_zipped_yields_keras_batches(tf):
    """``scaled = base.map(f)`` zipped: ``base`` is the runtime's pipeline too (speaker
    recognition's path_ds → audio_ds), the batches are tf.data's."""
    result = translate(CHAIN, "chain_case.py")
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    ours = [(a.numpy(), b.numpy()) for a, b in verify.load_generated(result.text).pairs]
    theirs = [(a.numpy(), b.numpy()) for a, b in load_source_module(CHAIN).pairs]
    assert len(ours) == len(theirs) == 3
    for (oa, ob), (ta, tb) in zip(ours, theirs):
        np.testing.assert_allclose(oa, ta, rtol=1e-6)
        assert np.array_equal(ob, tb)
    # a pipeline of another kind of dataset (a loader utility's) zipped before batching: a stub
    other = CHAIN.replace("base = tf.data.Dataset.from_tensor_slices(x)",
                          "base = keras.utils.timeseries_dataset_from_array(x, None, 2, batch_size=None)")
    stubs = [str(d) for d in translate(other, "chain_case.py").program.diagnostics if d.severity == "stub"]
    assert stubs


PREPROCESS = """import numpy as np
import keras
import tensorflow as tf
from keras import layers

rng = np.random.RandomState(0)
x = rng.randint(0, 256, (12, 6, 6, 3)).astype("uint8")
y = rng.randint(0, 3, (12,))


def preprocess_dataset(is_training=True):
    def fn(image, label):
        if is_training:
            image = tf.image.random_flip_left_right(image)
        image = tf.image.resize(image, (4, 4))
        label = tf.one_hot(label, depth=3)
        return image, label

    return fn


def prepare_dataset(dataset, is_training=True):
    dataset = dataset.map(preprocess_dataset(is_training))
    return dataset.batch(4)


train_ds = prepare_dataset(tf.data.Dataset.from_tensor_slices((x, y)))


def build_model():
    inputs = keras.Input(shape=(4, 4, 3))
    x = layers.GlobalAveragePooling2D()(inputs)
    return keras.Model(inputs, layers.Dense(3, activation="softmax")(x))


model = build_model()
model.compile(loss="categorical_crossentropy", optimizer="adam")
model.fit(train_ds, epochs=1)
"""


def test_function_a_pipeline_maps_translated_whole_when_a_function_also_calls_it(tf):
    """DeiT / MobileViT: ``preprocess_dataset(is_training)`` returns the function the pipeline
    maps and is called from ``prepare_dataset`` (so the reader counts it among inlined helpers):
    it is translated whole (tf.image calls, one_hot), not stubbed line by line; its numbers
    are TensorFlow's."""
    result = translate(PREPROCESS, "preprocess_case.py")
    lines = [d.span.line for d in result.program.diagnostics if d.severity == "stub"]
    assert not [n for n in lines if 11 <= n <= 19], lines
    assert "image_random_flip_left_right(image)" in result.text and "one_hot_float(label, 3)" in result.text
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    generated = verify.load_generated(result.text)
    original = load_source_module(PREPROCESS)
    image = np.random.RandomState(3).randint(0, 256, (6, 6, 3)).astype("uint8")
    ours = generated.preprocess_dataset(False)(torch.as_tensor(image), torch.tensor(2))
    theirs = original.preprocess_dataset(False)(tf.constant(image), tf.constant(2))
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-5, atol=1e-4)
    assert np.array_equal(ours[1].numpy(), theirs[1].numpy())


@pytest.mark.parametrize("change", [
    ("ds_one = tf_data.Dataset.from_tensor_slices((x_train, y_train)).batch(8)",
     "ds_one = tf_data.Dataset.from_tensor_slices((x_train, y_train)).batch(8).repeat()"),
    ("ds_one = tf_data.Dataset.from_tensor_slices((x_train, y_train)).batch(8)",
     "ds_one = tf_data.Dataset.from_tensor_slices(({'a': x_train}, y_train)).batch(8)"),
], ids=["repeated", "feature_columns"])
def test_zip_of_a_repeated_or_columns_pipeline_stays_a_stub(change):
    """An endless pipeline (its zip would never end an epoch) or one of a dict of columns
    (another runtime class): the zip is a stub, never a loader that fails when run."""
    result = translate(MIXUP.replace(*change), "mixup_case.py")
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert any("Dataset.zip" in s for s in stubs), stubs
    assert "ZippedLoader(" not in result.text.split("class ZippedLoader")[-1]


WINDOWS = '''
import numpy as np
import tensorflow as tf
import keras

series = np.random.RandomState(0).rand(60, 3).astype("float32")


def make_windows(data, length, shuffle=True):
    inputs = keras.utils.timeseries_dataset_from_array(data[:-1], None, sequence_length=length, batch_size=8)
    targets = keras.utils.timeseries_dataset_from_array(data[length:], None, sequence_length=1, batch_size=8)
    dataset = tf.data.Dataset.zip((inputs, targets))
    if shuffle:
        dataset = dataset.shuffle(100)
    return dataset.prefetch(16)


windows = make_windows(series, 5, shuffle=SHUFFLE)
print("batches", len(list(windows)))
'''


@pytest.mark.parametrize("shuffle", [True, False])
def test_a_tf_data_method_the_loader_has_not_is_a_stub(shuffle, tmp_path):
    """``.shuffle(n)`` on a zip of loaders: the output's DataLoader has no such method, and the
    statement names no Keras object; it is a stub with the reason (the generated program stops
    there with it), never code that fails with an AttributeError. Where the branch calling it
    never runs, the program runs."""
    result = translate(WINDOWS.replace("SHUFFLE", str(shuffle)), "windows_case.py")
    stubs = [d.message for d in result.program.diagnostics if d.severity == "stub"]
    expected = ["not translated yet: .shuffle() on a dataset of batches (the output's DataLoader) is not "
                "translated (tf.data's .map(fn), .prefetch() and .cache() are)"]
    assert stubs == (expected if shuffle else []), stubs  # (shuffle=False: the branch never runs)
    out = tmp_path / "windows_case_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": ""})
    if shuffle:
        assert run.returncode != 0 and "NotImplementedError: transpiler: .shuffle()" in run.stderr, run.stderr[-2000:]
    else:
        assert run.returncode == 0, run.stderr[-3000:]
        assert "batches 7" in run.stdout
