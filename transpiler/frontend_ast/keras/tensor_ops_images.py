"""keras.ops.image / tf.image functions on batches of images (resize, extract_patches), in the
one table of ``keras_tensor_ops`` (imported at its end). Sizes are static; interpolations torch
computes differently are refused."""

from __future__ import annotations

from typing import Any

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.tensor_ops import ApiPath, Call, tensor_function
from transpiler.ir.graph import Value

# ---------------------------------------------------------------------------------
# Images
# ---------------------------------------------------------------------------------
_RESIZE_METHODS = {"bilinear": "bilinear", "nearest": "nearest", "nearest_neighbor": "nearest", "bicubic": "bicubic"}


def _pair(c: Call, name: str, value: Any) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (value[0], value[1])
    raise Unsupported(f"{c.key}(): {name}={value!r} must be one or two static ints")


def _image(c: Call) -> Value:
    x = c.tensor("images")
    if len(x.shape) != 4:
        raise Unsupported(f"{c.key}(): only batches of images (rank 4) are supported")
    fmt = c.get("data_format") if "data_format" in c.bound.sig.names else None
    if fmt not in (None, "channels_last"):
        raise Unsupported(f"{c.key}(): data_format={fmt!r} (channels_last only)")
    return x


@tensor_function("ops.image.resize", signature="images; size; interpolation='bilinear'; antialias=False; "
                                                "crop_to_aspect_ratio=False; pad_to_aspect_ratio=False; "
                                                "fill_mode='constant'; fill_value=0.0; data_format=None",
                 ops=("resizing",), keras_op="Resize")
@tensor_function("tf.image.resize", signature="images; size; interpolation='bilinear'; preserve_aspect_ratio=False; "
                                               "antialias=False",
                 ops=("resizing",), aliases={"method": "interpolation"})
def recognize_resize(c: Call) -> Value:
    x = _image(c)
    method = c.static("interpolation")
    if isinstance(method, ApiPath):  # tf.image.ResizeMethod.BILINEAR
        method = method.path.rsplit(".", 1)[-1]
    method = _RESIZE_METHODS.get(str(method).lower())
    antialias = bool(c.static("antialias"))
    if method is None:
        raise Unsupported(f"{c.key}(): interpolation {c.get('interpolation')!r} has no matching torch mode")
    if method == "bicubic" and not antialias:
        raise Unsupported(f"{c.key}(): bicubic without antialias (TF's Keys kernel a=-0.5; torch's bicubic "
                          "uses a=-0.75)")
    for flag in ("crop_to_aspect_ratio", "pad_to_aspect_ratio", "preserve_aspect_ratio"):
        if flag in c.bound.sig.names and c.static(flag):
            raise Unsupported(f"{c.key}(): {flag}=True is not supported")
    for extra in ("fill_mode", "fill_value"):
        if extra in c.bound.sig.names:
            c.get(extra)  # only read with pad_to_aspect_ratio
    return c.one("resizing", [x], {"size": _pair(c, "size", c.static("size")), "interpolation": method,
                                 "antialias": antialias and method != "nearest"})


@tensor_function("ops.image.extract_patches", signature="images; size; strides=None; dilation_rate=1; "
                                                         "padding='valid'; data_format=None",
                 ops=("extract_patches",), keras_op="ExtractPatches")
def recognize_extract_patches(c: Call) -> Value:
    x = _image(c)
    size = c.static("size")
    if isinstance(size, (list, tuple)) and len(size) == 3:
        raise Unsupported(f"{c.key}(): 3-D patches are not supported")
    kernel = _pair(c, "size", size)
    strides = kernel if c.static("strides") is None else _pair(c, "strides", c.static("strides"))
    padding = str(c.static("padding")).lower()
    if padding not in ("valid", "same"):
        raise Unsupported(f"{c.key}(): padding={padding!r}")
    return c.one("extract_patches", [x], {"kernel_size": kernel, "strides": strides,
                                          "dilation": _pair(c, "dilation_rate", c.static("dilation_rate")),
                                          "padding": padding}, "patches")


@tensor_function("tf.image.extract_patches", signature="images; sizes; strides; rates; padding",
                 ops=("extract_patches",))
def recognize_tf_extract_patches(c: Call) -> Value:
    x = _image(c)
    attrs = {}
    for name, attr in (("sizes", "kernel_size"), ("strides", "strides"), ("rates", "dilation")):
        value = c.static(name)
        if not isinstance(value, (list, tuple)) or len(value) != 4 or value[0] != 1 or value[3] != 1:
            raise Unsupported(f"{c.key}(): {name}={value!r} must be [1, rows, cols, 1]")
        attrs[attr] = (value[1], value[2])
    padding = str(c.static("padding")).lower()
    if padding not in ("valid", "same"):
        raise Unsupported(f"{c.key}(): padding={padding!r}")
    return c.one("extract_patches", [x], {**attrs, "padding": padding}, "patches")


def _box(c: Call) -> tuple[Value, int, int, tuple[int, int, int, int]]:
    """A batch of images with static sizes, and the box's offsets and target sizes (static ints)."""
    x = c.tensor("image")
    if len(x.shape) != 4:
        raise Unsupported(f"{c.key}(): only batches of images (rank 4) are supported")
    height, width = x.shape[1], x.shape[2]
    if height is None or width is None:
        raise Unsupported(f"{c.key}(): the images' height and width must be known statically")
    box = []
    for name in ("offset_height", "offset_width", "target_height", "target_width"):
        value = c.static(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise Unsupported(f"{c.key}(): {name}={value!r} must be a static non-negative int")
        box.append(value)
    return x, height, width, tuple(box)


@tensor_function("tf.image.crop_to_bounding_box",
                 signature="image; offset_height; offset_width; target_height; target_width", ops=("slice",))
def recognize_crop_to_bounding_box(c: Call) -> Value:
    """keras.io's ShiftViT shift: rows and columns of the box, a ``slice`` of axes 1 and 2."""
    x, height, width, (top, left, rows, cols) = _box(c)
    if top + rows > height or left + cols > width:
        raise Unsupported(f"{c.key}(): the box leaves the {height}x{width} images")
    axes, starts, stops = [], [], []
    for axis, start, size, dim in ((1, top, rows, height), (2, left, cols, width)):
        if (start, start + size) != (0, dim):
            axes.append(axis), starts.append(start), stops.append(start + size)
    if not axes:
        return x
    return c.one("slice", [x], {"axes": tuple(axes), "starts": tuple(starts), "stops": tuple(stops),
                                "steps": (1,) * len(axes)}, "crop")


@tensor_function("tf.image.pad_to_bounding_box",
                 signature="image; offset_height; offset_width; target_height; target_width", ops=("pad2d",))
def recognize_pad_to_bounding_box(c: Call) -> Value:
    """Zeros around the images up to the target size (TF's ``pad_to_bounding_box``): a ``pad2d``."""
    x, height, width, (top, left, rows, cols) = _box(c)
    bottom, right = rows - top - height, cols - left - width
    if bottom < 0 or right < 0:
        raise Unsupported(f"{c.key}(): the {height}x{width} images do not fit the box")
    if not (top or bottom or left or right):
        return x
    return c.one("pad2d", [x], {"pads": ((top, bottom), (left, right))}, "pad")


_PAD_MODES = {"constant": "constant", "reflect": "reflect"}


@tensor_function("ops.pad", "tf.pad", signature="x; pad_width; mode='constant'; constant_values=None; name=None",
                 ops=("pad1d", "pad2d", "pad3d"), aliases={"tensor": "x", "paddings": "pad_width"})
def recognize_pad(c: Call) -> Value:
    """``ops.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="reflect")`` (TF's ``paddings`` /
    ``mode="REFLECT"`` too): padding of the spatial axes only (none of the batch and channel
    axes) of a batch of sequences, images or volumes, constant or mirrored: a ``padNd``."""
    from transpiler.frontend_ast.keras.shape_values import pad_widths

    x = c.tensor("x")
    widths = pad_widths(c.get("pad_width"))
    if widths is None:
        raise Unsupported(f"{c.key}(): the pad widths must be static (before, after) pairs, one per axis")
    rank = len(x.shape)
    if len(widths) != rank or not 3 <= rank <= 5:
        raise Unsupported(f"{c.key}(): one (before, after) pair per axis of a rank 3-5 tensor")
    if widths[0] != (0, 0) or widths[-1] != (0, 0):
        raise Unsupported(f"{c.key}(): padding the batch or channel axis is not supported")
    mode = c.static("mode")
    mode = _PAD_MODES.get(mode.lower()) if isinstance(mode, str) else None
    if mode is None:
        raise Unsupported(f"{c.key}(): mode={c.get('mode')!r} (constant or reflect only)")
    value = c.static("constant_values")
    value = 0.0 if value is None else value
    if not isinstance(value, (int, float)) or isinstance(value, bool) or (mode == "reflect" and value != 0.0):
        raise Unsupported(f"{c.key}(): constant_values must be a number (of constant padding)")
    pads = tuple(widths[1:-1])
    if mode == "reflect":
        for (before, after), size in zip(pads, x.shape[1:-1]):
            if size is None or max(before, after) >= size:
                raise Unsupported(f"{c.key}(): reflect padding needs each width below the axis size")
    if not any(b or a for b, a in pads):
        return x
    return c.one(f"pad{rank - 2}d", [x], {"pads": pads, "value": float(value), "mode": mode}, "pad")
