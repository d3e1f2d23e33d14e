"""Forms of ONNX nodes that only a graph without a batch axis (``Context.plain``) holds: a
reduction over every axis, a reshape that changes the first size, numpy's matrix product of a
vector. The ONNX node tests are full of them (rank-0/1 inputs, ops over axis 0); a batch-first
reading raises ``BatchAxis`` and the reader reads the graph again without one."""

from __future__ import annotations

from transpiler.frontend_onnx.loader import ONode
from transpiler.frontend_onnx.reader import BatchAxis, Context, Unsupported


def _all_axes(ctx: Context, rank: int) -> tuple[int, ...]:
    """A reduction with no axes: every axis, which a graph without a batch axis can reduce."""
    if not ctx.plain:
        raise BatchAxis("a reduction over every axis (the batch axis too)")
    return tuple(range(rank))


def _no_empty_extreme(x, axes, op: str) -> None:
    """A max or min over an axis of size 0 (ONNX: -inf / +inf; torch's amax refuses it)."""
    if op in ("reduce_max", "reduce_min") and any(x.shape[a % len(x.shape)] == 0 for a in axes):
        raise Unsupported(f"{op} over an axis of size 0 (ONNX's identity, +-inf; torch refuses it)")


def _plain_reshape(ctx: Context, node: ONode, x, full: tuple) -> None:
    """A reshape of every axis in a graph without a batch axis: the table's ``reshape`` keeps
    the first axis, so one that changes it reshapes a new leading axis of size 1 (dropped after)."""
    full = tuple(int(s) for s in full)
    if full == tuple(x.shape):
        ctx.bind(node.outputs[0], x)
    elif len(full) > 1 and full[0] == x.shape[0]:
        ctx.add("reshape", [x], {"shape": full[1:]}, node, "reshape")
    else:
        one = ctx.add("expand_dims", [x], {"axis": 0}, node, "reshape", outputs=[""]).outputs[0]
        whole = ctx.add("reshape", [one], {"shape": full}, node, "reshape", outputs=[""]).outputs[0]
        ctx.add("squeeze", [whole], {"axis": (0,)}, node, "reshape")


def _vector_matmul(ctx: Context, node: ONode, x, y) -> None:
    """numpy's matmul of a vector: a 1-D left operand is a row (1, K), a 1-D right one a
    column (K, 1), the axis each adds is dropped from the product (a graph without a batch
    axis: a vector has no batch)."""
    if not ctx.plain:
        raise BatchAxis(f"a matmul of a vector ({x.shape} @ {y.shape})")
    row, col = len(x.shape) == 1, len(y.shape) == 1
    if row:
        x = ctx.add("expand_dims", [x], {"axis": 0}, node, "row", outputs=[""]).outputs[0]
    if col:
        y = ctx.add("expand_dims", [y], {"axis": 1}, node, "column", outputs=[""]).outputs[0]
    out = ctx.add("matmul", [x, y], {}, node, "matmul", outputs=[""]).outputs[0]
    rank = len(out.shape)
    drop = tuple(sorted(({rank - 2} if row else set()) | ({rank - 1} if col else set())))
    ctx.add("squeeze", [out], {"axis": drop}, node, "matmul")
