"""``tf.image`` calls in the functions a tf.data pipeline maps (Keras -> PyTorch): each becomes
the function of ``runtime/torch/image_ops.py`` that computes the same (one image or a batch,
channels-last as TensorFlow takes them), copied into the program that calls it.

``rewrite_entry`` of ``printers/torch/loss_functions.py`` asks ``entry(name)`` for a
``tf.image.X`` it meets; ``helpers_used(text)`` names the runtime functions a translated
function calls, for the training printer to copy.
"""

from __future__ import annotations

import re
from typing import Callable

RUNTIME = "torch.image_ops"
_DTYPES = {"float16": "torch.float16", "float32": "torch.float32", "float64": "torch.float64",
           "bfloat16": "torch.bfloat16"}


def _args(call, names, aliases=None):
    from transpiler.printers.torch.loss_functions import _Args

    return _Args(call, names, aliases)


def _untranslatable(message: str):
    from transpiler.printers.torch.loss_functions import Untranslatable

    return Untranslatable(message)


def _resize(call) -> str:
    a = _args(call, ("images", "size", "method", "preserve_aspect_ratio", "antialias"))
    method = (a.text("method") or "'bilinear'").strip("'\"")
    if method.startswith("ResizeMethod."):
        method = method.split(".", 1)[1].lower()
    antialias = a.text("antialias", "False")
    if method not in ("bilinear", "nearest") or a.text("preserve_aspect_ratio", "False") != "False" or \
            antialias not in ("True", "False"):
        raise _untranslatable("tf.image.resize: only bilinear or nearest, without preserve_aspect_ratio, "
                              "antialias True or False")
    # (TensorFlow's antialiased bilinear filter is torch's: a triangle widened by the scale when
    # shrinking; nearest ignores antialias in both)
    extra = ", antialias=True" if antialias == "True" and method == "bilinear" else ""
    return f"image_resize({a.text('images')}, {a.text('size')}, method={method!r}{extra})"


def _one(function: str) -> Callable:
    def emit(call) -> str:
        a = _args(call, ("image", "seed"))
        if set(a.values) - {"image", "seed"}:
            raise _untranslatable(f"tf.image.{function}() with other arguments")
        return f"image_{function}({a.text('image')})"
    return emit


def _flip(axis: int) -> Callable:
    def emit(call) -> str:
        return f"{_args(call, ('image',)).text('image')}.flip({axis})"
    return emit


def _convert_image_dtype(call) -> str:
    a = _args(call, ("image", "dtype", "saturate"))
    key = (a.text("dtype") or "").strip("'\"").rsplit(".", 1)[-1]
    if key not in _DTYPES:
        raise _untranslatable(f"tf.image.convert_image_dtype to {a.text('dtype')} (floating types only)")
    return f"image_convert_dtype({a.text('image')}, {_DTYPES[key]})"


def _random_crop(call) -> str:
    a = _args(call, ("value", "size", "seed"))
    return f"image_random_crop({a.text('value')}, {a.text('size')})"


def _grayscale(call) -> str:
    return f"image_rgb_to_grayscale({_args(call, ('images',)).text('images')})"


def _bounding_box(function: str) -> Callable:
    def emit(call) -> str:
        a = _args(call, ("image", "offset_height", "offset_width", "target_height", "target_width"))
        if len(a.values) != 5:
            raise _untranslatable(f"tf.image.{function}() without its four box sizes")
        sizes = ", ".join(a.text(n) for n in ("offset_height", "offset_width", "target_height", "target_width"))
        return f"image_{function}({a.text('image')}, {sizes})"
    return emit


def _random_gamma(call) -> str:
    """``tf.random.gamma(shape, alpha, beta=None, dtype=float32)`` / ``keras.random.gamma(shape,
    alpha, dtype)``: the runtime's draw from the same Gamma(alpha, rate=beta) distribution."""
    a = _args(call, ("shape", "alpha", "beta", "dtype", "seed"))
    if "shape" not in a.values or "alpha" not in a.values:
        raise _untranslatable("tf.random.gamma() without shape and alpha")
    extra = f", beta={a.text('beta')}" if a.text("beta", "None") != "None" else ""
    dtype = a.text("dtype")
    if dtype is not None:
        key = dtype.strip("'\"").rsplit(".", 1)[-1]
        if key not in _DTYPES:
            raise _untranslatable(f"tf.random.gamma to {dtype} (floating types only)")
        extra += f", dtype={_DTYPES[key]}"
    return f"gamma_sample({a.text('shape')}, {a.text('alpha')}{extra})"


def _one_hot(call) -> str:
    """``ops.one_hot(x, num_classes)`` / ``tf.one_hot(indices, depth)``: float32 rows, all zeros
    for an index outside [0, num_classes) (as in Keras and TensorFlow)."""
    a = _args(call, ("x", "num_classes", "axis", "dtype"), {"x": ("indices",), "num_classes": ("depth",)})
    if set(a.values) - {"x", "num_classes"} or len(a.values) != 2:
        raise _untranslatable("one_hot() with an axis, a dtype or on/off values")
    return f"one_hot_float({a.text('x')}, {a.text('num_classes')})"


def _reshape(call) -> str:
    a = _args(call, ("x", "newshape"), {"x": ("tensor",), "newshape": ("shape",)})
    if len(a.values) != 2:
        raise _untranslatable("reshape() without a shape")
    return f"torch.reshape(torch.as_tensor({a.text('x')}), {a.text('newshape')})"


def _read_file(call) -> str:
    a = _args(call, ("filename", "name"))
    return f"io_read_file({a.text('filename')})"


def _decode_image(function: str, names: tuple) -> Callable:
    """tf.io.decode_png/decode_jpeg/decode_image (also spelled tf.image.X): the runtime's
    decoder (PIL) with the channels asked for; other options (a jpeg's dct_method, ratio, ...)
    are not translated."""
    def emit(call) -> str:
        a = _args(call, names)
        extra = set(a.values) - {"contents", "channels", "dtype", "expand_animations", "name"}
        if a.text("dct_method", "").strip("'\"") in ("", "INTEGER_ACCURATE"):
            extra.discard("dct_method")  # (PIL's libjpeg: the accurate DCT; TF's default: the fast one)
        if extra:
            raise _untranslatable(f"tf.io.{function}() with {', '.join(sorted(extra))}")
        parts = [a.text("contents")]
        if a.text("channels") is not None:
            parts.append(f"channels={a.text('channels')}")
        if a.text("dtype") is not None:
            key = a.text("dtype").strip("'\"").rsplit(".", 1)[-1]
            if key not in _DTYPES and key != "uint8":
                raise _untranslatable(f"tf.io.{function} to {a.text('dtype')}")
            parts.append(f"dtype={_DTYPES.get(key, 'torch.uint8')}")
        return f"io_decode_image({', '.join(parts)})"
    return emit


def _decode_wav(call) -> str:
    a = _args(call, ("contents", "desired_channels", "desired_samples", "name"))
    parts = [a.text("contents")] + [f"{n}={a.text(n)}" for n in ("desired_channels", "desired_samples")
                                    if a.text(n) is not None]
    return f"audio_decode_wav({', '.join(parts)})"


def _colour(function: str) -> Callable:
    def emit(call) -> str:
        return f"image_{function}({_args(call, ('images', 'name')).text('images')})"
    return emit


_DECODERS = {"decode_png": ("contents", "channels", "dtype", "name"),
             "decode_jpeg": ("contents", "channels", "ratio", "fancy_upscaling", "try_recover_truncated",
                             "acceptable_fraction", "dct_method", "name"),
             "decode_image": ("contents", "channels", "dtype", "name", "expand_animations")}

#: tf.image function → its emitter
ENTRIES: dict[str, Callable] = {
    "resize": _resize, "random_flip_left_right": _one("random_flip_left_right"),
    "random_flip_up_down": _one("random_flip_up_down"), "flip_left_right": _flip(-2), "flip_up_down": _flip(-3),
    "convert_image_dtype": _convert_image_dtype, "random_crop": _random_crop, "rgb_to_grayscale": _grayscale,
    "crop_to_bounding_box": _bounding_box("crop_to_bounding_box"),
    "pad_to_bounding_box": _bounding_box("pad_to_bounding_box"),
    "rgb_to_yuv": _colour("rgb_to_yuv"), "yuv_to_rgb": _colour("yuv_to_rgb"),
    **{name: _decode_image(name, names) for name, names in _DECODERS.items()},
}
#: other TensorFlow / Keras calls of the functions a pipeline maps (MixUp's Beta draws, labels
#: made one-hot): canonical name (printers/torch/loss_functions.py's ``canonical``) → emitter
TENSOR_ENTRIES: dict[str, Callable] = {
    "tf.random.gamma": _random_gamma, "random.gamma": _random_gamma,
    "tf.one_hot": _one_hot, "ops.one_hot": _one_hot, "ops.nn.one_hot": _one_hot,
    "tf.reshape": _reshape, "ops.reshape": _reshape, "ops.numpy.reshape": _reshape,
    # files a pipeline reads (its elements: paths): tf.io / tf.audio
    "tf.io.read_file": _read_file, "tf.read_file": _read_file, "tf.audio.decode_wav": _decode_wav,
    **{f"tf.io.{name}": _decode_image(name, names) for name, names in _DECODERS.items()},
}
#: the runtime functions the emitted code calls
HELPERS = ("image_resize", "image_random_flip_left_right", "image_random_flip_up_down", "image_convert_dtype",
           "image_random_crop", "image_rgb_to_grayscale", "image_crop_to_bounding_box",
           "image_pad_to_bounding_box", "gamma_sample", "one_hot_float", "io_read_file", "io_decode_image",
           "audio_decode_wav", "image_rgb_to_yuv", "image_yuv_to_rgb")


def entry(name: str) -> Callable | None:
    """The emitter for ``tf.image.<name>``, or None."""
    return ENTRIES.get(name)


def tensor_entry(name: str) -> Callable | None:
    """The emitter for a canonical name of ``TENSOR_ENTRIES`` (or of data_strings.py's:
    tf.strings; data_tensors.py's: tf.transpose, tf.gather, ...), or None."""
    from transpiler.printers.torch import data_strings, data_tensors

    return TENSOR_ENTRIES.get(name) or data_strings.TENSOR_ENTRIES.get(name) or \
        data_tensors.TENSOR_ENTRIES.get(name)


def helpers_used(text: str) -> list[str]:
    """The runtime functions of this module (and data_strings.py's) that ``text`` calls."""
    from transpiler.printers.torch import data_strings, data_tensors

    return [h for h in HELPERS if re.search(rf"(?<![\w.]){h}\(", text)] + data_strings.helpers_used(text) + \
        data_tensors.helpers_used(text)
