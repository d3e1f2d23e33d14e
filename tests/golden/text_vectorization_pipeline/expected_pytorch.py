# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Text layers on the data: a TextVectorization and a StringLookup adapted to the training
strings, applied in a tf.data .map; the vocabulary's size sizes the Embedding."""

import numpy as np
import collections
import re
import string
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, default_collate
from types import SimpleNamespace

texts = np.array(
    [
        "a good film",
        "a bad film",
        "good fun",
        "awful and bad",
        "great plot",
        "dull plot",
    ]
)
labels = np.array(["pos", "neg", "pos", "neg", "pos", "neg"])


def text_loader(arrays, batch_size=32, shuffle=False, element_map=None, batch_map=None):
    """``make_loader`` of arrays some of which hold strings (text a tf.data ``.map()`` turns into
    numbers with Keras' text layers; torch has no string tensors): in each batch the strings
    are a numpy array of str (as Keras' text layers take a string tensor), the numbers
    float32 / int64 tensors."""
    columns = []
    for array in arrays:
        array = np.asarray(array)
        if array.dtype.kind in "USO":
            columns.append(array.astype(object))
            continue
        tensor = torch.as_tensor(array)
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        columns.append(tensor.float() if floating else tensor.long())
    dataset = list(zip(*columns))
    if element_map is not None:
        dataset = [element_map(*element) for element in dataset]

    def collate(batch):
        parts = tuple(
            (
                np.asarray(items, dtype=object)
                if isinstance(items[0], str)
                or getattr(items[0], "dtype", None) == object
                else default_collate(list(items))
            )
            for items in zip(*batch)
        )
        if batch_map is not None:
            return batch_map(*parts)
        return (
            parts[0] if len(parts) == 1 else parts
        )  # (a dataset of strings alone gives their batches)

    return DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate
    )


def make_loader(
    inputs, targets=None, batch_size=32, shuffle=False, element_map=None, batch_map=None
):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches.

    ``element_map`` (tf.data's .map() before .batch()) runs on each element's tensors,
    ``batch_map`` (.map() after .batch()) on each batch's.
    """
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    # a tf.data pipeline's loader (fit(ds)): its batches are already (x, y)
    if len(arrays) == 1 and isinstance(arrays[0], DataLoader):
        return arrays[0]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    if (
        isinstance(inputs, list)
        and inputs
        and all(isinstance(item, (str, bytes)) for item in inputs)
        and isinstance(arrays[0], (str, bytes))
    ):
        # a list of strings (from_tensor_slices(samples)): one array of them, as tf.data reads it
        arrays = [inputs] + arrays[len(inputs) :]
    if any(
        np.asarray(array).dtype.kind in "USO" for array in arrays
    ):  # strings: text a .map() vectorizes
        return text_loader(arrays, batch_size, shuffle, element_map, batch_map)
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        # booleans (a one-hot ``y == k``) are numbers to Keras (float32), integers are indices
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        tensors.append(tensor.float() if floating else tensor.long())
    dataset = TensorDataset(*tensors)
    if element_map is not None:
        dataset = [element_map(*element) for element in dataset]
    collate = None
    if batch_map is not None:

        def collate(batch):
            return batch_map(*default_collate(batch))

    return DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate
    )


def reset_metrics(metrics):
    """The running sums and counts of ``metrics`` ((name, output index, metric) triples) at
    the start of an epoch or evaluation; a stateful metric object is reset."""
    return {name: 0.0 for name, _, _ in metrics}, {name: 0 for name, _, _ in metrics}


def update_metrics(metrics, outputs, targets, sums, counts):
    """Add one batch's metric values to the running ``sums`` and ``counts`` (their means are
    what Keras reports); a stateful metric object keeps its own result so far."""
    for name, index, metric in metrics:
        values = metric(outputs[index], targets[index])
        sums[name] += values.sum().item()
        counts[name] += values.numel()


def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets):
    """One optimizer step on a batch; returns the batch loss and the (detached) outputs."""
    model.train()
    optimizer.zero_grad()
    outputs = model(*inputs, return_logits=True)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    loss = 0.0
    for loss_fn, weight, output, target in zip(
        loss_fns, loss_weights, outputs, targets
    ):
        per_sample = loss_fn(output, target)
        loss = loss + weight * per_sample.mean()  # Keras' sum_over_batch_size
    loss.backward()
    optimizer.step()
    return loss.item(), tuple(output.detach() for output in outputs)


def fit(
    model,
    optimizer,
    loss_fns,
    x,
    y,
    epochs=1,
    batch_size=32,
    verbose="auto",
    metrics=(),
    loss_weights=None,
    shuffle=True,
):
    """Keras' Model.fit as a loop: running means per epoch, printed per epoch."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    loader = make_loader(inputs, targets, batch_size, shuffle=shuffle)
    n_in, n_out = len(inputs), len(targets)
    history = {}
    for epoch in range(epochs):
        total, seen = 0.0, 0
        sums, counts = reset_metrics(metrics)
        for batch in loader:
            batch_inputs, batch_targets = batch[:n_in], batch[n_in : n_in + n_out]
            loss, outputs = train_step(
                model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets
            )
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            update_metrics(metrics, outputs, batch_targets, sums, counts)
        logs = {
            "loss": total / seen,
            **{name: sums[name] / counts[name] for name in sums},
        }
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs} - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
            )
    return SimpleNamespace(history=history)


def _python_value(value):
    """One element as Python gives it: bytes decoded, numpy scalars as Python numbers."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    return value


def as_array(data, strings):
    """Data (a str, a list, a numpy array, a tensor) as a numpy array: of Python str (object
    dtype) when ``strings``, else of int64."""
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    if strings:
        array = np.asarray(data, dtype=object)
        flat = [_python_value(v) for v in array.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = [v if isinstance(v, str) else str(v) for v in flat]
        return out.reshape(array.shape)
    return np.asarray(data).astype(np.int64)


def _rows(array):
    """A numpy array as the rows of tokens Keras' lookup counts and encodes: a scalar is one
    row of one token, a vector one row, a matrix its rows."""
    if array.ndim == 0:
        return [[array.item()]]
    if array.ndim == 1:
        return [list(array)]
    return [list(row) for row in array.reshape(-1, array.shape[-1])]


def adapt_layer(layer, data, strings, steps=None):
    """Keras' ``adapt()`` of a preprocessing layer (its ``reset_state``, ``update_state`` and
    ``finalize_state``): ``data`` is an array or list (its elements, one per row; of str when
    ``strings``), or an iterable of batches, ``steps`` of them at most."""
    layer.reset_state()
    if isinstance(data, (list, tuple, np.ndarray, torch.Tensor, str, bytes)):
        array = as_array(data, strings)
        layer.update_state(array[:, None] if array.ndim == 1 else array)
    else:
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                break
            layer.update_state(batch)
    layer.finalize_state()


class IndexLookup:
    """Keras' IndexLookup (the base of StringLookup and IntegerLookup): a vocabulary of
    tokens → ids, given or adapted, and its encodings."""

    def __init__(
        self,
        max_tokens,
        num_oov_indices,
        mask_token,
        oov_token,
        strings,
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        pad_to_max_tokens=False,
        sparse=False,
        name=None,
        **kwargs,
    ):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(
                f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}"
            )
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`.")
        if num_oov_indices < 0:
            raise ValueError(
                f"`num_oov_indices` must be greater than or equal to 0. Received: {num_oov_indices}"
            )
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(
            output_mode, output_mode
        )
        if output_mode not in ("int", "one_hot", "multi_hot", "count", "tf_idf"):
            raise ValueError(f"Unknown output_mode={output_mode!r}")
        if invert and output_mode != "int":
            raise ValueError(
                f"`output_mode` must be `'int'` when `invert` is true. Received: {output_mode}"
            )
        if sparse:
            raise ValueError(
                "sparse=True (a TensorFlow sparse tensor) is not translated"
            )
        if strings and num_oov_indices > 1:
            raise NotImplementedError(
                "num_oov_indices > 1 for string tokens: Keras hashes them with FarmHash "
                "(not translated)"
            )
        kwargs.pop("dtype", None)
        kwargs.pop("trainable", None)
        kwargs.pop("oov_method", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        self.max_tokens, self.num_oov_indices = max_tokens, num_oov_indices
        self.mask_token, self.oov_token, self.strings = mask_token, oov_token, strings
        self.invert, self.output_mode, self.pad_to_max_tokens = (
            invert,
            output_mode,
            pad_to_max_tokens,
        )
        self.name = name
        self.tokens, self.index, self.idf_weights = [], {}, None
        self._has_input_vocabulary = vocabulary is not None
        self.reset_state()
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # -- the vocabulary --------------------------------------------------------------------
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        """The number of ids: the vocabulary's tokens and the mask and OOV indices."""
        return len(self.tokens) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """The tokens by id (the mask and OOV tokens first, unless not asked for)."""
        vocab = [self.oov_token] * self._token_start_index() + list(self.tokens)
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        return vocab if include_special_tokens else vocab[self._token_start_index() :]

    def _read_vocabulary_file(self, path):
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        return lines if self.strings else [int(line) for line in lines]

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """The vocabulary (a list, an array, or a file of one token per line) and, for
        ``tf_idf``, its weights."""
        if self.output_mode == "tf_idf" and idf_weights is None:
            raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        if self.output_mode != "tf_idf" and idf_weights is not None:
            raise ValueError(
                "`idf_weights` should only be set if output_mode is 'tf_idf'."
            )
        if isinstance(vocabulary, str):
            vocabulary = self._read_vocabulary_file(vocabulary)
        vocabulary = [
            _python_value(v) for v in as_array(vocabulary, self.strings).reshape(-1)
        ]
        if not vocabulary:
            raise ValueError(
                f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}"
            )
        token_start = self._token_start_index()
        special = [self.mask_token] * self._oov_start_index() + [
            self.oov_token
        ] * self.num_oov_indices
        found_special = vocabulary[:token_start] == special
        tokens = vocabulary[token_start:] if found_special else vocabulary
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError(
                f"The passed vocabulary has at least one repeated term. Please uniquify your "
                f"dataset. The repeated terms are: {repeated}"
            )
        for token, what in (
            (self.mask_token, "mask"),
            (self.oov_token if self.invert else None, "OOV"),
        ):
            if token is not None and token in tokens:
                raise ValueError(
                    f"Found reserved {what} token at unexpected location in `vocabulary`. Either "
                    f"remove all mask and OOV tokens, or include them only at the start of the "
                    f"vocabulary in precisely this order: {special}."
                )
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise ValueError(
                f"Attempted to set a vocabulary larger than the maximum vocab size. Received "
                f"vocabulary size is {token_start + len(tokens)}; `max_tokens` is {self.max_tokens}."
            )
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            weights = np.asarray(idf_weights, dtype=np.float64).reshape(-1)
            if len(weights) != len(vocabulary):
                raise ValueError(
                    f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                    f"{len(weights)}; len(vocabulary) is {len(vocabulary)}"
                )
            front = (
                (0, 0.0) if found_special else (token_start, float(np.average(weights)))
            )
            back = (
                self.max_tokens - front[0] - len(weights)
                if self.pad_to_max_tokens
                else 0
            )
            self.idf_weights = np.pad(
                weights, (front[0], back), "constant", constant_values=(front[1], 0)
            ).astype(np.float32)

    def _set_tokens(self, tokens):
        start = self._token_start_index()
        self.tokens = list(tokens)
        self.index = {token: start + i for i, token in enumerate(self.tokens)}

    # -- adapt -----------------------------------------------------------------------------
    def reset_state(self):
        self.token_counts = collections.Counter()
        self.document_counts = collections.Counter()
        self.num_documents = 0

    def _adapt_rows(self, data):
        """The rows of tokens ``adapt`` counts in one batch of data."""
        return _rows(as_array(data, self.strings))

    def adapt(self, data, batch_size=None, steps=None):
        """Build the vocabulary from ``data`` as Keras' adapt() builds it (``adapt_layer``)."""
        adapt_layer(self, data, self.strings, steps)

    def update_state(self, data):
        """Count the tokens of one batch (and, for ``tf_idf``, the documents holding each)."""
        if self._has_input_vocabulary:
            raise ValueError(
                f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                "`vocabulary` argument or `set_vocabulary()` method."
            )
        rows = (
            data
            if isinstance(data, list) and all(isinstance(r, list) for r in data)
            else self._adapt_rows(data)
        )
        for row in rows:
            self.token_counts.update(row)
        if self.output_mode == "tf_idf":
            for row in rows:
                self.document_counts.update(set(row))
            self.num_documents += len(rows)

    def finalize_state(self):
        """The vocabulary from the counts: most frequent first, ties by the token, highest first."""
        if not self.token_counts:
            return
        counts = dict(self.token_counts)
        for special in (self.mask_token, self.oov_token):
            counts.pop(special, None)

        def key(item):
            token, count = item
            return count, token.encode("utf-8") if isinstance(token, str) else token

        tokens = [token for token, _ in sorted(counts.items(), key=key, reverse=True)]
        if self.max_tokens:
            tokens = tokens[: self.max_tokens - self._token_start_index()]
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            frequency = np.asarray(
                [self.document_counts[t] for t in tokens], dtype=np.int64
            )
            weights = np.log(1 + self.num_documents / (1 + frequency)).astype(
                np.float32
            )
            weights = np.pad(
                weights,
                (self._token_start_index(), 0),
                constant_values=np.mean(weights),
            )
            if self.pad_to_max_tokens and self.max_tokens is not None:
                weights = np.pad(weights, (0, self.max_tokens - len(weights)))
            self.idf_weights = weights.astype(np.float32)
        self.reset_state()

    # -- calling the layer -----------------------------------------------------------------
    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def _lookup(self, token):
        """One token's id (Keras' default id for a token out of the vocabulary)."""
        if self.mask_token is not None and token == self.mask_token:
            return (
                0 if self.output_mode == "int" else -2
            )  # (-2: no slot in the encodings)
        found = self.index.get(token)
        if found is not None:
            return found
        if self.num_oov_indices == 0:
            raise ValueError(
                f"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                f"[{token!r}], consider setting `num_oov_indices=1`."
            )
        if self.num_oov_indices == 1:
            return self._oov_start_index()
        return (
            int(token) % self.num_oov_indices + self._oov_start_index()
        )  # (integer tokens: floormod)

    def _invert(self, ids):
        vocabulary = self.get_vocabulary()
        ids = as_array(ids, False)
        out = np.empty(ids.shape, dtype=object if self.strings else np.int64)
        flat = out.reshape(-1)
        for i, index in enumerate(ids.reshape(-1)):
            if index == 0 and self.mask_token is not None:
                flat[i] = self.mask_token
            else:
                flat[i] = (
                    vocabulary[index]
                    if self._token_start_index() <= index < len(vocabulary)
                    else self.oov_token
                )
        return out if self.strings else torch.from_numpy(out)

    def lookup_ids(self, array):
        """The ids of a numpy array of tokens (an array of the same shape)."""
        flat = [self._lookup(_python_value(t)) for t in array.reshape(-1)]
        return np.asarray(flat, dtype=np.int64).reshape(array.shape)

    def encode_rows(self, rows):
        """``multi_hot``/``count``/``tf_idf`` of rows of ids (ragged lists): (rows, depth)."""
        depth = self._depth()
        out = np.zeros((len(rows), depth), dtype=np.float32)
        for r, row in enumerate(rows):
            for index in row:
                if 0 <= index < depth:
                    out[r, index] = (
                        1 if self.output_mode == "multi_hot" else out[r, index] + 1
                    )
        if self.output_mode == "tf_idf":
            out = out * self.idf_weights[:depth]
        return out

    def encode(self, ids):
        """The encoding of ``output_mode`` of an array of ids, as Keras gives it."""
        if self.output_mode == "int":
            return torch.from_numpy(ids)
        depth = self._depth()
        if self.output_mode == "one_hot":
            if ids.ndim == 0:
                ids = ids[None]
            if ids.ndim > 1 and ids.shape[-1] == 1:
                ids = ids[..., 0]
            out = np.zeros(ids.shape + (depth,), dtype=np.float32)
            valid = (ids >= 0) & (ids < depth)
            np.put_along_axis(
                out,
                np.where(valid, ids, 0)[..., None],
                valid[..., None].astype(np.float32),
                -1,
            )
            return torch.from_numpy(out)
        if ids.ndim > 2:
            raise ValueError(
                f"output_mode={self.output_mode!r} takes inputs of rank 2 at most"
            )
        encoded = self.encode_rows([list(r) for r in np.atleast_2d(ids)])
        return torch.from_numpy(encoded[0] if ids.ndim < 2 else encoded)

    def __call__(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens and not self.tokens:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                "you must set the layer's vocabulary before calling it."
            )
        if self.invert:
            return self._invert(inputs)
        return self.encode(self.lookup_ids(as_array(inputs, self.strings)))


class StringLookup(IndexLookup):
    """``keras.layers.StringLookup``: strings → ids (or ids → strings with ``invert=True``)."""

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token="[UNK]",
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        pad_to_max_tokens=False,
        sparse=False,
        encoding="utf-8",
        name=None,
        salt=None,
        **kwargs,
    ):
        if salt is not None:
            raise NotImplementedError(
                "StringLookup(salt=...): Keras' salted FarmHash buckets are not translated"
            )
        self.encoding = encoding
        super().__init__(
            max_tokens,
            num_oov_indices,
            mask_token,
            oov_token,
            True,
            vocabulary,
            idf_weights,
            invert,
            output_mode,
            pad_to_max_tokens,
            sparse,
            name,
            **kwargs,
        )


PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')


ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


ASCII_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")


def standardize_text(array, standardize):
    """Keras' standardization of a numpy array of str: ``lower`` (ASCII), ``strip_punctuation``,
    both, None, or the program's own function (called on the array, as Keras does off
    TensorFlow)."""
    if callable(standardize):
        return as_array(standardize(array), True)
    if standardize in ("lower", "lower_and_strip_punctuation"):
        array = (
            np.vectorize(lambda s: s.translate(ASCII_LOWER), otypes=[object])(array)
            if array.size
            else array
        )
    if standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
        array = (
            np.vectorize(lambda s: PUNCTUATION.sub("", s), otypes=[object])(array)
            if array.size
            else array
        )
    return array


def split_text(text, split):
    """One string's tokens: on ASCII whitespace runs, per character, or the program's function."""
    if split == "whitespace":
        return [t for t in ASCII_WHITESPACE.split(text) if t]
    if split == "character":
        return list(text)
    return [_python_value(t) for t in split(text)]


def ngrams_of(tokens, widths):
    """tf.strings.ngrams: the n-grams of each width in turn, joined by a space."""
    out = []
    for n in widths:
        out += [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return out


class TextVectorization:
    """``keras.layers.TextVectorization``: strings → standardised, split tokens → ids (a
    StringLookup with the mask token "" and Keras' vocabulary order)."""

    def __init__(
        self,
        max_tokens=None,
        standardize="lower_and_strip_punctuation",
        split="whitespace",
        ngrams=None,
        output_mode="int",
        output_sequence_length=None,
        pad_to_max_tokens=False,
        vocabulary=None,
        idf_weights=None,
        sparse=False,
        ragged=False,
        encoding="utf-8",
        name=None,
        **kwargs,
    ):
        if standardize not in (
            None,
            "lower_and_strip_punctuation",
            "lower",
            "strip_punctuation",
        ) and not callable(standardize):
            raise ValueError(f"Unknown standardize={standardize!r}")
        if split not in (None, "whitespace", "character") and not callable(split):
            raise ValueError(f"Unknown split={split!r}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(
            output_mode, output_mode
        )
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(
                "`output_sequence_length` must not be set if `output_mode` is not 'int'."
            )
        if ragged:
            raise ValueError(
                "ragged=True (a TensorFlow ragged tensor) is not translated"
            )
        self.standardize, self.split, self.output_mode = standardize, split, output_mode
        self.ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self.output_sequence_length, self.name = output_sequence_length, name
        kwargs.pop("dtype", None)
        kwargs.pop("trainable", None)
        self.lookup = StringLookup(
            max_tokens=max_tokens,
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens,
            mask_token="",
            output_mode=output_mode,
            sparse=sparse,
            encoding=encoding,
            **kwargs,
        )

    def get_vocabulary(self, include_special_tokens=True):
        return self.lookup.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self.lookup.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self.lookup.set_vocabulary(vocabulary, idf_weights)
        self.lookup._has_input_vocabulary = True

    def preprocess(self, inputs):
        """Standardised, split strings: a list of token lists (one per string) when splitting
        a batch, one token list for a single string, else the array of strings."""
        array = standardize_text(as_array(inputs, True), self.standardize)
        if self.split is None:
            return array
        if array.ndim > 1:
            if array.shape[-1] != 1:
                raise ValueError(
                    f"When using `TextVectorization` to tokenize strings, the input rank must be 1 "
                    f"or the last shape dimension must be 1. Received: inputs.shape={array.shape}"
                )
            array = array[..., 0]
        if array.ndim == 0:
            tokens = split_text(array.item(), self.split)
            return ngrams_of(tokens, self.ngrams) if self.ngrams else tokens
        rows = [split_text(s, self.split) for s in array.reshape(-1)]
        return [ngrams_of(r, self.ngrams) for r in rows] if self.ngrams else rows

    def adapt(self, data, batch_size=None, steps=None):
        """Build the vocabulary from strings (``adapt_layer``)."""
        adapt_layer(self, data, True, steps)

    def update_state(self, data):
        tokens = self.preprocess(data)
        if isinstance(tokens, np.ndarray):
            self.lookup.update_state(tokens)
        else:
            self.lookup.update_state(
                tokens if tokens and isinstance(tokens[0], list) else [tokens]
            )

    def finalize_state(self):
        self.lookup.finalize_state()

    def reset_state(self):
        self.lookup.reset_state()

    def __call__(self, inputs):
        tokens = self.preprocess(inputs)
        lookup = self.lookup
        if isinstance(tokens, np.ndarray):  # (no split: one token per string)
            ids = lookup.lookup_ids(tokens)
            if self.output_mode != "int":
                return lookup.encode(ids)
            if self.output_sequence_length is not None:
                ids = ids[..., : self.output_sequence_length]
                pad = self.output_sequence_length - ids.shape[-1]
                ids = np.pad(ids, [(0, 0)] * (ids.ndim - 1) + [(0, pad)])
            return torch.from_numpy(ids)
        single = not tokens or not isinstance(tokens[0], list)
        rows = [
            [lookup._lookup(t) for t in row] for row in ([tokens] if single else tokens)
        ]
        if self.output_mode != "int":
            if lookup.output_mode == "one_hot":
                raise ValueError(
                    "output_mode='one_hot' of split text is not translated"
                )
            encoded = lookup.encode_rows(rows)
            return torch.from_numpy(encoded[0] if single else encoded)
        length = self.output_sequence_length
        if length is None:
            length = max((len(r) for r in rows), default=0)
        out = np.zeros((len(rows), length), dtype=np.int64)
        for r, row in enumerate(rows):
            row = row[:length]
            out[r, : len(row)] = row
        return torch.from_numpy(out[0] if single else out)


def sparse_categorical_crossentropy(logits, target):
    """Keras' sparse_categorical_crossentropy per sample, from logits."""
    loss = F.cross_entropy(
        logits.flatten(0, -2), target.flatten().long(), reduction="none"
    )
    return loss.view(logits.shape[:-1])


vectorizer = TextVectorization(max_tokens=20, output_sequence_length=4)
vectorizer.adapt(texts)
label_ids = StringLookup(num_oov_indices=0)
label_ids.adapt(labels)


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:20).

    Input ``inputs``: (N, 4) int64.
    Returns: (N, 2).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self, vectorizer_vocabulary_size):
        super().__init__()
        self.embedding1 = nn.Embedding(vectorizer_vocabulary_size, 8)
        self.fc1 = nn.Linear(8, 2)

    def forward(self, inputs, return_logits=False):
        x = self.embedding1(inputs).mean(dim=1)
        logits = self.fc1(x)
        if return_logits:
            return logits
        return F.softmax(logits, dim=-1)


def build_model():
    return Net(vectorizer.vocabulary_size())


dataset = make_loader(
    texts, labels, batch_size=3, batch_map=lambda x, y: (vectorizer(x), label_ids(y))
)
model = build_model()
# Keras' TensorFlow backend feeds this optimizer one Embedding gradient slice per token
# occurrence (repeats not summed first); torch uses the summed gradient
optimizer = torch.optim.Adam(
    model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
)
loss_fn = sparse_categorical_crossentropy  # on logits: the model's final activation moves into the loss
fit(
    model,
    optimizer,
    loss_fn,
    dataset,
    None,
    epochs=2,
    batch_size=dataset.batch_size,
    shuffle=False,
)
