"""keras.ops / tf.* functions and Python operators on tensors → canonical ops: one table.

Every supported spelling of a tensor function (``keras.ops.mean``, ``keras.ops.numpy.mean``,
``tf.reduce_mean``, ``tf.math.reduce_mean``) is a key of one registry, next to its
signature and the recogniser that turns the bound arguments into IR nodes; Python
operators on tensors (``x * 0.5``, ``2.0 - x``, ``x / y``, ``x ** 2``, ``-x``, ``x @ w``,
``x > 0``) go through the same recognisers. The frontend hands tensors over as IR
``Value``s, a module path (``tf.float32``) as ``ApiPath`` and the run-time batch size
(``tf.shape(x)[0]``) as ``BatchDim``; the recogniser adds nodes through a ``Builder``.

Axes are the source program's (channels-last, batch axis 0): the layout pass rewrites
them. A scalar operand becomes an attribute (``x * 0.5`` is a ``rescaling``) or a
``constant`` operand (``2.0 - x``), never a param. A call whose arguments cannot be
translated faithfully raises ``Unsupported`` (the builder becomes a marked stub): the
batch axis as an axis, tensors where a static value is needed, interpolations torch
computes differently.

Keys: ``ops.X`` for ``keras.ops[.numpy|.nn|.math|.core].X`` (and TensorFlow NumPy's
``tnp.X`` of the same NumPy function), ``ops.image.X``,
``random.X`` for ``keras.random.X``, ``tf.X`` for ``tf[.math|.linalg].X``,
``tf.image.X``, ``tf.random.X``.
"""

from __future__ import annotations

import weakref

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from transpiler.frontend_ast.interp.values import BatchDim
from transpiler.frontend_ast.keras.shape_values import AxisDim, ShapeVector, pad_widths, shape_vector
from transpiler.frontend_ast.keras.layers import ACTIVATIONS, BoundArgs, Signature, Unsupported
from transpiler.ir import sizes
from transpiler.ir.graph import Value
from transpiler.ir.shapes import einsum_problem


@dataclass(frozen=True)
class ApiPath:
    """A module attribute passed as an argument (``tf.float32``, ``tf.image.ResizeMethod.BILINEAR``)."""

    path: str


class Builder(Protocol):
    """What a recogniser needs from the frontend."""

    def add(self, op: str, inputs: list[Value], attrs: dict[str, Any], hint: str,
            n_out: int = 1) -> list[Value]:
        """Add an ``op`` node reading ``inputs``; its output values."""

    def constant(self, value: int | float) -> Value:
        """A ``constant`` operand."""

    def warn(self, message: str) -> None:
        """A diagnostic at the call (the translation is faithful but differs in a documented way)."""

    def statement(self) -> int | None:
        """The id of the statement running the call."""

    def in_source(self, text: str) -> bool:
        """The script already holds ``text`` (a note an earlier translation added)."""


@dataclass(frozen=True)
class TensorFunction:
    """One registry entry: the recogniser, its signature, the Keras Operation class that
    names the op in a Functional model (None for tf.*), and the ops it can produce."""

    fn: Callable[["Call"], Any]
    signature: Signature
    keras_op: str | None
    ops: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...] = ()


_REGISTRY: dict[str, TensorFunction] = {}


def tensor_function(*keys: str, signature: str, ops: tuple[str, ...] = (), keras_op: str | None = None,
                    aliases: dict[str, str] | None = None):
    """Register a recogniser for ``keys`` (refuses duplicates). ``aliases`` renames keyword
    arguments (TF's ``input_tensor=`` is the signature's ``x``)."""
    sig = Signature.parse(signature)

    def deco(fn):
        for key in keys:
            if key in _REGISTRY:
                raise ValueError(f"tensor function {key} registered twice")
            op_class = keras_op if key.startswith(("ops.", "random.")) else None
            _REGISTRY[key] = TensorFunction(fn, sig, op_class, tuple(ops), tuple((aliases or {}).items()))
        return fn

    return deco


def registered_functions() -> dict[str, TensorFunction]:
    return dict(_REGISTRY)


def produced_ops() -> set[str]:
    """Every canonical op a tensor function or Python operator can produce."""
    return {op for entry in _REGISTRY.values() for op in entry.ops} | set(_OPERATOR_OPS)


#: (``keras.ops.backend.shape``: what keras.io's ner_transformers calls, keras.ops' own)
_KERAS_SUBMODULES = ("numpy.", "nn.", "math.", "core.", "linalg.", "backend.")
_TF_SUBMODULES = ("math.", "linalg.")


#: TensorFlow NumPy (``tensorflow.experimental.numpy``, keras.io's tnp): its functions are
#: NumPy's, as keras.ops' of the same name are (arguments by position or NumPy's keywords)
_TNP = "tensorflow.experimental.numpy."
_TNP_NAMES = frozenset((
    "abs", "absolute", "add", "arange", "argmax", "argmin", "broadcast_to", "clip", "concatenate",
    "divide", "einsum", "equal", "exp", "expand_dims", "floor", "full_like", "greater", "greater_equal",
    "less", "less_equal", "log", "matmul", "max", "maximum", "mean", "min", "minimum", "multiply",
    "negative", "not_equal", "ones", "ones_like", "power", "reshape", "sqrt", "square", "squeeze",
    "stack", "subtract", "sum", "take", "tile", "transpose", "true_divide", "where", "zeros",
    "zeros_like"))


def key_of(path: str, keras_name: str | None) -> str | None:
    """The registry key for a dotted path (``keras_name`` is its Keras API name, if any)."""
    key = None
    if keras_name is not None and keras_name.startswith("ops."):
        rest = keras_name[4:]
        for sub in _KERAS_SUBMODULES:
            if rest.startswith(sub):
                rest = rest[len(sub):]
        key = "ops." + rest
    elif keras_name is not None and keras_name.startswith("random."):
        key = keras_name
    elif path.startswith(_TNP) and path[len(_TNP):] in _TNP_NAMES:
        key = "ops." + path[len(_TNP):]
    elif path.startswith("tensorflow."):
        rest = path[len("tensorflow."):]
        for sub in _TF_SUBMODULES:
            if rest.startswith(sub):
                rest = rest[len(sub):]
        key = "tf." + rest
    return key if key in _REGISTRY else None


def keras_op_class(key: str) -> str | None:
    return _REGISTRY[key].keras_op


# ---------------------------------------------------------------------------------
# Reading arguments
# ---------------------------------------------------------------------------------
def is_static(value: Any) -> bool:
    """A value known while translating (numbers, strings, None, tuples of them)."""
    if value is None or isinstance(value, (bool, int, float, str, ApiPath)):
        return True
    if isinstance(value, (list, tuple)):
        return all(is_static(v) for v in value)
    return False


#: answers of ``batched`` so far (a value's producers do not change while a model is read)
_BATCHED: "weakref.WeakKeyDictionary[Value, bool]" = weakref.WeakKeyDictionary()


def batched(value: Value) -> bool:
    """``value`` depends on a model input (its axis 0 is the batch axis); False for a tensor
    computed from constants only (``ops.arange``, an Embedding of it). Remembered per value:
    asked of each new layer's input, the walk back to the inputs made a chain of N layers cost
    N² (a 5,000-layer Sequential)."""
    known = _BATCHED.get(value)
    if known is not None:
        return known
    seen: set[int] = set()
    todo = [value]
    answer = False
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        known = _BATCHED.get(v)
        if known is False:
            continue
        if known or v.producer is None:
            answer = True
            break
        todo += v.producer.inputs
    _BATCHED[value] = answer
    return answer


def unbatched(value: Value) -> None:
    """Say ``value`` has no batch axis although a batched tensor is its input (``arange_like``
    reads only the length of its input's axis)."""
    _BATCHED[value] = False


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Call:
    """One call of a tensor function: its bound arguments and the builder."""

    def __init__(self, key: str, bound: BoundArgs, builder: Builder):
        self.key = key
        self.bound = bound
        self.builder = builder
        self.name = key.split(".", 1)[1] if key.startswith(("ops.", "tf.")) else key

    def get(self, name: str) -> Any:
        return self.bound.get(name)

    def given(self, name: str) -> bool:
        return name in self.bound

    def tensor(self, name: str) -> Value:
        value = self.bound.get(name)
        if not isinstance(value, Value):
            raise Unsupported(f"{self.key}(): {name} must be a tensor of the model")
        return value

    def static(self, name: str) -> Any:
        value = self.bound.get(name)
        if not is_static(value):
            raise Unsupported(f"{self.key}(): {name} must be known statically (it is computed at run time)")
        return value

    def axis(self, name: str, rank: int, *, new_axis: bool = False, batch: bool = True) -> int:
        """A static int axis, normalised; never the batch axis (0) of a ``batch``ed tensor."""
        value = self.static(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise Unsupported(f"{self.key}(): {name}={value!r} must be one int")
        size = rank + 1 if new_axis else rank
        if not -size <= value < size:
            raise Unsupported(f"{self.key}(): {name}={value} is out of range for rank {rank}")
        if value % size == 0 and batch:
            raise Unsupported(f"{self.key}(): {name}={value} is the batch axis")
        return value % size

    def axes(self, name: str, rank: int) -> tuple[int, ...]:
        """Static axes (an int or a sequence), normalised and sorted; None is refused."""
        value = self.static(name)
        if value is None:
            raise Unsupported(f"{self.key}(): {name}=None reduces every axis, the batch axis too")
        items = (value,) if isinstance(value, int) else tuple(value)
        if not all(isinstance(a, int) and not isinstance(a, bool) and -rank <= a < rank for a in items):
            raise Unsupported(f"{self.key}(): {name}={value!r} must be ints below rank {rank}")
        out = tuple(sorted({a % rank for a in items}))
        if 0 in out:
            raise Unsupported(f"{self.key}(): {name}={value!r} includes the batch axis")
        return out

    def add(self, op: str, inputs: list[Value], attrs: dict[str, Any] | None = None, hint: str | None = None,
            n_out: int = 1) -> list[Value]:
        return self.builder.add(op, inputs, dict(attrs or {}), hint or op, n_out)

    def one(self, op: str, inputs: list[Value], attrs: dict[str, Any] | None = None,
            hint: str | None = None) -> Value:
        return self.add(op, inputs, attrs, hint)[0]


def bind(key: str, args: list, kwargs: dict[str, Any]) -> BoundArgs:
    entry = _REGISTRY[key]
    kwargs = dict(kwargs)
    if key.startswith("tf."):
        kwargs.pop("name", None)  # TensorFlow's op name: no meaning once translated
    args = list(args)
    names = entry.signature.names
    if names and names[-1].startswith("*"):  # ``*operands``: the rest of the positional arguments
        args = args[:len(names) - 1] + [tuple(args[len(names) - 1:])]
    bound = BoundArgs(key, entry.signature, args, {})
    for k, v in kwargs.items():
        k = dict(entry.aliases).get(k, k)
        if k in bound.values:
            raise Unsupported(f"{key}(): argument {k!r} given twice")
        if k not in entry.signature.names:
            raise Unsupported(f"{key}(): argument {k!r} is not supported")
        bound.values[k] = v
    return bound


def call_function(key: str, args: list, kwargs: dict[str, Any], builder: Builder) -> Any:
    """Run the recogniser of ``key`` on the call's arguments (tensors as Values)."""
    entry = _REGISTRY[key]
    bound = bind(key, args, kwargs)
    result = entry.fn(Call(key, bound, builder))
    extra = [k for k in bound.unused() if bound.values[k] != entry.signature.defaults.get(k)]
    if extra:
        raise Unsupported(f"{key}(): argument(s) {', '.join(extra)} not supported")
    return result


# ---------------------------------------------------------------------------------
# Arithmetic: keras.ops / tf functions and Python operators alike
# ---------------------------------------------------------------------------------
#: Python operator → (canonical op name, the Keras Operation class that names it)
OPERATORS = {"add": "Add", "subtract": "Subtract", "multiply": "Multiply", "divide": "TrueDivide",
             "power": "Power", "matmul": "Matmul", "greater": "Greater", "greater_equal": "GreaterEqual",
             "less": "Less", "less_equal": "LessEqual", "equal": "Equal", "not_equal": "NotEqual",
             "negative": "Negative"}
#: the Python operators read on tensors (for the docs)
PYTHON_OPERATORS = ("+", "-", "*", "/", "**", "@", "-x", ">", ">=", "<", "<=", "==", "!=", "x[:, i:j]")
_OPERATOR_OPS = ("slice", "take", "expand_dims", "add", "subtract", "multiply", "divide", "power", "matmul", "greater", "greater_equal",
                 "less", "less_equal", "equal", "not_equal", "negative", "rescaling", "constant")
_STATIC = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
           "power": operator.pow, "maximum": max, "minimum": min, "greater": operator.gt,
           "greater_equal": operator.ge, "less": operator.lt, "less_equal": operator.le,
           "equal": operator.eq, "not_equal": operator.ne}


def arithmetic(builder: Builder, op: str, left: Any, right: Any, what: str) -> Any:
    """``left <op> right`` where at least one side may be a tensor (``what`` names the
    construct in messages). Tensor and number: an affine one is a ``rescaling``
    (``x * 0.5``, ``x / 255``, ``x + 1``, ``x - 1``), anything else reads a ``constant``."""
    left_t, right_t = isinstance(left, Value), isinstance(right, Value)
    if not left_t and not right_t:
        if _number(left) and _number(right) and op in _STATIC:
            return _STATIC[op](left, right)
        raise Unsupported(f"{what}: the operands are neither tensors nor numbers")
    if left_t and right_t:
        return builder.add(op, [left, right], {}, op)[0]
    tensor, scalar = (left, right) if left_t else (right, left)
    if not _number(scalar) and not isinstance(scalar, bool):
        raise Unsupported(f"{what}: an operand is neither a tensor nor a number known statically")
    if op == "matmul":
        raise Unsupported(f"{what}: a matrix product with a number")
    if _number(scalar) and (op in ("add", "multiply") or op in ("subtract", "divide") and left_t):
        if op == "multiply":  # (as_float: a scale of the builder's sizes keeps their names)
            attrs, hint = {"scale": sizes.as_float(scalar), "offset": 0.0}, "scale"
        elif op == "divide":
            if scalar == 0:
                raise Unsupported(f"{what}: division by zero")
            attrs, hint = {"scale": 1.0 / sizes.as_float(scalar), "offset": 0.0}, "scale"
        else:
            attrs, hint = {"scale": 1.0, "offset": sizes.as_float(scalar) * (1.0 if op == "add" else -1.0)}, "shift"
        return builder.add("rescaling", [tensor], attrs, hint)[0]
    const = builder.constant(scalar)
    return builder.add(op, [tensor, const] if left_t else [const, tensor], {}, op)[0]


def _binary(op: str):
    def recognize(c: Call) -> Any:
        return arithmetic(c.builder, op, c.get("x"), c.get("y"), f"{c.key}()")

    return recognize


for _op, _keys, _cls in (
        ("add", ("ops.add", "tf.add"), "Add"),
        ("subtract", ("ops.subtract", "tf.subtract"), "Subtract"),
        ("multiply", ("ops.multiply", "tf.multiply"), "Multiply"),
        ("divide", ("ops.divide", "tf.divide"), "Divide"),
        ("divide", ("ops.true_divide", "tf.truediv"), "TrueDivide"),
        ("maximum", ("ops.maximum", "tf.maximum"), "Maximum"),
        ("minimum", ("ops.minimum", "tf.minimum"), "Minimum"),
        ("power", ("ops.power", "tf.pow"), "Power"),
        ("greater", ("ops.greater", "tf.greater"), "Greater"),
        ("greater_equal", ("ops.greater_equal", "tf.greater_equal"), "GreaterEqual"),
        ("less", ("ops.less", "tf.less"), "Less"),
        ("less_equal", ("ops.less_equal", "tf.less_equal"), "LessEqual"),
        ("equal", ("ops.equal", "tf.equal"), "Equal"),
        ("not_equal", ("ops.not_equal", "tf.not_equal"), "NotEqual")):
    tensor_function(*_keys, signature="x; y", ops=(_op, "rescaling", "constant"), keras_op=_cls,
                    aliases={"x1": "x", "x2": "y"})(_binary(_op))


@tensor_function("ops.matmul", signature="x; y", ops=("matmul",), keras_op="Matmul",
                 aliases={"x1": "x", "x2": "y"})
def recognize_matmul(c: Call) -> Value:
    return c.one("matmul", [c.tensor("x"), c.tensor("y")])


@tensor_function("tf.matmul", signature="x; y; transpose_a=False; transpose_b=False; adjoint_a=False; "
                                        "adjoint_b=False; a_is_sparse=False; b_is_sparse=False; output_type=None",
                 ops=("matmul", "transpose"), aliases={"a": "x", "b": "y"})
def recognize_tf_matmul(c: Call) -> Value:
    x, y = c.tensor("x"), c.tensor("y")
    flags = {k: c.static(k) for k in ("transpose_a", "transpose_b", "adjoint_a", "adjoint_b")}
    if flags["transpose_a"] or flags["adjoint_a"]:
        x = _swap_last(c, x)
    if flags["transpose_b"] or flags["adjoint_b"]:
        y = _swap_last(c, y)  # real tensors: the adjoint is the transpose
    return c.one("matmul", [x, y])


def _swap_last(c: Call, x: Value) -> Value:
    rank = len(x.shape)
    if rank < 3:
        raise Unsupported(f"{c.key}(): transposing a (batch, features) matrix moves the batch axis")
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return c.one("transpose", [x], {"perm": perm}, "transpose")


# ---------------------------------------------------------------------------------
# Element-wise functions
# ---------------------------------------------------------------------------------
_UNARY_STATIC = {"negative": operator.neg, "abs": abs, "square": lambda v: v * v, "sqrt": math.sqrt,
                 "rsqrt": lambda v: 1.0 / math.sqrt(v), "exp": math.exp, "log": math.log,
                 "floor": lambda v: float(math.floor(v)), "sin": math.sin, "cos": math.cos}


def _unary(op: str):
    def recognize(c: Call) -> Any:
        x = c.get("x")
        if _number(x):
            return _UNARY_STATIC[op](x)  # e.g. tf.sqrt(tf.cast(d, tf.float32)) on a Python int
        return c.one(op, [c.tensor("x")])

    return recognize


for _op, _keys, _cls in (
        ("negative", ("ops.negative", "tf.negative"), "Negative"),
        ("abs", ("ops.abs", "ops.absolute", "tf.abs"), "Absolute"),
        ("square", ("ops.square", "tf.square"), "Square"),
        ("sqrt", ("ops.sqrt", "tf.sqrt"), "Sqrt"),
        ("rsqrt", ("ops.rsqrt", "tf.rsqrt"), "Rsqrt"),
        ("exp", ("ops.exp", "tf.exp"), "Exp"),
        ("log", ("ops.log", "tf.log"), "Log"),
        ("floor", ("ops.floor", "tf.floor"), "Floor"),
        ("sin", ("ops.sin", "tf.sin"), "Sin"),
        ("cos", ("ops.cos", "tf.cos"), "Cos")):
    tensor_function(*_keys, signature="x", ops=(_op,), keras_op=_cls)(_unary(_op))


def _bound(c: Call, name: str) -> float | None:
    value = c.static(name)
    if value is not None and not _number(value):
        raise Unsupported(f"{c.key}(): {name}={value!r} must be a number")
    return None if value is None else float(value)


@tensor_function("ops.clip", signature="x; x_min; x_max", ops=("clip",), keras_op="Clip")
@tensor_function("tf.clip_by_value", signature="x; x_min; x_max", ops=("clip",),
                 aliases={"t": "x", "clip_value_min": "x_min", "clip_value_max": "x_max"})
def recognize_clip(c: Call) -> Value:
    return c.one("clip", [c.tensor("x")], {"min": _bound(c, "x_min"), "max": _bound(c, "x_max")})


def _operand(c: Call, name: str) -> Value:
    value = c.get(name)
    if isinstance(value, Value):
        return value
    if _number(value) or isinstance(value, bool):
        return c.builder.constant(value)
    raise Unsupported(f"{c.key}(): {name} must be a tensor or a number")


@tensor_function("ops.where", "tf.where", signature="condition; x=None; y=None", ops=("where", "constant"),
                 keras_op="Where", aliases={"x1": "x", "x2": "y"})
def recognize_where(c: Call) -> Value:
    if c.get("x") is None or c.get("y") is None:
        raise Unsupported(f"{c.key}(condition) alone gives the indices of true elements (a data-dependent shape)")
    return c.one("where", [c.tensor("condition"), _operand(c, "x"), _operand(c, "y")])


#: dtype spellings → the IR's dtype names
DTYPES = {"float16": "float16", "half": "float16", "float32": "float32", "float": "float32",
          "float64": "float64", "double": "float64", "bfloat16": "bfloat16", "int8": "int8",
          "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool"}


def dtype_name(value: Any, what: str) -> str:
    text = value.path.rsplit(".", 1)[-1] if isinstance(value, ApiPath) else value
    if not isinstance(text, str) or text not in DTYPES:
        raise Unsupported(f"{what}: dtype {value!r} is not supported")
    return DTYPES[text]


@tensor_function("ops.cast", "tf.cast", signature="x; dtype", ops=("cast",), keras_op="Cast")
def recognize_cast(c: Call) -> Any:
    dtype = dtype_name(c.static("dtype"), f"{c.key}()")
    x = c.get("x")
    if _number(x) or isinstance(x, bool):  # tf.cast(d_model, tf.float32) on a Python number
        return bool(x) if dtype == "bool" else int(x) if dtype.startswith(("int", "uint")) else float(x)
    return c.one("cast", [c.tensor("x")], {"dtype": dtype})


@tensor_function("ops.convert_to_tensor", "tf.constant", "tf.convert_to_tensor",
                 signature="x; dtype=None; sparse=None; ragged=None; shape=None; verify_shape=False",
                 ops=("constant", "cast"), aliases={"value": "x"})
def recognize_constant(c: Call) -> Any:
    """A number (``tf.constant(2.0)``) stays a number: an operand, never a param; a
    tensor passes through (cast if a dtype is given)."""
    x, dtype = c.get("x"), c.static("dtype")
    for extra in ("sparse", "ragged", "shape", "verify_shape"):
        c.get(extra)
    if isinstance(x, Value):
        return x if dtype is None else c.one("cast", [x], {"dtype": dtype_name(dtype, f"{c.key}()")})
    if _number(x) or isinstance(x, bool):
        if dtype is None:
            return x
        name = dtype_name(dtype, f"{c.key}()")
        return bool(x) if name == "bool" else int(x) if name.startswith(("int", "uint")) else float(x)
    widths = pad_widths(x) if dtype is None or "int" in str(dtype) else None
    if widths is not None:
        return widths  # (read only by ops.pad / tf.pad: tensor_ops_images.py)
    vector = shape_vector(x) if dtype is None or "int" in str(dtype) else None
    if vector is not None and any(isinstance(v, (BatchDim, AxisDim)) for v in vector) or \
            vector is not None and c.key == "ops.convert_to_tensor" and len(vector) <= 4:
        return ShapeVector.made(vector, c)  # (sizes: read only by ops.concatenate / ops.tile as tile multiples)
    raise Unsupported(f"{c.key}(): a constant array would be a tensor of the model (only numbers are supported)")


@tensor_function("tf.l2_normalize", "tf.nn.l2_normalize", signature="x; axis=None; epsilon=1e-12; dim=None",
                 ops=("reduce_sum", "square", "maximum", "rsqrt", "multiply", "constant"))
def recognize_l2_normalize(c: Call) -> Value:
    """TF's x * rsqrt(max(sum(x ** 2, axis), epsilon)), op by op."""
    x = c.tensor("x")
    if c.get("dim") is not None:
        raise Unsupported(f"{c.key}(): dim= is deprecated; use axis=")
    axes = c.axes("axis", len(x.shape))
    eps = c.static("epsilon")
    if not _number(eps):
        raise Unsupported(f"{c.key}(): epsilon must be a number")
    total = c.one("reduce_sum", [c.one("square", [x])], {"axis": axes, "keepdims": True}, "sum")
    floor = c.one("maximum", [total, c.builder.constant(float(eps))])
    return c.one("multiply", [x, c.one("rsqrt", [floor])])


def _fill_value(c: Call, value: Any) -> float:
    if not _number(value) and not isinstance(value, bool):
        raise Unsupported(f"{c.key}(): fill_value={value!r} must be a number known statically")
    return float(value)


def _optional_dtype(c: Call) -> str:
    dtype = c.static("dtype")
    return "" if dtype is None else dtype_name(dtype, f"{c.key}()")


def _filled_like(value: float | None):
    def recognize(c: Call) -> Value:
        x = c.tensor("x")
        fill = _fill_value(c, c.get("fill_value") if value is None else value)
        return c.one("full_like", [x], {"value": fill, "dtype": _optional_dtype(c)}, c.name)

    return recognize


for _kind, _value, _cls in (("zeros_like", 0.0, "ZerosLike"), ("ones_like", 1.0, "OnesLike")):
    tensor_function(f"ops.{_kind}", signature="x; dtype=None", ops=("full_like",),
                    keras_op=_cls)(_filled_like(_value))
    tensor_function(f"tf.{_kind}", signature="x; dtype=None", ops=("full_like",),
                    aliases={"input": "x"})(_filled_like(_value))
tensor_function("ops.full_like", signature="x; fill_value; dtype=None", ops=("full_like",),
                keras_op="FullLike")(_filled_like(None))


def _batch_shape(c: Call, static: str = "") -> tuple[Value, tuple[int, ...]]:
    """``shape=(tf.shape(x)[0], 5, 6)``: the tensor whose batch size it takes, and the static
    sizes after it (``static`` says what a shape without the batch size would be)."""
    shape = c.get("shape")
    if not isinstance(shape, (list, tuple)) or not shape or not isinstance(shape[0], BatchDim):
        raise Unsupported(f"{c.key}(): the shape must start with the batch size (tf.shape(x)[0]), "
                          f"got {shape!r}{static}")
    rest = tuple(shape[1:])
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in rest):
        raise Unsupported(f"{c.key}(): the sizes after the batch size must be static, got {shape!r}")
    return shape[0].value, rest


def _filled(value: float):
    def recognize(c: Call) -> Value:
        like, rest = _batch_shape(c, "; a tensor of a static shape would be a constant of the model")
        _check_rank(c, len(rest) + 1)
        dtype = _optional_dtype(c) or "float32"
        return c.one("full", [like], {"shape": rest, "value": value, "dtype": dtype}, c.name)

    return recognize


tensor_function("ops.zeros", signature="shape; dtype=None", ops=("full",))(_filled(0.0))
tensor_function("ops.ones", signature="shape; dtype=None", ops=("full",))(_filled(1.0))


@tensor_function("ops.einsum", signature="equation; *operands", ops=("einsum",), keras_op="Einsum",
                 aliases={"subscripts": "equation"})
@tensor_function("tf.einsum", signature="equation; *operands", ops=("einsum",))
def recognize_einsum(c: Call) -> Value:
    """Computed in the source layout (the layout pass permutes channels-first operands back);
    the batch axis must stay the first axis of every batched operand and of the output."""
    equation = c.static("equation")
    operands = c.get("*operands")
    if not isinstance(equation, str):
        raise Unsupported(f"{c.key}(): the equation must be a string known statically")
    if not operands or not all(isinstance(v, Value) for v in operands):
        raise Unsupported(f"{c.key}(): the operands must be tensors of the model")
    problem = einsum_problem(equation, [v.shape for v in operands])
    if problem:
        raise Unsupported(f"{c.key}(): {problem}")
    return c.one("einsum", list(operands), {"equation": equation.replace(" ", "")}, "einsum")


# ---------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------
def _reduce(op: str):
    def recognize(c: Call) -> Value:
        x = c.tensor("x")
        if "initial" in c.bound.sig.names and c.static("initial") is not None:
            raise Unsupported(f"{c.key}(): initial= is not supported")
        return c.one(op, [x], {"axis": c.axes("axis", len(x.shape)), "keepdims": bool(c.static("keepdims"))},
                     op[len("reduce_"):])

    return recognize


for _kind, _cls in (("mean", "Mean"), ("sum", "Sum"), ("max", "Max"), ("min", "Min")):
    tensor_function(f"ops.{_kind}", signature="x; axis=None; keepdims=False; initial=None",
                    ops=(f"reduce_{_kind}",), keras_op=_cls)(_reduce(f"reduce_{_kind}"))
    tensor_function(f"tf.reduce_{_kind}", signature="x; axis=None; keepdims=False",
                    ops=(f"reduce_{_kind}",), aliases={"input_tensor": "x"})(_reduce(f"reduce_{_kind}"))


def _arg(op: str):
    def recognize(c: Call) -> Value:
        x = c.tensor("x")
        axis = c.get("axis")
        if axis is None:
            raise Unsupported(f"{c.key}(): without an axis it reads the flattened tensor, batch axis included"
                              if c.key.startswith("ops.") else f"{c.key}(): axis=None is the batch axis")
        if "output_type" in c.bound.sig.names:
            c.get("output_type")  # torch's indices are int64, TF's default
        return c.one(op, [x], {"axis": c.axis("axis", len(x.shape)), "keepdims": bool(c.static("keepdims"))})

    return recognize


for _op, _cls in (("argmax", "Argmax"), ("argmin", "Argmin")):
    tensor_function(f"ops.{_op}", signature="x; axis=None; keepdims=False", ops=(_op,), keras_op=_cls)(_arg(_op))
    tensor_function(f"tf.{_op}", signature="x; axis=None; output_type=None; keepdims=False", ops=(_op,),
                    aliases={"input": "x"})(_arg(_op))


def _check_rank(c: Call, rank: int) -> None:
    if rank > 5:
        raise Unsupported(f"{c.key}(): tensors of rank {rank} (more than 5) are not supported")


# ---------------------------------------------------------------------------------
# Random numbers: the same distribution, not the same numbers
# ---------------------------------------------------------------------------------
def _random(op: str, params: tuple[str, str], defaults: tuple[float, float]):
    def recognize(c: Call) -> Value:
        like, rest = _batch_shape(c)
        dtype = c.get("dtype")
        if dtype is not None and dtype_name(dtype, f"{c.key}()") != "float32":
            raise Unsupported(f"{c.key}(): only float32 noise is supported")
        attrs = {}
        for p, default in zip(params, defaults):
            value = c.static(p)
            value = default if value is None else value
            if not _number(value):
                raise Unsupported(f"{c.key}(): {p}={value!r} must be a number")
            attrs[p] = float(value)
        c.get("seed")  # any seed: torch's generator draws other numbers anyway
        c.builder.warn(f"{c.key}(): torch draws from its own random generator: same distribution, "
                       "different numbers than TensorFlow's")
        out = c.one(op, [like], {"shape": rest, **attrs}, "noise")
        note = f"# {c.key}: torch's generator draws other numbers (same distribution)"
        if not c.builder.in_source(note):  # (read back from a translation: the script keeps it)
            out.producer.comments.append(note)
        return out

    return recognize


tensor_function("random.normal", "tf.random.normal", signature="shape; mean=0.0; stddev=1.0; dtype=None; seed=None",
                ops=("random_normal",))(_random("random_normal", ("mean", "stddev"), (0.0, 1.0)))
tensor_function("random.uniform", "tf.random.uniform",
                signature="shape; minval=0.0; maxval=None; dtype=None; seed=None",
                ops=("random_uniform",))(_random("random_uniform", ("minval", "maxval"), (0.0, 1.0)))


# ---------------------------------------------------------------------------------
# Activation functions called on tensors (keras.activations.*, keras.ops.*, tf.nn.*)
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Act:
    """The keyword arguments of one activation function, per namespace."""

    keras: str = ""
    ops: str | None = None  # None: as keras
    tf: str = "name=None"
    build: Callable[[dict], dict] = field(default=lambda kw: {})


def _relu(kw: dict) -> dict:
    return {"negative_slope": float(kw.get("negative_slope", 0.0)), "threshold": float(kw.get("threshold", 0.0)),
            "max_value": None if kw.get("max_value") is None else float(kw["max_value"])}


_ACTIVATION_ARGS: dict[str, _Act] = {
    "relu": _Act("negative_slope=0.0; max_value=None; threshold=0.0", "", build=_relu),
    "softmax": _Act("axis=-1", tf="axis=None; name=None", build=lambda kw: {"axis": kw.get("axis")}),
    "log_softmax": _Act("axis=-1", tf="axis=None; name=None", build=lambda kw: {"axis": kw.get("axis")}),
    "leaky_relu": _Act("negative_slope=0.2", tf="alpha=0.2; name=None",
                       build=lambda kw: {"negative_slope": float(kw.get("negative_slope", kw.get("alpha", 0.2)))}),
    "gelu": _Act("approximate=False", "approximate=True", "approximate=False; name=None",
                 build=lambda kw: {"approximate": bool(kw["approximate"])}),
    "elu": _Act("alpha=1.0", build=lambda kw: {"alpha": float(kw.get("alpha", 1.0))}),
    "silu": _Act("", tf="beta=1.0; name=None"),
    "swish": _Act("", tf="beta=1.0; name=None"),
}


def activation_call(name: str, namespace: str, args: list, kwargs: dict[str, Any], builder: Builder) -> Any:
    """``keras.activations.softmax(x, axis=1)``, ``keras.ops.gelu(x)`` (approximate by default,
    unlike the activation), ``tf.nn.leaky_relu(x, alpha=0.1)``: the op with its arguments."""
    spec = ACTIVATIONS[name]
    kw = dict(kwargs)
    rest = list(args)
    if not rest:
        for first in ("x", "features", "logits"):
            if first in kw:
                rest = [kw.pop(first)]
                break
    if not rest or not isinstance(rest[0], Value):
        raise Unsupported(f"{namespace}.{name}(): the first argument must be a tensor of the model")
    x, rest = rest[0], rest[1:]
    act = _ACTIVATION_ARGS.get(name, _Act())
    text = act.tf if namespace == "tf.nn" else act.keras if namespace != "ops" or act.ops is None else act.ops
    sig = Signature.parse(text)
    bound = BoundArgs(f"{namespace}.{name}", sig, rest, kw)
    unknown = [k for k in bound.values if k not in sig.names]
    if unknown:
        raise Unsupported(f"{namespace}.{name}(): argument(s) {', '.join(unknown)} not supported")
    values = {n: bound.get(n) for n in sig.names}
    if not all(is_static(v) for v in values.values()):
        raise Unsupported(f"{namespace}.{name}(): its arguments must be known statically")
    values.pop("name", None)
    if values.pop("beta", 1.0) != 1.0:
        raise Unsupported(f"{namespace}.{name}(): beta other than 1.0 is not supported")
    if spec is None:
        return x
    op, attrs = spec
    attrs = {**attrs, **act.build(values)}
    if "axis" in attrs:
        attrs["axis"] = -1 if attrs["axis"] is None else attrs["axis"]
        if not isinstance(attrs["axis"], int) or attrs["axis"] % len(x.shape) == 0:
            raise Unsupported(f"{namespace}.{name}(): axis={attrs['axis']!r} must be one non-batch axis")
    return builder.add(op, [x], attrs, op)[0]


from transpiler.frontend_ast.keras import tensor_ops_images, tensor_ops_sequences  # noqa: E402,F401  (registration)
from transpiler.frontend_ast.keras.tensor_ops_shapes import subscript  # noqa: E402,F401  (registration; re-exported)
