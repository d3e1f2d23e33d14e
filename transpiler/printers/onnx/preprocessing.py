"""Emitters of preprocessing ops inside models (Normalization, Resizing, patches) and of the
ops that make tensors (arange, random draws, full, broadcast)."""

from __future__ import annotations

import numpy as np

from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.ir.shapes import keras_centred_window
from transpiler.ir.statistics import keras_stat
from transpiler.printers.onnx.builder import Context, Unsupported, emitter, ints
from transpiler.printers.onnx.elementwise import _DTYPES


@emitter("normalization")
def normalization(ctx: Context) -> list:
    """Keras' Normalization: ``(x - mean) / max(sqrt(variance), 1e-7)`` (or its inverse), the
    statistics broadcast over the source (channels-last) axes they were kept on."""
    a, b = ctx.node.attrs, ctx.b
    x = ctx.node.inputs[0]
    rank = len(x.shape)
    to_source = Layout(x.layout, channels_last_of(x.layout)) if is_channels_first(x.layout) else None
    src_shape = to_source.shape(x.shape) if to_source else tuple(x.shape)
    kept = sorted({to_source.axis(ax % rank) if to_source else ax % rank for ax in a["axis"]})
    src_view = tuple(int(src_shape[d]) if d in kept else 1 for d in range(rank))
    back = Layout(channels_last_of(x.layout), x.layout).perm if to_source else None

    def stat(values) -> np.ndarray:
        arr = np.broadcast_to(keras_stat(np.asarray(values, np.float32), src_view, kept), src_view)
        return np.ascontiguousarray(arr.transpose(back) if back else arr)[0]  # (without the batch axis)

    if a["mean"] is None:
        mean, var = stat(ctx.params["mean"]), stat(ctx.params["variance"])
    else:
        mean, var = stat(a["mean"]), stat(a["variance"])
    std = np.maximum(np.sqrt(var), np.float32(1e-7)).astype(np.float32)
    xs = ctx.inputs[0]
    if a["invert"]:
        y = b.one("Mul", [xs, b.const(std, f"{ctx.hint}.std")], ctx.hint)
        return [b.one("Add", [y, b.const(mean, f"{ctx.hint}.mean")], ctx.hint)]
    y = b.one("Sub", [xs, b.const(mean, f"{ctx.hint}.mean")], ctx.hint)
    return [b.one("Div", [y, b.const(std, f"{ctx.hint}.std")], ctx.hint)]


@emitter("resizing")
def resizing(ctx: Context) -> list:
    """TensorFlow's resize: half-pixel centres; its nearest rounds ``(x + 0.5) * scale`` down."""
    a, b = ctx.node.attrs, ctx.b
    if not is_channels_first(ctx.node.inputs[0].layout):
        raise Unsupported("a Resizing on a value that is not channels-first")
    kind = a["interpolation"]
    if kind == "bilinear":
        mode = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
    elif kind == "nearest":
        mode = {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn", "nearest_mode": "floor"}
    elif kind == "bicubic":
        mode = {"mode": "cubic", "coordinate_transformation_mode": "half_pixel", "cubic_coeff_a": -0.5}
    else:
        raise Unsupported(f"Resizing(interpolation={kind!r})")
    if a["antialias"] and kind != "nearest":
        mode["antialias"] = 1
    shape = b.one("Shape", [ctx.inputs[0]], ctx.hint, start=0, end=2)
    sizes = b.one("Concat", [shape, b.ints(ints(a["size"]), f"{ctx.hint}.size")], ctx.hint, axis=0)
    return [b.one("Resize", [ctx.inputs[0], "", "", sizes], ctx.hint, **mode)]


@emitter("center_crop")
def center_crop(ctx: Context) -> list:
    x = ctx.node.inputs[0]
    if not is_channels_first(x.layout):
        raise Unsupported("a CenterCrop on a value that is not channels-first")
    starts, ends = [], []
    for ax, size in zip(range(2, len(x.shape)), ctx.node.attrs["size"]):
        if x.shape[ax] is None:
            raise Unsupported("a CenterCrop of a size known only at run time")
        start = (int(x.shape[ax]) - int(size)) // 2
        starts.append(start)
        ends.append(start + int(size))
    b = ctx.b
    axes = list(range(2, len(x.shape)))
    return [b.one("Slice", [ctx.inputs[0], b.ints(starts, f"{ctx.hint}.starts"), b.ints(ends, f"{ctx.hint}.ends"),
                            b.ints(axes, f"{ctx.hint}.axes")], ctx.hint)]


@emitter("extract_patches")
def extract_patches(ctx: Context) -> list:
    """Keras' patches ``(kh, kw, C)`` per window as a convolution with a one-hot kernel:
    output channel ``(i * kw + j) * C + c`` reads input channel c at offset (i, j)."""
    a = ctx.node.attrs
    x = ctx.node.inputs[0]
    if not is_channels_first(x.layout) or x.shape[1] is None:
        raise Unsupported("patches of a value that is not channels-first with known channels")
    kh, kw = ints(a["kernel_size"])
    c = int(x.shape[1])
    weight = np.zeros((kh * kw * c, c, kh, kw), np.float32)
    for i in range(kh):
        for j in range(kw):
            for ch in range(c):
                weight[(i * kw + j) * c + ch, ch, i, j] = 1.0
    pads = {} if a["padding"] == "valid" else (
        {"auto_pad": "SAME_UPPER"} if a["padding"] == "same" else
        {"pads": [int(p) for p, _ in a["padding"]] + [int(q) for _, q in a["padding"]]})
    return [ctx.b.one("Conv", [ctx.inputs[0], ctx.b.const(weight, f"{ctx.hint}.onehot")], ctx.hint,
                      kernel_shape=[kh, kw], strides=ints(a["strides"]), dilations=ints(a["dilation"]), **pads)]


@emitter("arange")
def arange(ctx: Context) -> list:
    a = ctx.node.attrs
    try:
        values = np.arange(int(a["start"]), int(a["stop"]), int(a["step"]))
    except TypeError:
        raise Unsupported("an arange whose length is known only at run time") from None
    dtype = np.dtype(a["dtype"]) if a["dtype"] in _DTYPES else np.int64
    return [ctx.b.const(values.astype(dtype), f"{ctx.hint}.positions", dtype)]


@emitter("random_normal", "random_uniform")
def random_draw(ctx: Context) -> list:
    like, out = ctx.node.inputs[0], ctx.node.outputs[0]
    a = ctx.node.attrs
    if tuple(out.shape) != tuple(like.shape) or out.layout != like.layout:
        raise Unsupported("a random draw of a shape other than its template's")
    if ctx.node.op == "random_normal":
        return [ctx.b.one("RandomNormalLike", [ctx.inputs[0]], ctx.hint, mean=float(a["mean"]),
                          scale=float(a["stddev"]), dtype=1)]
    return [ctx.b.one("RandomUniformLike", [ctx.inputs[0]], ctx.hint, low=float(a["minval"]),
                      high=float(a["maxval"]), dtype=1)]


@emitter("full_like")
def full_like(ctx: Context) -> list:
    a = ctx.node.attrs
    dtype = a["dtype"] or ctx.node.inputs[0].dtype
    value = np.asarray([a["value"]], np.dtype(dtype) if dtype in _DTYPES else np.float32)
    from onnx import numpy_helper

    shape = ctx.b.one("Shape", [ctx.inputs[0]], ctx.hint)
    return [ctx.b.one("ConstantOfShape", [shape], ctx.hint, value=numpy_helper.from_array(value))]


@emitter("broadcast_to")
def broadcast_to(ctx: Context) -> list:
    b = ctx.b
    batch = b.one("Shape", [ctx.inputs[1]], ctx.hint, start=0, end=1)
    sizes = [1 if d == -1 else d for d in ctx.node.attrs["shape"]]  # (Expand keeps x's size where it asks 1)
    shape = b.one("Concat", [batch, b.ints(ints(sizes), f"{ctx.hint}.shape")], ctx.hint, axis=0)
    return [b.one("Expand", [ctx.inputs[0], shape], ctx.hint)]


@emitter("full")
def full(ctx: Context) -> list:
    """A tensor of ``(batch, *shape)`` filled with ``value`` (the batch taken from the template)."""
    from onnx import numpy_helper

    a, b = ctx.node.attrs, ctx.b
    dtype = np.dtype(a["dtype"]) if a["dtype"] in _DTYPES else np.float32
    batch = b.one("Shape", [ctx.inputs[0]], ctx.hint, start=0, end=1)
    shape = b.one("Concat", [batch, b.ints(ints(a["shape"]), f"{ctx.hint}.shape")], ctx.hint, axis=0)
    return [b.one("ConstantOfShape", [shape], ctx.hint, value=numpy_helper.from_array(np.asarray([a["value"]], dtype)))]


@emitter("random_crop")
def random_crop(ctx: Context) -> list:
    """Keras' RandomCrop at inference (ONNX graphs are inference graphs): the centred window
    of the target's aspect ratio, resized to the target as TensorFlow's bilinear resize."""
    x = ctx.node.inputs[0]
    if not is_channels_first(x.layout) or len(x.shape) != 4:
        raise Unsupported("a RandomCrop on a value that is not a channels-first image")
    size = ints(ctx.node.attrs["size"])
    hs, ws, ch, cw = keras_centred_window(int(x.shape[2]), int(x.shape[3]), size)
    b = ctx.b
    out = b.one("Slice", [ctx.inputs[0], b.ints([hs, ws], f"{ctx.hint}.starts"),
                          b.ints([hs + ch, ws + cw], f"{ctx.hint}.ends"), b.ints([2, 3], f"{ctx.hint}.axes")],
                ctx.hint)
    if (ch, cw) == tuple(size):
        return [out]
    shape = b.one("Shape", [ctx.inputs[0]], ctx.hint, start=0, end=2)
    sizes = b.one("Concat", [shape, b.ints(size, f"{ctx.hint}.size")], ctx.hint, axis=0)
    return [b.one("Resize", [out, "", "", sizes], ctx.hint, mode="linear",
                  coordinate_transformation_mode="half_pixel")]
