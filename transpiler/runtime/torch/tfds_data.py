"""``tensorflow_datasets.load(...)`` for generated PyTorch programs: TFDS' own data sources.

What a PyTorch engineer writes for a TFDS dataset is ``tfds.data_source(name, split=...)``:
random access to the records as numpy values, no TensorFlow at run time (TFDS' guide "TFDS for
Jax and PyTorch"; it needs ``pip install tensorflow-datasets array_record``). ``load_tfds``
takes ``tfds.load``'s arguments and gives what ``tfds.load`` gives, in torch terms: a pipeline
of elements per split (the runtime's ``ElementPipeline``, with tf.data's ``shuffle``/``map``/
``batch`` methods; fit() takes it batched), a tuple of them for a list of splits (tfds' split
slicing, ``"train[:90%]"``, is the data source's own), and ``(datasets, info)`` with
``with_info=True`` (tfds' ``DatasetInfo``: ``info.features["label"].num_classes``,
``info.splits["train"].num_examples``).

An element is what tfds.load's dataset yields, as torch tensors: a dict of the features, or
``(input, target)`` with ``as_supervised=True`` (the dataset's supervised keys); images are
uint8 (height, width, channels), labels int64; strings stay bytes. ``shuffle_files=True``:
tfds shuffles the order of its files; a random-access source has no files, so the records'
order is drawn anew at every pass instead.
"""

import numpy as np
import torch

from transpiler.runtime.torch.pipelines import ElementPipeline


def tfds_value(value):
    """A TFDS record's feature as tfds.load's dataset gives it: numbers as torch tensors (the
    same dtype), strings as bytes, nested dicts feature by feature."""
    if isinstance(value, dict):
        return {key: tfds_value(item) for key, item in value.items()}
    array = np.asarray(value)
    if array.dtype.kind in "biuf":
        return torch.from_numpy(np.array(array))  # (a copy: the source's arrays may be read-only)
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _pick(record, key):
    if isinstance(key, (tuple, list)):
        return tuple(_pick(record, k) for k in key)
    if isinstance(key, dict):
        return {name: _pick(record, k) for name, k in key.items()}
    return tfds_value(record[key])


def _supervised(keys):
    """A record → the (input, target) tuple of tfds' supervised keys."""
    def convert(record):
        return tuple(_pick(record, key) for key in keys)
    return convert


def load_tfds(name, split=None, data_dir=None, shuffle_files=False, download=True, as_supervised=False,
              with_info=False, try_gcs=False):
    """tfds.load(name, split=..., ...) on tfds.data_source (see the module's docstring)."""
    import tensorflow_datasets as tfds

    if split is None:
        raise NotImplementedError("load_tfds without split= (tfds.load's dict of every split): name the splits")
    splits = list(split) if isinstance(split, (list, tuple)) else [split]
    # (split= as a list: one data source per split, made and read as tfds.load makes them)
    sources = tfds.data_source(name, split=splits, data_dir=data_dir, download=download, try_gcs=try_gcs)
    info = tfds.builder(name, data_dir=data_dir, try_gcs=try_gcs).info
    if as_supervised:
        if not info.supervised_keys:
            raise ValueError(f"as_supervised=True: the dataset {name!r} has no supervised keys")
        convert = _supervised(info.supervised_keys)
    else:
        convert = tfds_value
    pipelines = [ElementPipeline.from_records(source, convert, shuffle=shuffle_files) for source in sources]
    datasets = tuple(pipelines) if isinstance(split, (list, tuple)) else pipelines[0]
    return (datasets, info) if with_info else datasets
