"""Tensors made outside any model from a static shape (``tf.ones((2, 224, 224, 3))``) and the
variables a subclassed layer or model makes from them in ``__init__``
(``self.cls_token = tf.Variable(tf.zeros((1, 1, 192)))``): the weights ``add_weight`` would
make, with the initializer the value says."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from transpiler.frontend_ast.interp import Unknown
from transpiler.frontend_ast.keras.values import ArrayVal, WeightObj
from transpiler.ir.graph import Span
from transpiler.ir.initializers import Initializer

_RANDOM = {"normal": ("RandomNormal", ("mean", "stddev"), (0.0, 1.0)),
           "truncated_normal": ("TruncatedNormal", ("mean", "stddev"), (0.0, 1.0)),
           "uniform": ("RandomUniform", ("minval", "maxval"), (0.0, 1.0))}

#: the tensor makers read here: ``<library>.<name>`` → initializer kind
_SOURCES = {**{f"{lib}.{name}": name for lib in ("tensorflow", "keras.ops") for name in ("ones", "zeros")},
            **{f"{lib}.{name}": name for lib in ("tensorflow.random", "keras.random") for name in _RANDOM}}

#: ``tf.Variable`` / ``keras.Variable``: (initial value, trainable, name) in that order
_VARIABLES = ("tensorflow.Variable", "keras.Variable", "keras.src.Variable")

#: linspace of the tensor libraries: float32 items
_FLOAT32_LINSPACE = ("tensorflow.linspace", "keras.ops.linspace")


@dataclass(eq=False)
class FilledArray(ArrayVal):
    """A tensor of a static shape made from nothing but its shape: what it holds is the
    initializer (``"zeros"``, ``"ones"`` or a random draw) a variable made from it starts as."""

    initializer: Any = None


def tensor_source(path: str, args, kwargs) -> Any:
    """``tf.ones((2, 224, 224, 3))``, ``keras.random.normal((4, 8), stddev=0.02)`` of a static
    shape: data of that shape (a dummy batch a subclassed model is first called on, which
    builds it; a variable's initial value); ``None`` when ``path`` is not one of them or an
    argument is not static."""
    kind = _SOURCES.get(path)
    if kind is None:
        return None
    shape = args[0] if args else kwargs.get("shape")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        return None
    dtype = kwargs.get("dtype", args[3] if kind in _RANDOM and len(args) > 3 else None)
    if dtype is not None and not isinstance(dtype, str):
        return None
    if kind in _RANDOM:
        name, params, defaults = _RANDOM[kind]
        given = dict(zip(params, args[1:3]))
        given.update({k: v for k, v in kwargs.items() if k in params})
        if set(kwargs) - set(params) - {"shape", "dtype", "seed"} or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in given.values()):
            return None
        initializer = Initializer(name, {p: float(given.get(p, d)) for p, d in zip(params, defaults)})
    else:
        if set(kwargs) - {"shape", "dtype"} or len(args) > 2:
            return None
        initializer = kind
    return FilledArray(path, tuple(shape), dtype or "float32", initializer=initializer)


def api_path(name: str) -> str:
    """A tensor op's reader name (``tf.random.normal``, ``ops.ones``, ``random.normal``) as
    the library path :func:`tensor_source` reads."""
    for short, full in (("tf.", "tensorflow."), ("ops.", "keras.ops."), ("random.", "keras.random.")):
        if name.startswith(short):
            return full + name[len(short):]
    return name


def outside_call(self_stack: list, method_stack: list) -> bool:
    """Whether a tensor made from a shape alone is data or a variable's initial value here:
    outside any model's method, or in a layer's ``__init__``/``build`` (in ``call()`` it is a
    tensor of the model, which the tensor ops read)."""
    return not self_stack or bool(method_stack) and method_stack[-1] in ("__init__", "build")


def float32_range(made: Any, path: str) -> Any:
    """``tf.linspace(0.0, 0.1, 12)`` of static numbers (``made``: numpy's float64 items): the
    items TensorFlow/Keras compute, each a float32, so ``[x for x in tf.linspace(...)]`` drop
    rates decide ``if drop_prob`` statically and reach the modules as the source's numbers."""
    if not isinstance(made, ArrayVal) or made.values is None:
        return Unknown(path)
    values = tuple(struct.unpack("f", struct.pack("f", v))[0] for v in made.values)
    return ArrayVal(path, made.shape, "float32", values=values)


def is_variable(path: str) -> bool:
    return path in _VARIABLES


#: what a tf.Variable on a Keras 3 layer is (the warning the reader gives)
UNTRACKED = ("tf.Variable(...) on a Keras 3 layer or model is not tracked by Keras (not in its weights, "
             "never trained by fit(), keeps its initial value): a non-trainable tensor of the torch module")


def variable_weight(path: str, owner: Any, args, kwargs, span: Span) -> WeightObj | None:
    """``tf.Variable(tf.zeros(shape), trainable=True, name=...)`` / ``keras.Variable(...)`` in a
    method of ``owner`` (a custom layer or model): the weight ``owner.add_weight(shape,
    initializer)`` would make; None when the initial value is not a :class:`FilledArray`
    (data, a computed tensor). Keras 3 tracks its own ``keras.Variable`` only: a
    ``tf.Variable`` is never trained (the weight is not trainable, see ``UNTRACKED``)."""
    names = ("initial_value", "trainable", "validate_shape", "caching_device", "name")
    if not path.startswith("tensorflow."):
        names = ("initializer", "shape", "dtype", "trainable")
    bound = dict(zip(names, args)) | dict(kwargs)
    value = bound.get("initial_value", bound.get("initializer"))
    if not isinstance(value, FilledArray) or owner is None:
        return None
    trainable = bound.get("trainable", True)
    if not isinstance(trainable, bool):
        return None
    if path.startswith("tensorflow."):
        trainable = False
    weight = WeightObj(owner, tuple(value.shape), trainable, value.initializer, span)
    owner.attrs.setdefault("__weights__", []).append(weight)
    return weight
