"""``tf.strings`` and plain tensor calls of the functions a tf.data pipeline maps, and of a
TextVectorization's own ``standardize`` function (Keras -> PyTorch).

Strings are no torch tensors: a string element is a Python str (or a numpy array of str, object
dtype) in the generated program, and each ``tf.strings.X`` becomes the ``strings_X`` function
of ``runtime/torch/text.py`` that computes what TensorFlow computes on it (a scalar result is a
``StringValue``: a str whose ``.numpy()`` gives its bytes, as an eager string tensor's does).
Plain tensor calls there (``tf.transpose``, ``tf.gather``, ...) are data_tensors.py's.

``rewrite_entry`` of ``printers/torch/loss_functions.py`` reaches these through
``data_image_ops.tensor_entry``; ``helpers_used(text)`` names the runtime functions a translated
function calls, for the training printer to copy.
"""

from __future__ import annotations

import re
from typing import Callable

RUNTIME = "torch.text"
_NUMBER_TYPES = {"float16": "torch.float16", "float32": "torch.float32", "float64": "torch.float64",
                 "int32": "torch.int32", "int64": "torch.int64"}


def _args(call, names, aliases=None):
    from transpiler.printers.torch.loss_functions import _Args

    return _Args(call, names, aliases)


def _untranslatable(message: str):
    from transpiler.printers.torch.loss_functions import Untranslatable

    return Untranslatable(message)


def _only(function: str, a, allowed: set, prefix: str = "tf.strings.") -> None:
    """Refuse the arguments of ``prefix + function`` other than ``allowed``."""
    extra = set(a.values) - allowed
    if extra:
        raise _untranslatable(f"{prefix}{function}() with {', '.join(sorted(extra))}")


def _encoding_ok(function: str, a, key: str) -> None:
    text = a.text(key)
    if text is not None and text.strip("'\"").replace("-", "").upper() != "UTF8":
        raise _untranslatable(f"tf.strings.{function}() of {text} text (UTF-8 only)")


def _each(function: str) -> Callable:
    """lower / upper / strip: one string in, one out (``encoding=""`` only: ASCII letters)."""
    def emit(call) -> str:
        a = _args(call, ("input", "encoding", "name"))
        _only(function, a, {"input", "name", "encoding"})
        if a.text("encoding", "''").strip("'\"") != "":
            raise _untranslatable(f"tf.strings.{function}(encoding=...) (Unicode case folding)")
        return f"strings_{function}({a.text('input')})"
    return emit


def _regex_replace(call) -> str:
    a = _args(call, ("input", "pattern", "rewrite", "replace_global", "name"))
    _only("regex_replace", a, {"input", "pattern", "rewrite", "replace_global", "name"})
    if a.text("pattern") is None or a.text("rewrite") is None:
        raise _untranslatable("tf.strings.regex_replace() without pattern and rewrite")
    extra = f", replace_global={a.text('replace_global')}" if a.text("replace_global") is not None else ""
    return f"strings_regex_replace({a.text('input')}, {a.text('pattern')}, {a.text('rewrite')}{extra})"


def _unicode_split(call) -> str:
    a = _args(call, ("input", "input_encoding", "errors", "replacement_char", "name"))
    _only("unicode_split", a, {"input", "input_encoding", "name"})
    _encoding_ok("unicode_split", a, "input_encoding")
    return f"strings_unicode_split({a.text('input')})"


def _reduce_join(call) -> str:
    a = _args(call, ("inputs", "axis", "keepdims", "separator", "name"))
    _only("reduce_join", a, {"inputs", "axis", "separator", "name"})
    return _call_with_options("strings_reduce_join", a, "inputs", ("axis", "separator"))


def _call_with_options(helper: str, a, first: str, options: tuple) -> str:
    """``helper(first, option=..., ...)`` with the options the call gives (None as not given)."""
    parts = [a.text(first)]
    parts += [f"{k}={a.text(k)}" for k in options if a.text(k, "None") != "None"]
    return f"{helper}({', '.join(parts)})"


def _to_number(call) -> str:
    a = _args(call, ("string_tensor", "out_type", "name"), {"string_tensor": ("input",)})
    _only("to_number", a, {"string_tensor", "out_type", "name"})
    out = a.text("out_type")
    if out is None:
        return f"strings_to_number({a.text('string_tensor')})"
    key = out.strip("'\"").rsplit(".", 1)[-1]
    if key not in _NUMBER_TYPES:
        raise _untranslatable(f"tf.strings.to_number to {out}")
    return f"strings_to_number({a.text('string_tensor')}, {_NUMBER_TYPES[key]})"


def _length(call) -> str:
    a = _args(call, ("input", "unit", "name"))
    _only("length", a, {"input", "unit", "name"})
    if a.text("unit", "'BYTE'").strip("'\"") != "BYTE":
        raise _untranslatable("tf.strings.length(unit=...) other than BYTE")
    return f"strings_length({a.text('input')})"


def _split(call) -> str:
    a = _args(call, ("input", "sep", "maxsplit", "name"))
    _only("split", a, {"input", "sep", "maxsplit", "name"})
    return _call_with_options("strings_split", a, "input", ("sep", "maxsplit"))


#: canonical name (printers/torch/loss_functions.py's ``canonical``) → emitter
TENSOR_ENTRIES: dict[str, Callable] = {
    "tf.strings.lower": _each("lower"), "tf.strings.upper": _each("upper"), "tf.strings.strip": _each("strip"),
    "tf.strings.regex_replace": _regex_replace, "tf.strings.unicode_split": _unicode_split,
    "tf.strings.reduce_join": _reduce_join, "tf.strings.to_number": _to_number, "tf.strings.length": _length,
    "tf.strings.split": _split,
}
#: the runtime functions (runtime/torch/text.py) the emitted code calls
HELPERS = ("strings_lower", "strings_upper", "strings_strip", "strings_regex_replace", "strings_unicode_split",
           "strings_reduce_join", "strings_to_number", "strings_length", "strings_split", "RaggedRows")


def helpers_used(text: str) -> list[str]:
    """The runtime functions of this module that ``text`` calls."""
    return [h for h in HELPERS if re.search(rf"(?<![\w.]){h}\(", text)]
