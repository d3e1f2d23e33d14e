"""torch tensor methods numpy spells in more than one expression, for generated Keras
programs (PyTorch -> Keras): the data code outside the model holds torch's tensors as numpy
arrays (frontend_ast/torch/tensor_params.py writes their calls).
"""

import keras
import numpy as np


def masked_fill(x, mask, value):
    """torch's ``x.masked_fill(mask, value)``: ``value`` where ``mask`` holds, ``x``
    elsewhere, in ``x``'s dtype (torch casts the value to it)."""
    x = np.asarray(x)
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch's ``nn.utils.rnn.pad_sequence``: sequences of shape (L_i, *) padded with
    ``padding_value`` to the longest, stacked as (L, B, *) (``batch_first``: (B, L, *)),
    in the sequences' dtype."""
    sequences = [np.asarray(s) for s in sequences]
    longest = max(len(s) for s in sequences)
    dtype = np.result_type(*sequences)
    out = np.full((len(sequences), longest) + sequences[0].shape[1:], padding_value, dtype=dtype)
    for i, s in enumerate(sequences):
        if padding_side == "left":
            out[i, longest - len(s):] = s
        else:
            out[i, : len(s)] = s
    return out if batch_first else np.swapaxes(out, 0, 1)


def sparse_coo_tensor(indices, values, size, dtype=None):
    """torch's ``sparse_coo_tensor(indices, values, size)`` held dense: ``values`` at the
    (ndim, nnz) ``indices`` of a zero array of ``size``, duplicates summed (torch's
    ``to_dense()``); the values' dtype unless ``dtype`` is given."""
    values = np.asarray(values)
    out = np.zeros(tuple(size) + values.shape[1:], dtype=dtype or values.dtype)
    np.add.at(out, tuple(np.asarray(indices)), values)
    return out


def tensor_topk(x, k, dim=-1, largest=True, sorted=True):
    """torch's ``x.topk(k, dim, largest, sorted)`` of a Keras tensor (or an array): the k
    largest (``largest=False``: smallest) values along ``dim`` and their int64 indices, as a
    pair, sorted (keras.ops.top_k works on the last axis: ``dim`` is moved there and back)."""
    x = keras.ops.convert_to_tensor(x)
    moved = keras.ops.moveaxis(x, dim, -1)
    values, indices = keras.ops.top_k(moved if largest else -moved, k, sorted=True)
    if not largest:
        values = -values
    return keras.ops.moveaxis(values, -1, dim), keras.ops.cast(keras.ops.moveaxis(indices, -1, dim), "int64")


def array_topk(x, k, dim=-1, largest=True, sorted=True):
    """torch's ``x.topk(k, dim, largest, sorted)`` of array data (a Keras tensor of an eager
    caller too, read as numpy): the k largest (``largest=False``: smallest) values along
    ``dim`` and their int64 indices, as a pair of numpy arrays, sorted (ties: the first)."""
    x = np.asarray(x)
    order = np.argsort(-x if largest else x, axis=dim, kind="stable")
    indices = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(x, indices, axis=dim), indices.astype(np.int64)


def array_multinomial(input, num_samples, replacement=False):
    """torch's ``torch.multinomial(input, num_samples, replacement)`` of array data: for a
    weights vector (or each row of a matrix of them) ``num_samples`` int64 indices drawn with
    probabilities proportional to the weights (unnormalised, float64 as numpy needs them),
    each index at most once without replacement; shape ``(num_samples,)`` for a vector,
    ``(rows, num_samples)`` for a matrix, as torch's. Drawn from numpy's global generator
    (torch's generator draws other numbers)."""
    w = np.asarray(input, dtype="float64")
    rows = w.reshape(-1, w.shape[-1])
    drawn = [np.random.choice(rows.shape[-1], size=num_samples, replace=replacement, p=row / row.sum())
             for row in rows]
    return np.stack(drawn).reshape(w.shape[:-1] + (num_samples,)).astype(np.int64)


def is_tensor(x):
    """torch's ``isinstance(x, torch.Tensor)`` in a Keras program: a Keras (backend) tensor or
    a numpy array, the two kinds torch's tensors are there."""
    return keras.ops.is_tensor(x) or isinstance(x, np.ndarray)
