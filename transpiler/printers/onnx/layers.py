"""Emitters of the layers with weights, pooling, padding and shape ops (channels-first values)."""

from __future__ import annotations

import numpy as np

from transpiler.ir.layout import is_channels_first, is_channels_last
from transpiler.printers.onnx.builder import Context, Unsupported, emitter, ints

_INT_MAX = 2**62


def _pads(ctx: Context, padding) -> dict:
    """IR padding ("valid", "same" or ((before, after), ...)) → ONNX ``pads``/``auto_pad``."""
    if padding == "valid":
        return {}
    if padding == "same":  # TensorFlow's 'same': the extra cell after (SAME_UPPER)
        return {"auto_pad": "SAME_UPPER"}
    if isinstance(padding, str):
        raise Unsupported(f"padding={padding!r}")
    pairs = [(int(a), int(b)) for a, b in padding]
    return {"pads": [a for a, _ in pairs] + [b for _, b in pairs]}


def _channels_first(ctx: Context) -> None:
    """Convolutions, pooling, padding and resizing read channels-first values (the PyTorch
    pipeline puts them there); anything else is refused rather than computed wrongly."""
    layout = ctx.node.inputs[0].layout
    if not is_channels_first(layout):
        raise Unsupported(f"a {ctx.node.op} on a {layout or 'untagged'} value (channels-first expected)")


# ---------------------------------------------------------------------------------
# dense and convolutions
# ---------------------------------------------------------------------------------
@emitter("dense")
def dense(ctx: Context) -> list:
    b, x = ctx.b, ctx.inputs[0]
    kernel = ctx.b.const(ctx.params["kernel"], f"{ctx.hint}.kernel")
    bias = ctx.b.const(ctx.params["bias"], f"{ctx.hint}.bias") if "bias" in ctx.params else None
    if len(ctx.in_shape()) == 2:
        return [b.one("Gemm", [x, kernel] + ([bias] if bias else []), ctx.hint)]
    y = b.one("MatMul", [x, kernel], ctx.hint)
    return [b.one("Add", [y, bias], ctx.hint) if bias else y]


def _conv_weight(kernel: np.ndarray) -> np.ndarray:
    """Canonical ``(*spatial, I, O)`` → ONNX ``(O, I, *spatial)``."""
    r = kernel.ndim - 2
    return np.transpose(kernel, (r + 1, r) + tuple(range(r)))


@emitter("conv1d", "conv2d", "conv3d")
def conv(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    inputs = [ctx.inputs[0], ctx.b.const(_conv_weight(ctx.params["kernel"]), f"{ctx.hint}.weight")]
    if "bias" in ctx.params:
        inputs.append(ctx.b.const(ctx.params["bias"], f"{ctx.hint}.bias"))
    return [ctx.b.one("Conv", inputs, ctx.hint, kernel_shape=ints(a["kernel_size"]), strides=ints(a["strides"]),
                      dilations=ints(a["dilation"]), group=int(a["groups"]), **_pads(ctx, a["padding"]))]


@emitter("conv_transpose1d", "conv_transpose2d")
def conv_transpose(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    kernel = ctx.params["kernel"]  # (*spatial, O, I) → ONNX (I, O, *spatial)
    r = kernel.ndim - 2
    weight = np.transpose(kernel, (r + 1, r) + tuple(range(r)))
    inputs = [ctx.inputs[0], ctx.b.const(weight, f"{ctx.hint}.weight")]
    if "bias" in ctx.params:
        inputs.append(ctx.b.const(ctx.params["bias"], f"{ctx.hint}.bias"))
    strides, ks, dil = ints(a["strides"]), ints(a["kernel_size"]), ints(a["dilation"])
    out_pad = ints(a["output_padding"]) if a["output_padding"] is not None else None
    pad = a["padding"]
    extra: dict = {}
    if pad == "same":
        # Keras: output = input * stride; the padding it implies, the extra cell after
        ins = ctx.in_shape()[2:]
        outs = ctx.out_shape()[2:]
        if any(v is None for v in ins + outs):
            raise Unsupported("a transposed convolution with padding='same' on sizes known only at run time")
        before, after, opad = [], [], []
        for n, o, s, k, d in zip(ins, outs, strides, ks, dil):
            total = s * (int(n) - 1) + (k - 1) * d + 1 - int(o)
            p = max(total, 0)
            before.append(p // 2)
            after.append(p - p // 2)
            opad.append(max(-total, 0))
        extra = {"pads": before + after}
        if any(opad):
            extra["output_padding"] = opad
    else:
        extra = _pads(ctx, pad)
        if out_pad is not None and any(out_pad):
            extra["output_padding"] = out_pad
    return [ctx.b.one("ConvTranspose", inputs, ctx.hint, kernel_shape=ks, strides=strides, dilations=dil, **extra)]


def _depthwise_weight(kernel: np.ndarray) -> np.ndarray:
    """Canonical ``(kh, kw, C, M)`` → a grouped conv's ``(C*M, 1, kh, kw)`` (channel c*M + m)."""
    kh, kw, c, m = kernel.shape
    return np.transpose(kernel.reshape(kh, kw, c * m), (2, 0, 1))[:, None]


@emitter("depthwise_conv2d")
def depthwise(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    kernel = ctx.params["kernel"]
    inputs = [ctx.inputs[0], ctx.b.const(_depthwise_weight(kernel), f"{ctx.hint}.weight")]
    if "bias" in ctx.params:
        inputs.append(ctx.b.const(ctx.params["bias"], f"{ctx.hint}.bias"))
    return [ctx.b.one("Conv", inputs, ctx.hint, kernel_shape=ints(a["kernel_size"]), strides=ints(a["strides"]),
                      dilations=ints(a["dilation"]), group=int(kernel.shape[2]), **_pads(ctx, a["padding"]))]


@emitter("separable_conv2d")
def separable(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    dk = ctx.params["depthwise_kernel"]
    dw = ctx.b.one("Conv", [ctx.inputs[0], ctx.b.const(_depthwise_weight(dk), f"{ctx.hint}.depthwise")],
                   f"{ctx.hint}_depthwise", kernel_shape=ints(a["kernel_size"]), strides=ints(a["strides"]),
                   dilations=ints(a["dilation"]), group=int(dk.shape[2]), **_pads(ctx, a["padding"]))
    pk = ctx.params["pointwise_kernel"]  # (1, 1, K, O) → (O, K, 1, 1)
    inputs = [dw, ctx.b.const(np.transpose(pk, (3, 2, 0, 1)), f"{ctx.hint}.pointwise")]
    if "bias" in ctx.params:
        inputs.append(ctx.b.const(ctx.params["bias"], f"{ctx.hint}.bias"))
    return [ctx.b.one("Conv", inputs, ctx.hint, kernel_shape=[1, 1])]


# ---------------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------------
@emitter("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d")
def pool(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    kind = "MaxPool" if ctx.node.spec.pooling == "max" else "AveragePool"
    pads = _pads(ctx, a["padding"])  # (an average never counts the padding: a torch pool that does
    # is read as an explicit pad before the pool)
    return [ctx.b.one(kind, [ctx.inputs[0]], ctx.hint, kernel_shape=ints(a["pool_size"]), strides=ints(a["strides"]),
                      ceil_mode=int(bool(a["ceil_mode"])) or None, **pads)]


@emitter("global_avg_pool1d", "global_avg_pool2d", "global_avg_pool3d",
         "global_max_pool1d", "global_max_pool2d", "global_max_pool3d")
def global_pool(ctx: Context) -> list:
    if ctx.node.attrs.get("masked"):
        raise Unsupported("a masked global average pool")
    layout = ctx.node.inputs[0].layout
    if is_channels_last(layout):  # (a sequence kept as (N, T, C)): reduce the steps
        rank = len(ctx.in_shape())
        kind = "ReduceMax" if ctx.node.spec.pooling == "max" else "ReduceMean"
        axes = ctx.b.ints(list(range(1, rank - 1)), f"{ctx.hint}.axes")
        return [ctx.b.one(kind, [ctx.inputs[0], axes], ctx.hint, keepdims=int(bool(ctx.node.attrs["keepdims"])))]
    _channels_first(ctx)
    kind = "GlobalMaxPool" if ctx.node.spec.pooling == "max" else "GlobalAveragePool"
    y = ctx.b.one(kind, [ctx.inputs[0]], ctx.hint)
    if ctx.node.attrs["keepdims"]:
        return [y]
    return [ctx.b.one("Flatten", [y], ctx.hint, axis=1)]


# ---------------------------------------------------------------------------------
# padding, cropping, resizing
# ---------------------------------------------------------------------------------
@emitter("pad1d", "pad2d", "pad3d")
def pad(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "edge": "edge"}.get(a["mode"])
    if mode is None:
        raise Unsupported(f"padding mode {a['mode']!r}")
    pairs = [(int(p), int(q)) for p, q in a["pads"]]
    pads = [0, 0] + [p for p, _ in pairs] + [0, 0] + [q for _, q in pairs]
    inputs = [ctx.inputs[0], ctx.b.ints(pads, f"{ctx.hint}.pads")]
    if mode == "constant" and a["value"]:
        inputs.append(ctx.b.const(np.asarray(a["value"], np.float32), f"{ctx.hint}.value"))
    return [ctx.b.one("Pad", inputs, ctx.hint, mode=mode)]


@emitter("crop1d", "crop2d", "crop3d")
def crop(ctx: Context) -> list:
    _channels_first(ctx)
    pairs = [(int(p), int(q)) for p, q in ctx.node.attrs["cropping"]]
    axes = list(range(2, 2 + len(pairs)))
    starts = [p for p, _ in pairs]
    ends = [-q if q else _INT_MAX for _, q in pairs]
    b = ctx.b
    return [b.one("Slice", [ctx.inputs[0], b.ints(starts, f"{ctx.hint}.starts"), b.ints(ends, f"{ctx.hint}.ends"),
                            b.ints(axes, f"{ctx.hint}.axes")], ctx.hint)]


@emitter("upsample1d", "upsample2d")
def upsample(ctx: Context) -> list:
    _channels_first(ctx)
    a = ctx.node.attrs
    scales = [1.0, 1.0] + [float(s) for s in a["size"]]
    if a["interpolation"] == "nearest":
        mode = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    elif a["interpolation"] == "bilinear":
        mode = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
    else:
        raise Unsupported(f"interpolation={a['interpolation']!r}")
    return [ctx.b.one("Resize", [ctx.inputs[0], "", ctx.b.const(np.asarray(scales, np.float32), f"{ctx.hint}.scales")],
                      ctx.hint, **mode)]


# ---------------------------------------------------------------------------------
# shape ops
# ---------------------------------------------------------------------------------
@emitter("flatten")
def flatten(ctx: Context) -> list:
    return [ctx.b.one("Flatten", [ctx.inputs[0]], ctx.hint, axis=1)]


@emitter("reshape")
def reshape(ctx: Context) -> list:
    shape = [0] + ints(ctx.node.attrs["shape"])  # (0: the batch size, copied)
    return [ctx.b.one("Reshape", [ctx.inputs[0], ctx.b.ints(shape, f"{ctx.hint}.shape")], ctx.hint)]


@emitter("transpose")
def transpose(ctx: Context) -> list:
    perm = ints(ctx.node.attrs["perm"])
    if perm == list(range(len(perm))):
        return [ctx.inputs[0]]
    return [ctx.b.one("Transpose", [ctx.inputs[0]], ctx.hint, perm=perm)]


@emitter("repeat_vector")
def repeat_vector(ctx: Context) -> list:
    b = ctx.b
    y = b.one("Unsqueeze", [ctx.inputs[0], b.ints([1], f"{ctx.hint}.axes")], ctx.hint)
    return [b.one("Tile", [y, b.ints([1, int(ctx.node.attrs["n"]), 1], f"{ctx.hint}.repeats")], ctx.hint)]


@emitter("tile")
def tile(ctx: Context) -> list:
    b = ctx.b
    repeats = [1, *(int(r) for r in ctx.node.attrs["repeats"])]
    return [b.one("Tile", [ctx.inputs[0], b.ints(repeats, f"{ctx.hint}.repeats")], ctx.hint)]


@emitter("identity", "dropout", "spatial_dropout", "stop_gradient", "random_augmentation")
def identity(ctx: Context) -> list:
    """Identity at inference (dropout and Keras' random augmentation layers do nothing then)."""
    return [ctx.inputs[0]]


@emitter("variable")
def variable(ctx: Context) -> list:
    return [ctx.b.const(ctx.params["value"], f"{ctx.hint}.value")]


@emitter("embedding")
def embedding(ctx: Context) -> list:
    b = ctx.b
    idx = b.one("Cast", [ctx.inputs[0]], f"{ctx.hint}_indices", to=7)  # INT64
    return [b.one("Gather", [b.const(ctx.params["embeddings"], f"{ctx.hint}.embeddings"), idx], ctx.hint)]


@emitter("pixel_shuffle")
def pixel_shuffle(ctx: Context) -> list:
    """torch's PixelShuffle: channel ``c * r * r + i * r + j`` moves to (c, i, j): DepthToSpace CRD."""
    _channels_first(ctx)
    return [ctx.b.one("DepthToSpace", [ctx.inputs[0]], ctx.hint, blocksize=int(ctx.node.attrs["factor"]), mode="CRD")]
