"""Values the Keras reader holds for sizes known only when the program runs, as keras.ops
reads them inside a layer's call() (issue 18 item 1): the size of a non-batch axis
(``AxisDim``, from ``ops.shape(x)[-1]`` on a sequence of any length) and a rank-1 tensor of
sizes (``ShapeVector``, the causal mask idiom's tile multiples); and the one reshape of a
tensor without the batch axis that is read (inserting size-1 axes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transpiler.frontend_ast.interp.values import BatchDim
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.ir.graph import Value


class ShapeVector(tuple):
    """A rank-1 int tensor of sizes made from a shape (``ops.expand_dims(batch_size, -1)``,
    ``ops.convert_to_tensor([1, 1])`` and their concatenation): the ``multiples`` of the causal
    mask idiom's ``ops.tile``. Its items are ints, ``BatchDim`` or ``AxisDim``; ``stmts``: the
    statements that made it (they go with the node that reads it)."""

    stmts: tuple = ()

    @classmethod
    def made(cls, items, c: "Call", *parts) -> "ShapeVector":
        out = cls(items)
        stmts = [s for p in parts for s in getattr(p, "stmts", ())]
        statement = getattr(c.builder, "statement", None)
        out.stmts = tuple(dict.fromkeys(stmts + ([statement()] if statement is not None else [])))
        return out


def shape_vector(value: Any) -> "ShapeVector | None":
    if isinstance(value, ShapeVector):
        return value
    if isinstance(value, (list, tuple)) and 0 < len(value) <= 8 and all(
            isinstance(v, (BatchDim, AxisDim)) or isinstance(v, int) and not isinstance(v, bool) for v in value):
        return ShapeVector(value)
    return None


@dataclass(frozen=True)
class AxisDim:
    """The size of axis ``axis`` (not the batch axis) of the tensor ``value``, known only when
    the program runs (``ops.shape(tokens)[-1]`` on a sequence of any length). ``ops.arange``
    reads it as its stop (``arange_like``); any other use is refused where it is used."""

    value: Value
    axis: int

    def __repr__(self) -> str:
        return f"<the run-time size of axis {self.axis}>"


def insert_unit_axes(c: "Call", x: Value, shape: list) -> Value:
    """``ops.reshape(mask, (1, n, n))`` of a tensor without the batch axis (a mask made from
    ``ops.arange``) that only inserts size-1 axes: expand_dims at each of them. A size known
    only at run time (``AxisDim``) stands for an axis of unknown size."""
    dims, out, j = list(x.shape), [], 0
    for pos, d in enumerate(shape):
        fits = j < len(dims) and (d == dims[j] if isinstance(d, int) and dims[j] is not None
                                  else isinstance(d, AxisDim) and dims[j] is None)
        if fits and not isinstance(d, bool):
            j += 1
        elif d == 1 and not isinstance(d, bool):
            out.append(pos)
        else:
            raise Unsupported(f"{c.key}(): a tensor without the batch axis of shape {tuple(x.shape)} is reshaped "
                              f"only by inserting size-1 axes, got {shape!r}")
    if j != len(dims):
        raise Unsupported(f"{c.key}(): cannot reshape {tuple(x.shape)} to {shape!r}")
    y = x
    for pos in out:
        y = c.one("expand_dims", [y], {"axis": pos, "unbatched": True}, "reshape")
    return y


class PadWidths(tuple):
    """``ops.convert_to_tensor([[0, 0], [1, 1], [1, 1], [0, 0]])`` / ``tf.constant(...)`` of
    (before, after) int pairs: the widths a later ``ops.pad`` / ``tf.pad`` reads statically.
    Nothing else takes it (it is no tensor of the model)."""


def pad_widths(value: Any) -> "PadWidths | None":
    if isinstance(value, PadWidths):
        return value
    if isinstance(value, (list, tuple)) and 0 < len(value) <= 8 and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and
            all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in p) for p in value):
        return PadWidths(tuple(p) for p in value)
    return None

