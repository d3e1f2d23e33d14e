"""Converters of ONNX's comparison, selection, index and normalisation ops onto entries the
ops table has (greater, where, argmax, prelu, layer_norm, ...). Registered by importing this
module (``converters`` does, at its end)."""

from __future__ import annotations

import numpy as np

from transpiler.frontend_onnx.loader import ONode
from transpiler.frontend_onnx.reader import Context, Unsupported, converter
from transpiler.frontend_onnx.converters import _axis, _f32


def _operand(ctx: Context, node: ONode, i: int):
    """A run-time input, or a constant of one number as the table's ``constant``."""
    name = node.inputs[i]
    c = ctx.const(name)
    if c is None:
        return ctx.value(name)
    if c.size != 1:
        raise Unsupported(f"a constant operand of shape {c.shape} (only single numbers are read)")
    value = c.reshape(()).item()
    if c.dtype == np.bool_:
        return _bool_constant(ctx, node, bool(value))
    return ctx.scalar(float(value), node)


def _bool_constant(ctx: Context, node: ONode, value: bool):
    from transpiler.ir.passes.shape_inference import infer_node

    ir = ctx.graph.add_node("constant", ctx.name_for(node, "const"), [], attrs={"value": value})
    infer_node(ir)
    return ir.outputs[0]


_COMPARE = {"Greater": "greater", "Less": "less", "GreaterOrEqual": "greater_equal",
            "LessOrEqual": "less_equal", "Equal": "equal"}


@converter(*_COMPARE, ops={k: (v,) for k, v in _COMPARE.items()})
def compare(ctx: Context, node: ONode) -> None:
    op = _COMPARE[node.op_type]
    a, b = (_operand(ctx, node, i) for i in (0, 1))
    if not a.shape and not b.shape:
        raise Unsupported("two constant operands (not folded)")
    ctx.add(op, [a, b], {}, node, op)


@converter("Where", ops=("where",))
def where(ctx: Context, node: ONode) -> None:
    ins = [_operand(ctx, node, i) for i in range(3)]
    if not ins[0].shape:
        raise Unsupported("a constant condition (not folded)")
    ctx.add("where", ins, {}, node, "where")


@converter("Reciprocal", ops=("constant", "divide"))
def reciprocal(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    if not x.dtype.startswith("float") and x.dtype != "bfloat16":
        raise Unsupported(f"the reciprocal of {x.dtype}")
    ctx.add("divide", [ctx.scalar(1.0, node), x], {}, node, "reciprocal")


@converter("ArgMax", "ArgMin", ops={"ArgMax": ("argmax",), "ArgMin": ("argmin",)})
def arg_extreme(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    if node.attrs.get("select_last_index", 0):
        raise Unsupported("select_last_index=1 (the table's argmax/argmin pick the first extreme)")
    op = node.op_type.lower()
    axis = _axis(int(node.attrs.get("axis", 0)), len(x.shape), node.op_type)
    ctx.add(op, [x], {"axis": axis, "keepdims": bool(node.attrs.get("keepdims", 1))}, node, op)


@converter("PRelu", ops=("prelu",))
def prelu(ctx: Context, node: ONode) -> None:
    """slope (broadcast against x's trailing axes, numpy rules) as the table's ``alpha``: the
    input's non-batch shape with 1 on the axes one slope is shared over."""
    x = ctx.value(node.inputs[0])
    slope = ctx.const(node.inputs[1])
    if slope is None:
        raise Unsupported("a slope computed at run time")
    rank = len(x.shape)
    if slope.ndim > rank:
        raise Unsupported(f"a slope of shape {slope.shape} on a rank-{rank} input")
    full = slope.reshape((1,) * (rank - slope.ndim) + slope.shape)
    if full.shape[0] != 1:
        raise Unsupported(f"a slope of shape {slope.shape} varies along the batch axis")
    shared = tuple(i for i in range(1, rank) if full.shape[i] == 1 and x.shape[i] != 1)
    if any(full.shape[i] not in (1, x.shape[i]) for i in range(1, rank)):
        raise Unsupported(f"a slope of shape {slope.shape} on an input of shape {x.shape}")
    if not shared and rank > 1 and all(full.shape[i] == 1 for i in range(1, rank)):
        shared = tuple(range(1, rank))
    alpha = full[0].astype(np.float32)
    ctx.add("prelu", [x], {"shared_axes": shared or None}, node, "prelu", params={"alpha": alpha},
            weight=node.inputs[1])


@converter("LayerNormalization", ops=("layer_norm", "reduce_mean", "subtract", "square", "add", "rsqrt"))
def layer_norm(ctx: Context, node: ONode) -> None:
    """Normalise over the axes from ``axis`` on; Scale and B hold one value per element of them."""
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    first = _axis(int(node.attrs.get("axis", -1)), rank, "LayerNormalization")
    axes = tuple(range(first, rank))
    shape = tuple(x.shape[first:])
    scale = ctx.const(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    bias = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    for given, what in ((scale, "Scale"), (bias, "B")):
        if given is None and what == "Scale":
            raise Unsupported("a Scale computed at run time")
        if given is not None and given.size != int(np.prod(shape)):
            raise Unsupported(f"{what} of shape {given.shape} over normalised axes {shape}")
    if len(node.inputs) > 2 and node.inputs[2] and bias is None:
        raise Unsupported("a bias computed at run time")
    params = {"gamma": scale.reshape(shape)}
    if bias is not None:
        params["beta"] = bias.reshape(shape)
    epsilon = _f32(node.attrs.get("epsilon", 1e-5))
    ctx.add("layer_norm", [x], {"axis": axes, "epsilon": epsilon, "center": bias is not None, "scale": True},
            node, "layer_norm", params=params, weight=node.inputs[1], outputs=node.outputs[:1])
    if any(o and (ctx.consumers(o) or o in ctx.og.outputs) for o in node.outputs[1:]):
        _layer_norm_statistics(ctx, node, x, axes, epsilon)


def _layer_norm_statistics(ctx: Context, node: ONode, x, axes: tuple, epsilon: float) -> None:
    """LayerNormalization's optional outputs: Mean and InvStdDev = 1 / sqrt(variance + epsilon)
    over the normalised axes, kept as size-1 axes."""
    if x.dtype != "float32":
        raise Unsupported(f"the Mean / InvStdDev outputs of a {x.dtype} input (computed in float32)")
    reduce = {"axis": axes, "keepdims": True}
    mean = ctx.add("reduce_mean", [x], reduce, node, "mean", outputs=node.outputs[1:2])
    centred = ctx.add("subtract", [x, mean.outputs[0]], {}, node, "centred", outputs=[""])
    square = ctx.add("square", [centred.outputs[0]], {}, node, "square", outputs=[""])
    variance = ctx.add("reduce_mean", [square.outputs[0]], reduce, node, "variance", outputs=[""])
    shifted = ctx.add("add", [variance.outputs[0], ctx.scalar(epsilon, node)], {}, node, "shifted", outputs=[""])
    ctx.add("rsqrt", [shifted.outputs[0]], {}, node, "inv_std_dev", outputs=node.outputs[2:3])
