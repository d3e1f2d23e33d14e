"""keras.utils.image_dataset_from_directory without TensorFlow (runtime/torch/directories.py):
the same files, class order, labels, split and pixels as Keras on a folder of synthetic PNGs;
a script that trains on such a folder translates with no stub and its program runs."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SCRIPT = os.path.join(ROOT, "corpus", "keras", "image_folder_classifier.py")


def write_image_folder(root, classes=("dogs", "cats", "birds"), per_class=5, seed=0):
    """PNG files of several sizes (RGB and grayscale ones) in one folder per class, and a file
    of another format Keras skips."""
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.RandomState(seed)
    for c, name in enumerate(classes):
        os.makedirs(os.path.join(root, name, "sub"), exist_ok=True)
        for i in range(per_class):
            h, w = 6 + (i % 3) * 3, 7 + (i % 2) * 5
            folder = os.path.join(root, name, "sub") if i == per_class - 1 else os.path.join(root, name)
            if i % 4 == 3:
                Image.fromarray(rng.randint(0, 256, (h, w)).astype("uint8"), "L").save(
                    os.path.join(folder, f"img_{i}.png"))
            else:
                Image.fromarray(rng.randint(0, 256, (h, w, 3)).astype("uint8"), "RGB").save(
                    os.path.join(folder, f"img_{i}.png"))
        with open(os.path.join(root, name, "notes.txt"), "w") as fh:
            fh.write("not an image")
    return root


def _batches(ds):
    return [tuple(np.asarray(t) for t in b) if isinstance(b, (tuple, list)) else (np.asarray(b),) for b in ds]


@pytest.mark.parametrize("kwargs", [
    dict(image_size=(8, 8), batch_size=4, shuffle=False),
    dict(image_size=(12, 9), batch_size=5, shuffle=False, label_mode="categorical", interpolation="nearest"),
    dict(image_size=(8, 8), batch_size=6, shuffle=False, class_names=["cats", "dogs"], label_mode="binary"),
    dict(image_size=(10, 10), batch_size=4, shuffle=False, color_mode="grayscale", labels=None),
], ids=["int", "categorical-nearest", "binary-class_names", "grayscale-no-labels"])
def test_batches_equal_keras(tmp_path, kwargs):
    keras = pytest.importorskip("keras")
    from transpiler.runtime.torch.directories import image_dataset_from_directory

    root = write_image_folder(str(tmp_path / "images"))
    if kwargs.get("color_mode") == "grayscale":  # (an RGB file's grey values: PIL's and TF's formulas differ)
        for dirpath, _, files in os.walk(root):
            for f in files:
                if f.endswith(".png"):
                    from PIL import Image
                    Image.open(os.path.join(dirpath, f)).convert("L").save(os.path.join(dirpath, f))
    theirs_ds = keras.utils.image_dataset_from_directory(root, **kwargs)
    ours_ds = image_dataset_from_directory(root, **kwargs)
    assert ours_ds.class_names == theirs_ds.class_names
    assert ours_ds.file_paths == theirs_ds.file_paths
    theirs, ours = _batches(theirs_ds), _batches(ours_ds)
    assert len(ours) == len(theirs) >= 2
    for a, b in zip(ours, theirs):
        assert len(a) == len(b)
        np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-3)  # pixels 0..255
        if len(a) > 1:
            assert a[1].shape == b[1].shape and np.array_equal(a[1], b[1].astype(a[1].dtype))


def test_shuffled_split_holds_keras_files(tmp_path):
    """shuffle with a seed and validation_split: the training and validation files are Keras'
    (the global shuffle is Keras' RandomState; each pass's order then differs)."""
    keras = pytest.importorskip("keras")
    from transpiler.runtime.torch.directories import image_dataset_from_directory

    root = write_image_folder(str(tmp_path / "images"), per_class=7)
    args = dict(image_size=(8, 8), batch_size=4, validation_split=0.25, seed=1337)
    for subset in ("training", "validation"):
        ours = image_dataset_from_directory(root, subset=subset, **args)
        theirs = keras.utils.image_dataset_from_directory(root, subset=subset, **args)
        assert ours.file_paths == theirs.file_paths
        ours_labels = sorted(int(v) for _, y in ours for v in y)
        theirs_labels = sorted(int(v) for _, y in theirs for v in np.asarray(y))
        assert ours_labels == theirs_labels
    both = image_dataset_from_directory(root, subset="both", **args)
    assert [len(d.file_paths) for d in both] == [16, 5]


def test_image_folder_script_translates_without_stub_and_runs(tmp_path):
    """The class order, the channels-first loader the conv model takes, fit and evaluate on it."""
    pytest.importorskip("PIL.Image")
    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    assert 'data_format="channels_first"' in result.text
    write_image_folder(str(tmp_path / "data" / "flowers"), classes=("roses", "tulips"), per_class=12)
    out = tmp_path / "image_folder_classifier_torch.py"
    out.write_text(result.text)
    env = {**os.environ, "PYTHONPATH": "", "TRANSPILED_DATA_HOME": str(tmp_path / "data")}
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "classes: ['roses', 'tulips']" in run.stdout and "accuracy" in run.stdout


BOTH_SUBSETS = """
import keras
from keras import layers

train_ds, val_ds = keras.utils.image_dataset_from_directory(
    "images", image_size=(12, 12), batch_size=4, validation_split=0.25, subset="both", seed=7)
print("classes:", train_ds.class_names)
inputs = keras.Input(shape=(12, 12, 3))
x = layers.Conv2D(4, 3)(layers.Rescaling(1 / 255)(inputs))
outputs = layers.Dense(3, activation="softmax")(layers.Flatten()(x))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(train_ds, epochs=1, validation_data=val_ds)
"""


def test_both_subsets_unpacked_feed_fit_and_validation(tmp_path):
    """``train_ds, val_ds = image_dataset_from_directory(..., subset="both")``: both names are
    the runtime's loaders, fit() trains on one and validates on the other."""
    pytest.importorskip("PIL.Image")
    result = translate(BOTH_SUBSETS, "both_subsets.py")
    assert [str(d) for d in result.program.diagnostics if d.severity == "stub"] == []
    write_image_folder(str(tmp_path / "images"), per_class=8)
    out = tmp_path / "both_subsets_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "classes: ['birds', 'cats', 'dogs']" in run.stdout and "val_loss" in run.stdout


def test_predict_on_a_loader_is_a_stub_not_a_call_on_pairs():
    """predict(train_ds) would call the model on (images, labels) batches (and transpose the
    loader for a channels-first model) when run: a stub naming why."""
    source = BOTH_SUBSETS + "predictions = model.predict(val_ds)\n"
    result = translate(source, "predict_loader.py")
    stubs = [d.message for d in result.program.diagnostics if d.severity == "stub"]
    assert any("predict() on a dataset of (x, y) batches" in m for m in stubs), stubs
    assert "predict(model, np.transpose(val_ds" not in result.text


MAPPED = """
import keras
import tensorflow as tf
from keras import layers

train_ds = keras.utils.image_dataset_from_directory("images", image_size=(12, 12), batch_size=4, seed=3)


def first_channels(images, labels):
    return images[:, :, :, :2] / 255.0, labels  # (the channels axis is the last one, as in Keras)


train_ds = train_ds.map(first_channels).map(lambda x, y: (tf.image.flip_left_right(x), y)).cache()
train_ds = train_ds.prefetch(tf.data.AUTOTUNE)
for images, labels in train_ds.take(1):
    print("batch", tuple(images.shape))
inputs = keras.Input(shape=(12, 12, 2))
outputs = layers.Dense(3, activation="softmax")(layers.Flatten()(layers.Conv2D(4, 3)(inputs)))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(train_ds, epochs=1)
"""


def test_map_prefetch_cache_on_a_loader_run_on_channels_last_batches(tmp_path):
    """tf.data's .map(fn) on the loader runs fn on each batch as Keras does (channels-last
    images; the last map of the chain gives them to the channels-first model), .prefetch() and
    .cache() need nothing: no stub, and the program trains."""
    pytest.importorskip("PIL.Image")
    result = translate(MAPPED, "mapped_loader.py")
    assert [str(d) for d in result.program.diagnostics if d.severity == "stub"] == []
    flat = "".join(result.text.split())
    # (chained maps nest; only the last one puts the images in the model's layout)
    assert "MappedLoader(MappedLoader(train_ds,first_channels),lambdax,y:(x.flip(-2),y),layout=(0,3,1,2)" in flat
    assert flat.count("layout=(0,3,1,2)") == 1
    assert 'train_ds=image_dataset_from_directory("images",image_size=(12,12),batch_size=4,seed=3)' in flat
    write_image_folder(str(tmp_path / "images"))
    out = tmp_path / "mapped_loader_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "batch (4, 2, 12, 12)" in run.stdout and "Epoch 1/1" in run.stdout


def test_map_with_other_arguments_on_a_loader_is_a_stub():
    source = MAPPED.replace(".map(first_channels)", ".map(first_channels, deterministic=False, name='m')")
    result = translate(source, "mapped_loader.py")
    assert [d for d in result.program.diagnostics if d.severity == "stub"]
