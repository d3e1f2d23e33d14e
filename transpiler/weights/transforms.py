"""Kernel transforms between canonical (Keras-like) and PyTorch layouts.

One enum, one ``apply()``. Each member documents both layouts. Emitters choose the
transform for each param from the op spec; nothing is guessed from tensor names.
Every transform is exactly invertible (``invert``), for the reverse direction.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np


class Transform(Enum):
    """How a canonical param becomes a torch tensor."""

    #: same layout in both (biases, BN statistics, embeddings, LayerNorm gamma/beta)
    IDENTITY = "identity"
    #: Dense kernel (in, out) → Linear weight (out, in); RNN kernels (in, G) → (G, in)
    TRANSPOSE = "transpose"
    #: Conv kernel (*spatial, in, out) → ConvNd weight (out, in, *spatial)
    CONV_KERNEL = "conv_kernel"
    #: ConvTranspose kernel (*spatial, out, in) → ConvTransposeNd weight (in, out, *spatial)
    CONV_TRANSPOSE_KERNEL = "conv_transpose_kernel"
    #: Depthwise kernel (kh, kw, in, mult) → grouped Conv2d weight (in*mult, 1, kh, kw)
    DEPTHWISE_KERNEL = "depthwise_kernel"
    #: GRU kernel (in, 3u) in gate order z, r, h → weight_ih (3u, in) in order r, z, n
    GRU_KERNEL = "gru_kernel"
    #: GRU bias (2, 3u) z, r, h → row ``index`` reordered r, z, n
    GRU_BIAS_INPUT = "gru_bias_input"
    GRU_BIAS_RECURRENT = "gru_bias_recurrent"
    #: a torch tensor with no Keras counterpart (LSTM/RNN bias_hh): zeros of the bias's shape
    ZEROS = "zeros"
    #: PReLU alpha (*spatial, C) → (C, *spatial)
    CHANNELS_FIRST = "channels_first"
    #: PReLU alpha shared over every axis but one, e.g. (1, 1, C) → nn.PReLU weight (C,)
    FLATTEN = "flatten"


def _gru_reorder(a: np.ndarray, axis: int) -> np.ndarray:
    z, r, h = np.split(a, 3, axis=axis)
    return np.concatenate([r, z, h], axis=axis)


def _gru_unorder(a: np.ndarray, axis: int) -> np.ndarray:
    r, z, h = np.split(a, 3, axis=axis)
    return np.concatenate([z, r, h], axis=axis)


def apply(transform: Transform, array: np.ndarray) -> np.ndarray:
    """Canonical ``array`` → the torch tensor's layout (a new contiguous array)."""
    a = np.asarray(array)
    if transform is Transform.IDENTITY:
        out = a
    elif transform is Transform.TRANSPOSE:
        out = a.T
    elif transform is Transform.CONV_KERNEL:
        n = a.ndim
        out = a.transpose(n - 1, n - 2, *range(n - 2))
    elif transform is Transform.CONV_TRANSPOSE_KERNEL:
        n = a.ndim
        out = a.transpose(n - 1, n - 2, *range(n - 2))
    elif transform is Transform.DEPTHWISE_KERNEL:
        kh, kw, cin, mult = a.shape
        out = a.transpose(2, 3, 0, 1).reshape(cin * mult, 1, kh, kw)
    elif transform is Transform.GRU_KERNEL:
        out = _gru_reorder(a.T, 0)
    elif transform is Transform.GRU_BIAS_INPUT:
        out = _gru_reorder(a[0] if a.ndim == 2 else a, 0)
    elif transform is Transform.GRU_BIAS_RECURRENT:
        out = _gru_reorder(a[1] if a.ndim == 2 else np.zeros_like(a), 0)
    elif transform is Transform.ZEROS:
        out = np.zeros_like(a)
    elif transform is Transform.CHANNELS_FIRST:
        out = np.moveaxis(a, -1, 0)
    elif transform is Transform.FLATTEN:
        out = a.reshape(-1)
    else:  # pragma: no cover - the enum is closed
        raise ValueError(transform)
    return np.ascontiguousarray(out)


def invert(transform: Transform, array: np.ndarray) -> np.ndarray:
    """Torch ``array`` → the canonical layout (inverse of ``apply``)."""
    a = np.asarray(array)
    if transform is Transform.IDENTITY:
        out = a
    elif transform is Transform.TRANSPOSE:
        out = a.T
    elif transform in (Transform.CONV_KERNEL, Transform.CONV_TRANSPOSE_KERNEL):
        n = a.ndim
        out = a.transpose(*range(2, n), 1, 0)
    elif transform is Transform.DEPTHWISE_KERNEL:
        raise ValueError("DEPTHWISE_KERNEL needs the multiplier to invert; use invert_depthwise")
    elif transform is Transform.FLATTEN:
        raise ValueError("FLATTEN needs the canonical shape to invert; use invert_flatten")
    elif transform is Transform.GRU_KERNEL:
        out = _gru_unorder(a, 0).T
    elif transform in (Transform.GRU_BIAS_INPUT, Transform.GRU_BIAS_RECURRENT):
        out = _gru_unorder(a, 0)
    elif transform is Transform.CHANNELS_FIRST:
        out = np.moveaxis(a, 0, -1)
    else:
        raise ValueError(f"{transform} is not invertible")
    return np.ascontiguousarray(out)


def invert_depthwise(array: np.ndarray, mult: int) -> np.ndarray:
    """Grouped Conv2d weight (in*mult, 1, kh, kw) → depthwise kernel (kh, kw, in, mult)."""
    a = np.asarray(array)
    cm, _, kh, kw = a.shape
    return np.ascontiguousarray(a.reshape(cm // mult, mult, kh, kw).transpose(2, 3, 0, 1))


def invert_flatten(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """nn.PReLU weight (C,) → the canonical alpha of ``shape`` (e.g. (1, 1, C))."""
    return np.ascontiguousarray(np.asarray(array).reshape(shape))


def apply_param_transform(step: tuple[str, Any], array: np.ndarray) -> np.ndarray:
    """A canonical-layout transform decided by a pass (``Node.param_transforms``).

    ``("permute_rows", (source_shape, perm))``: a Dense kernel whose input was
    flattened in another axis order: row j of the result is the row of the source
    element that the new flatten order puts at position j. ``("permute_cols", ...)``:
    the same on the columns (a Dense whose output is reshaped into a feature map).
    """
    kind, arg = step
    source_shape, perm = arg
    order = np.arange(int(np.prod(source_shape))).reshape(source_shape).transpose(perm).reshape(-1)
    if kind == "permute_rows":
        return np.ascontiguousarray(np.asarray(array)[order])
    if kind == "permute_cols":
        return np.ascontiguousarray(np.asarray(array)[:, order])
    raise ValueError(f"unknown param transform {kind!r}")
