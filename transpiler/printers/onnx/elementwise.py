"""Emitters of activations, element-wise math, reductions and normalisations."""

from __future__ import annotations

import numpy as np

from transpiler.printers.onnx.builder import Context, Unsupported, emitter, ints

_UNARY = {"abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "negative": "Neg", "sigmoid": "Sigmoid",
          "tanh": "Tanh", "softplus": "Softplus", "softsign": "Softsign", "selu": "Selu", "hard_silu": "HardSwish",
          "floor": "Floor", "sin": "Sin", "cos": "Cos"}
_BINARY = {"divide": "Div", "power": "Pow", "equal": "Equal", "greater": "Greater",
           "greater_equal": "GreaterOrEqual", "less": "Less", "less_equal": "LessOrEqual", "matmul": "MatMul"}
_VARIADIC = {"add": "Add", "multiply": "Mul", "maximum": "Max", "minimum": "Min"}
_DTYPES = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "bool": 9, "float16": 10,
           "float64": 11, "bfloat16": 16}


def _scalar(ctx: Context, value: float, what: str) -> str:
    return ctx.b.const(np.asarray(value, np.float32), f"{ctx.hint}.{what}")


@emitter(*_UNARY)
def unary(ctx: Context) -> list:
    return [ctx.b.one(_UNARY[ctx.node.op], [ctx.inputs[0]], ctx.hint)]


@emitter(*_BINARY)
def binary(ctx: Context) -> list:
    return [ctx.b.one(_BINARY[ctx.node.op], ctx.inputs[:2], ctx.hint)]


@emitter("not_equal")
def not_equal(ctx: Context) -> list:
    return [ctx.b.one("Not", [ctx.b.one("Equal", ctx.inputs[:2], ctx.hint)], ctx.hint)]


@emitter(*_VARIADIC)
def variadic(ctx: Context) -> list:
    op = _VARIADIC[ctx.node.op]
    y = ctx.inputs[0]
    for other in ctx.inputs[1:]:
        y = ctx.b.one(op, [y, other], ctx.hint)
    return [y]


@emitter("subtract")
def subtract(ctx: Context) -> list:
    return [ctx.b.one("Sub", ctx.inputs[:2], ctx.hint)]


@emitter("average")
def average(ctx: Context) -> list:
    return [ctx.b.one("Mean", ctx.inputs, ctx.hint)]


@emitter("square")
def square(ctx: Context) -> list:
    return [ctx.b.one("Mul", [ctx.inputs[0], ctx.inputs[0]], ctx.hint)]


@emitter("rsqrt")
def rsqrt(ctx: Context) -> list:
    return [ctx.b.one("Reciprocal", [ctx.b.one("Sqrt", [ctx.inputs[0]], ctx.hint)], ctx.hint)]


@emitter("where")
def where(ctx: Context) -> list:
    return [ctx.b.one("Where", ctx.inputs[:3], ctx.hint)]


@emitter("training_select")
def training_select(ctx: Context) -> list:
    return [ctx.inputs[1]]  # (inference)


@emitter("cast")
def cast(ctx: Context) -> list:
    dtype = ctx.node.attrs["dtype"]
    if dtype not in _DTYPES:
        raise Unsupported(f"cast to {dtype!r}")
    return [ctx.b.one("Cast", [ctx.inputs[0]], ctx.hint, to=_DTYPES[dtype])]


@emitter("clip")
def clip(ctx: Context) -> list:
    a = ctx.node.attrs
    lo = _scalar(ctx, a["min"], "min") if a["min"] is not None else ""
    hi = _scalar(ctx, a["max"], "max") if a["max"] is not None else ""
    return [ctx.b.one("Clip", [ctx.inputs[0], lo, hi], ctx.hint)]


@emitter("constant")
def constant(ctx: Context) -> list:
    value = np.asarray(ctx.node.attrs["value"])
    if value.dtype == object:
        raise Unsupported("a constant that is not an array of numbers")
    return [ctx.b.const(value, f"{ctx.hint}.value", np.float32 if value.dtype.kind == "f" else None)]


# ---------------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------------
@emitter("relu")
def relu(ctx: Context) -> list:
    a, x, b = ctx.node.attrs, ctx.inputs[0], ctx.b
    if a["threshold"]:
        raise Unsupported("relu with a threshold")
    slope, cap = a["negative_slope"], a["max_value"]
    y = b.one("LeakyRelu", [x], ctx.hint, alpha=float(slope)) if slope else b.one("Relu", [x], ctx.hint)
    if cap is not None:
        y = b.one("Min", [y, _scalar(ctx, cap, "max_value")], ctx.hint)
    return [y]


@emitter("leaky_relu")
def leaky_relu(ctx: Context) -> list:
    return [ctx.b.one("LeakyRelu", [ctx.inputs[0]], ctx.hint, alpha=float(ctx.node.attrs["negative_slope"]))]


@emitter("elu")
def elu(ctx: Context) -> list:
    return [ctx.b.one("Elu", [ctx.inputs[0]], ctx.hint, alpha=float(ctx.node.attrs["alpha"]))]


@emitter("gelu")
def gelu(ctx: Context) -> list:
    return [ctx.b.one("Gelu", [ctx.inputs[0]], ctx.hint,
                      approximate="tanh" if ctx.node.attrs["approximate"] else None)]


@emitter("silu")
def silu(ctx: Context) -> list:
    x = ctx.inputs[0]
    return [ctx.b.one("Mul", [x, ctx.b.one("Sigmoid", [x], ctx.hint)], ctx.hint)]


@emitter("hard_sigmoid")
def hard_sigmoid(ctx: Context) -> list:
    return [ctx.b.one("HardSigmoid", [ctx.inputs[0]], ctx.hint, alpha=1.0 / 6.0, beta=0.5)]  # Keras 3's relu6(x+3)/6


@emitter("softmax", "log_softmax")
def softmax(ctx: Context) -> list:
    op = "Softmax" if ctx.node.op == "softmax" else "LogSoftmax"
    return [ctx.b.one(op, [ctx.inputs[0]], ctx.hint, axis=int(ctx.node.attrs["axis"]))]


@emitter("prelu")
def prelu(ctx: Context) -> list:
    alpha = np.asarray(ctx.params["alpha"], np.float32)
    shape = ctx.in_shape()
    channels = shape[1] if len(shape) > 1 else None
    if alpha.size == 1:
        slope = alpha.reshape(())
    elif channels is not None and alpha.size == int(channels):
        slope = alpha.reshape((-1,) + (1,) * (len(shape) - 2))
    else:
        raise Unsupported("PReLU with a slope per position (not per channel)")
    return [ctx.b.one("PRelu", [ctx.inputs[0], ctx.b.const(slope, f"{ctx.hint}.alpha")], ctx.hint)]


def _per_channel(ctx: Context, value, what: str) -> str:
    """A scalar or per-channel (axis 1) constant, shaped to broadcast against the input."""
    a = np.asarray(value, np.float32)
    rank = len(ctx.in_shape())
    if a.size > 1:
        a = a.reshape((-1,) + (1,) * (rank - 2))
    return ctx.b.const(a.reshape(()) if a.size == 1 else a, f"{ctx.hint}.{what}")


@emitter("rescaling")
def rescaling(ctx: Context) -> list:
    a, b = ctx.node.attrs, ctx.b
    y = b.one("Mul", [ctx.inputs[0], _per_channel(ctx, a["scale"], "scale")], ctx.hint)
    offset = np.asarray(a["offset"], np.float32)
    return [b.one("Add", [y, _per_channel(ctx, offset, "offset")], ctx.hint) if np.any(offset) else y]


# ---------------------------------------------------------------------------------
# reductions, joins, indexing
# ---------------------------------------------------------------------------------
_REDUCE = {"reduce_mean": "ReduceMean", "reduce_sum": "ReduceSum", "reduce_max": "ReduceMax",
           "reduce_min": "ReduceMin"}


@emitter(*_REDUCE)
def reduce(ctx: Context) -> list:
    a = ctx.node.attrs
    axes = ctx.b.ints(ints(a["axis"]), f"{ctx.hint}.axes")
    return [ctx.b.one(_REDUCE[ctx.node.op], [ctx.inputs[0], axes], ctx.hint, keepdims=int(bool(a["keepdims"])))]


@emitter("argmax", "argmin")
def argmax(ctx: Context) -> list:
    op = "ArgMax" if ctx.node.op == "argmax" else "ArgMin"
    return [ctx.b.one(op, [ctx.inputs[0]], ctx.hint, axis=int(ctx.node.attrs["axis"]),
                      keepdims=int(bool(ctx.node.attrs["keepdims"])))]


@emitter("concat")
def concat(ctx: Context) -> list:
    return [ctx.b.one("Concat", ctx.inputs, ctx.hint, axis=int(ctx.node.attrs["axis"]))]


@emitter("stack")
def stack(ctx: Context) -> list:
    axis = int(ctx.node.attrs["axis"])
    axes = ctx.b.ints([axis], f"{ctx.hint}.axes")
    parts = [ctx.b.one("Unsqueeze", [x, axes], ctx.hint) for x in ctx.inputs]
    return [ctx.b.one("Concat", parts, ctx.hint, axis=axis)]


@emitter("split")
def split(ctx: Context) -> list:
    sizes = ints(ctx.node.attrs["sizes"])
    return ctx.b.add("Split", [ctx.inputs[0], ctx.b.ints(sizes, f"{ctx.hint}.sizes")], ctx.hint, len(sizes),
                     axis=int(ctx.node.attrs["axis"]))


@emitter("expand_dims")
def expand_dims(ctx: Context) -> list:
    return [ctx.b.one("Unsqueeze", [ctx.inputs[0], ctx.b.ints([ctx.node.attrs["axis"]], f"{ctx.hint}.axes")],
                      ctx.hint)]


@emitter("squeeze")
def squeeze(ctx: Context) -> list:
    return [ctx.b.one("Squeeze", [ctx.inputs[0], ctx.b.ints(ints(ctx.node.attrs["axis"]), f"{ctx.hint}.axes")],
                      ctx.hint)]


@emitter("slice")
def slice_(ctx: Context) -> list:
    a, b = ctx.node.attrs, ctx.b
    stops = [2**62 if s is None else int(s) for s in a["stops"]]
    return [b.one("Slice", [ctx.inputs[0], b.ints(ints(a["starts"]), f"{ctx.hint}.starts"),
                            b.ints(stops, f"{ctx.hint}.ends"), b.ints(ints(a["axes"]), f"{ctx.hint}.axes"),
                            b.ints(ints(a["steps"]), f"{ctx.hint}.steps")], ctx.hint)]


@emitter("take")
def take(ctx: Context) -> list:
    indices = np.asarray(ctx.node.attrs["indices"])
    if indices.dtype.kind not in "iu":
        raise Unsupported("take with indices that are not constant integers")
    return [ctx.b.one("Gather", [ctx.inputs[0], ctx.b.const(indices, f"{ctx.hint}.indices")], ctx.hint,
                      axis=int(ctx.node.attrs["axis"]))]


@emitter("einsum")
def einsum(ctx: Context) -> list:
    return [ctx.b.one("Einsum", ctx.inputs, ctx.hint, equation=ctx.node.attrs["equation"].replace(" ", ""))]


# ---------------------------------------------------------------------------------
# normalisations
# ---------------------------------------------------------------------------------
def _axis(ctx: Context, axis: int) -> int:
    return axis % len(ctx.in_shape())


@emitter("batch_norm")
def batch_norm(ctx: Context) -> list:
    a, p, b = ctx.node.attrs, ctx.params, ctx.b
    axis = _axis(ctx, int(a["axis"]))
    n = len(p["moving_mean"])
    gamma = p.get("gamma", np.ones(n, np.float32))
    beta = p.get("beta", np.zeros(n, np.float32))
    if axis == 1:
        names = [b.const(v, f"{ctx.hint}.{k}") for k, v in
                 (("scale", gamma), ("bias", beta), ("mean", p["moving_mean"]), ("var", p["moving_variance"]))]
        return [b.one("BatchNormalization", [ctx.inputs[0]] + names, ctx.hint, epsilon=float(a["epsilon"]))]
    # another axis: the same affine map, folded into one scale and shift along that axis
    scale = gamma / np.sqrt(np.asarray(p["moving_variance"], np.float64) + float(a["epsilon"]))
    shift = beta - np.asarray(p["moving_mean"], np.float64) * scale
    shape = [1] * len(ctx.in_shape())
    shape[axis] = n
    y = b.one("Mul", [ctx.inputs[0], b.const(scale.reshape(shape[1:]), f"{ctx.hint}.scale")], ctx.hint)
    return [b.one("Add", [y, b.const(shift.reshape(shape[1:]), f"{ctx.hint}.shift")], ctx.hint)]


@emitter("layer_norm")
def layer_norm(ctx: Context) -> list:
    a, p, b = ctx.node.attrs, ctx.params, ctx.b
    rank = len(ctx.in_shape())
    axes = sorted(_axis(ctx, int(x)) for x in a["axis"])
    if axes != list(range(axes[0], rank)):
        raise Unsupported("layer normalisation over axes that are not the last ones")
    normalized = [int(d) for d in ctx.in_shape()[axes[0]:]]
    size = int(np.prod(normalized))
    gamma = np.asarray(p.get("gamma", np.ones(size, np.float32))).reshape(normalized)
    inputs = [ctx.inputs[0], b.const(gamma, f"{ctx.hint}.scale")]
    if "beta" in p:
        inputs.append(b.const(np.asarray(p["beta"]).reshape(normalized), f"{ctx.hint}.bias"))
    return [b.one("LayerNormalization", inputs, ctx.hint, axis=axes[0], epsilon=float(a["epsilon"]))]


@emitter("rms_norm")
def rms_norm(ctx: Context) -> list:
    a, p, b = ctx.node.attrs, ctx.params, ctx.b
    x = ctx.inputs[0]
    axes = b.ints(sorted(_axis(ctx, int(v)) for v in a["axis"]), f"{ctx.hint}.axes")
    ms = b.one("ReduceMean", [b.one("Mul", [x, x], ctx.hint), axes], ctx.hint, keepdims=1)
    inv = b.one("Reciprocal", [b.one("Sqrt", [b.one("Add", [ms, _scalar(ctx, a["epsilon"], "epsilon")], ctx.hint)],
                                     ctx.hint)], ctx.hint)
    y = b.one("Mul", [x, inv], ctx.hint)
    if "gamma" in p:
        y = b.one("Mul", [y, b.const(p["gamma"], f"{ctx.hint}.scale")], ctx.hint)
    return [y]


@emitter("group_norm")
def group_norm(ctx: Context) -> list:
    a, p, b = ctx.node.attrs, ctx.params, ctx.b
    shape = ctx.in_shape()
    if _axis(ctx, int(a["axis"])) != 1:
        raise Unsupported("group normalisation over an axis other than the channels")
    groups, channels = int(a["groups"]), int(shape[1])
    x = ctx.inputs[0]
    grouped = b.one("Reshape", [x, b.ints([0, groups, -1], f"{ctx.hint}.groups")], ctx.hint)
    axes = b.ints([2], f"{ctx.hint}.axes")
    mean = b.one("ReduceMean", [grouped, axes], ctx.hint, keepdims=1)
    centred = b.one("Sub", [grouped, mean], ctx.hint)
    var = b.one("ReduceMean", [b.one("Mul", [centred, centred], ctx.hint), axes], ctx.hint, keepdims=1)
    std = b.one("Sqrt", [b.one("Add", [var, _scalar(ctx, a["epsilon"], "epsilon")], ctx.hint)], ctx.hint)
    normed = b.one("Div", [centred, std], ctx.hint)
    y = b.one("Reshape", [normed, b.one("Shape", [x], ctx.hint)], ctx.hint)
    tail = (1,) * (len(shape) - 2)
    if "gamma" in p:
        y = b.one("Mul", [y, b.const(np.asarray(p["gamma"]).reshape((channels,) + tail), f"{ctx.hint}.scale")],
                  ctx.hint)
    if "beta" in p:
        y = b.one("Add", [y, b.const(np.asarray(p["beta"]).reshape((channels,) + tail), f"{ctx.hint}.bias")],
                  ctx.hint)
    return [y]


@emitter("fft2")
def fft2(ctx: Context) -> list:
    """The 2-D DFT over the last two axes: ONNX's DFT reads a complex tensor as a trailing axis of
    (real, imag), so the parts are stacked on a new last axis, transformed over the two axes
    before it (one DFT each), and split again."""
    b, hint = ctx.b, ctx.hint
    last = b.ints([-1], f"{hint}.complex_axis")
    parts = [b.one("Unsqueeze", [x, last], f"{hint}_{name}") for x, name in zip(ctx.inputs[:2], ("real", "imag"))]
    y = b.one("Concat", parts, f"{hint}_complex", axis=-1)
    for axis in (-2, -3):  # (the signal's last axis, then the one before it; -1 is the complex axis)
        y = b.one("DFT", [y, "", b.scalar_int(axis, f"{hint}.axis")], f"{hint}_dft")
    halves = b.add("Split", [y], f"{hint}_parts", n_out=2, axis=-1, num_outputs=2)
    return [b.one("Squeeze", [h, last], f"{hint}_{name}") for h, name in zip(halves, ("real", "imag"))]
