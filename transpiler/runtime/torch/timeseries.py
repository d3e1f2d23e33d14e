"""``keras.utils.timeseries_dataset_from_array`` for generated PyTorch programs.

Keras gives a tf.data pipeline of windows (and of each window's target); here a
``torch.utils.data.Dataset`` of the same windows in the same order, batched by a
``DataLoader`` (``BatchLoader``: a DataLoader that also answers tf.data's ``take(count)``, as
the program's own loops ask it).

Shuffling: Keras shuffles the window start positions once, with ``np.random.RandomState(seed)``
(the same order here), then again locally at every pass through a buffer of ``batch_size * 8``
windows; the DataLoader reshuffles all windows at every pass instead (``shuffle=True``). With
``shuffle=False`` (the default) the batches are Keras' batches.
"""

import itertools

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class BatchLoader(DataLoader):
    """A DataLoader that also has tf.data's ``take(count)``: its first ``count`` batches
    (all of them for a negative count)."""

    def take(self, count):
        return iter(self) if count < 0 else itertools.islice(iter(self), count)


def model_array(array):
    """An array as the model takes it: floating (and boolean) values as float32, integers as
    int64 (torch's index type)."""
    array = np.asarray(array)
    if array.dtype == np.bool_ or np.issubdtype(array.dtype, np.floating):
        return array.astype(np.float32)
    if np.issubdtype(array.dtype, np.integer):
        return array.astype(np.int64)
    return array


class TimeseriesWindowDataset(Dataset):
    """The windows ``data[p : p + sequence_length * sampling_rate : sampling_rate]`` for each
    start position ``p`` (and ``targets[p]`` with each, when there are targets)."""

    def __init__(self, data, targets, starts, sequence_length, sampling_rate):
        self.data, self.targets, self.starts = data, targets, starts
        self.sequence_length, self.sampling_rate = sequence_length, sampling_rate

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, index):
        start = int(self.starts[index])
        stop = start + self.sequence_length * self.sampling_rate
        window = torch.as_tensor(self.data[start:stop:self.sampling_rate])
        if self.targets is None:
            return window
        return window, torch.as_tensor(self.targets[start])


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """keras.utils.timeseries_dataset_from_array without TensorFlow: batches (a ``BatchLoader``
    DataLoader; the ``Dataset`` of single windows for ``batch_size=None``) of the windows of
    ``data[start_index:end_index]`` and, with ``targets``, each window's target (the target at
    the window's start position)."""
    if start_index is None:
        start_index = 0
    if end_index is None:
        end_index = len(data)
    if not 0 <= start_index < len(data) or start_index >= end_index or end_index > len(data):
        raise ValueError(f"start_index={start_index} and end_index={end_index} must lie in "
                         f"[0, {len(data)}] with start_index < end_index")
    if sequence_length <= 0 or sampling_rate <= 0 or sequence_stride <= 0:
        raise ValueError("sequence_length, sampling_rate and sequence_stride must be positive")
    num_seqs = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    starts = np.arange(0, num_seqs, sequence_stride)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(starts)
    windows = TimeseriesWindowDataset(model_array(np.asarray(data)[start_index:end_index]),
                                None if targets is None else model_array(np.asarray(targets)[start_index:end_index]),
                                starts, sequence_length, sampling_rate)
    if batch_size is None:
        return windows
    return BatchLoader(windows, batch_size=batch_size, shuffle=shuffle)


class MappedLoader(BatchLoader):
    """tf.data's ``.map(fn)`` on a batched dataset: ``fn`` applied to each batch of ``loader``
    (to its parts, as tf.data passes an (x, y) element's), lazily at every pass; fit() and
    evaluate() take it as the loader it is."""

    def __init__(self, loader, fn, layout=None):
        super().__init__(loader.dataset, batch_size=loader.batch_size)
        self.source, self.fn, self.layout = loader, fn, layout

    def __len__(self):
        return len(self.source)

    def __iter__(self):
        for batch in self.source:
            out = self.fn(*batch) if isinstance(batch, (tuple, list)) else self.fn(batch)
            if self.layout is not None:  # channels-last images mapped: now the model's layout
                first, *rest = out if isinstance(out, (tuple, list)) else (out,)
                first = first.permute(*self.layout)
                out = (first, *rest) if rest else first
            yield out


class ZippedLoader(BatchLoader):
    """tf.data's ``Dataset.zip((a, b, ...))`` of batched datasets: at every pass, a tuple of
    one batch of each loader (each shuffling on its own, as each tf.data pipeline does), as
    many as the shortest loader has; ``.map(fn)`` on it calls ``fn(batch_a, batch_b, ...)``."""

    def __init__(self, *loaders):
        super().__init__(loaders[0].dataset, batch_size=loaders[0].batch_size)
        self.loaders = loaders

    def __len__(self):
        return min(len(loader) for loader in self.loaders)

    def __iter__(self):
        return zip(*self.loaders)
