"""keras.datasets loaders and to_categorical become numpy code without Keras.

Every loader is compared with the real ``keras.datasets.X.load_data()`` reading the same
tiny fake cache files (the real formats) from one temporary folder, which is both Keras'
``KERAS_HOME`` and the generated loaders' ``TRANSPILED_DATA_HOME`` (the same layout).
Nothing is downloaded: both hash checks are switched off for the fake files and both
downloaders are replaced by one that fails the test (tests/test_downloads.py checks the
hashes and the downloads themselves).
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import re
import tarfile

import numpy as np
import pytest

import keras
from keras.src.backend import config as keras_config
from keras.src.utils import file_utils

from transpiler.printers.torch import dataset_loaders
from transpiler.translate import translate


def _no_download(url, *args, **kwargs):
    raise AssertionError(f"tried to download {url}")


def _loader(name: str, download=_no_download):
    texts, imports = dataset_loaders.loader_texts([name])
    ns: dict = {}
    exec("\n".join(sorted(imports)) + "\n" + "\n".join(texts), ns)  # what the copy says it needs
    ns["file_hash_matches"] = lambda *args, **kwargs: True  # the fake files' hashes
    ns["download_url_to_file"] = download
    return ns[f"load_{name}"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty Keras cache that both Keras and the generated loaders read; no network."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setenv("TRANSPILED_DATA_HOME", str(tmp_path))
    monkeypatch.setattr(keras_config, "_KERAS_DIR", str(tmp_path))
    monkeypatch.setattr(file_utils, "validate_file", lambda *args, **kwargs: True)  # fake files' hashes
    monkeypatch.setattr(file_utils, "urlretrieve", _no_download)
    folder = tmp_path / "datasets"
    folder.mkdir()
    return folder


def _assert_same(ours, theirs):
    """Nested tuples of arrays: equal values, dtypes and shapes (object arrays element-wise)."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
        return
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if theirs.dtype == object:
        assert [list(x) for x in ours.ravel()] == [list(x) for x in theirs.ravel()]
    else:
        assert np.array_equal(ours, theirs)


def _ragged(rng, n, longest=12, vocab=30):
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = [int(w) for w in rng.randint(1, vocab, size=rng.randint(2, longest))]  # as the real files
    return out


def _imdb_file(folder, name="imdb.npz"):
    rng = np.random.RandomState(0)
    np.savez(folder / name, x_train=_ragged(rng, 9), y_train=rng.randint(0, 2, 9),
             x_test=_ragged(rng, 7), y_test=rng.randint(0, 2, 7))


IMDB_ARGS = [{}, {"num_words": 20}, {"num_words": 15, "skip_top": 4, "maxlen": 9},
             {"start_char": None, "index_from": 0, "oov_char": None, "num_words": 18},
             {"seed": 7, "index_from": 2, "oov_char": 5, "maxlen": 10}, {"path": "other.npz"}]


@pytest.mark.parametrize("kwargs", IMDB_ARGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_imdb_matches_keras(cache, kwargs):
    _imdb_file(cache, kwargs.get("path", "imdb.npz"))
    _assert_same(_loader("imdb")(**kwargs), keras.datasets.imdb.load_data(**kwargs))


REUTERS_ARGS = [{}, {"num_words": 20, "test_split": 0.3}, {"skip_top": 3, "maxlen": 8, "seed": 3},
                {"start_char": None, "oov_char": None, "num_words": 12}]


@pytest.mark.parametrize("kwargs", REUTERS_ARGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_reuters_matches_keras(cache, kwargs):
    rng = np.random.RandomState(1)
    np.savez(cache / "reuters.npz", x=_ragged(rng, 15), y=rng.randint(0, 46, 15))
    _assert_same(_loader("reuters")(**kwargs), keras.datasets.reuters.load_data(**kwargs))


def test_ragged_arrays_never_run_pickled_code(cache, tmp_path):
    class Payload:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    x = np.empty(2, dtype=object)
    x[0], x[1] = [1, 2], Payload()
    np.savez(cache / "imdb.npz", x_train=x, y_train=np.zeros(2), x_test=x, y_test=np.zeros(2))
    with pytest.raises(pickle.UnpicklingError):
        _loader("imdb")()
    assert not (tmp_path / "pwned").exists()


def _cifar_archive(folder, top, members):
    """Keras 3's cache of a CIFAR archive: datasets/<top>-target_archive (a .tar.gz)."""
    with tarfile.open(folder / f"{top}-target_archive", "w:gz") as tar:
        for name, content in members.items():
            data = pickle.dumps(content)
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("label_mode", ["fine", "coarse"])
def test_cifar100_matches_keras(cache, label_mode):
    rng = np.random.RandomState(2)
    members = {name: {b"data": rng.randint(0, 256, (n, 3072)).astype("uint8"),
                      b"fine_labels": [int(v) for v in rng.randint(0, 100, n)],
                      b"coarse_labels": [int(v) for v in rng.randint(0, 20, n)]}
               for name, n in (("train", 5), ("test", 3))}
    _cifar_archive(cache, "cifar-100-python", members)
    ours = _loader("cifar100")(label_mode)  # extracts the archive as Keras does, beside it
    assert (cache / "cifar-100-python-target" / "cifar-100-python" / "train").is_file()
    _assert_same(ours, keras.datasets.cifar100.load_data(label_mode))
    _assert_same(_loader("cifar100")(label_mode), ours)  # the extracted folder, read again


@pytest.mark.slow
def test_cifar10_matches_keras(cache):
    # Keras fills fixed 10000-image batches: full-size batches of a cheap pattern
    members = {}
    for i, name in enumerate([f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]):
        data = ((np.arange(10000 * 3072, dtype="uint32") * (i + 3)) % 251).astype("uint8").reshape(10000, 3072)
        members[name] = {b"data": data, b"labels": [int(v) for v in (np.arange(10000) * (i + 1)) % 10]}
    _cifar_archive(cache, "cifar-10-batches-py", members)
    _assert_same(_loader("cifar10")(), keras.datasets.cifar10.load_data())


def test_mnist_matches_keras(cache):
    rng = np.random.RandomState(0)
    arrays = {"x_train": rng.randint(0, 255, (5, 28, 28)).astype("uint8"), "y_train": np.arange(5, dtype="uint8"),
              "x_test": rng.randint(0, 255, (2, 28, 28)).astype("uint8"), "y_test": np.arange(2, dtype="uint8")}
    np.savez(cache / "mnist.npz", **arrays)
    _assert_same(_loader("mnist")(), keras.datasets.mnist.load_data())


def test_fashion_mnist_matches_keras(cache):
    folder = cache / "fashion-mnist"
    folder.mkdir()
    images = np.arange(3 * 28 * 28, dtype="uint32").astype("uint8").reshape(3, 28, 28)
    for prefix in ("train", "t10k"):
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as fh:
            fh.write(b"\0" * 8 + bytes([1, 2, 3]))
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as fh:
            fh.write(b"\0" * 16 + images.tobytes())
    _assert_same(_loader("fashion_mnist")(), keras.datasets.fashion_mnist.load_data())


@pytest.mark.parametrize("kwargs", [{}, {"test_split": 0.4, "seed": 5}])
def test_boston_housing_matches_keras(cache, kwargs):
    rng = np.random.RandomState(3)
    np.savez(cache / "boston_housing.npz", x=rng.standard_normal((25, 13)), y=rng.standard_normal(25))
    _assert_same(_loader("boston_housing")(**kwargs), keras.datasets.boston_housing.load_data(**kwargs))


@pytest.mark.parametrize("name, url, cached", [
    ("imdb", "https://storage.googleapis.com/tensorflow/tf-keras-datasets/imdb.npz", "imdb.npz"),
    ("mnist", "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz", "mnist.npz"),
    ("cifar10", "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", "cifar-10-batches-py-target_archive"),
    ("fashion_mnist", "https://storage.googleapis.com/tensorflow/tf-keras-datasets/train-labels-idx1-ubyte.gz",
     "fashion-mnist/train-labels-idx1-ubyte.gz"),
])
def test_a_missing_file_is_fetched_from_kerass_url_into_the_own_cache(cache, name, url, cached):
    asked = []

    def download(origin, dst, *args, **kwargs):
        asked.append((origin, dst))
        raise OSError("offline")

    with pytest.raises(OSError, match="offline"):
        _loader(name, download)()
    assert asked == [(url, str(cache / cached))]


@pytest.mark.parametrize("labels, n", [([0, 2, 1], 3), ([[1], [0]], 2), ([0, 4], None)])
def test_to_categorical_matches_keras(labels, n):
    from transpiler.runtime.torch.training import to_categorical

    ours = to_categorical(labels, n)
    theirs = keras.utils.to_categorical(labels, n)
    assert np.array_equal(ours, theirs) and ours.dtype == theirs.dtype


@pytest.mark.parametrize("spelling", ["keras.utils.to_categorical", "keras.utils.numerical_utils.to_categorical",
                                      "keras.utils.np_utils.to_categorical"])
def test_load_data_and_to_categorical_are_translated_in_place(spelling):
    source = (
        "import keras\n\n\n"
        "def build_model():\n"
        "    return keras.Sequential([keras.Input(shape=(28, 28)), keras.layers.Flatten(), keras.layers.Dense(10)])\n\n\n"
        "if __name__ == '__main__':\n"
        "    (x, y), (xt, yt) = keras.datasets.mnist.load_data()\n"
        f"    y = {spelling}(y, 10)\n")
    result = translate(source, "p.py")
    assert "load_mnist()" in result.text and "    y = to_categorical(y, 10)" in result.text
    assert not re.search(r"^\s*(import|from)\s+(keras|tensorflow)", result.text, re.M)
    assert not result.stubs


@pytest.mark.parametrize("call, expected", [
    ("keras.datasets.imdb.load_data(num_words=10000, maxlen=200)", "load_imdb(num_words=10000, maxlen=200)"),
    ("keras.datasets.reuters.load_data(None, 5000, test_split=0.25)", "load_reuters(None, 5000, test_split=0.25)"),
    ('keras.datasets.cifar100.load_data(label_mode="coarse")', 'load_cifar100(label_mode="coarse")'),
    ("keras.datasets.boston_housing.load_data(test_split=0.1)", "load_boston_housing(test_split=0.1)"),
])
def test_load_data_arguments_are_kept(call, expected):
    source = f"import keras\n\n(x, y), (xt, yt) = {call}\nprint(len(x))\n"
    result = translate(source, "p.py")
    assert not result.stubs and expected in result.text, result.text
    assert "import keras" not in result.text
