"""tf.data pipelines of in-memory arrays whose elements are zipped before batching, for
generated PyTorch programs (keras.io's CutMix: ``Dataset.zip((a, b)).shuffle(n).map(cutmix)
.batch(32)`` over two shuffled, mapped ``from_tensor_slices`` pipelines).

``ElementPipeline`` has tf.data's methods with tf.data's arguments, each giving a new
pipeline: elements are torch tensors (one row of each array), ``.map(fn)`` calls ``fn`` on
an element's parts (as tf.data unpacks a tuple), ``.shuffle(buffer_size)`` draws from a
buffer of that many elements exactly as tf.data does (a full reshuffle when the buffer holds
every element), reshuffled at every pass, and ``.batch(n)`` stacks consecutive elements.
A batched pipeline is a ``DataLoader`` (fit() and evaluate() iterate it as it is); its
batches' first part is put in the model's layout (``layout``: a permutation of channels-last
images) after every map, as the maps see channels-last images in Keras.
"""

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset


def _collate(parts):
    """Consecutive elements → one batch: each tensor stacked, tuples part by part."""
    first = parts[0]
    if isinstance(first, (tuple, list)):
        return type(first)(_collate([p[i] for p in parts]) for i in range(len(first)))
    if isinstance(first, dict):
        return {key: _collate([p[key] for p in parts]) for key in first}
    if isinstance(first, (str, bytes)):
        return np.asarray(parts)  # (strings: a numpy array of them, as the text loaders give)
    return torch.stack([torch.as_tensor(p) for p in parts])


def _row(array, index):
    """One element of an array: a tensor, or a str for an array of strings (file paths)."""
    value = array[index]
    return torch.as_tensor(value) if array.dtype.kind in "biufc" else value.item()


def _shuffled(elements, buffer_size):
    """tf.data's shuffle: a buffer of ``buffer_size`` elements, each output a uniformly chosen
    one of the buffer, whose place the next input element takes."""
    buffer = []
    for element in elements:
        buffer.append(element)
        if len(buffer) >= buffer_size:
            index = int(torch.randint(len(buffer), ()))
            buffer[index], buffer[-1] = buffer[-1], buffer[index]
            yield buffer.pop()
    while buffer:
        index = int(torch.randint(len(buffer), ()))
        buffer[index], buffer[-1] = buffer[-1], buffer[index]
        yield buffer.pop()


def _batches(items, size, drop_remainder):
    parts = []
    for item in items:
        parts.append(item)
        if len(parts) == size:
            yield _collate(parts)
            parts = []
    if parts and not drop_remainder:
        yield _collate(parts)


def _apply(items, stage):
    if stage[0] == "shuffle":
        return _shuffled(items, stage[1])
    if stage[0] == "map":
        fn = stage[1]
        return (fn(*item) if isinstance(item, tuple) else fn(item) for item in items)
    return _batches(items, stage[1], stage[2])


def _in_layout(batch, layout):
    """A batch whose first part (channels-last images) is permuted into the model's layout
    (a batch of a dict of features, tfds' unsupervised elements, stays as it is: no model input)."""
    if isinstance(batch, dict):
        return batch
    first, *rest = batch if isinstance(batch, (tuple, list)) else (batch,)
    first = first.permute(*layout)
    return (first, *rest) if rest else first


class _Stages(IterableDataset):
    def __init__(self, pipeline):
        self.pipeline = pipeline

    def __iter__(self):
        return self.pipeline._elements()


class ElementPipeline(DataLoader):
    """A tf.data pipeline of in-memory arrays (see the module's docstring)."""

    def __init__(self, sources, stages=(), batch_size=None, layout=None, size=None):
        self.sources, self.stages, self.layout, self.size = sources, tuple(stages), layout, size
        super().__init__(_Stages(self), batch_size=None)
        self._batch = batch_size
        # (the batch size fit() reads; DataLoader refuses it set as an attribute after __init__)
        object.__setattr__(self, "batch_size", batch_size[0] if batch_size else None)

    @classmethod
    def from_tensor_slices(cls, data):
        """The rows of an array, or of each array of a tuple (one element per row)."""
        arrays = tuple(np.asarray(a) for a in data) if isinstance(data, tuple) else np.asarray(data)
        rows = {len(a) for a in (arrays if isinstance(arrays, tuple) else (arrays,))}
        if len(rows) != 1:
            raise ValueError(f"from_tensor_slices: the arrays have different lengths {sorted(rows)}")
        return cls(("slices", arrays), size=rows.pop())

    @classmethod
    def zip(cls, datasets):
        """tf.data.Dataset.zip: tuples of one element of each pipeline, as many as the shortest."""
        datasets = tuple(datasets)
        sizes = [d.size for d in datasets]
        return cls(("zip", datasets), size=None if None in sizes else min(sizes))

    def _then(self, stage, **changes):
        made = dict(sources=self.sources, stages=self.stages + ((stage,) if stage else ()), batch_size=self._batch,
                    layout=self.layout, size=self.size)
        made.update(changes)
        return ElementPipeline(**made)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        return self._then(("shuffle", int(buffer_size)))

    def map(self, fn, num_parallel_calls=None, deterministic=None):
        return self._then(("map", fn))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, layout=None):
        if self._batch:
            raise NotImplementedError("batch() of a batched pipeline (nested batches)")
        size = self.size
        if size is not None:
            size = size // batch_size if drop_remainder else -(-size // batch_size)
        return self._then(("batch", int(batch_size), bool(drop_remainder)), batch_size=(int(batch_size),),
                          layout=layout, size=size)

    def prefetch(self, buffer_size=None):
        return self  # (elements are made as the loop asks for them)

    def cache(self, filename=""):
        return self  # (the arrays are in memory already)

    def cardinality(self):
        """tf.data's cardinality(): the number of elements (batches once batched); -2 (tf.data's
        UNKNOWN_CARDINALITY) when not known."""
        return self.size if self.size is not None else -2

    def take(self, count):
        """tf.data's take(count): the first ``count`` elements (batches once batched)."""
        for i, item in enumerate(self):
            if i >= count:
                return
            yield item

    def __len__(self):
        if self.size is None:
            raise TypeError("the pipeline's length is not known")
        return self.size

    @classmethod
    def from_records(cls, records, convert, shuffle=False):
        """The records of a random-access source (``len(records)``, ``records[i]``: a TFDS data
        source), each made an element by ``convert``; in a new random order at every pass when
        ``shuffle``."""
        return cls(("records", (records, convert, bool(shuffle))), size=len(records))

    def _source(self):
        kind, data = self.sources
        if kind == "records":
            records, convert, shuffle = data
            order = torch.randperm(len(records)).tolist() if shuffle else range(len(records))
            return (convert(records[i]) for i in order)
        if kind == "zip":
            return zip(*(iter(d) for d in data))
        if isinstance(data, tuple):
            return (tuple(_row(a, i) for a in data) for i in range(len(data[0])))
        return (_row(data, i) for i in range(len(data)))

    def _elements(self):
        items = self._source()
        for stage in self.stages:
            items = _apply(items, stage)
        if self.layout is not None:
            items = (_in_layout(batch, self.layout) for batch in items)
        return items

    def __iter__(self):
        return self._elements()

