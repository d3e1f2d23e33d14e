"""Keras' text and lookup preprocessing layers for generated PyTorch programs.

``keras.layers.StringLookup``, ``IntegerLookup`` and ``TextVectorization`` hold a vocabulary
(given, or built by ``adapt(data)``) and map tokens to ids. Here they are plain Python objects
with Keras' arguments and methods (``adapt``, ``get_vocabulary``, ``vocabulary_size``,
``set_vocabulary``, calling them on data), computing what Keras computes:

- ``adapt`` counts the tokens and orders the vocabulary as Keras does: by count, most
  frequent first, ties broken by the token itself, highest first (UTF-8 byte order for
  strings); mask and OOV tokens first (``num_oov_indices``, ``mask_token``), ``max_tokens``
  keeping the most frequent; ``tf_idf``'s weights ``log(1 + documents / (1 + document
  frequency))``, the OOV slots weighted by their mean.
- ``TextVectorization`` standardises as TensorFlow does (``lower``: ASCII letters only;
  ``strip_punctuation``: Keras' ASCII punctuation class), splits on ASCII whitespace (or per
  character), forms ``ngrams`` and pads or trims to ``output_sequence_length`` with 0.
- Calling a layer gives ids as an int64 tensor (``output_mode="int"``), or the
  ``one_hot``/``multi_hot``/``count``/``tf_idf`` encodings as float32 tensors (Keras' values;
  float32 is the dtype the layer declares to a model, so a ``nn.Linear`` takes them);
  ``invert=True`` gives the tokens back (a numpy array of str for StringLookup).

Not translated (an error naming it when used): several OOV buckets for string tokens (Keras
hashes them with FarmHash), ``sparse``/``ragged`` outputs.
"""

import collections
import re
import string

import numpy as np
import torch

#: Keras' punctuation class (``lower_and_strip_punctuation``), ASCII only
PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
#: tf.strings.lower without an encoding lowercases ASCII letters only
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: tf.strings.upper: ASCII letters only
ASCII_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)
#: tf.strings.split's whitespace (absl's ascii_isspace)
ASCII_WHITESPACE = re.compile(r"[ \t\n\v\f\r]+")


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

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, strings, vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`.")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: {num_oov_indices}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in ("int", "one_hot", "multi_hot", "count", "tf_idf"):
            raise ValueError(f"Unknown output_mode={output_mode!r}")
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: {output_mode}")
        if sparse:
            raise ValueError("sparse=True (a TensorFlow sparse tensor) is not translated")
        if strings and num_oov_indices > 1:
            raise NotImplementedError("num_oov_indices > 1 for string tokens: Keras hashes them with FarmHash "
                                      "(not translated)")
        kwargs.pop("dtype", None)
        kwargs.pop("trainable", None)
        kwargs.pop("oov_method", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        self.max_tokens, self.num_oov_indices = max_tokens, num_oov_indices
        self.mask_token, self.oov_token, self.strings = mask_token, oov_token, strings
        self.invert, self.output_mode, self.pad_to_max_tokens = invert, output_mode, pad_to_max_tokens
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
        return vocab if include_special_tokens else vocab[self._token_start_index():]

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
            raise ValueError("`idf_weights` should only be set if output_mode is 'tf_idf'.")
        if isinstance(vocabulary, str):
            vocabulary = self._read_vocabulary_file(vocabulary)
        vocabulary = [_python_value(v) for v in as_array(vocabulary, self.strings).reshape(-1)]
        if not vocabulary:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        token_start = self._token_start_index()
        special = [self.mask_token] * self._oov_start_index() + [self.oov_token] * self.num_oov_indices
        found_special = vocabulary[:token_start] == special
        tokens = vocabulary[token_start:] if found_special else vocabulary
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError(f"The passed vocabulary has at least one repeated term. Please uniquify your "
                             f"dataset. The repeated terms are: {repeated}")
        for token, what in ((self.mask_token, "mask"), (self.oov_token if self.invert else None, "OOV")):
            if token is not None and token in tokens:
                raise ValueError(f"Found reserved {what} token at unexpected location in `vocabulary`. Either "
                                 f"remove all mask and OOV tokens, or include them only at the start of the "
                                 f"vocabulary in precisely this order: {special}.")
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. Received "
                             f"vocabulary size is {token_start + len(tokens)}; `max_tokens` is {self.max_tokens}.")
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            weights = np.asarray(idf_weights, dtype=np.float64).reshape(-1)
            if len(weights) != len(vocabulary):
                raise ValueError(f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                                 f"{len(weights)}; len(vocabulary) is {len(vocabulary)}")
            front = (0, 0.0) if found_special else (token_start, float(np.average(weights)))
            back = self.max_tokens - front[0] - len(weights) if self.pad_to_max_tokens else 0
            self.idf_weights = np.pad(weights, (front[0], back), "constant",
                                      constant_values=(front[1], 0)).astype(np.float32)

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
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                             "`vocabulary` argument or `set_vocabulary()` method.")
        rows = data if isinstance(data, list) and all(isinstance(r, list) for r in data) else self._adapt_rows(data)
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
            tokens = tokens[:self.max_tokens - self._token_start_index()]
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            frequency = np.asarray([self.document_counts[t] for t in tokens], dtype=np.int64)
            weights = np.log(1 + self.num_documents / (1 + frequency)).astype(np.float32)
            weights = np.pad(weights, (self._token_start_index(), 0), constant_values=np.mean(weights))
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
            return 0 if self.output_mode == "int" else -2  # (-2: no slot in the encodings)
        found = self.index.get(token)
        if found is not None:
            return found
        if self.num_oov_indices == 0:
            raise ValueError(f"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                             f"[{token!r}], consider setting `num_oov_indices=1`.")
        if self.num_oov_indices == 1:
            return self._oov_start_index()
        return int(token) % self.num_oov_indices + self._oov_start_index()  # (integer tokens: floormod)

    def _invert(self, ids):
        vocabulary = self.get_vocabulary()
        ids = as_array(ids, False)
        out = np.empty(ids.shape, dtype=object if self.strings else np.int64)
        flat = out.reshape(-1)
        for i, index in enumerate(ids.reshape(-1)):
            if index == 0 and self.mask_token is not None:
                flat[i] = self.mask_token
            else:
                flat[i] = vocabulary[index] if self._token_start_index() <= index < len(vocabulary) \
                    else self.oov_token
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
                    out[r, index] = 1 if self.output_mode == "multi_hot" else out[r, index] + 1
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
            np.put_along_axis(out, np.where(valid, ids, 0)[..., None], valid[..., None].astype(np.float32), -1)
            return torch.from_numpy(out)
        if ids.ndim > 2:
            raise ValueError(f"output_mode={self.output_mode!r} takes inputs of rank 2 at most")
        encoded = self.encode_rows([list(r) for r in np.atleast_2d(ids)])
        return torch.from_numpy(encoded[0] if ids.ndim < 2 else encoded)

    def __call__(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens and not self.tokens:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                               "you must set the layer's vocabulary before calling it.")
        if self.invert:
            return self._invert(inputs)
        return self.encode(self.lookup_ids(as_array(inputs, self.strings)))


class StringLookup(IndexLookup):
    """``keras.layers.StringLookup``: strings → ids (or ids → strings with ``invert=True``)."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, salt=None, **kwargs):
        if salt is not None:
            raise NotImplementedError("StringLookup(salt=...): Keras' salted FarmHash buckets are not translated")
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, True, vocabulary, idf_weights,
                         invert, output_mode, pad_to_max_tokens, sparse, name, **kwargs)


class IntegerLookup(IndexLookup):
    """``keras.layers.IntegerLookup``: integers → ids (or back with ``invert=True``); several
    OOV indices take ``token mod num_oov_indices``, as Keras."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, name=None, **kwargs):
        if vocabulary_dtype not in ("int64", "int32"):
            raise ValueError(f"vocabulary_dtype must be an integer type, received {vocabulary_dtype!r}")
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, False, vocabulary, idf_weights,
                         invert, output_mode, pad_to_max_tokens, sparse, name, **kwargs)


def standardize_text(array, standardize):
    """Keras' standardization of a numpy array of str: ``lower`` (ASCII), ``strip_punctuation``,
    both, None, or the program's own function (called on the array, as Keras does off
    TensorFlow)."""
    if callable(standardize):
        return as_array(standardize(array), True)
    if standardize in ("lower", "lower_and_strip_punctuation"):
        array = np.vectorize(lambda s: s.translate(ASCII_LOWER), otypes=[object])(array) if array.size else array
    if standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
        array = np.vectorize(lambda s: PUNCTUATION.sub("", s), otypes=[object])(array) if array.size else array
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
        out += [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    return out


class TextVectorization:
    """``keras.layers.TextVectorization``: strings → standardised, split tokens → ids (a
    StringLookup with the mask token "" and Keras' vocabulary order)."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, **kwargs):
        if standardize not in (None, "lower_and_strip_punctuation", "lower", "strip_punctuation") and \
                not callable(standardize):
            raise ValueError(f"Unknown standardize={standardize!r}")
        if split not in (None, "whitespace", "character") and not callable(split):
            raise ValueError(f"Unknown split={split!r}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'.")
        if ragged:
            raise ValueError("ragged=True (a TensorFlow ragged tensor) is not translated")
        self.standardize, self.split, self.output_mode = standardize, split, output_mode
        self.ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self.output_sequence_length, self.name = output_sequence_length, name
        kwargs.pop("dtype", None)
        kwargs.pop("trainable", None)
        self.lookup = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                   pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
                                   sparse=sparse, encoding=encoding, **kwargs)

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
                raise ValueError(f"When using `TextVectorization` to tokenize strings, the input rank must be 1 "
                                 f"or the last shape dimension must be 1. Received: inputs.shape={array.shape}")
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
            self.lookup.update_state(tokens if tokens and isinstance(tokens[0], list) else [tokens])

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
                ids = ids[..., :self.output_sequence_length]
                pad = self.output_sequence_length - ids.shape[-1]
                ids = np.pad(ids, [(0, 0)] * (ids.ndim - 1) + [(0, pad)])
            return torch.from_numpy(ids)
        single = not tokens or not isinstance(tokens[0], list)
        rows = [[lookup._lookup(t) for t in row] for row in ([tokens] if single else tokens)]
        if self.output_mode != "int":
            if lookup.output_mode == "one_hot":
                raise ValueError("output_mode='one_hot' of split text is not translated")
            encoded = lookup.encode_rows(rows)
            return torch.from_numpy(encoded[0] if single else encoded)
        length = self.output_sequence_length
        if length is None:
            length = max((len(r) for r in rows), default=0)
        out = np.zeros((len(rows), length), dtype=np.int64)
        for r, row in enumerate(rows):
            row = row[:length]
            out[r, :len(row)] = row
        return torch.from_numpy(out[0] if single else out)


class StringValue(str):
    """A scalar string as TensorFlow's eager tensors give it (``tf.strings.reduce_join(...)``):
    a Python str whose ``.numpy()`` is its UTF-8 bytes, as ``tensor.numpy()`` is in TensorFlow."""

    def numpy(self):
        return self.encode("utf-8")


def _strings_out(array):
    """A numpy array of str as the result of a tf.strings function: a scalar as a StringValue."""
    return StringValue(array.item()) if array.ndim == 0 else array


def _strings_each(function, value):
    array = as_array(value, True)
    out = np.empty(array.shape, dtype=object)
    out.reshape(-1)[:] = [function(s) for s in array.reshape(-1)]
    return _strings_out(out)


def strings_lower(value):
    """tf.strings.lower (no encoding): ASCII letters lowercased, of a string or an array of them."""
    return _strings_each(lambda s: s.translate(ASCII_LOWER), value)


def strings_upper(value):
    """tf.strings.upper (no encoding): ASCII letters uppercased."""
    return _strings_each(lambda s: s.translate(ASCII_UPPER), value)


def strings_strip(value):
    """tf.strings.strip: leading and trailing ASCII whitespace removed."""
    return _strings_each(lambda s: s.strip(" \t\n\v\f\r"), value)


def strings_regex_replace(value, pattern, rewrite, replace_global=True):
    """tf.strings.regex_replace: every match (the first only without ``replace_global``) of
    ``pattern`` replaced by ``rewrite`` (RE2's ``\\1`` groups are Python's; its ``\\w``, ``\\d``
    and ``\\s`` are ASCII classes: ``re.ASCII``)."""
    compiled = re.compile(_python_value(pattern), re.ASCII)
    rewrite = _python_value(rewrite)
    return _strings_each(lambda s: compiled.sub(rewrite, s, count=0 if replace_global else 1), value)


def strings_unicode_split(value):
    """tf.strings.unicode_split (UTF-8): a string's characters, a numpy array of str (rows of
    characters, one list per string, for an array of strings: TensorFlow's ragged rows)."""
    array = as_array(value, True)
    if array.ndim == 0:
        out = np.empty(len(array.item()), dtype=object)
        out[:] = list(array.item())
        return out
    return [strings_unicode_split(s) for s in array]


def strings_reduce_join(inputs, axis=None, separator=""):
    """tf.strings.reduce_join: the strings joined with ``separator``, all of them (``axis``
    None: a StringValue) or along ``axis`` (an array of str one rank lower)."""
    if isinstance(inputs, list):  # (ragged rows: unicode_split of an array)
        if axis is None:
            return StringValue(separator.join(separator.join(_python_value(t) for t in row) for row in inputs))
        return _strings_out(np.array([separator.join(_python_value(t) for t in row) for row in inputs],
                                     dtype=object))
    array = as_array(inputs, True)
    if axis is None:
        return StringValue(separator.join(array.reshape(-1)))
    joined = np.apply_along_axis(lambda row: separator.join(row), int(axis), array) if array.size else \
        np.empty(np.delete(array.shape, int(axis)), dtype=object)
    return _strings_out(np.asarray(joined, dtype=object))


class RaggedRows:
    """TensorFlow's RaggedTensor of rows (``tf.strings.split`` of a batch of strings): one row
    per string, of its own length; ``to_tensor()`` pads the rows to the longest (``""`` for
    strings, 0 for numbers) as TensorFlow does."""

    def __init__(self, rows):
        self.rows = list(rows)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def to_list(self):
        return [list(row.tolist() if isinstance(row, torch.Tensor) else row) for row in self.rows]

    def to_tensor(self, default_value=None, shape=None):
        if shape is not None:
            raise NotImplementedError("RaggedTensor.to_tensor(shape=...) is not translated")
        width = max((len(row) for row in self.rows), default=0)
        if self.rows and isinstance(self.rows[0], torch.Tensor):
            dtype = self.rows[0].dtype
            out = torch.full((len(self.rows), width), 0 if default_value is None else default_value, dtype=dtype)
            for i, row in enumerate(self.rows):
                out[i, :len(row)] = row
            return out
        out = np.full((len(self.rows), width), "" if default_value is None else _python_value(default_value),
                      dtype=object)
        for i, row in enumerate(self.rows):
            out[i, :len(row)] = list(row)
        return out


def strings_split(value, sep=None, maxsplit=-1):
    """tf.strings.split: each string's parts (``sep`` None: runs of whitespace, no empty parts;
    else every ``sep``, empty parts kept, as Python's str.split), at most ``maxsplit`` splits.
    A string gives an array of str; an array of strings a RaggedRows (TensorFlow's ragged rows)."""
    sep = None if sep is None else _python_value(sep)

    def parts(text):
        out = np.empty(0, dtype=object)
        found = text.split(sep, maxsplit) if sep is not None else text.split(None, maxsplit)
        out = np.empty(len(found), dtype=object)
        out[:] = found
        return out

    array = as_array(value, True)
    if array.ndim == 0:
        return parts(array.item())
    if array.ndim > 1:
        raise NotImplementedError("tf.strings.split of a rank-2 string tensor (nested ragged rows)")
    return RaggedRows(parts(s) for s in array)


def strings_to_number(value, out_type=torch.float32):
    """tf.strings.to_number: each string parsed as a number, a tensor of ``out_type`` (ragged
    rows: rows of such tensors)."""
    if isinstance(value, RaggedRows):
        return RaggedRows(strings_to_number(row, out_type) for row in value.rows)
    array = as_array(value, True)
    kind = float if out_type.is_floating_point else int
    flat = [kind(s) for s in array.reshape(-1)]
    return torch.tensor(flat, dtype=out_type).reshape(array.shape)


def strings_length(value):
    """tf.strings.length (bytes, TensorFlow's default unit): an int32 tensor."""
    array = as_array(value, True)
    flat = [len(s.encode("utf-8")) for s in array.reshape(-1)]
    return torch.tensor(flat, dtype=torch.int32).reshape(array.shape)
