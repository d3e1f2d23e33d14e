"""torch.utils.data without torch, for generated Keras programs (PyTorch -> Keras):
TensorDataset / DataLoader over numpy arrays, a map-style dataset's loader, Subset and
random_split.
"""

import numpy as np


class ArrayDataset:
    """torch's TensorDataset over numpy arrays: item i is the tuple of every array's row i."""

    def __init__(self, *arrays):
        self.arrays = arrays

    def __len__(self):
        return len(self.arrays[0])

    def __getitem__(self, index):
        return tuple(array[index] for array in self.arrays)


class ArrayLoader:
    """torch's DataLoader over an ArrayDataset: batches of numpy arrays, in a new random
    order on every pass when shuffle is set."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self.dataset[order[start : start + self.batch_size]]


class DatasetLoader(ArrayLoader):
    """torch's DataLoader over a map-style dataset (__len__ and __getitem__): each batch
    is its items stacked into numpy arrays (torch's default collate), in a new random
    order on every pass when shuffle is set."""

    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            items = [self.dataset[int(i)] for i in order[start : start + self.batch_size]]
            if isinstance(items[0], tuple):
                yield tuple(np.stack([np.asarray(a) for a in column]) for column in zip(*items))
            else:
                yield np.stack([np.asarray(a) for a in items])


class Subset:
    """torch's Subset: the items of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, index):
        return self.dataset[int(self.indices[index])]


def random_split(dataset, lengths):
    """torch's random_split: the dataset's items in a random order, cut into parts of
    ``lengths`` (fractions of the whole when they sum to 1: the remainder goes one item
    each to the first parts)."""
    n = len(dataset)
    if all(isinstance(k, float) for k in lengths) and abs(sum(lengths) - 1) < 1e-6:
        sizes = [int(k * n) for k in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    order = np.random.permutation(n)
    parts, start = [], 0
    for k in lengths:
        parts.append(Subset(dataset, order[start : start + k]))
        start += k
    return parts
