"""Kernel transforms between canonical (Keras-like) and PyTorch layouts.

One ``apply()`` for the ``Transform`` enum of ``transpiler.ir.transforms`` (each member
documents both layouts). Every transform is exactly invertible (``invert``), for the
reverse direction.
"""

from __future__ import annotations

from typing import Any

from transpiler.ir.transforms import Transform
from transpiler.lazy_import import lazy_module

np = lazy_module("numpy")  # numpy loads when a tensor is moved


def gru_order(n: int) -> np.ndarray:
    """Row order turning gates (z, r, h) into (r, z, n) along an axis of length ``n``."""
    u = n // 3
    return np.concatenate([np.arange(u, 2 * u), np.arange(0, u), np.arange(2 * u, 3 * u)])


def _gru_unorder(a: np.ndarray, axis: int) -> np.ndarray:
    r, z, h = np.split(a, 3, axis=axis)
    return np.concatenate([z, r, h], axis=axis)


class Lazy:
    """A tensor as a numpy view plus deferred permutations of its first two axes.

    Transposes are views and row/column permutations are index arrays, so a
    transformed tensor is never copied whole: ``chunks()`` yields it in C order, a few
    rows at a time (the checkpoint converter streams with it); ``materialize()`` gives
    the whole array.
    """

    def __init__(self, view: np.ndarray, rows: np.ndarray | None = None, cols: np.ndarray | None = None):
        self.view, self.rows, self.cols = view, rows, cols

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.view.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.view.dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def permute(self, axes: tuple[int, ...]) -> "Lazy":
        """Transpose the axes; deferred permutations follow their axes (first two only)."""
        moved = {0: self.rows, 1: self.cols}
        for old in (0, 1):
            if moved[old] is not None and axes.index(old) > 1:
                return Lazy(self.materialize()).permute(axes)
        rows = moved.get(axes[0]) if axes else None
        cols = moved.get(axes[1]) if len(axes) > 1 else None
        return Lazy(self.view.transpose(axes), rows, cols)

    def gather(self, axis: int, index: np.ndarray) -> "Lazy":
        """Permute the entries of axis 0 or 1: ``out.take(i, axis) = x.take(index[i], axis)``."""
        index = np.asarray(index)
        if axis == 0:
            return Lazy(self.view, index if self.rows is None else self.rows[index], self.cols)
        if axis == 1:
            return Lazy(self.view, self.rows, index if self.cols is None else self.cols[index])
        raise ValueError("only axes 0 and 1 are permuted lazily")

    def _block(self, i: int, j: int) -> np.ndarray:
        v = self.view
        if v.ndim == 2 and v.T.flags.c_contiguous and v.shape[0] > 1 and v.shape[1] > 1:
            # a transposed matrix: gather from the untransposed base, then a cache-blocked transpose
            base = v.T
            rows = self.rows[i:j] if self.rows is not None else slice(i, j)
            src = base[:, rows] if self.cols is None else base[:, rows][self.cols]
            return _transpose(src)
        block = v[self.rows[i:j]] if self.rows is not None else v[i:j]
        if self.cols is not None:
            block = block[:, self.cols]
        return np.ascontiguousarray(block)

    def materialize(self) -> np.ndarray:
        if self.view.ndim == 0:
            return np.ascontiguousarray(self.view)
        return self._block(0, self.shape[0])

    def chunk_ranges(self, max_bytes: int = 1 << 24) -> list[tuple[int, int]]:
        """Row ranges ``[(i, j), ...]`` of about ``max_bytes`` each, covering the tensor."""
        if self.view.ndim == 0 or self.shape[0] == 0:
            return [(0, 0)]
        row = max(1, self.nbytes // self.shape[0])
        step = max(1, max_bytes // row)
        return [(i, min(i + step, self.shape[0])) for i in range(0, self.shape[0], step)]

    def block(self, i: int, j: int) -> np.ndarray:
        """Rows ``i:j`` as a new contiguous array (the whole tensor for a 0-d or empty one)."""
        if self.view.ndim == 0 or self.shape[0] == 0:
            return self.materialize()
        return self._block(i, j)

    def chunks(self, max_bytes: int = 1 << 24):
        """The tensor in C order, as contiguous arrays of at most ~``max_bytes``."""
        for i, j in self.chunk_ranges(max_bytes):
            yield self.block(i, j)


def _transpose(a: np.ndarray, tile: int | None = None) -> np.ndarray:
    """``a.T`` as a new C-contiguous array, copied in tiles of ``tile`` source rows (a
    plain strided copy of a large matrix misses the cache on every element). By default a
    tile is one 64-byte cache line of each output row: the tile's writes then touch one line
    per row, however far apart the rows are (a wider tile spreads its writes over lines a
    power-of-two row stride maps to the same cache sets; 64 float32 rows cost ~1.6x the CPU
    time of 16 on an 8192 x 8192 kernel)."""
    if tile is None:
        tile = max(8, 64 // max(1, a.dtype.itemsize))
    out = np.empty((a.shape[1], a.shape[0]), dtype=a.dtype)
    for r in range(0, a.shape[0], tile):
        out[:, r:r + tile] = a[r:r + tile].T
    return out


def apply_lazy(transform: Transform, x: Lazy) -> Lazy:
    """Canonical → the torch tensor's layout, as a lazy view (the one definition)."""
    n = len(x.shape)
    if transform is Transform.IDENTITY:
        return x
    if transform is Transform.TRANSPOSE:
        return x.permute(tuple(reversed(range(n))))
    if transform in (Transform.CONV_KERNEL, Transform.CONV_TRANSPOSE_KERNEL):
        return x.permute((n - 1, n - 2, *range(n - 2)))
    if transform is Transform.DEPTHWISE_KERNEL:
        kh, kw, cin, mult = x.shape
        return Lazy(x.materialize().transpose(2, 3, 0, 1).reshape(cin * mult, 1, kh, kw))
    if transform is Transform.GRU_KERNEL:
        t = x.permute((1, 0))
        return t.gather(0, gru_order(t.shape[0]))
    if transform in (Transform.GRU_BIAS_INPUT, Transform.GRU_BIAS_RECURRENT):
        a = x.materialize()
        if a.ndim == 2:
            a = a[0] if transform is Transform.GRU_BIAS_INPUT else a[1]
        elif transform is Transform.GRU_BIAS_RECURRENT:
            a = np.zeros_like(a)
        return Lazy(a).gather(0, gru_order(a.shape[0]))
    if transform is Transform.ZEROS:
        return Lazy(np.zeros(x.shape, x.dtype))
    if transform is Transform.CHANNELS_FIRST:
        return x.permute((n - 1, *range(n - 1)))
    if transform is Transform.FLATTEN:
        return Lazy(x.materialize().reshape(-1))
    if transform is Transform.HEADS_KERNEL:
        return Lazy(x.materialize().reshape(x.shape[0], -1)).permute((1, 0))
    if transform is Transform.HEADS_OUTPUT_KERNEL:
        return Lazy(x.materialize().reshape(-1, x.shape[-1])).permute((1, 0))
    raise ValueError(transform)  # pragma: no cover - the enum is closed


def apply(transform: Transform, array: np.ndarray) -> np.ndarray:
    """Canonical ``array`` → the torch tensor's layout (a new contiguous array)."""
    return apply_lazy(transform, Lazy(np.asarray(array))).materialize()


def invert(transform: Transform, array: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Torch ``array`` → the canonical layout (inverse of ``apply``); the reshaping
    transforms need the canonical ``shape``."""
    a = np.asarray(array)
    if transform in (Transform.FLATTEN, Transform.HEADS_KERNEL, Transform.HEADS_OUTPUT_KERNEL):
        if shape is None:
            raise ValueError(f"{transform} needs the canonical shape to invert")
        if transform is Transform.FLATTEN:
            return invert_flatten(a, shape)
        return np.ascontiguousarray(a.T.reshape(shape))
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
    return np.ascontiguousarray(out).reshape(np.shape(out))  # (keeps a 0-d scalar 0-d)


def invert_depthwise(array: np.ndarray, mult: int) -> np.ndarray:
    """Grouped Conv2d weight (in*mult, 1, kh, kw) → depthwise kernel (kh, kw, in, mult)."""
    a = np.asarray(array)
    cm, _, kh, kw = a.shape
    return np.ascontiguousarray(a.reshape(cm // mult, mult, kh, kw).transpose(2, 3, 0, 1))


def invert_flatten(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """nn.PReLU weight (C,) → the canonical alpha of ``shape`` (e.g. (1, 1, C))."""
    return np.ascontiguousarray(np.asarray(array).reshape(shape))


def param_transform_lazy(step: tuple[str, Any], x: Lazy) -> Lazy:
    """A canonical-layout transform decided by a pass (``Node.param_transforms``).

    ``("permute_rows", (source_shape, perm))``: a Dense kernel whose input was
    flattened in another axis order: row j of the result is the row of the source
    element that the new flatten order puts at position j. ``("permute_cols", ...)``:
    the same on the columns (a Dense whose output is reshaped into a feature map).
    """
    kind, arg = step
    if kind not in ("permute_rows", "permute_cols"):
        raise ValueError(f"unknown param transform {kind!r}")
    source_shape, perm = arg
    order = np.arange(int(np.prod(source_shape))).reshape(source_shape).transpose(perm).reshape(-1)
    return x.gather(0 if kind == "permute_rows" else 1, order)


def apply_param_transform(step: tuple[str, Any], array: np.ndarray) -> np.ndarray:
    """``param_transform_lazy`` on a whole array."""
    return param_transform_lazy(step, Lazy(np.asarray(array))).materialize()


def invert_param_transform(step: tuple[str, Any], array: np.ndarray) -> np.ndarray:
    """The inverse of ``apply_param_transform``."""
    kind, (source_shape, perm) = step
    order = np.arange(int(np.prod(source_shape))).reshape(source_shape).transpose(perm).reshape(-1)
    inverse = np.argsort(order)
    a = np.asarray(array)
    return np.ascontiguousarray(a[inverse] if kind == "permute_rows" else a[:, inverse])
