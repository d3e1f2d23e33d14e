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
        yield from self.batches(order)

    def batches(self, order):
        """The items at ``order``, batch by batch, stacked."""
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


class DistributedSampler:
    """torch's DistributedSampler in a program that runs as one process (one replica): every
    index of the dataset, in a new random order per ``set_epoch(epoch)`` when shuffle is set
    (seeded by seed + epoch as torch's: the same order on every pass of one epoch; numpy's
    permutation, not torch's); ``num_replicas``/``rank``/``drop_last`` keep torch's meaning."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        self.dataset = dataset
        self.num_replicas = 1 if num_replicas is None else num_replicas
        self.rank = 0 if rank is None else rank
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % self.num_replicas:
            self.num_samples = n // self.num_replicas
        else:
            self.num_samples = -(-n // self.num_replicas)

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return self.num_samples

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.RandomState(self.seed + self.epoch).permutation(n)
        else:
            indices = np.arange(n)
        total = self.num_samples * self.num_replicas
        if total > n:
            indices = np.concatenate([indices, indices[: total - n]])
        return iter(indices[self.rank : total : self.num_replicas].tolist())


class SampledLoader(DatasetLoader):
    """torch's DataLoader over a map-style dataset with a sampler: the sampler's indices, in
    its order, batched as DatasetLoader batches (its items stacked)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, sampler=None):
        super().__init__(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        self.sampler = sampler

    def __len__(self):
        if self.sampler is None:
            return super().__len__()
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        if self.sampler is None:
            yield from super().__iter__()
            return
        yield from self.batches(list(self.sampler))


class CollateLoader:
    """torch's DataLoader with a ``collate_fn``: lists of ``batch_size`` items handed to it
    (without one, stacked as torch's default collate). A map-style dataset (``__len__`` and
    ``__getitem__``) is read in a new random order on every pass when shuffle is set; any
    other iterable in its own order (torch refuses shuffle there too)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = collate_fn if collate_fn is not None else self.stack

    @staticmethod
    def stack(items):
        if isinstance(items[0], tuple):
            return tuple(np.stack([np.asarray(a) for a in column]) for column in zip(*items))
        return np.stack([np.asarray(a) for a in items])

    def _map_style(self):
        return hasattr(self.dataset, "__getitem__") and hasattr(self.dataset, "__len__")

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        if self._map_style():
            n = len(self.dataset)
            order = np.random.permutation(n) if self.shuffle else np.arange(n)
            items = (self.dataset[int(i)] for i in order)
        else:
            if self.shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option")
            items = iter(self.dataset)
        batch = []
        for item in items:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
