"""Tabular data for generated PyTorch programs: a dict of columns as tf.data gives it.

keras.io's structured-data examples read a CSV with pandas and make
``tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))``: one element per row, a dict
of the row's features (keyed by column name) and its label, which ``.shuffle()`` and
``.batch(n)`` turn into batches of (dict of columns, labels); ``fit`` matches the dict's keys
with the model's ``keras.Input(name=...)``. ``FeatureDataset`` is that pipeline here:

- iterated, it gives Keras' batches: (a dict of the batch's columns, the labels), numbers as
  float32 / int64 tensors, strings as numpy arrays of str (torch has no string tensors; the
  runtime's StringLookup takes them);
- ``column(name, shape)`` is one column as the model input of that name takes it: a column
  of scalars fed to ``keras.Input(shape=(1,))`` gains its last axis, as Keras' functional model
  expands an input one rank short whose last axis is 1;
- ``labels``, ``batch_size``, ``shuffle_each_pass``: what ``fit`` batches the columns with;
- ``map(fn)``: ``fn`` applied to each element (or batch) as it is made, called with the
  element's parts as tf.data calls it (``lambda x, y: x["age"]``); what it gives is what the
  dataset yields from then on (``adapt()`` of a preprocessing layer iterates it).
"""

import numpy as np
import torch


def column_array(values):
    """One column (a pandas Series, a list, an array, a tensor) as a numpy array: strings as
    an array of Python str (object dtype), numbers as they are."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.dtype.kind in "USO":
        flat = [v.decode("utf-8") if isinstance(v, bytes) else v for v in array.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(array.shape)
    return array


def as_model_input(array, shape):
    """A column as a model input of per-sample ``shape`` takes it: one rank short, with a last
    axis of 1 expected, it gains that axis (Keras' functional models do the same)."""
    shape = tuple(shape)
    if array.ndim == len(shape) and shape and shape[-1] == 1:
        return array[..., None]
    return array


def _batch_value(array):
    """A batch of one column (or one row's value): strings as they are (an array of str, a
    str), numbers as a float32 / int64 tensor."""
    if isinstance(array, str) or getattr(array, "dtype", None) == object:
        return array
    tensor = torch.as_tensor(np.asarray(array))
    return tensor.float() if tensor.is_floating_point() else tensor.long()


class FeatureDataset:
    """``tf.data.Dataset.from_tensor_slices(data)`` of a dict of columns (``dict(dataframe)``)
    or a (dict of columns, labels) pair, with tf.data's ``shuffle``, ``batch``, ``take``,
    ``prefetch`` and ``cache``, each giving a new dataset as in tf.data."""

    def __init__(self, data, batch_size=None, shuffle=False, drop_last=False):
        features, labels = data if isinstance(data, tuple) else (data, None)
        self.features = {name: column_array(values) for name, values in dict(features).items()}
        self.labels = None if labels is None else column_array(labels)
        sizes = {len(a) for a in self.features.values()} | ({len(self.labels)} if self.labels is not None else set())
        if len(sizes) > 1:
            raise ValueError(f"from_tensor_slices: the columns have different lengths {sorted(sizes)}")
        self.rows = sizes.pop() if sizes else 0
        self.batch_size, self.shuffle_each_pass, self.drop_last = batch_size, shuffle, drop_last
        self.maps = ()

    def _with(self, **changes):
        made = object.__new__(FeatureDataset)
        made.__dict__.update(self.__dict__, **changes)
        return made

    def shuffle(self, buffer_size=None, seed=None, reshuffle_each_iteration=None):
        """tf.data's shuffle buffer → a full reshuffle on each pass (every row equally likely
        anywhere; the buffer's order differs)."""
        return self._with(shuffle_each_pass=True)

    def batch(self, batch_size, drop_remainder=False):
        if self.batch_size is not None:
            raise NotImplementedError("batch() of a batched tabular dataset (nested batches)")
        return self._with(batch_size=batch_size, drop_last=drop_remainder)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """tf.data's ``map``: ``map_func`` on each element (each batch once batched), its
        parts as arguments (a (features, label) pair: two)."""
        return self._with(maps=self.maps + (map_func,))

    def prefetch(self, buffer_size=None):
        return self  # (batches are made as the loop asks for them)

    def cache(self, filename=""):
        return self  # (the columns are in memory already)

    def column(self, name, shape=()):
        """The column ``name`` as the model input of per-sample ``shape`` takes it."""
        if self.maps:
            raise NotImplementedError("the model's inputs from a mapped dataset of feature columns")
        if name not in self.features:
            raise KeyError(f"the model's input {name!r} is not a column of the dataset "
                           f"({sorted(self.features)})")
        return as_model_input(self.features[name], shape)

    def __len__(self):
        if self.batch_size is None:
            return self.rows
        full, rest = divmod(self.rows, self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)

    def _item(self, index):
        features = {name: _batch_value(array[index]) for name, array in self.features.items()}
        item = features if self.labels is None else (features, _batch_value(self.labels[index]))
        for map_func in self.maps:
            item = map_func(*item) if isinstance(item, tuple) else map_func(item)
        return item

    def __iter__(self):
        order = np.random.permutation(self.rows) if self.shuffle_each_pass else np.arange(self.rows)
        if self.batch_size is None:  # unbatched: one row at a time, as tf.data gives elements
            for row in order:
                yield self._item(row)
            return
        for start in range(0, self.rows, self.batch_size):
            index = order[start:start + self.batch_size]
            if self.drop_last and len(index) < self.batch_size:
                return
            yield self._item(index)

    def take(self, count):
        """tf.data's ``take(count)``: the first ``count`` elements (batches once batched)."""
        for i, item in enumerate(self):
            if i >= count:
                return
            yield item
