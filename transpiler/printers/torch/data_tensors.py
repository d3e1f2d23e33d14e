"""Plain TensorFlow tensor calls of the functions a tf.data pipeline maps (Keras -> PyTorch)
that the shared table of printers/torch/loss_functions.py has no entry for: ``tf.transpose``,
``tf.squeeze``, ``tf.gather``, ``tf.repeat``, ``tf.split``, ``tf.complex``, ``tf.signal.fft``.
Each becomes a torch call on the element as a tensor (``torch.as_tensor``: the element may be
a numpy array) or a function of ``runtime/torch/image_ops.py`` computing what TensorFlow
computes (same shapes, axes counted the same way).

``rewrite_entry`` of ``printers/torch/loss_functions.py`` reaches these through
``data_image_ops.tensor_entry``; ``helpers_used(text)`` names the runtime functions used.
"""

from __future__ import annotations

import re
from typing import Callable

from transpiler.printers.torch import data_strings
from transpiler.printers.torch.data_strings import _args, _untranslatable

RUNTIME = "torch.image_ops"


def _only(function: str, a, allowed: set) -> None:
    data_strings._only(function, a, allowed, prefix="")


def _transpose(call) -> str:
    """``tf.transpose(a, perm)``: the axes in ``perm``'s order (all reversed without it)."""
    a = _args(call, ("a", "perm", "conjugate", "name"))
    if a.text("conjugate", "False") != "False":
        raise _untranslatable("tf.transpose(conjugate=True)")
    x = f"torch.as_tensor({a.text('a')})"
    perm = a.text("perm", "None")
    if perm == "None":
        return f"{x}.permute(*reversed(range({x}.dim())))"
    return f"{x}.permute(*{perm})"


def _squeeze(call) -> str:
    """``tf.squeeze(input, axis)``: the size-1 axes (those named in ``axis``) dropped."""
    a = _args(call, ("input", "axis", "name"), {"axis": ("squeeze_dims",)})
    x = f"torch.as_tensor({a.text('input')})"
    axis = a.text("axis", "None")
    if axis in ("None", "[]", "()"):
        return f"{x}.squeeze()"
    if axis.startswith(("[", "(")):
        return f"{x}.squeeze(tuple({axis}))"
    return f"{x}.squeeze({axis})"


def _gather(call) -> str:
    """``tf.gather(params, indices, axis=0)``: params' slices at ``indices`` along ``axis`` (the
    indices' shape in place of that axis)."""
    a = _args(call, ("params", "indices", "validate_indices", "axis", "batch_dims", "name"))
    _only("tf.gather", a, {"params", "indices", "axis", "name", "validate_indices"})
    axis = a.text("axis", "0")
    extra = "" if axis in ("0", "None") else f", axis={axis}"
    return f"tensor_gather({a.text('params')}, {a.text('indices')}{extra})"


def _repeat(call) -> str:
    """``tf.repeat(input, repeats, axis=None)``: torch's repeat_interleave (flattened without
    an axis, as TensorFlow does)."""
    a = _args(call, ("input", "repeats", "axis", "name"))
    _only("tf.repeat", a, {"input", "repeats", "axis", "name"})
    axis = a.text("axis", "None")
    dim = "" if axis == "None" else f", dim={axis}"
    return f"torch.repeat_interleave(torch.as_tensor({a.text('input')}), {a.text('repeats')}{dim})"


def _split(call) -> str:
    """``tf.split(value, num_or_size_splits, axis=0)``: a list of tensors (equal parts for a
    number, which must divide the axis as TensorFlow asks; the sizes given otherwise)."""
    a = _args(call, ("value", "num_or_size_splits", "axis", "num", "name"))
    _only("tf.split", a, {"value", "num_or_size_splits", "axis", "name"})
    axis = a.text("axis", "0")
    extra = "" if axis == "0" else f", axis={axis}"
    return f"tensor_split({a.text('value')}, {a.text('num_or_size_splits')}{extra})"


def _complex(call) -> str:
    a = _args(call, ("real", "imag", "name"))
    _only("tf.complex", a, {"real", "imag", "name"})
    return f"torch.complex(torch.as_tensor({a.text('real')}), torch.as_tensor({a.text('imag')}))"


def _fft(function: str) -> Callable:
    """``tf.signal.fft`` / ``ifft``: the transform of the innermost axis, as torch.fft's default."""
    def emit(call) -> str:
        a = _args(call, ("input", "name"))
        _only(f"tf.signal.{function}", a, {"input", "name"})
        return f"torch.fft.{function}(torch.as_tensor({a.text('input')}))"
    return emit


#: canonical name (printers/torch/loss_functions.py's ``canonical``) → emitter
TENSOR_ENTRIES: dict[str, Callable] = {
    "tf.transpose": _transpose, "tf.squeeze": _squeeze, "tf.gather": _gather, "tf.repeat": _repeat,
    "tf.split": _split, "tf.complex": _complex, "tf.signal.fft": _fft("fft"), "tf.signal.ifft": _fft("ifft"),
}
#: the runtime functions (runtime/torch/image_ops.py) the emitted code calls
HELPERS = ("tensor_gather", "tensor_split")


def helpers_used(text: str) -> list[str]:
    """The runtime functions of this module that ``text`` calls."""
    return [h for h in HELPERS if re.search(rf"(?<![\w.]){h}\(", text)]
