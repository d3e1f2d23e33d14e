"""Tensors a module's ``__init__`` computes as constants (issue 19 item b): the sinusoidal
table of a ``PositionalEncoding`` (``torch.arange``, ``torch.exp``, ``sin``/``cos`` written
into slices of ``torch.zeros``), a causal mask (``torch.tril(torch.ones(n, n))``), kept with
``self.register_buffer(name, tensor)``.

The reader does not compute the numbers (it imports no torch, and a table of ``max_len x
d_model`` is no literal to print): it follows the computation as a numpy expression
(:class:`ConstArray`, its functions marked as ir/array_functions' are: its shape, dtype and the expression's tokens, sizes kept as values so
that they print as the constructor's names, ``d_model``), and the buffer becomes a
non-trainable Keras weight initialised with that expression
(``keras.initializers.Constant(np.sin(...))``): the same numbers, computed the same way when
the Keras model is made. Item assignment (``pe[:, 0::2] = ...``) is the runtime helper
``set_items`` (a copy with the items set: numpy's assignment as an expression).

What is not followed (an operation not listed here, a view written through) raises
Unsupported naming it: the class is then a stub, as before.

Imports no deep-learning framework.
"""

from __future__ import annotations

import math
from typing import Any

from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.ir.array_functions import mark

#: torch functions (and tensor methods) of one array → numpy's
UNARY = {name: mark(name) for name in ("exp", "sin", "cos", "log", "sqrt", "tanh", "abs", "tril", "triu")}
_FLOAT_DTYPES = {"torch.float", "torch.float32", "float", "float32"}
_INT_DTYPES = {"torch.long", "torch.int64", "torch.int", "torch.int32", "int", "long"}


class ConstArray:
    """A constant tensor of ``__init__`` as a numpy expression (see the module doc).

    ``tokens``: the expression's text pieces and values (sizes and numbers print with the
    printer's ``lit``: a size as its source name where the code sees it)."""

    def __init__(self, tokens: list, shape: tuple, dtype: str = "float32", set_items: bool = False):
        self.tokens = list(tokens)
        self.shape = tuple(shape)
        self.dtype = dtype
        self.set_items = set_items  # (the expression uses the runtime helper set_items)

    def derive(self, tokens: list, shape=None, dtype=None) -> "ConstArray":
        return ConstArray(tokens, self.shape if shape is None else shape, dtype or self.dtype, self.set_items)

    def __neg__(self) -> "ConstArray":  # ``-torch.arange(0, d, 2)`` (the interpreter's unary minus)
        return self.derive(["(-", *self.tokens, ")"])

    def __pos__(self) -> "ConstArray":
        return self

    def init(self) -> tuple:
        """The buffer's initial value for ``ParamObj.init``: ``("computed", tokens, set_items)``."""
        tokens = self.tokens if self.dtype == "float32" else [*self.tokens, '.astype("float32")']
        return ("computed", tuple(tokens), self.set_items)


def _dtype_name(value) -> str | None:
    text = getattr(value, "path", None) or (value if isinstance(value, str) else None)
    if text in _FLOAT_DTYPES:
        return "float32"
    if text in _INT_DTYPES:
        return "int64"
    return None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shape_args(args, kwargs, what: str) -> tuple:
    dims = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    dims = kwargs.get("size", dims)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise Unsupported(f"{what}: the shape must be known statically")
    return tuple(dims)


def _tuple_tokens(values) -> list:
    out: list = ["("]
    for i, v in enumerate(values):
        out += [", "] if i else []
        out.append(v)
    out.append(",)" if len(values) == 1 else ")")
    return out


def filled(name: str, args, kwargs) -> ConstArray:
    """``torch.zeros(n, d)`` / ``torch.ones(...)`` → ``np.zeros((n, d), "float32")``."""
    shape = _shape_args(list(args), kwargs, f"torch.{name}")
    dtype = _dtype_name(kwargs.get("dtype")) or "float32"
    return ConstArray([f"{mark(name)}(", *_tuple_tokens(shape), f', "{dtype}")'], shape, dtype)


def arange(args, kwargs) -> ConstArray:
    """``torch.arange(end)``, ``torch.arange(start, end, step, dtype=torch.float)``."""
    args = list(args)
    if "end" in kwargs:
        args = [kwargs.get("start", 0), kwargs["end"], kwargs.get("step", 1)]
    if len(args) == 1:
        args = [0, args[0]]
    start, end, step = (args + [1])[:3]
    if not all(_number(v) for v in (start, end, step)) or step == 0:
        raise Unsupported("torch.arange: the bounds must be known statically")
    dtype = _dtype_name(kwargs.get("dtype"))
    if dtype is None:
        dtype = "float32" if any(isinstance(v, float) for v in (start, end, step)) else "int64"
    if all(isinstance(v, int) for v in (start, end, step)) and step > 0:
        length = (end - start + step - 1) // step  # (a size of the constructor's names, d_model)
    else:
        length = max(0, math.ceil((float(end) - float(start)) / float(step)))
    return ConstArray([f"{mark('arange')}(", start, ", ", end, ", ", step, f', dtype="{dtype}")'], (length,), dtype)


def _broadcast(a: tuple, b: tuple, what: str) -> tuple:
    out = []
    for x, y in zip(((1,) * (len(b) - len(a))) + a, ((1,) * (len(a) - len(b))) + b):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        else:
            raise Unsupported(f"{what}: shapes {a} and {b} do not broadcast")
    return tuple(out)


#: Python operators (libcst classes by name) → text
_OPS = {"Add": " + ", "Subtract": " - ", "Multiply": " * ", "Divide": " / ", "Power": " ** "}


def binary(op, left, right) -> ConstArray:
    """``position * div_term``, ``torch.arange(0, d, 2).float() * (-math.log(1e4) / d)``."""
    text = _OPS.get(getattr(op, "__name__", ""))
    if text is None:
        raise Unsupported("arithmetic on a tensor made in __init__: only + - * / ** are followed")
    parts, shapes, dtypes = [], [], []
    for side in (left, right):
        if isinstance(side, ConstArray):
            parts.append(side)
            shapes.append(side.shape)
            dtypes.append(side.dtype)
        elif _number(side):
            parts.append(side)
            shapes.append(())
            dtypes.append("float32" if isinstance(side, float) else "int64")
        else:
            raise Unsupported("arithmetic on a tensor made in __init__ with something that is not a number")
    # torch: a float operand makes the result float32 (the default dtype), also a Python float
    dtype = "float32" if "float32" in dtypes or text == " / " else "int64"
    tokens: list = ["("]
    for i, part in enumerate(parts):
        tokens += [text] if i else []
        if isinstance(part, ConstArray):
            cast = dtype == "float32" and part.dtype != "float32"
            tokens += [*part.tokens] + (['.astype("float32")'] if cast else [])  # (a call or in parentheses)
        else:
            tokens += ["(", part, ")"] if part < 0 else [part]
    tokens.append(")")
    base = next(p for p in parts if isinstance(p, ConstArray))
    return base.derive(tokens, _broadcast(shapes[0], shapes[1], "arithmetic"), dtype) if len(shapes) == 2 \
        else base.derive(tokens, dtype=dtype)


def _axis(dim, rank: int) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        raise Unsupported(f"an axis {dim!r} of a tensor of rank {rank} made in __init__")
    return dim % rank


def method(arr: ConstArray, name: str, args, kwargs) -> ConstArray:
    """A tensor method on a constant: ``.unsqueeze(1)``, ``.float()``, ``.transpose(0, 1)``,
    ``.view(1, 1, n, n)``, ``.exp()``..."""
    args = list(args)
    if name in ("float",) and not args:
        return arr.derive([*arr.tokens, '.astype("float32")'], dtype="float32")
    if name == "long" and not args:
        return arr.derive([*arr.tokens, '.astype("int64")'], dtype="int64")
    if name == "unsqueeze":
        dim = args[0] if args else kwargs.get("dim")
        rank = len(arr.shape) + 1
        d = _axis(dim, rank)
        shape = arr.shape[:d] + (1,) + arr.shape[d:]
        return arr.derive([f"{mark('expand_dims')}(", *arr.tokens, f", {d})"], shape)
    if name in ("transpose", "swapaxes") and len(args) == 2:
        a, b = (_axis(d, len(arr.shape)) for d in args)
        shape = list(arr.shape)
        shape[a], shape[b] = shape[b], shape[a]
        return arr.derive([f"{mark('swapaxes')}(", *arr.tokens, f", {a}, {b})"], tuple(shape))
    if name in ("view", "reshape"):
        dims = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        if not dims or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims) or \
                sum(1 for d in dims if d == -1) > 0:
            raise Unsupported(f".{name}() of a tensor made in __init__: the shape must be known statically")
        return arr.derive([f"{mark('reshape')}(", *arr.tokens, ", ", *_tuple_tokens(tuple(dims)), ")"], tuple(dims))
    if name in UNARY and not args and not kwargs:
        return unary(name, arr, [], {})
    if name in ("contiguous", "clone", "detach") and not args:
        return arr
    raise Unsupported(f"tensor method .{name}() on a tensor made in __init__ is not followed")


def unary(name: str, arr: ConstArray, args, kwargs) -> ConstArray:
    """``torch.exp(t)``, ``torch.sin(t)``, ``torch.tril(t, diagonal=0)``."""
    if name in ("tril", "triu"):
        k = args[0] if args else kwargs.get("diagonal", 0)
        if not isinstance(k, int):
            raise Unsupported(f"torch.{name}: the diagonal must be known statically")
        return arr.derive([f"{UNARY[name]}(", *arr.tokens, f", {k})" if k else ")"])
    if args or kwargs:
        raise Unsupported(f"torch.{name} with more arguments on a tensor made in __init__")
    dtype = "float32" if name != "abs" else arr.dtype
    cast = ['.astype("float32")'] if dtype == "float32" and arr.dtype != "float32" else []
    return arr.derive([f"{UNARY[name]}(", *arr.tokens, *cast, ")"], dtype=dtype)


def _index_tokens(index) -> list:
    """``pe[:, 0::2]``'s index as Python: ``(slice(None, None, None), slice(0, None, 2))``."""
    items = index if isinstance(index, tuple) else (index,)
    out: list = ["("]
    for item in items:
        if isinstance(item, slice):
            bounds = (item.start, item.stop, item.step)
            if not all(b is None or isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                raise Unsupported("item assignment into a tensor made in __init__: bounds must be numbers")
            out.append("slice(")
            for j, bound in enumerate(bounds):
                out += [", "] if j else []
                out.append("None" if bound is None else bound)
            out.append("), ")
        elif isinstance(item, int) and not isinstance(item, bool):
            out += [item, ", "]
        else:
            raise Unsupported("item assignment into a tensor made in __init__: only ints and slices are followed")
    out.append(")")
    return out


def set_items(arr: ConstArray, index, value) -> None:
    """``pe[:, 0::2] = torch.sin(...)``: ``arr`` becomes ``set_items(arr, (slice(None, None, None), slice(0, None, 2)), ...)``
    (in place, as the torch tensor is)."""
    if isinstance(value, ConstArray):
        value_tokens = value.tokens
    elif _number(value):
        value_tokens = [value]
    else:
        raise Unsupported("item assignment into a tensor made in __init__ of something that is not an array")
    arr.tokens = ["set_items(", *arr.tokens, ", ", *_index_tokens(index), ", ", *value_tokens, ")"]
    arr.set_items = True


def render(tokens, lit) -> str:
    """The expression's text, each value printed by ``lit`` (the printer's: sizes as names)."""
    return "".join(t if isinstance(t, str) else lit(t) for t in tokens)


def as_const(value: Any) -> ConstArray | None:
    """A ``torch.zeros``/``ones``/``full`` made before this reader followed constants
    (``params.TensorData`` of a known fill) as a :class:`ConstArray`; None for anything else."""
    from transpiler.frontend_ast.torch.params import TensorData

    if isinstance(value, ConstArray):
        return value
    if isinstance(value, TensorData) and value.init is not None and value.init[0] in ("zeros", "ones", "constant"):
        if not all(isinstance(d, int) for d in value.shape):
            return None
        kind = value.init[0]
        if kind == "constant":
            return ConstArray([f"{mark('full')}(", *_tuple_tokens(value.shape), ", ", value.init[1], ', "float32")'],
                              value.shape)
        return ConstArray([f"{mark(kind)}(", *_tuple_tokens(value.shape), ', "float32")'], value.shape)
    return None
