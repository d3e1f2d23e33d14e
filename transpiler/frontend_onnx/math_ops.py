"""Converters of ONNX's comparison, selection, index and normalisation ops onto entries the
ops table has (greater, where, argmax, prelu, layer_norm, ...). Registered by importing this
module (``converters`` does, at its end)."""

from __future__ import annotations

import numpy as np

from transpiler.frontend_onnx.loader import ONode
from transpiler.frontend_onnx.reader import BatchAxis, Context, Unsupported, converter
from transpiler.frontend_onnx.converters import _all_axes, _axis, _f32, _no_empty_extreme


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
    from transpiler.ir.shapes import infer_node

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


@converter("ArgMax", "ArgMin", ops={"ArgMax": ("argmax", "take", "subtract"), "ArgMin": ("argmin", "take", "subtract")})
def arg_extreme(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    op = node.op_type.lower()
    axis = _axis(int(node.attrs.get("axis", 0)), len(x.shape), node.op_type, ctx.plain)
    attrs = {"axis": axis, "keepdims": bool(node.attrs.get("keepdims", 1))}
    if not node.attrs.get("select_last_index", 0):
        ctx.add(op, [x], attrs, node, op)
        return
    # the last extreme: the first one along the reversed axis, counted from the end
    size = x.shape[axis]
    if size is None:
        raise Unsupported("select_last_index=1 over an axis whose size is known only at run time")
    flipped = ctx.add("take", [x], {"indices": tuple(range(size - 1, -1, -1)), "axis": axis}, node, "reversed",
                      outputs=[""]).outputs[0]
    first = ctx.add(op, [flipped], attrs, node, op, outputs=[""]).outputs[0]
    ctx.add("subtract", [ctx.scalar(size - 1, node), first], {}, node, op)


@converter("PRelu", ops=("prelu", "variable", "less", "multiply", "where"))
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
    if full.shape[0] != 1 and ctx.plain:
        # (a slope per element of the first axis too: x where x >= 0, else slope * x)
        held = ctx.add("variable", [], {"shape": tuple(int(d) for d in slope.shape), "trainable": True}, node,
                       "slope", params={"value": slope.astype(np.float32)}, outputs=[""]).outputs[0]
        negative = ctx.add("less", [x, ctx.scalar(0.0, node)], {}, node, "negative", outputs=[""]).outputs[0]
        scaled = ctx.add("multiply", [x, held], {}, node, "scaled", outputs=[""]).outputs[0]
        ctx.add("where", [negative, scaled, x], {}, node, "prelu")
        return
    if full.shape[0] != 1:
        raise BatchAxis(f"a slope of shape {slope.shape} varies along the batch axis")
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
    first = _axis(int(node.attrs.get("axis", -1)), rank, "LayerNormalization", ctx.plain)
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


#: reductions that are a reduce_sum/reduce_max of an element-wise map, then a map of the result
_COMPOSITE_REDUCE = {
    "ReduceSumSquare": ("square", "reduce_sum", None),
    "ReduceL1": ("abs", "reduce_sum", None),
    "ReduceL2": ("square", "reduce_sum", "sqrt"),
    "ReduceLogSum": (None, "reduce_sum", "log"),
    "ReduceLogSumExp": (None, "reduce_max", "logsumexp"),
}


@converter(*_COMPOSITE_REDUCE, ops={
    "ReduceSumSquare": ("square", "reduce_sum"), "ReduceL1": ("abs", "reduce_sum"),
    "ReduceL2": ("square", "reduce_sum", "sqrt"), "ReduceLogSum": ("reduce_sum", "log"),
    "ReduceLogSumExp": ("reduce_max", "subtract", "exp", "reduce_sum", "log", "add")})
def composite_reduce(ctx: Context, node: ONode) -> None:
    """The reductions ONNX defines as a map, a sum and a map (ReduceL2 = sqrt(sum(x²)));
    ReduceLogSumExp as max + log(sum(exp(x - max))), stable as ONNX's reference is."""
    from transpiler.frontend_onnx.converters import _axes_operand

    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axes = _axes_operand(ctx, node)
    if not axes:
        if node.attrs.get("noop_with_empty_axes"):
            raise Unsupported("noop_with_empty_axes: the element-wise map without the reduction")
        axes = _all_axes(ctx, rank)
    if not x.dtype.startswith("float"):
        raise Unsupported(f"a {node.op_type} of {x.dtype}")
    axis = tuple(sorted({_axis(a, rank, node.op_type, ctx.plain) for a in axes}))
    _no_empty_extreme(x, axis, _COMPOSITE_REDUCE[node.op_type][1])
    keep = bool(node.attrs.get("keepdims", 1))
    before, reduce, after = _COMPOSITE_REDUCE[node.op_type]
    if after == "logsumexp":
        top = ctx.add("reduce_max", [x], {"axis": axis, "keepdims": True}, node, "max", outputs=[""]).outputs[0]
        shifted = ctx.add("subtract", [x, top], {}, node, "shifted", outputs=[""]).outputs[0]
        exp = ctx.add("exp", [shifted], {}, node, "exp", outputs=[""]).outputs[0]
        total = ctx.add("reduce_sum", [exp], {"axis": axis, "keepdims": True}, node, "sum", outputs=[""]).outputs[0]
        log = ctx.add("log", [total], {}, node, "log", outputs=[""]).outputs[0]
        out = ctx.add("add", [log, top], {}, node, "logsumexp", outputs=[""] if not keep else None).outputs[0]
        if not keep:
            ctx.add("squeeze", [out], {"axis": axis}, node, "logsumexp")
        return
    v = x
    if before:
        v = ctx.add(before, [v], {}, node, before, outputs=[""]).outputs[0]
    v = ctx.add(reduce, [v], {"axis": axis, "keepdims": keep}, node, "reduce", outputs=[""] if after else None)
    if after:
        ctx.add(after, [v.outputs[0]], {}, node, after)


@converter("ThresholdedRelu", ops=("greater", "where"))
def thresholded_relu(ctx: Context, node: ONode) -> None:
    """x where x > alpha, else 0 (exactly: Keras' ReLU(threshold) keeps x == alpha)."""
    x = ctx.value(node.inputs[0])
    alpha = _f32(node.attrs.get("alpha", 1.0))
    above = ctx.add("greater", [x, ctx.scalar(alpha, node)], {}, node, "above", outputs=[""]).outputs[0]
    ctx.add("where", [above, x, ctx.scalar(0.0, node)], {}, node, "thresholded_relu")


@converter("Shrink", ops=("greater", "less", "add", "subtract", "where"))
def shrink(ctx: Context, node: ONode) -> None:
    """x - bias above lambd, x + bias below -lambd, 0 between."""
    x = ctx.value(node.inputs[0])
    if not x.dtype.startswith("float"):
        raise Unsupported(f"a Shrink of {x.dtype}")
    lambd, bias = _f32(node.attrs.get("lambd", 0.5)), _f32(node.attrs.get("bias", 0.0))

    def add(op, ins, hint):
        return ctx.add(op, ins, {}, node, hint, outputs=[""]).outputs[0]

    high = add("greater", [x, ctx.scalar(lambd, node)], "above")
    low = add("less", [x, ctx.scalar(-lambd, node)], "below")
    down = add("subtract", [x, ctx.scalar(bias, node)], "down")
    up = add("add", [x, ctx.scalar(bias, node)], "up")
    inner = add("where", [low, up, ctx.scalar(0.0, node)], "inner")
    ctx.add("where", [high, down, inner], {}, node, "shrink")


@converter("Celu", ops=("multiply", "elu"))
def celu(ctx: Context, node: ONode) -> None:
    """celu(x, alpha) = alpha * elu(x / alpha)."""
    x = ctx.value(node.inputs[0])
    alpha = _f32(node.attrs.get("alpha", 1.0))
    if alpha == 1.0:
        ctx.add("elu", [x], {"alpha": 1.0}, node, "celu")
        return
    scaled = ctx.add("multiply", [x, ctx.scalar(_f32(1.0 / alpha), node)], {}, node, "scaled", outputs=[""])
    elu = ctx.add("elu", [scaled.outputs[0]], {"alpha": 1.0}, node, "elu", outputs=[""])
    ctx.add("multiply", [ctx.scalar(alpha, node), elu.outputs[0]], {}, node, "celu")


@converter("Mish", ops=("softplus", "tanh", "multiply"))
def mish(ctx: Context, node: ONode) -> None:
    """x * tanh(softplus(x))."""
    x = ctx.value(node.inputs[0])
    soft = ctx.add("softplus", [x], {}, node, "softplus", outputs=[""]).outputs[0]
    tanh = ctx.add("tanh", [soft], {}, node, "tanh", outputs=[""]).outputs[0]
    ctx.add("multiply", [x, tanh], {}, node, "mish")


@converter("IsNaN", ops=("not_equal",))
def is_nan(ctx: Context, node: ONode) -> None:
    """NaN is the one value unequal to itself."""
    x = ctx.value(node.inputs[0])
    ctx.add("not_equal", [x, x], {}, node, "is_nan")


@converter("InstanceNormalization", ops=("group_norm",))
def instance_norm(ctx: Context, node: ONode) -> None:
    """Each channel over its spatial axes: a group norm with one channel per group."""
    x = ctx.value(node.inputs[0])
    if len(x.shape) < 3 or x.shape[1] is None:
        raise Unsupported(f"an instance normalization of a {x.shape} tensor")
    scale, bias = ctx.const(node.inputs[1]), ctx.const(node.inputs[2])
    if scale is None or bias is None:
        raise Unsupported("a scale or bias computed at run time")
    channels = x.shape[1]
    ctx.add("group_norm", [x], {"groups": channels, "axis": 1, "epsilon": _f32(node.attrs.get("epsilon", 1e-5))},
            node, "instance_norm", params={"gamma": scale.reshape(-1), "beta": bias.reshape(-1)},
            weight=node.inputs[1])


# long: ONNX's training-mode formula, one ops-table node per step (statistics, output, running values)
def batch_norm_training(ctx: Context, node: ONode, x) -> None:
    """BatchNormalization with training_mode=1: normalised with the statistics of this batch
    (the mean and population variance over every axis but the channels'), and the running
    statistics ``mean * momentum + current * (1 - momentum)`` as the optional outputs. Its
    reductions run over the first axis: a graph without a batch axis."""
    if not ctx.plain:
        raise BatchAxis("training_mode=1 (statistics over the batch axis)")
    from transpiler.frontend_onnx.converters import _const_input

    rank = len(x.shape)
    if rank < 2 or not x.dtype.startswith("float"):
        raise Unsupported(f"training-mode statistics of a {x.dtype} tensor of rank {rank}")
    scale, bias, mean, var = (_const_input(ctx, node, i, w).astype(np.float32) for i, w in
                              enumerate(("scale", "B", "mean", "var"), start=1))
    epsilon = _f32(node.attrs.get("epsilon", 1e-5))
    momentum = _f32(node.attrs.get("momentum", 0.9))
    axes = tuple(a for a in range(rank) if a != 1)
    per_channel = (x.shape[1],) + (1,) * (rank - 2)

    def held(value: np.ndarray, hint: str):  # (named by hint: a weight named "mean" meets keras.ops.mean's)
        return ctx.add("variable", [], {"shape": tuple(int(d) for d in value.shape), "trainable": False}, node,
                       hint, params={"value": value}, outputs=[""]).outputs[0]

    def step(op: str, inputs: list, hint: str, attrs: dict | None = None, outputs=None):
        return ctx.add(op, inputs, attrs or {}, node, hint, outputs=[""] if outputs is None else outputs).outputs[0]

    stats = {"axis": axes, "keepdims": True}
    current = step("reduce_mean", [x], "batch_mean", stats)
    centred = step("subtract", [x, current], "centred")
    variance = step("reduce_mean", [step("square", [centred], "square")], "batch_var", stats)
    shifted = step("add", [variance, ctx.scalar(epsilon, node)], "shifted")
    normed = step("multiply", [centred, step("rsqrt", [shifted], "inv_std")], "normed")
    scaled = step("multiply", [normed, held(scale.reshape(per_channel), "bn_scale")], "scaled")
    step("add", [scaled, held(bias.reshape(per_channel), "bn_bias")], "bn", outputs=node.outputs[:1])
    for i, (stat, given) in enumerate(((current, mean), (variance, var)), start=1):
        name = node.outputs[i] if len(node.outputs) > i else ""
        if not name or not (ctx.consumers(name) or name in ctx.og.outputs):
            continue
        flat = step("squeeze", [stat], "stat", {"axis": axes})
        kept = step("multiply", [flat, ctx.scalar(_f32(1.0 - momentum), node)], "new_part")
        step("add", [held(given * np.float32(momentum), "running_part"), kept], "running",
             outputs=[name])

