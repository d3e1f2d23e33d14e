"""``keras.datasets.X.load_data()`` as numpy functions for generated PyTorch programs.

Each loader fetches the file Keras fetches (the same URL and file hash) through
``downloads.get_file``, which downloads it once with ``torch.hub.download_url_to_file``
into a cache of its own (``$TRANSPILED_DATA_HOME``, laid out as Keras' ``~/.keras``), and
returns the arrays Keras returns: the same shuffles (the seeded ``RandomState`` Keras
uses), index shifts, filters, dtypes and channels-last images. Pickled data (CIFAR
batches, the ragged IMDB/Reuters arrays) is read with an unpickler that only rebuilds
numpy arrays, so a data file can never run code.
"""

import gzip
import io
import os
import pickle
import zipfile

import numpy as np

from transpiler.runtime.torch.downloads import cache_folder, fetch, get_file

#: where Keras fetches its datasets from (keras.datasets.*)
KERAS_DATASETS_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


class NumpyUnpickler(pickle.Unpickler):
    """Unpickles numpy arrays and plain Python values only: a data file cannot run code."""

    ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
               ("numpy._core.multiarray", "_reconstruct")}

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data file")
        return super().find_class(module, name)


def load_npz_objects(path):
    """The arrays of an .npz whose ragged (object) arrays are pickled, unpickled safely."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            stream = io.BytesIO(archive.read(member))
            major, _ = np.lib.format.read_magic(stream)
            read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            _, _, dtype = read_header(stream)
            if dtype.hasobject:
                array = NumpyUnpickler(stream).load()
            else:
                stream.seek(0)
                array = np.lib.format.read_array(stream, allow_pickle=False)
            arrays[member[: -len(".npy")] if member.endswith(".npy") else member] = array
    return arrays


def keras_word_sequences(splits, num_words, skip_top, maxlen, start_char, oov_char, index_from):
    """What keras.datasets.imdb/reuters do to the stored word-index sequences of each split:
    a start marker, indices shifted by index_from, sequences of maxlen or more words dropped,
    then words outside [skip_top, num_words) replaced by oov_char (or removed without one).
    num_words=None keeps every index below the largest one, as Keras does."""
    shifted = []
    for sequences, labels in splits:
        head = [start_char] if start_char is not None else []
        sequences = [head + [w + (index_from or 0) for w in seq] for seq in sequences]
        if maxlen:
            kept = [i for i, seq in enumerate(sequences) if len(seq) < maxlen]
            sequences, labels = [sequences[i] for i in kept], [labels[i] for i in kept]
            if not sequences:
                raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept.")
        shifted.append((sequences, labels))
    everything = [seq for sequences, _ in shifted for seq in sequences]
    num_words = num_words or max(max(seq) for seq in everything)
    if oov_char is not None:
        cut = [[w if skip_top <= w < num_words else oov_char for w in seq] for seq in everything]
    else:
        cut = [[w for w in seq if skip_top <= w < num_words] for seq in everything]
    return cut, shifted


def read_cifar_batch(folder, name, label_key):
    """(images (N, 3, 32, 32) uint8, labels) of one CIFAR batch file of the extracted archive."""
    with open(os.path.join(folder, name), "rb") as fh:
        batch = NumpyUnpickler(fh, encoding="bytes").load()
    batch = {key.decode("utf8"): value for key, value in batch.items()}
    data = batch["data"]
    return data.reshape(data.shape[0], 3, 32, 32), batch[label_key]


def load_mnist(path="mnist.npz"):
    """keras.datasets.mnist.load_data() without Keras: the same file, read with numpy."""
    path = os.path.join(cache_folder(), path)
    fetch(KERAS_DATASETS_URL + "mnist.npz", path,
          file_hash="731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1")
    with np.load(path, allow_pickle=False) as data:
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def load_fashion_mnist():
    """keras.datasets.fashion_mnist.load_data() without Keras: the same IDX files, read with numpy."""

    def read(name, offset):
        path = os.path.join(cache_folder(os.path.join("datasets", "fashion-mnist")), name)
        fetch(KERAS_DATASETS_URL + name, path)
        with gzip.open(path) as fh:
            return np.frombuffer(fh.read(), np.uint8, offset=offset)

    y_train = read("train-labels-idx1-ubyte.gz", 8)
    x_train = read("train-images-idx3-ubyte.gz", 16).reshape(len(y_train), 28, 28)
    y_test = read("t10k-labels-idx1-ubyte.gz", 8)
    x_test = read("t10k-images-idx3-ubyte.gz", 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)


def load_cifar10():
    """keras.datasets.cifar10.load_data() without Keras: the same batch files, channels-last
    uint8 images and (N, 1) uint8 labels, as Keras returns them."""
    folder = os.path.join(get_file(fname="cifar-10-batches-py-target",
                                   origin="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", extract=True,
                                   file_hash="6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"),
                          "cifar-10-batches-py")
    parts = [read_cifar_batch(folder, f"data_batch_{i}", "labels") for i in range(1, 6)]
    x_train = np.concatenate([images for images, _ in parts]).astype("uint8")
    y_train = np.concatenate([np.asarray(labels) for _, labels in parts]).astype("uint8").reshape(-1, 1)
    x_test, y_test = read_cifar_batch(folder, "test_batch", "labels")
    y_test = np.reshape(y_test, (len(y_test), 1)).astype("uint8")
    return (x_train.transpose(0, 2, 3, 1), y_train), (x_test.astype("uint8").transpose(0, 2, 3, 1), y_test)


def load_cifar100(label_mode="fine"):
    """keras.datasets.cifar100.load_data() without Keras: the same files, channels-last images
    and (N, 1) labels of the 100 fine or 20 coarse classes."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'label_mode must be one of "fine", "coarse". Received: label_mode={label_mode}.')
    folder = os.path.join(get_file(fname="cifar-100-python-target",
                                   origin="https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz", extract=True,
                                   file_hash="85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"),
                          "cifar-100-python")
    out = []
    for name in ("train", "test"):
        images, labels = read_cifar_batch(folder, name, f"{label_mode}_labels")
        out.append((images.transpose(0, 2, 3, 1), np.reshape(labels, (len(labels), 1))))
    return out[0], out[1]


def load_boston_housing(path="boston_housing.npz", test_split=0.2, seed=113):
    """keras.datasets.boston_housing.load_data() without Keras: same file, same shuffle and split."""
    path = os.path.join(cache_folder(), path)
    fetch(KERAS_DATASETS_URL + "boston_housing.npz", path,
          file_hash="f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5")
    with np.load(path, allow_pickle=False) as data:
        x, y = data["x"], data["y"]
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    split = int(len(x) * (1 - test_split))
    return (x[:split], y[:split]), (x[split:], y[split:])


def load_imdb(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3):
    """keras.datasets.imdb.load_data() without Keras: the same file, each split shuffled by
    the seeded RandomState Keras uses, then Keras' index shift, length filter and word cut."""
    path = os.path.join(cache_folder(), path)
    fetch(KERAS_DATASETS_URL + "imdb.npz", path, file_hash="69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f")
    data = load_npz_objects(path)
    rng = np.random.RandomState(seed)
    splits = []
    for name in ("train", "test"):
        order = np.arange(len(data[f"x_{name}"]))
        rng.shuffle(order)
        splits.append((data[f"x_{name}"][order], data[f"y_{name}"][order]))
    sequences, splits = keras_word_sequences(splits, num_words, skip_top, maxlen, start_char, oov_char,
                                             index_from)
    labels = np.concatenate([split_labels for _, split_labels in splits])
    n_train = len(splits[0][0])
    x_train, y_train = np.array(sequences[:n_train], dtype="object"), labels[:n_train]
    x_test, y_test = np.array(sequences[n_train:], dtype="object"), labels[n_train:]
    return (x_train, y_train), (x_test, y_test)


def load_reuters(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113,
                 start_char=1, oov_char=2, index_from=3):
    """keras.datasets.reuters.load_data() without Keras: the same file and shuffle, Keras'
    index shift, length filter and word cut, then the last test_split held out."""
    path = os.path.join(cache_folder(), path)
    fetch(KERAS_DATASETS_URL + "reuters.npz", path, file_hash="d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916")
    data = load_npz_objects(path)
    order = np.arange(len(data["x"]))
    np.random.RandomState(seed).shuffle(order)
    sequences, splits = keras_word_sequences([(data["x"][order], data["y"][order])], num_words, skip_top,
                                             maxlen, start_char, oov_char, index_from)
    labels = splits[0][1]
    split = int(len(sequences) * (1 - test_split))
    x_train, y_train = np.array(sequences[:split], dtype="object"), np.array(labels[:split])
    x_test, y_test = np.array(sequences[split:], dtype="object"), np.array(labels[split:])
    return (x_train, y_train), (x_test, y_test)
