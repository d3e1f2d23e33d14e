"""keras.datasets loaders and to_categorical become framework-free numpy code."""

from __future__ import annotations

import gzip
import os
import pickle

import numpy as np
import pytest

import keras

from transpiler.printers.torch_training import DATASET_LOADERS
from transpiler.translate import translate


def _namespace(name: str) -> dict:
    ns = {"np": np, "os": os, "gzip": gzip, "pickle": pickle}
    exec(DATASET_LOADERS[name], ns)
    return ns


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".keras" / "datasets"
    folder.mkdir(parents=True)
    return folder


def test_mnist_reads_the_keras_npz(home):
    rng = np.random.RandomState(0)
    arrays = {"x_train": rng.randint(0, 255, (5, 28, 28)).astype("uint8"), "y_train": np.arange(5, dtype="uint8"),
              "x_test": rng.randint(0, 255, (2, 28, 28)).astype("uint8"), "y_test": np.arange(2, dtype="uint8")}
    np.savez(home / "mnist.npz", **arrays)
    (x, y), (xt, yt) = _namespace("mnist")["load_mnist"]()
    assert np.array_equal(x, arrays["x_train"]) and np.array_equal(yt, arrays["y_test"])


def test_fashion_mnist_reads_idx_files(home):
    folder = home / "fashion-mnist"
    folder.mkdir()
    images = np.arange(3 * 28 * 28, dtype="uint32").astype("uint8").reshape(3, 28, 28)
    for prefix in ("train", "t10k"):
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as fh:
            fh.write(b"\0" * 8 + bytes([1, 2, 3]))
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as fh:
            fh.write(b"\0" * 16 + images.tobytes())
    (x, y), (xt, yt) = _namespace("fashion_mnist")["load_fashion_mnist"]()
    assert np.array_equal(x, images) and list(y) == [1, 2, 3] and xt.shape == (3, 28, 28)


def test_cifar10_reads_pickled_batches_channels_last(home):
    folder = home / "cifar-10-batches-py"
    folder.mkdir()
    data = np.arange(2 * 3072, dtype="uint32").astype("uint8").reshape(2, 3072)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with open(folder / name, "wb") as fh:
            pickle.dump({b"data": data, b"labels": [3, 7]}, fh)
    (x, y), (xt, yt) = _namespace("cifar10")["load_cifar10"]()
    assert x.shape == (10, 32, 32, 3) and y.shape == (10, 1) and xt.shape == (2, 32, 32, 3)
    assert np.array_equal(xt[0, :, :, 0], data[0, :1024].reshape(32, 32))


def test_boston_housing_keeps_keras_shuffle_and_split(home):
    x = np.arange(50, dtype="float64").reshape(25, 2)
    y = np.arange(25, dtype="float64")
    np.savez(home / "boston_housing.npz", x=x, y=y)
    (xtr, ytr), (xte, yte) = _namespace("boston_housing")["load_boston_housing"]()
    order = np.arange(25)
    np.random.RandomState(113).shuffle(order)
    assert np.array_equal(ytr, y[order][:20]) and np.array_equal(yte, y[order][20:])


@pytest.mark.parametrize("labels, n", [([0, 2, 1], 3), ([[1], [0]], 2), ([0, 4], None)])
def test_to_categorical_matches_keras(labels, n):
    ours = _namespace("to_categorical")["to_categorical"](labels, n)
    theirs = keras.utils.to_categorical(labels, n)
    assert np.array_equal(ours, theirs) and ours.dtype == theirs.dtype


def test_load_data_and_to_categorical_are_translated_in_place():
    source = (
        "import keras\n\n\n"
        "def build_model():\n"
        "    return keras.Sequential([keras.Input(shape=(28, 28)), keras.layers.Flatten(), keras.layers.Dense(10)])\n\n\n"
        "if __name__ == '__main__':\n"
        "    (x, y), (xt, yt) = keras.datasets.mnist.load_data()\n"
        "    y = keras.utils.to_categorical(y, 10)\n")
    result = translate(source, "p.py")
    assert "load_mnist()" in result.text and "to_categorical(y, 10)" in result.text
    assert "keras" not in result.text.replace("Keras", "").replace("keras.datasets", "").replace("~/.keras", "") \
        .replace("keras.utils", "")
    assert not result.stubs
