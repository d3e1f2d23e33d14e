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
        self.sample_weights = None

    def _with(self, **changes):
        made = object.__new__(FeatureDataset)
        made.__dict__.update(self.__dict__, **changes)
        made.__dict__.pop("_materialized", None)  # (another pipeline: made again when asked)
        return made

    def materialized(self):
        """A mapped dataset's elements made once, in order (``map`` functions as deterministic
        as keras.io's lookups): a dataset of the mapped columns, batched and shuffled as this
        one, its ``labels`` and, when the map gives (features, labels, weights), its
        ``sample_weights`` (Keras' fit weighs each sample's loss by them). Unmapped: itself."""
        if not self.maps:
            return self
        if "_materialized" in self.__dict__:
            return self.__dict__["_materialized"]
        items = list(self._with(shuffle_each_pass=False, drop_last=False))
        parts = [item if isinstance(item, tuple) else (item,) for item in items]
        join = np.stack if self.batch_size is None else np.concatenate

        def joined(values):
            return join([column_array(v) for v in values]) if values else np.zeros((0,))

        if not parts or not isinstance(parts[0][0], dict) or len(parts[0]) > 3:
            raise NotImplementedError("a mapped dataset whose elements are not (dict of columns[, labels"
                                      "[, sample weights]])")
        features = {name: joined([p[0][name] for p in parts]) for name in parts[0][0]}
        labels = joined([p[1] for p in parts]) if len(parts[0]) > 1 else None
        made = FeatureDataset(features if labels is None else (features, labels), batch_size=self.batch_size,
                              shuffle=self.shuffle_each_pass, drop_last=self.drop_last)
        made.sample_weights = joined([p[2] for p in parts]).astype(np.float32) if len(parts[0]) > 2 else None
        self.__dict__["_materialized"] = made
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
            return self.materialized().column(name, shape)
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


def _csv_files(file_pattern):
    """tf.data's file pattern (a path, a glob, or a list of them) → the files, in order."""
    import glob

    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) or hasattr(file_pattern, "__fspath__") \
        else list(file_pattern)
    files = []
    for pattern in patterns:
        pattern = str(pattern)
        found = sorted(glob.glob(pattern))
        files += found if found else [pattern]  # (a missing file: open() names it)
    return files


def _csv_default(value):
    """A ``column_defaults`` entry (a value, or a list of one value: ``[0.0]``, ``["NA"]``) →
    (its type: float / int / str, the value; None for an empty list: a required field)."""
    if isinstance(value, (list, tuple)):
        if len(value) > 1:
            raise ValueError(f"column_defaults: {value!r} holds more than one value")
        value = value[0] if value else None
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    for kind in (bool, float, int, str):
        if isinstance(value, kind) and kind is not bool:
            return kind, value
    raise NotImplementedError(f"column_defaults: a default of type {type(value).__name__} (a dtype object?)")


def _csv_inferred(values, na_value):
    """tf.data's type inference of a column without a default: int32 when every (non-NA) value
    is a whole number, float32 when every one is a number, else string."""
    present = [v for v in values if v != na_value and v != ""]
    for kind in (int, float):
        try:
            for v in present:
                kind(v)
        except ValueError:
            continue
        return kind, kind(0)
    return str, ""


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None, ignore_errors=False, encoding="utf-8"):
    """``tf.data.experimental.make_csv_dataset``: the CSV file(s) as a ``FeatureDataset`` of
    batches (a dict of columns keyed by name, with the ``label_name`` column apart as labels).
    Each column has the type of its default (``[0.0]``: float32, ``[0]``: int32, ``["NA"]``:
    string) or, without defaults, tf.data's inferred one; a field equal to ``na_value`` (or
    empty) takes the column's default. One pass over the rows (``num_epochs=1``); shuffled on
    each pass when ``shuffle`` (tf.data draws from a buffer: another order)."""
    import csv

    if num_epochs != 1:
        raise NotImplementedError("make_csv_dataset(num_epochs=None or > 1): an endless or repeated dataset")
    if compression_type:
        raise NotImplementedError("make_csv_dataset(compression_type=...)")
    rows, names = [], list(column_names) if column_names is not None else None
    for path in _csv_files(file_pattern):
        with open(path, newline="", encoding=encoding) as handle:
            lines = [r for r in csv.reader(handle, delimiter=field_delim,
                                           quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE) if r]
        if header and lines:
            names = names if names is not None else lines[0]
            lines = lines[1:]
        rows += lines
    if names is None:
        raise ValueError("make_csv_dataset: no column_names and no header to read them from")
    if any(len(r) != len(names) for r in rows):
        if not ignore_errors:
            raise ValueError(f"make_csv_dataset: a row without {len(names)} fields")
        rows = [r for r in rows if len(r) == len(names)]
    if column_defaults is not None and len(column_defaults) != len(names):
        raise ValueError(f"make_csv_dataset: {len(column_defaults)} column_defaults for {len(names)} columns")
    keep = names if select_columns is None else [names[c] if isinstance(c, int) else c for c in select_columns]
    columns = {}
    for i, name in enumerate(names):
        if name not in keep:
            continue
        values = [r[i] for r in rows]
        default = _csv_default(column_defaults[i]) if column_defaults is not None else \
            _csv_inferred(values[:num_rows_for_inference], na_value)
        if default is None:  # a required field
            if any(v == na_value or v == "" for v in values):
                raise ValueError(f"make_csv_dataset: a missing value in the required column {name!r}")
            default = _csv_inferred(values, na_value)
        kind, fill = default
        parsed = [fill if v == na_value or v == "" else kind(v) for v in values]
        if kind is str:
            array = np.empty(len(parsed), dtype=object)
            array[:] = parsed
        else:
            array = np.asarray(parsed, dtype=np.float32 if kind is float else np.int32)
        columns[name] = array
    if label_name is not None:
        if label_name not in columns:
            raise ValueError(f"make_csv_dataset: label_name {label_name!r} is not a column ({list(columns)})")
        labels = columns.pop(label_name)
        return FeatureDataset((columns, labels), batch_size=batch_size, shuffle=shuffle)
    return FeatureDataset(columns, batch_size=batch_size, shuffle=shuffle)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """``tf.convert_to_tensor(value)`` on data (keras.io's ``{name: tf.convert_to_tensor([value])
    for name, value in sample.items()}`` before ``predict``): a torch tensor of TensorFlow's dtype
    (Python ints int32, Python floats float32; a numpy array keeps its own), or for strings a
    numpy array of str (torch has no string tensors; the runtime's StringLookup takes it).
    ``dtype``/``dtype_hint``: a dtype name (``"float32"``) or a torch dtype."""
    if isinstance(value, torch.Tensor):
        tensor = value
    else:
        array = np.asarray(value)
        if array.dtype.kind in "USO":
            return column_array(array)
        if not isinstance(value, np.ndarray) and not isinstance(value, np.generic):
            if array.dtype == np.float64:  # (Python floats: TensorFlow's default float32)
                array = array.astype(np.float32)
            elif array.dtype == np.int64:  # (Python ints: int32)
                array = array.astype(np.int32)
        tensor = torch.as_tensor(array)
    wanted = dtype if dtype is not None else None
    if wanted is None and dtype_hint is not None and not isinstance(value, (torch.Tensor, np.ndarray)):
        wanted = dtype_hint
    if wanted is not None:
        wanted = getattr(torch, wanted) if isinstance(wanted, str) else wanted
        tensor = tensor.to(wanted)
    return tensor
