"""One converter per ONNX op type: ONNX node → ops-table nodes (opset 9 to current).

Weights are constants (initializers or folded subgraphs) converted here into the canonical
layouts of ``ir/params.py``: a Conv weight ``(O, I/g, kH, kW)`` becomes ``kernel: HWIO``, a
Gemm ``B`` (transposed when ``transB``) becomes ``kernel: IO``. Layer patterns are recovered
where a converter sees them: MatMul followed by the Add of a bias is one Dense; a Mul/Add/Sub/Div
of a per-channel constant is a per-channel affine (``fuse.py`` folds it into the BatchNorm,
Conv or Dense before it); ``Reshape``/``Flatten`` to (N, -1) is a Flatten.
"""

from __future__ import annotations

import math

import numpy as np

from transpiler.frontend_onnx.loader import BATCH, ONode
from transpiler.frontend_onnx.reader import BatchAxis, Context, Unsupported, converter
from transpiler.ir.layout import CHANNELS_FIRST, is_channels_first
from transpiler.ir.shapes import conv_out_size

from transpiler.frontend_onnx.recurrent import view_reshape, view_squeeze, view_transpose  # noqa: E402,F401
from transpiler.frontend_onnx.plain import _all_axes, _no_empty_extreme, _plain_reshape, _vector_matmul  # noqa: E402,F401


# ---------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------
def _const_input(ctx: Context, node: ONode, i: int, what: str) -> np.ndarray:
    if i >= len(node.inputs) or not node.inputs[i]:
        raise Unsupported(f"{what} is missing")
    c = ctx.const(node.inputs[i])
    if c is None:
        raise Unsupported(f"{what} ({node.inputs[i]!r}) is computed at run time; only constant {what}s are read")
    return c


def _optional_const(ctx: Context, node: ONode, i: int, attr: str | None = None, default=None):
    """An operand given as an attribute in early opsets and as a constant input later."""
    if attr is not None and attr in node.attrs:
        return node.attrs[attr]
    if i < len(node.inputs) and node.inputs[i]:
        c = ctx.const(node.inputs[i])
        if c is None:
            raise Unsupported(f"input {i} ({node.inputs[i]!r}) is computed at run time")
        return c
    return default


def _f32(v) -> float:
    """An ONNX float attribute (float32) as the number it was written as (1e-3, not
    0.0010000000474974513)."""
    return float(str(np.float32(v)))


def _ints(v) -> tuple[int, ...]:
    return tuple(int(x) for x in np.asarray(v).reshape(-1))


def _spatial_padding(ctx: Context, node: ONode, in_shape: tuple, kernel: tuple, strides: tuple,
                     dilations: tuple) -> tuple:
    """ONNX ``pads``/``auto_pad`` → ``((before, after), ...)`` per spatial axis."""
    rank = len(kernel)
    auto = ctx.attr(node, "auto_pad", "NOTSET")
    if auto == "VALID":
        return tuple((0, 0) for _ in range(rank))
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for size, k, s, d in zip(in_shape[2:], kernel, strides, dilations):
            if size is None:
                raise Unsupported(f"auto_pad={auto} on a spatial size known only at run time")
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            out.append((small, big) if auto == "SAME_UPPER" else (big, small))
        return tuple(out)
    pads = node.attrs.get("pads") or [0] * (2 * rank)
    return tuple((int(pads[i]), int(pads[i + rank])) for i in range(rank))


def _ir_padding(pairs: tuple):
    return "valid" if not any(a or b for a, b in pairs) else pairs


def _axis(axis: int, rank: int, what: str, plain: bool = False) -> int:
    """``axis`` counted from 0; the first axis only in a graph without a batch axis."""
    a = axis % max(rank, 1)
    if a == 0 and not plain:
        raise BatchAxis(f"{what} over the batch axis is not supported")
    return a


# ---------------------------------------------------------------------------------
# convolutions and dense layers
# ---------------------------------------------------------------------------------
@converter("Conv", ops=("conv1d", "conv2d", "conv3d", "depthwise_conv2d"))
def conv(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    w = _const_input(ctx, node, 1, "weight")
    b = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if len(node.inputs) > 2 and node.inputs[2] and b is None:
        raise Unsupported("a bias computed at run time")
    rank = w.ndim - 2
    if rank not in (1, 2, 3) or len(x.shape) != rank + 2:
        raise Unsupported(f"a {rank}-D convolution on a {len(x.shape)}-D tensor")
    kernel = tuple(node.attrs.get("kernel_shape") or w.shape[2:])
    strides = tuple(node.attrs.get("strides") or (1,) * rank)
    dilations = tuple(node.attrs.get("dilations") or (1,) * rank)
    group = int(node.attrs.get("group", 1))
    pads = _spatial_padding(ctx, node, x.shape, kernel, strides, dilations)
    cout, cin_g = w.shape[:2]
    cin = x.shape[1]
    attrs = {"kernel_size": kernel, "strides": strides, "padding": _ir_padding(pads), "dilation": dilations,
             "use_bias": b is not None}
    params = {}
    if rank == 2 and group > 1 and group == cin and cin_g == 1 and cout % cin == 0:
        mult = cout // cin
        params["kernel"] = w.reshape(cin, mult, *kernel).transpose(2, 3, 0, 1)  # HWIM
        op = "depthwise_conv2d"
        attrs["depth_multiplier"] = mult
    else:
        if cin_g * group != cin:
            raise Unsupported(f"weight {w.shape} with group={group} on {cin} input channels")
        params["kernel"] = np.transpose(w, (*range(2, 2 + rank), 1, 0))  # (spatial..., I, O)
        op = f"conv{rank}d"
        attrs.update(filters=int(cout), groups=group)
    if b is not None:
        params["bias"] = b.reshape(-1)
    ctx.add(op, [x], attrs, node, "conv", params=params, weight=node.inputs[1])


@converter("ConvTranspose", ops=("conv_transpose1d", "conv_transpose2d"))
def conv_transpose(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    w = _const_input(ctx, node, 1, "weight")
    b = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    rank = w.ndim - 2
    if rank not in (1, 2):
        raise Unsupported(f"a {rank}-D transposed convolution")
    if int(node.attrs.get("group", 1)) != 1:
        raise Unsupported(f"a grouped transposed convolution (group={node.attrs['group']})")
    kernel = tuple(node.attrs.get("kernel_shape") or w.shape[2:])
    strides = tuple(node.attrs.get("strides") or (1,) * rank)
    dilations = tuple(node.attrs.get("dilations") or (1,) * rank)
    out_pad = tuple(node.attrs.get("output_padding") or (0,) * rank)
    pads = _transposed_padding(ctx, node, x.shape[2:], kernel, strides, dilations, out_pad)
    # the cropping (start, end) as symmetric padding and an output_padding that gives the end back
    out_pad = tuple(op + a - c for op, (a, c) in zip(out_pad, pads))
    if any(not 0 <= op < max(st, d) for op, st, d in zip(out_pad, strides, dilations)):
        raise Unsupported(f"pads {pads} crop more at the end than at the start beyond what output_padding "
                          "can give back")
    pads = tuple((a, a) for a, _ in pads)
    attrs = {"filters": int(w.shape[1]), "kernel_size": kernel, "strides": strides,
             "padding": pads, "dilation": dilations, "output_padding": out_pad, "use_bias": b is not None}
    params = {"kernel": np.transpose(w, (*range(2, 2 + rank), 1, 0))}  # (spatial..., O, I)
    if b is not None:
        params["bias"] = b.reshape(-1)
    ctx.add(f"conv_transpose{rank}d", [x], attrs, node, "conv_transpose", params=params, weight=node.inputs[1])


def _transposed_padding(ctx: Context, node: ONode, sizes: tuple, kernel: tuple, strides: tuple, dilations: tuple,
                        out_pad: tuple) -> tuple:
    """A ConvTranspose's (start, end) cropping per spatial axis: its explicit pads, or the
    ones its ``output_shape`` / ``auto_pad`` SAME_* call for (ONNX's total_padding, split with
    the larger part at the end for SAME_UPPER, at the start otherwise)."""
    auto = ctx.attr(node, "auto_pad", "NOTSET")
    target = node.attrs.get("output_shape")
    if target is None and auto not in ("SAME_UPPER", "SAME_LOWER"):
        if auto == "VALID":
            return tuple((0, 0) for _ in kernel)
        pads = node.attrs.get("pads") or [0] * (2 * len(kernel))
        return tuple((int(pads[i]), int(pads[i + len(kernel)])) for i in range(len(kernel)))
    if any(s is None for s in sizes):
        raise Unsupported("output_shape / auto_pad on a spatial size known only at run time")
    target = tuple(target)[-len(kernel):] if target is not None else tuple(n * s for n, s in zip(sizes, strides))
    out = []
    for n, k, s, d, op, t in zip(sizes, kernel, strides, dilations, out_pad, target):
        total = s * (n - 1) + op + (k - 1) * d + 1 - int(t)
        start = total // 2 if auto == "SAME_UPPER" else total - total // 2
        if start < 0:
            raise Unsupported(f"output_shape {tuple(target)} larger than the transposed convolution gives")
        out.append((start, total - start))
    return tuple(out)


@converter("Gemm", ops=("dense", "transpose", "variable", "add"))
def gemm(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    if int(node.attrs.get("transA", 0)):
        if not ctx.plain:
            raise BatchAxis("transA=1 (A's first axis is not its rows)")
        x = ctx.add("transpose", [x], {"perm": (1, 0)}, node, "transpose_a", outputs=[""]).outputs[0]
    w = _const_input(ctx, node, 1, "B")
    if len(x.shape) != 2 or w.ndim != 2:
        raise Unsupported(f"Gemm of {x.shape} and {w.shape}")
    alpha, beta = float(node.attrs.get("alpha", 1.0)), float(node.attrs.get("beta", 1.0))
    kernel = w.T if int(node.attrs.get("transB", 0)) else w  # (a view: no copy of a large matrix)
    if alpha != 1.0:
        kernel = kernel * np.float32(alpha)
    units = kernel.shape[1]
    params = {"kernel": kernel}
    c = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if len(node.inputs) > 2 and node.inputs[2] and c is None:
        raise Unsupported("C computed at run time")
    if c is not None and ctx.plain and not (c.size in (1, units) and (c.ndim < 2 or c.shape[0] == 1)):
        # a matrix C (one value per row too): the product, then C held by the model
        y = ctx.add("dense", [x], {"units": int(units), "use_bias": False}, node, "dense", params=params,
                    weight=node.inputs[1], outputs=[""]).outputs[0]
        held = c.astype(np.float32) * np.float32(beta)
        bias = ctx.add("variable", [], {"shape": tuple(int(d) for d in held.shape), "trainable": True}, node, "c",
                       params={"value": held}, outputs=[""], weight=node.inputs[2]).outputs[0]
        ctx.add("add", [y, bias], {}, node, "add")
        return
    if c is not None:
        if c.size not in (1, units) or (c.ndim == 2 and c.shape[0] != 1):
            raise BatchAxis(f"C of shape {c.shape} is not a bias of {units} units")
        params["bias"] = np.broadcast_to(c.reshape(-1) * np.float32(beta), (units,)).copy()
    ctx.add("dense", [x], {"units": int(units), "use_bias": c is not None}, node, "dense", params=params,
            weight=node.inputs[1])


@converter("MatMul", ops=("dense", "matmul", "expand_dims", "squeeze"))
def matmul(ctx: Context, node: ONode) -> None:
    a, b = node.inputs[:2]
    w = ctx.const(b)
    if ctx.is_const(a):
        raise Unsupported("a constant left operand")
    x = ctx.value(a)
    if w is None:
        y = ctx.value(b)
        if len(x.shape) < 2 or len(y.shape) < 2:
            _vector_matmul(ctx, node, x, y)
            return
        ctx.add("matmul", [x, y], {}, node, "matmul")
        return
    if w.ndim != 2:
        raise Unsupported(f"a constant right operand of shape {w.shape}")
    units = int(w.shape[1])
    params = {"kernel": w}
    outputs = None
    user = ctx.single_consumer(node.outputs[0])
    if user is not None and user.op_type == "Add":  # MatMul + Add of a bias: one Dense
        other = user.inputs[1] if user.inputs[0] == node.outputs[0] else user.inputs[0]
        bias = ctx.const(other)
        if bias is not None and bias.size == units and bias.shape[-1] == units and bias.ndim <= 2:
            params["bias"] = bias.reshape(-1)
            outputs = user.outputs
            ctx.skip.add(user.index)
    ctx.add("dense", [x], {"units": units, "use_bias": "bias" in params}, node, "dense", params=params,
            weight=b, outputs=outputs)


# ---------------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------------
@converter("BatchNormalization", ops=("batch_norm", "reduce_mean", "subtract", "square", "add", "rsqrt",
                                          "multiply", "variable", "squeeze"))
def batch_norm(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    if int(node.attrs.get("training_mode", 0)):
        from transpiler.frontend_onnx.math_ops import batch_norm_training

        batch_norm_training(ctx, node, x)
        return
    if any(o and ctx.consumers(o) for o in node.outputs[1:]):
        raise Unsupported("the running statistics outputs (training mode) are read")
    scale, bias, mean, var = (_const_input(ctx, node, i, w) for i, w in
                              enumerate(("scale", "B", "mean", "var"), start=1))
    attrs = {"axis": 1, "epsilon": _f32(node.attrs.get("epsilon", 1e-5)),
             "momentum": _f32(node.attrs.get("momentum", 0.9))}
    params = {"gamma": scale.reshape(-1), "beta": bias.reshape(-1), "moving_mean": mean.reshape(-1),
              "moving_variance": var.reshape(-1)}
    ctx.add("batch_norm", [x], attrs, node, "bn", params=params, weight=node.inputs[1])


@converter("LRN", ops=("square", "conv2d", "add", "power", "divide"))
def lrn(ctx: Context, node: ONode) -> None:
    """Local response normalisation, decomposed into ops every target has:
    x / (bias + alpha / size * (sum of x² over a window of ``size`` channels)) ** beta, the
    window sum a 1x1 convolution of x² with a fixed banded kernel (already times alpha/size)."""
    x = ctx.value(node.inputs[0])
    if len(x.shape) != 4 or not is_channels_first(x.layout):
        raise Unsupported(f"LRN on a {x.shape} tensor")
    size = int(node.attrs["size"])
    alpha, beta, bias = (_f32(node.attrs.get(k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    channels = x.shape[1]
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    offset = np.arange(channels)[:, None] - np.arange(channels)[None, :]  # input - output channel
    band = ((offset >= -lo) & (offset <= hi)).astype(np.float32) * np.float32(alpha / size)
    base = ctx.name_for(node, "lrn")
    ctx.taken.discard(base)
    sq = ctx.add("square", [x], {}, node, "square", name=f"{base}_square", outputs=[]).outputs[0]
    window = ctx.add("conv2d", [sq], {"filters": channels, "kernel_size": (1, 1), "use_bias": False}, node,
                     "window", name=f"{base}_window", outputs=[], params={"kernel": band.reshape(1, 1, channels, channels)},
                     frozen=True)
    window.comments.append(f"# LRN(size={size}, alpha={alpha:g}, beta={beta:g}, bias={bias:g}): x / (bias + "
                           "alpha / size * sum of x² over neighbouring channels) ** beta; the sum is this 1x1 "
                           "convolution with a fixed banded kernel")
    shifted = ctx.add("add", [window.outputs[0], ctx.scalar(bias, node)], {}, node, "shift", name=f"{base}_shift",
                      outputs=[]).outputs[0]
    denom = ctx.add("power", [shifted, ctx.scalar(beta, node)], {}, node, "power", name=f"{base}_power", outputs=[]).outputs[0]
    ctx.add("divide", [x, denom], {}, node, "lrn", name=base)


# ---------------------------------------------------------------------------------
# activations and element-wise ops
# ---------------------------------------------------------------------------------
_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Softplus": "softplus", "Softsign": "softsign",
          "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative", "HardSwish": "hard_silu"}


@converter(*_UNARY, ops={k: (v,) for k, v in _UNARY.items()})
def unary(ctx: Context, node: ONode) -> None:
    op = _UNARY[node.op_type]
    ctx.add(op, [ctx.value(node.inputs[0])], {}, node, op)


@converter("LeakyRelu", ops=("leaky_relu",))
def leaky_relu(ctx: Context, node: ONode) -> None:
    ctx.add("leaky_relu", [ctx.value(node.inputs[0])], {"negative_slope": _f32(node.attrs.get("alpha", 0.01))},
            node, "leaky_relu")


@converter("Elu", ops=("elu",))
def elu(ctx: Context, node: ONode) -> None:
    ctx.add("elu", [ctx.value(node.inputs[0])], {"alpha": _f32(node.attrs.get("alpha", 1.0))}, node, "elu")


@converter("Selu", ops=("selu", "elu", "multiply"))
def selu(ctx: Context, node: ONode) -> None:
    a, g = float(node.attrs.get("alpha", 1.67326319217681884765625)), float(node.attrs.get("gamma", 1.05070102214813232421875))
    if abs(a - 1.6732632) > 1e-6 or abs(g - 1.0507010) > 1e-6:
        # other constants: gamma * elu(x, alpha) (ONNX: gamma * (alpha * e^x - alpha) below 0, gamma * x above)
        elu = ctx.add("elu", [ctx.value(node.inputs[0])], {"alpha": _f32(a)}, node, "elu", outputs=[""])
        ctx.add("multiply", [ctx.scalar(_f32(g), node), elu.outputs[0]], {}, node, "selu")
        return
    ctx.add("selu", [ctx.value(node.inputs[0])], {}, node, "selu")


@converter("Gelu", ops=("gelu",))
def gelu(ctx: Context, node: ONode) -> None:
    ctx.add("gelu", [ctx.value(node.inputs[0])], {"approximate": ctx.attr(node, "approximate", "none") == "tanh"},
            node, "gelu")


@converter("HardSigmoid", ops=("hard_sigmoid", "multiply", "add", "clip"))
def hard_sigmoid(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    alpha, beta = _f32(node.attrs.get("alpha", 0.2)), _f32(node.attrs.get("beta", 0.5))
    if abs(alpha - 1 / 6) < 1e-7 and abs(beta - 0.5) < 1e-7:
        ctx.add("hard_sigmoid", [x], {}, node, "hard_sigmoid")
        return
    y = ctx.add("multiply", [x, ctx.scalar(alpha, node)], {}, node, "hard_sigmoid_scale", outputs=[]).outputs[0]
    y = ctx.add("add", [y, ctx.scalar(beta, node)], {}, node, "hard_sigmoid_shift", outputs=[]).outputs[0]
    ctx.add("clip", [y], {"min": 0.0, "max": 1.0}, node, "hard_sigmoid")


@converter("Clip", ops=("relu", "clip"))
def clip(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    lo = _optional_const(ctx, node, 1, "min")
    hi = _optional_const(ctx, node, 2, "max")
    lo = None if lo is None or float(np.asarray(lo)) <= -3.4e38 else float(np.asarray(lo))
    hi = None if hi is None or float(np.asarray(hi)) >= 3.4e38 else float(np.asarray(hi))
    if lo is not None and hi is not None and lo > hi:  # ONNX: min(max(x, lo), hi) = hi everywhere
        lo = hi
    if lo == 0.0:
        ctx.add("relu", [x], {"max_value": hi}, node, "relu6" if hi == 6.0 else "relu")
    else:
        ctx.add("clip", [x], {"min": lo, "max": hi}, node, "clip")


@converter("Softmax", "LogSoftmax", ops={"Softmax": ("softmax",), "LogSoftmax": ("log_softmax",)})
def softmax(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = int(node.attrs.get("axis", 1 if ctx.og.opset < 13 else -1)) % rank
    if ctx.og.opset < 13 and axis != rank - 1 and any(s != 1 for s in x.shape[axis + 1:]):
        raise Unsupported(f"opset {ctx.og.opset} softmax over axes {axis}.. of a rank-{rank} tensor (flattened)")
    op = "softmax" if node.op_type == "Softmax" else "log_softmax"
    ctx.add(op, [x], {"axis": _axis(axis, rank, op, ctx.plain)}, node, op)


@converter("Identity", ops=())
def identity(ctx: Context, node: ONode) -> None:
    ctx.bind(node.outputs[0], ctx.value(node.inputs[0]))


@converter("Dropout", ops=("dropout", "full_like"))
def dropout(ctx: Context, node: ONode) -> None:
    """Inference-mode dropout (the identity; its mask all true). Training mode is read only
    with a ratio of 0, which drops nothing (a random mask cannot be reproduced)."""
    x = ctx.value(node.inputs[0])
    rate = float(np.asarray(_optional_const(ctx, node, 1, "ratio", 0.5)))
    if len(node.inputs) > 2 and node.inputs[2]:
        training = ctx.const(node.inputs[2])
        if training is None or (bool(np.asarray(training)) and rate != 0.0):
            raise Unsupported("training_mode is on (its random mask cannot be reproduced)")
    ctx.add("dropout", [x], {"rate": _f32(rate)}, node, "dropout", outputs=node.outputs[:1])
    mask = node.outputs[1] if len(node.outputs) > 1 else ""
    if mask and (ctx.consumers(mask) or mask in ctx.og.outputs):
        ctx.add("full_like", [x], {"value": 1.0, "dtype": "bool"}, node, "mask", outputs=[mask])


_BINARY = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Pow": "power"}


@converter(*_BINARY, ops={k: (v, "batch_norm", "variable") for k, v in _BINARY.items()})
def binary(ctx: Context, node: ONode) -> None:
    op = _BINARY[node.op_type]
    a, b = node.inputs[:2]
    ints = [ctx.values[i].dtype for i in (a, b) if i in ctx.values and ctx.values[i].dtype.startswith(("int", "uint"))]
    if op == "divide" and ints:
        _integer_divide(ctx, node, ints[0])
        return
    ca, cb = ctx.const(a), ctx.const(b)
    if ca is None and cb is None:
        ctx.add(op, [ctx.value(a), ctx.value(b)], {}, node, op)
        return
    if ca is not None and cb is not None:
        raise Unsupported("two constant operands (not folded)")
    x = ctx.value(b if ca is not None else a)
    c = ca if ca is not None else cb
    if c.size == 1:
        k = ctx.scalar(float(c.reshape(())), node)
        ctx.add(op, [k, x] if ca is not None else [x, k], {}, node, op)
        return
    _affine(ctx, node, op, x, c, const_first=ca is not None)


#: integer types whose every value (and quotient) float64 holds exactly
_EXACT_IN_FLOAT64 = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def _integer_divide(ctx: Context, node: ONode, dtype: str) -> None:
    """ONNX's integer Div truncates toward zero (C's ``/``): the quotient of the operands in
    float64 cast back (the table's cast truncates), exact for types of at most 32 bits."""
    if dtype not in _EXACT_IN_FLOAT64:
        raise Unsupported(f"integer division of {dtype} (exact through float64 only up to 32 bits)")
    operands = []
    for i, name in enumerate(node.inputs[:2]):
        c = ctx.const(name)
        if c is not None:
            if c.size != 1:
                raise Unsupported(f"integer division by a constant of shape {c.shape}")
            operands.append(ctx.scalar(float(c.reshape(())), node))
            continue
        wide = ctx.add("cast", [ctx.value(name)], {"dtype": "float64"}, node, "cast", outputs=[""])
        operands.append(wide.outputs[0])
    quotient = ctx.add("divide", operands, {}, node, "divide", outputs=[""])
    ctx.add("cast", [quotient.outputs[0]], {"dtype": dtype}, node, "trunc")


def _held_constant(ctx: Context, node: ONode, op: str, x, c: np.ndarray, const_first: bool) -> bool:
    """``x (op) c`` with ``c`` a whole tensor the model holds (a learned position embedding
    added to a sequence): the constant as a weight of the module (the ops table's ``variable``),
    when it broadcasts over the batch and ``x`` is in no layout a target changes."""
    rank = len(x.shape)
    if c.ndim >= rank or is_channels_first(x.layout) or np.dtype(c.dtype).kind != "f":
        return False
    tail = tuple(x.shape[rank - c.ndim:])
    if any(d is not None and s not in (1, d) for s, d in zip(c.shape, tail)):
        return False
    held = ctx.add("variable", [], {"shape": tuple(int(d) for d in c.shape), "trainable": True}, node, "constant",
                   params={"value": c}, outputs=[""], weight=node.inputs[0 if const_first else 1])
    operands = [held.outputs[0], x] if const_first else [x, held.outputs[0]]
    ctx.add(op, operands, {}, node, op)
    return True


def _affine(ctx: Context, node: ONode, op: str, x, c: np.ndarray, const_first: bool) -> None:
    """x (op) c with c one number per channel (axis 1): a per-channel scale and shift."""
    rank = len(x.shape)
    channels = x.shape[1]
    shape = (1,) * (rank - c.ndim) + tuple(c.shape)
    if len(shape) != rank or shape[1] != channels or any(s != 1 for i, s in enumerate(shape) if i != 1) or \
            not (rank == 2 or is_channels_first(x.layout)):
        if _held_constant(ctx, node, op, x, c, const_first):
            return
        raise Unsupported(f"{op} of a {x.shape} tensor and a constant of shape {c.shape} "
                          "(only scalars and per-channel constants are read)")
    c = c.reshape(-1).astype(np.float32)
    one, zero = np.ones_like(c), np.zeros_like(c)
    if op == "add":
        s, t = one, c
    elif op == "subtract":
        s, t = (-one, c) if const_first else (one, -c)
    elif op == "multiply":
        s, t = c, zero
    elif op == "divide" and not const_first:
        s, t = 1.0 / c, zero
    else:
        raise Unsupported(f"{op} with a per-channel constant {'first' if const_first else 'second'}")
    params = {"gamma": s, "beta": t, "moving_mean": zero, "moving_variance": one}
    ctx.add("batch_norm", [x], {"axis": 1, "epsilon": 0.0, "momentum": 0.9}, node, "affine", params=params,
            affine=True)


_VARIADIC = {"Sum": "add", "Max": "maximum", "Min": "minimum", "Mean": "average"}


@converter(*_VARIADIC, ops={k: (v,) for k, v in _VARIADIC.items()})
def variadic(ctx: Context, node: ONode) -> None:
    op = _VARIADIC[node.op_type]
    ins = [ctx.value(i) for i in node.inputs]
    if len(ins) == 1:
        ctx.bind(node.outputs[0], ins[0])
        return
    ctx.add(op, ins, {}, node, op)


# ---------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------
@converter("MaxPool", "AveragePool", ops={"MaxPool": ("max_pool1d", "max_pool2d", "max_pool3d", "global_max_pool2d"), "AveragePool": ("avg_pool1d", "avg_pool2d", "avg_pool3d", "pad2d", "global_avg_pool2d")})
def pool(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    if x.layout is None:  # (an integer input is not read as a feature map)
        raise Unsupported(f"a pooling of a {x.dtype} tensor")
    if len(node.outputs) > 1 and node.outputs[1] and ctx.consumers(node.outputs[1]):
        raise Unsupported("the indices output is read")
    kernel = tuple(node.attrs["kernel_shape"])
    rank = len(kernel)
    strides = tuple(node.attrs.get("strides") or (1,) * rank)
    dilations = tuple(node.attrs.get("dilations") or (1,) * rank)
    if any(d != 1 for d in dilations):
        raise Unsupported(f"dilations {dilations}")
    pads = _spatial_padding(ctx, node, x.shape, kernel, strides, dilations)
    kind = "max" if node.op_type == "MaxPool" else "avg"
    ceil = bool(node.attrs.get("ceil_mode", 0))
    if not (kind == "avg" and int(node.attrs.get("count_include_pad", 0))) and all(
            conv_out_size(n, k, s, 1, p, ceil) == 1 and b + n <= k
            for n, k, s, (b, _), p in zip(x.shape[2:], kernel, strides, pads, pads)):
        # one window over the whole map (padding left out): a global pooling
        ctx.add(f"global_{kind}_pool{rank}d", [x], {"keepdims": True}, node, "pool", outputs=node.outputs[:1])
        return
    uneven = any(b != a for b, a in pads)
    if uneven and not ceil and all(b == 0 for b, _ in pads) and all(
            conv_out_size(n, k, s, 1, p) == conv_out_size(n, k, s, 1, "valid", True)
            for n, k, s, p in zip(x.shape[2:], kernel, strides, pads)):
        # pads at the end only that make the last partial window (Caffe's pooling): ceil_mode
        pads, ceil, uneven = tuple((0, 0) for _ in pads), True, False
    if kind == "avg" and int(node.attrs.get("count_include_pad", 0)) and any(a or b for a, b in pads):
        base = ctx.name_for(node, "pool")
        ctx.taken.discard(base)
        x = ctx.add(f"pad{rank}d", [x], {"pads": pads}, node, "pad", name=f"{base}_pad", outputs=[]).outputs[0]
        pads = tuple((0, 0) for _ in range(rank))
    ctx.add(f"{kind}_pool{rank}d", [x], {"pool_size": kernel, "strides": strides, "padding": _ir_padding(pads),
                                         "ceil_mode": ceil}, node, "pool", outputs=node.outputs[:1])


@converter("GlobalAveragePool", "GlobalMaxPool", ops={"GlobalAveragePool": ("global_avg_pool1d", "global_avg_pool2d", "global_avg_pool3d"), "GlobalMaxPool": ("global_max_pool1d", "global_max_pool2d", "global_max_pool3d")})
def global_pool(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape) - 2
    kind = "avg" if node.op_type == "GlobalAveragePool" else "max"
    ctx.add(f"global_{kind}_pool{rank}d", [x], {"keepdims": True}, node, "pool")


# ---------------------------------------------------------------------------------
# shape ops
# ---------------------------------------------------------------------------------
def _flatten_or_keep(ctx: Context, node: ONode, x) -> None:
    if len(x.shape) == 2:
        ctx.bind(node.outputs[0], x)
    else:
        ctx.add("flatten", [x], {}, node, "flatten")


@converter("Flatten", ops=("flatten", "reshape", "expand_dims", "squeeze"))
def flatten(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = int(node.attrs.get("axis", 1))
    axis = axis + rank if axis < 0 else axis
    if ctx.plain:
        _plain_reshape(ctx, node, x, (math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))
        return
    if axis != 1:
        raise BatchAxis(f"axis={axis} (only the batch axis is kept)")
    _flatten_or_keep(ctx, node, x)


@converter("Reshape", ops=("flatten", "reshape", "expand_dims", "squeeze"))
def reshape(ctx: Context, node: ONode) -> None:
    target = list(_ints(node.attrs["shape"]) if "shape" in node.attrs else _ints(_const_input(ctx, node, 1, "shape")))
    if node.inputs[0] in ctx.views:
        view_reshape(ctx, node, tuple(target))
        return
    x = ctx.value(node.inputs[0])
    if ctx.plain:
        full = [x.shape[i] if s == 0 and not node.attrs.get("allowzero") else s for i, s in enumerate(target)]
        if -1 in full:
            known = math.prod(s for s in full if s != -1)
            full[full.index(-1)] = math.prod(x.shape) // known if known else 0
        if math.prod(full) != math.prod(x.shape):
            raise Unsupported(f"shape {tuple(target)} does not hold the {math.prod(x.shape)} values of {x.shape}")
        _plain_reshape(ctx, node, x, tuple(full))
        return
    file_batch = (ctx.onnx_shape(node.inputs[0]) or (None,))[0] or ctx.og.batch
    if any(s == BATCH for s in target[1:]):
        raise Unsupported("the batch size moves to another axis")
    if not target or not (target[0] in (0, -1, BATCH) or (file_batch is not None and target[0] == file_batch)):
        raise BatchAxis(f"shape {tuple(target)}: the first size must be the batch (0, -1 or {file_batch})")
    rest = [x.shape[i + 1] if s == 0 and not node.attrs.get("allowzero") else s for i, s in enumerate(target[1:])]
    if target[0] == -1 and -1 in rest:
        raise Unsupported(f"shape {tuple(target)}: two -1 sizes")
    total = math.prod(x.shape[1:])
    if -1 in rest:
        known = math.prod(s for s in rest if s != -1)
        rest[rest.index(-1)] = total // known
    if math.prod(rest) != total:
        raise BatchAxis(f"shape {tuple(target)} does not hold the {total} values of each example")
    if rest == [total]:
        _flatten_or_keep(ctx, node, x)
        return
    if tuple(rest) == tuple(x.shape[1:]):
        ctx.bind(node.outputs[0], x)
        return
    rank = len(rest) + 1
    out = ctx.add("reshape", [x], {"shape": tuple(rest)}, node, "reshape",
                  out_layout=CHANNELS_FIRST.get(rank))
    del out


@converter("Transpose", ops=("transpose",))
def transpose(ctx: Context, node: ONode) -> None:
    if node.inputs[0] in ctx.views:
        view_transpose(ctx, node, tuple(int(p) for p in node.attrs.get("perm", ())))
        return
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    perm = tuple(int(p) % rank for p in node.attrs.get("perm", range(rank - 1, -1, -1)))
    if view_transpose(ctx, node, perm):
        return
    if perm[0] != 0 and not ctx.plain:
        raise BatchAxis(f"perm {perm} moves the batch axis")
    letters = x.layout or ""
    new = "".join(letters[p] for p in perm) if len(letters) == rank else None
    layout = new if new in CHANNELS_FIRST.values() or new in ("NWC", "NHWC", "NDHWC") else CHANNELS_FIRST.get(rank)
    ctx.add("transpose", [x], {"perm": perm}, node, "permute", out_layout=layout)


@converter("Concat", ops=("concat",))
def concat(ctx: Context, node: ONode) -> None:
    ins = [ctx.value(i) for i in node.inputs if i]
    rank = len(ins[0].shape)
    if len(ins) == 1:
        ctx.bind(node.outputs[0], ins[0])
        return
    ctx.add("concat", ins, {"axis": _axis(int(node.attrs["axis"]), rank, "Concat", ctx.plain)}, node, "concat")


def _axes_operand(ctx: Context, node: ONode) -> tuple[int, ...] | None:
    if "axes" in node.attrs:
        return tuple(int(a) for a in node.attrs["axes"])
    if len(node.inputs) > 1 and node.inputs[1]:
        return _ints(_const_input(ctx, node, 1, "axes"))
    return None


@converter("Unsqueeze", ops=("expand_dims",))
def unsqueeze(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    axes = _axes_operand(ctx, node)
    rank = len(x.shape) + len(axes)
    v = x
    for i, a in enumerate(sorted(_axis(a, rank, "Unsqueeze", ctx.plain) for a in axes)):
        last = i == len(axes) - 1
        v = ctx.add("expand_dims", [v], {"axis": a}, node, "unsqueeze",
                    outputs=None if last else []).outputs[0]


@converter("Squeeze", ops=("squeeze",))
def squeeze(ctx: Context, node: ONode) -> None:
    if node.inputs[0] in ctx.views:
        view_squeeze(ctx, node, _axes_operand(ctx, node))
        return
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axes = _axes_operand(ctx, node)
    if axes is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    ctx.add("squeeze", [x], {"axis": tuple(sorted(_axis(a, rank, "Squeeze", ctx.plain) for a in axes))}, node, "squeeze")


_REDUCE = {"ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max",
           "ReduceMin": "reduce_min"}


@converter(*_REDUCE, ops={k: (v,) for k, v in _REDUCE.items()})
def reduce(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axes = _axes_operand(ctx, node)
    if axes is None or not axes:
        if node.attrs.get("noop_with_empty_axes"):
            ctx.bind(node.outputs[0], x)
            return
        axes = _all_axes(ctx, rank)
    op = _REDUCE[node.op_type]
    _no_empty_extreme(x, axes, op)
    ctx.add(op, [x], {"axis": tuple(sorted({_axis(a, rank, node.op_type, ctx.plain) for a in axes})),
                      "keepdims": bool(node.attrs.get("keepdims", 1))}, node, op)


@converter("Pad", ops=("pad1d", "pad2d", "pad3d"))
def pad(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    mode = ctx.attr(node, "mode", "constant")
    if mode != "constant":
        raise Unsupported(f"mode={mode!r}")
    pads = _ints(node.attrs["pads"] if "pads" in node.attrs else _const_input(ctx, node, 1, "pads"))
    value = _optional_const(ctx, node, 2, "value", 0.0)
    rank = len(x.shape)
    if len(node.inputs) > 3 and node.inputs[3]:  # opset 18: pads for the listed axes only
        axes = [int(a) % rank for a in _ints(_const_input(ctx, node, 3, "axes"))]
        full = [0] * (2 * rank)
        for i, a in enumerate(axes):
            full[a], full[a + rank] = pads[i], pads[i + len(axes)]
        pads = tuple(full)
    pairs = [(pads[i], pads[i + rank]) for i in range(rank)]
    if any(pairs[0]) or any(pairs[1]) or rank < 3 or not is_channels_first(x.layout):
        raise Unsupported(f"pads {pads} (only the spatial axes of a feature map are padded)")
    ctx.add(f"pad{rank - 2}d", [x], {"pads": tuple(pairs[2:]), "value": float(np.asarray(value))}, node, "pad")


@converter("Slice", ops=("slice", "take"))
def slice_(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    if "starts" in node.attrs:  # opset < 10
        starts, ends = _ints(node.attrs["starts"]), _ints(node.attrs["ends"])
        axes = _ints(node.attrs.get("axes", range(len(starts))))
        steps = (1,) * len(starts)
    else:
        starts, ends = _ints(_const_input(ctx, node, 1, "starts")), _ints(_const_input(ctx, node, 2, "ends"))
        axes = _ints(_optional_const(ctx, node, 3, default=np.arange(len(starts))))
        steps = _ints(_optional_const(ctx, node, 4, default=np.ones(len(starts))))
    out_axes, out_starts, out_stops, out_steps = [], [], [], []
    backward = []  # (axis, the indices a negative step picks: a static gather)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        axis = axis % rank
        size = x.shape[axis]
        if axis == 0 and not ctx.plain and step < 0:
            raise BatchAxis("a backward slice of the batch axis")
        if step == 0 or (step < 0 and size is None):
            raise Unsupported(f"step {step}" + (" over an axis whose size is known only at run time" if step else ""))
        if step < 0:  # (Python's slice clamps as ONNX does: start to size - 1, end to -1)
            backward.append((axis, tuple(range(*slice(start, end, step).indices(size)))))
            continue
        if axis == 0 and not ctx.plain:
            if start == 0 and end >= 2 ** 31 - 1 and step == 1:
                continue  # the whole batch
            raise BatchAxis("a slice of the batch axis")
        start, stop, _ = slice(start, end, step).indices(size)
        if (start, stop, step) == (0, size, 1):
            continue
        out_axes.append(axis)
        out_starts.append(start)
        out_stops.append(stop)
        out_steps.append(step)
    if not out_axes and not backward:
        ctx.bind(node.outputs[0], x)
        return
    if out_axes:
        x = ctx.add("slice", [x], {"axes": tuple(out_axes), "starts": tuple(out_starts), "stops": tuple(out_stops),
                                   "steps": tuple(out_steps)}, node, "slice",
                    outputs=[""] if backward else None).outputs[0]
    for i, (axis, picked) in enumerate(backward):
        if not picked:
            raise Unsupported(f"a backward slice of axis {axis} that picks nothing")
        x = ctx.add("take", [x], {"indices": picked, "axis": axis}, node, "flipped",
                    outputs=None if i == len(backward) - 1 else [""]).outputs[0]


@converter("Gather", ops=("take", "embedding"))
def gather(ctx: Context, node: ONode) -> None:
    table = ctx.const(node.inputs[0])
    if table is not None and not ctx.is_const(node.inputs[1]):
        # rows of a constant 2-D table picked by computed indices: an embedding lookup
        if table.ndim != 2 or int(node.attrs.get("axis", 0)) != 0:
            raise Unsupported(f"a lookup in a constant of shape {table.shape} along axis {node.attrs.get('axis', 0)}")
        ids = ctx.value(node.inputs[1])
        ctx.add("embedding", [ids], {"input_dim": int(table.shape[0]), "output_dim": int(table.shape[1])}, node,
                "embedding", params={"embeddings": table}, weight=node.inputs[0])
        return
    x = ctx.value(node.inputs[0])
    indices = _const_input(ctx, node, 1, "indices")
    rank = len(x.shape)
    axis = _axis(int(node.attrs.get("axis", 0)), rank, "Gather", ctx.plain)
    size = x.shape[axis]
    if indices.ndim > 1:
        raise Unsupported(f"indices of shape {indices.shape}")
    picked = int(indices) % size if indices.ndim == 0 else tuple(int(i) % size for i in indices)
    ctx.add("take", [x], {"indices": picked, "axis": axis}, node, "take")


#: ONNX TensorProto element types → IR dtypes (those both targets have)
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
           10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}


@converter("Cast", ops=("cast",))
def cast(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    dtype = _DTYPES.get(int(node.attrs["to"]))
    if dtype is None:
        raise Unsupported(f"cast to ONNX type {node.attrs['to']}")
    if dtype == x.dtype:
        ctx.bind(node.outputs[0], x)
        return
    ctx.add("cast", [x], {"dtype": dtype}, node, "cast")


@converter("Split", ops=("split",))
def split(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape)
    axis = _axis(int(node.attrs.get("axis", 0)), rank, "Split", ctx.plain)
    sizes = _optional_const(ctx, node, 1, "split")
    n = len(node.outputs)
    if sizes is None:  # equal parts; opset 18's num_outputs: the last one smaller
        size = x.shape[axis]
        chunk = -(-size // n)
        if size % n and "num_outputs" not in node.attrs:
            raise Unsupported(f"{size} does not split into {n} equal parts")
        sizes = [chunk] * (n - 1) + [size - chunk * (n - 1)]
    ctx.add("split", [x], {"sizes": _ints(sizes), "axis": axis}, node, "split", n_out=n)


@converter("Resize", "Upsample", ops=("upsample1d", "upsample2d", "take", "variable", "matmul"))
def resize(ctx: Context, node: ONode) -> None:
    """Nearest-neighbour (or half-pixel bilinear) upsampling by an integer factor per spatial
    axis; any other nearest-neighbour Resize as a static gather (``resize.py``)."""
    from transpiler.frontend_onnx.resize import resize_by_matrices, resize_nearest_by_index

    try:
        _resize_by_factor(ctx, node)
    except Unsupported:
        if node.op_type != "Resize":
            raise
        if ctx.attr(node, "mode", "nearest") == "nearest":
            resize_nearest_by_index(ctx, node)
        else:
            resize_by_matrices(ctx, node)


def _resize_by_factor(ctx: Context, node: ONode) -> None:
    x = ctx.value(node.inputs[0])
    rank = len(x.shape) - 2
    if rank not in (1, 2) or not is_channels_first(x.layout):
        raise Unsupported(f"a resize of a {x.shape} tensor")
    mode = ctx.attr(node, "mode", "nearest")
    if node.op_type == "Upsample":
        scales = node.attrs.get("scales")
        scales = _ints(np.asarray(scales)) if scales is not None else None
        if scales is None:
            scales = tuple(np.asarray(_const_input(ctx, node, 1, "scales")).tolist())
    else:
        scales = _optional_const(ctx, node, 2)
        sizes = _optional_const(ctx, node, 3)
        if (scales is None or np.size(scales) == 0) and sizes is not None and np.size(sizes):
            scales = [s / i if i else 0 for s, i in zip(_ints(sizes), (1, 1) + tuple(x.shape[2:]))]
        if scales is None or np.size(scales) == 0:
            raise Unsupported("no scales or sizes")
        scales = np.asarray(scales).reshape(-1).tolist()
        transform = ctx.attr(node, "coordinate_transformation_mode", "half_pixel")
        if mode == "linear" and transform not in ("half_pixel", "pytorch_half_pixel"):
            raise Unsupported(f"linear resize with coordinate_transformation_mode={transform!r}")
        nearest = ctx.attr(node, "nearest_mode", "round_prefer_floor")
        # with an integer factor these pick the source pixel floor(x / factor), as torch and Keras do
        if mode == "nearest" and not ((transform == "asymmetric" and nearest == "floor") or (
                transform in ("half_pixel", "pytorch_half_pixel") and nearest in ("round_prefer_floor",
                                                                                   "round_prefer_ceil"))):
            raise Unsupported(f"nearest_mode={nearest!r} with coordinate_transformation_mode={transform!r}")
    factors = [float(s) for s in scales]
    if factors[:2] != [1.0, 1.0] or any(f != int(f) or f < 1 for f in factors[2:]):
        raise Unsupported(f"scales {tuple(factors)} (integer factors on the spatial axes only)")
    interp = {"nearest": "nearest", "linear": "bilinear"}.get(mode)
    if interp is None or (interp == "bilinear" and rank != 2):
        raise Unsupported(f"mode={mode!r}")
    ctx.add(f"upsample{rank}d", [x], {"size": tuple(int(f) for f in factors[2:]), "interpolation": interp},
            node, "upsample")


from transpiler.frontend_onnx import math_ops  # noqa: E402,F401  (registers its converters)
