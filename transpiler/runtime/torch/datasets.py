"""``keras.datasets.X.load_data()`` as framework-free numpy functions for generated programs.

Each loader reads the files Keras caches (``$KERAS_HOME/datasets``, by default
``~/.keras/datasets``) and returns the arrays Keras returns: the same shuffles (the
seeded ``RandomState`` Keras uses), index shifts, filters, dtypes and channels-last
images. Nothing is downloaded: a missing file raises ``FileNotFoundError`` saying which
file and that ``keras.datasets.X.load_data()`` (once, anywhere) fetches it. Pickled data
(CIFAR batches, the ragged IMDB/Reuters arrays) is read with an unpickler that only
rebuilds numpy arrays, so a data file can never run code.
"""

import gzip
import io
import os
import pickle
import tarfile
import zipfile

import numpy as np


def keras_dataset_path(name, dataset="keras.datasets"):
    """A file of Keras' dataset cache ($KERAS_HOME/datasets, by default ~/.keras/datasets)."""
    home = os.path.expanduser(os.environ.get("KERAS_HOME", os.path.join("~", ".keras")))
    path = os.path.join(home, "datasets", name)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is missing: {dataset}.load_data() downloads it once (needs Keras)")
    return path


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


def read_cifar_batch(folder, archive, name, label_key):
    """(images (N, 3, 32, 32) uint8, labels) of one CIFAR batch file, from Keras' cached
    archive when it is there (Keras re-extracts it on every load), else the extracted folder."""
    if archive is not None:
        with tarfile.open(archive) as tar:
            batch = NumpyUnpickler(tar.extractfile(f"{folder}/{name}"), encoding="bytes").load()
    else:
        with open(os.path.join(keras_dataset_path(folder + "-target"), folder, name), "rb") as fh:
            batch = NumpyUnpickler(fh, encoding="bytes").load()
    batch = {key.decode("utf8"): value for key, value in batch.items()}
    data = batch["data"]
    return data.reshape(data.shape[0], 3, 32, 32), batch[label_key]


def cifar_archive(folder):
    """Keras' cached CIFAR archive (datasets/<folder>-target_archive), or None."""
    try:
        return keras_dataset_path(folder + "-target_archive")
    except FileNotFoundError:
        return None


def load_mnist(path="mnist.npz"):
    """keras.datasets.mnist.load_data() without Keras: the same cached file, read with numpy."""
    with np.load(keras_dataset_path(path, "keras.datasets.mnist"), allow_pickle=False) as data:
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def load_fashion_mnist():
    """keras.datasets.fashion_mnist.load_data() without Keras: the same IDX files, read with numpy."""

    def read(name, offset):
        with gzip.open(keras_dataset_path(os.path.join("fashion-mnist", name), "keras.datasets.fashion_mnist")) as fh:
            return np.frombuffer(fh.read(), np.uint8, offset=offset)

    y_train = read("train-labels-idx1-ubyte.gz", 8)
    x_train = read("train-images-idx3-ubyte.gz", 16).reshape(len(y_train), 28, 28)
    y_test = read("t10k-labels-idx1-ubyte.gz", 8)
    x_test = read("t10k-images-idx3-ubyte.gz", 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)


def load_cifar10():
    """keras.datasets.cifar10.load_data() without Keras: the same batch files, channels-last
    uint8 images and (N, 1) uint8 labels, as Keras returns them."""
    archive = cifar_archive("cifar-10-batches-py")
    parts = [read_cifar_batch("cifar-10-batches-py", archive, f"data_batch_{i}", "labels") for i in range(1, 6)]
    x_train = np.concatenate([images for images, _ in parts]).astype("uint8")
    y_train = np.concatenate([np.asarray(labels) for _, labels in parts]).astype("uint8").reshape(-1, 1)
    x_test, y_test = read_cifar_batch("cifar-10-batches-py", archive, "test_batch", "labels")
    y_test = np.reshape(y_test, (len(y_test), 1)).astype("uint8")
    return (x_train.transpose(0, 2, 3, 1), y_train), (x_test.astype("uint8").transpose(0, 2, 3, 1), y_test)


def load_cifar100(label_mode="fine"):
    """keras.datasets.cifar100.load_data() without Keras: the same files, channels-last images
    and (N, 1) labels of the 100 fine or 20 coarse classes."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'label_mode must be one of "fine", "coarse". Received: label_mode={label_mode}.')
    archive = cifar_archive("cifar-100-python")
    out = []
    for name in ("train", "test"):
        images, labels = read_cifar_batch("cifar-100-python", archive, name, f"{label_mode}_labels")
        out.append((images.transpose(0, 2, 3, 1), np.reshape(labels, (len(labels), 1))))
    return out[0], out[1]


def load_boston_housing(path="boston_housing.npz", test_split=0.2, seed=113):
    """keras.datasets.boston_housing.load_data() without Keras: same file, same shuffle and split."""
    with np.load(keras_dataset_path(path, "keras.datasets.boston_housing"), allow_pickle=False) as data:
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
    data = load_npz_objects(keras_dataset_path(path, "keras.datasets.imdb"))
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
    data = load_npz_objects(keras_dataset_path(path, "keras.datasets.reuters"))
    order = np.arange(len(data["x"]))
    np.random.RandomState(seed).shuffle(order)
    sequences, splits = keras_word_sequences([(data["x"][order], data["y"][order])], num_words, skip_top,
                                             maxlen, start_char, oov_char, index_from)
    labels = splits[0][1]
    split = int(len(sequences) * (1 - test_split))
    x_train, y_train = np.array(sequences[:split], dtype="object"), np.array(labels[:split])
    x_test, y_test = np.array(sequences[split:], dtype="object"), np.array(labels[split:])
    return (x_train, y_train), (x_test, y_test)
