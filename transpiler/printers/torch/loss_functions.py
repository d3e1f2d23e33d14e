"""User-defined loss and metric code (functions, ``keras.losses.Loss`` subclasses) → torch.

A small source-level rewrite: each call whose dotted name resolves (through the script's
imports) to a ``keras.ops`` / ``keras.backend`` / TensorFlow function of the table below
becomes its torch spelling, with ``axis``/``keepdims`` mapped to ``dim``/``keepdim``.
Built-in Keras loss functions called inside (``keras.losses.binary_crossentropy(y_true,
y_pred)``) become the printer's per-sample loss functions, arguments swapped to torch's
(output, target) order. Anything else from Keras/TensorFlow makes the translation fail
with the call named, so the caller can emit a marked stub.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from transpiler.ir import code_literals
from transpiler.ir.code_literals import bare_argument as _bare
from transpiler.printers.code import lit

_KERAS_ROOTS = ("keras.src.", "tensorflow.keras.", "tf_keras.", "keras.")
_DTYPES = {"float16": "torch.float16", "float32": "torch.float32", "float64": "torch.float64",
           "bfloat16": "torch.bfloat16", "int32": "torch.int32", "int64": "torch.int64", "bool": "torch.bool",
           "uint8": "torch.uint8", "int8": "torch.int8", "int16": "torch.int16",
           "complex64": "torch.complex64", "complex128": "torch.complex128"}
#: Keras' fuzz factor (keras.config.epsilon(), K.epsilon())
EPSILON = 1e-7


class Untranslatable(Exception):
    """A Keras/TensorFlow call the table has no torch spelling for."""


def canonical(path: str) -> str | None:
    """``tensorflow.keras.ops.mean`` → ``ops.mean``; ``tensorflow.math.log`` → ``tf.log``;
    None for a path outside Keras/TensorFlow."""
    for root in _KERAS_ROOTS:
        if path.startswith(root):
            rest = path[len(root):]
            return rest[len("api._v2."):] if rest.startswith("api._v2.") else rest
    if path.startswith("tensorflow.experimental.numpy."):  # (TensorFlow NumPy: keras.ops' NumPy functions)
        return "ops." + path[len("tensorflow.experimental.numpy."):]
    if path.startswith("tensorflow."):
        rest = path[len("tensorflow."):]
        for sub in ("math.", "nn.", "keras.backend."):
            if rest.startswith(sub) and rest[len(sub):] in _TF_FLAT:
                rest = rest[len(sub):]
        return "tf." + rest
    return None


def resolve(node: cst.CSTNode, aliases: dict[str, str]) -> str | None:
    """The dotted path a name or attribute chain names under the script's imports."""
    dotted = _dotted(node)
    head, _, rest = dotted.partition(".")
    if not dotted or head not in aliases:
        return None
    return aliases[head] + (f".{rest}" if rest else "")


def module_aliases(module: cst.Module) -> dict[str, str]:
    """Names the script's imports bind → the dotted path they name."""
    out: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    path = _dotted(alias.name)
                    if alias.asname is not None:
                        out[alias.asname.name.value] = path
                    else:
                        out[path.split(".")[0]] = path.split(".")[0]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative \
                    and not isinstance(small.names, cst.ImportStar):
                base = _dotted(small.module)
                for alias in small.names:
                    name = _dotted(alias.name)
                    bound = alias.asname.name.value if alias.asname is not None else name
                    out[bound] = f"{base}.{name}"
    return out


def _dotted(node: cst.CSTNode) -> str:
    return code_literals.dotted_name(node) or ""


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class _Args:
    """A call's arguments as source text, bound to Keras' parameter names."""

    def __init__(self, call: cst.Call, names: tuple[str, ...], aliases: dict[str, tuple[str, ...]] | None = None):
        self.values: dict[str, cst.BaseExpression] = {}
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args) or len(positional) > len(names):
            raise Untranslatable("*args or too many positional arguments")
        for name, arg in zip(names, positional):
            self.values[name] = _bare(arg.value)
        for arg in call.args:
            if arg.keyword is not None:
                key = arg.keyword.value
                for canon, spellings in (aliases or {}).items():
                    if key in spellings:
                        key = canon
                self.values[key] = _bare(arg.value)

    def text(self, name: str, default: str | None = None) -> str | None:
        node = self.values.get(name)
        return _code(node) if node is not None else default

    def number(self, name: str) -> bool:
        node = self.values.get(name)
        return isinstance(node, (cst.Integer, cst.Float)) or (
            isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)))


_AXIS = {"axis": ("axis", "dim", "reduction_indices"), "keepdims": ("keepdims", "keep_dims")}


def _reduce(torch_fn: str) -> Callable:
    def emit(call: cst.Call) -> str:
        a = _Args(call, ("x", "axis", "keepdims"), {"x": ("input_tensor", "input"), **_AXIS})
        parts = [a.text("x")]
        if torch_fn == "torch.std":
            parts.append("correction=0")  # Keras and TensorFlow: the population deviation
        axis = a.text("axis")
        if axis not in (None, "None"):
            parts.append(f"dim={axis}")
            if a.text("keepdims") not in (None, "False"):
                parts.append(f"keepdim={a.text('keepdims')}")
        elif a.text("keepdims") not in (None, "False"):
            raise Untranslatable(f"{torch_fn} over every axis with keepdims")
        return f"{torch_fn}({', '.join(parts)})"
    return emit


def _unary(torch_fn: str) -> Callable:
    def emit(call: cst.Call) -> str:
        a = _Args(call, ("x",), {"x": ("input", "features", "logits")})
        if a.number("x") or isinstance(a.values.get("x"), cst.Attribute):  # a Python number (self.scale)
            return f"{torch_fn}(torch.as_tensor({a.text('x')}))"
        return f"{torch_fn}({a.text('x')})"
    return emit


def _binary(torch_fn: str, clamp: str | None = None) -> Callable:
    """Element-wise binary ops; maximum/minimum become clamp, which takes a tensor or a number
    as the bound (torch.maximum takes tensors only)."""

    def emit(call: cst.Call) -> str:
        a = _Args(call, ("x1", "x2"), {"x1": ("x", "a"), "x2": ("y", "b")})
        x1, x2 = a.text("x1"), a.text("x2")
        if clamp and a.number("x1"):
            x1, x2 = x2, x1
        if clamp and isinstance(a.values.get("x1"), (cst.Attribute, cst.Name)):
            # (self.rate, height = img.shape[0]: maybe a Python number, which torch.clamp refuses)
            return f"torch.clamp(torch.as_tensor({x1}), {clamp}={x2})"
        if clamp:
            return f"torch.clamp({x1}, {clamp}={x2})"
        if a.number("x1") and a.number("x2") or a.number("x2") and isinstance(a.values.get("x1"), cst.Name):
            # (``tf.equal(t, 0)``: TensorFlow takes a NumPy array or a number where torch wants a tensor)
            return f"{torch_fn}(torch.as_tensor({x1}), {x2})"
        return f"{torch_fn}({x1}, {x2})"
    return emit


def _clip(call: cst.Call) -> str:
    a = _Args(call, ("x", "x_min", "x_max"), {"x": ("t",), "x_min": ("min_value", "clip_value_min"),
                                              "x_max": ("max_value", "clip_value_max")})
    return f"torch.clamp({a.text('x')}, {a.text('x_min')}, {a.text('x_max')})"


def _dtype(text: str | None) -> str:
    if text is None:
        raise Untranslatable("cast without a dtype")
    key = text.strip("'\"").rsplit(".", 1)[-1]
    if key not in _DTYPES:
        raise Untranslatable(f"dtype {text}")
    return _DTYPES[key]


def _cast(call: cst.Call) -> str:
    a = _Args(call, ("x", "dtype"))
    dtype = a.text("dtype")
    if isinstance(a.values.get("dtype"), cst.Attribute) and a.values["dtype"].attr.value == "dtype" \
            and dtype.strip("'\"").rsplit(".", 1)[-1] not in _DTYPES:
        # ``ops.cast(y_true, y_pred.dtype)``: another tensor's dtype (a torch dtype there too)
        return f"torch.as_tensor({a.text('x')}, dtype={dtype})"
    return f"torch.as_tensor({a.text('x')}, dtype={_dtype(dtype)})"  # x may be a Python number


def _once(x: str, body: Callable[[str], str]) -> str:
    """``body`` of ``x`` where ``body`` reads it twice: a name directly, another expression
    through a lambda's parameter (computed once, as the Keras call computes it)."""
    if re.fullmatch(r"[\w.]+", x):
        return body(x)
    return f"(lambda t: {body('t')})({x})"


def _transpose(call: cst.Call) -> str:
    """``ops.transpose(x, axes=None)``: the axes reversed (a 1-D tensor unchanged), or permuted."""
    a = _Args(call, ("x", "axes"), {"axes": ("perm",)})
    axes = a.text("axes")
    if axes not in (None, "None"):
        return f"torch.permute({a.text('x')}, {axes})"
    return _once(a.text("x"), lambda t: f"{t}.permute(*range({t}.dim() - 1, -1, -1))")


def _fill(call: cst.Call) -> str:
    """``tf.fill(dims, value)``: a tensor of ``dims`` (a list, a tuple, or one number, as
    TensorFlow takes it) filled with ``value``."""
    a = _Args(call, ("dims", "value"))
    if set(a.values) - {"dims", "value"} or "value" not in a.values:
        raise Untranslatable("fill arguments other than dims and value")
    dims = a.values["dims"]
    if isinstance(dims, (cst.List, cst.Tuple)):
        size = a.text("dims")
    elif isinstance(dims, cst.Integer):
        size = f"({a.text('dims')},)"
    else:
        size = f"torch.Size(torch.as_tensor({a.text('dims')}).reshape(-1).tolist())"
    return f"torch.full({size}, {a.text('value')})"


def _squeeze(call: cst.Call) -> str:
    """``ops.squeeze(x, axis=None)``: every axis of size 1 removed, or the one named."""
    a = _Args(call, ("x", "axis"), {"x": ("input",), "axis": ("axis", "squeeze_dims")})
    axis = a.text("axis")
    return f"torch.squeeze({a.text('x')})" if axis in (None, "None") else f"torch.squeeze({a.text('x')}, {axis})"


def _eye(call: cst.Call) -> str:
    """``tf.eye(num_rows, num_columns)`` / ``ops.eye(N, M)``: an identity matrix of float32
    (both libraries' default dtype; a ``dtype=`` is kept); no batch shape, no diagonal offset."""
    a = _Args(call, ("N", "M", "k", "dtype"), {"N": ("num_rows",), "M": ("num_columns",)})
    if set(a.values) - {"N", "M", "k", "dtype"} or a.text("k", "0") != "0" or "N" not in a.values:
        raise Untranslatable("eye with batch_shape or a diagonal offset")
    dims = a.text("N") if a.text("M", "None") == "None" else f"{a.text('N')}, {a.text('M')}"
    dtype = a.text("dtype")
    dtype = _dtype(dtype) if dtype not in (None, "None") else "torch.float32"
    return f"torch.eye({dims}, dtype={dtype})"


def _tile(call: cst.Call) -> str:
    """``ops.tile(x, repeats)`` / ``tf.tile(input, multiples)``: numpy's tile, as torch.tile."""
    a = _Args(call, ("x", "repeats"), {"x": ("input",), "repeats": ("multiples",)})
    if set(a.values) - {"x", "repeats"} or "repeats" not in a.values:
        raise Untranslatable("tile arguments other than x and repeats")
    return f"torch.tile({a.text('x')}, {a.text('repeats')})"


def _normalize(call: cst.Call) -> str:
    """``keras.utils.normalize(x, axis=-1, order=2)`` / ``ops.normalize(x, axis, order,
    epsilon)`` on a tensor: Keras' ``x * min(rsqrt(sum(x ** 2)), 1 / epsilon)`` for order 2,
    ``x / max(norm, epsilon)`` for another order (epsilon Keras' 1e-7 by default)."""
    a = _Args(call, ("x", "axis", "order", "epsilon"))
    axis, order, eps = a.text("axis", "-1"), a.text("order", "2"), a.text("epsilon", "None")
    if axis in (None, "None"):
        raise Untranslatable("normalize over every axis")
    eps = lit(EPSILON) if eps == "None" else eps
    if order == "2":
        return _once(a.text("x"), lambda t: f"{t} * torch.clamp(torch.rsqrt(torch.sum(torch.square({t}), "
                                          f"dim={axis}, keepdim=True)), max=1.0 / {_operand(eps)})")
    return _once(a.text("x"), lambda t: f"{t} / torch.clamp(torch.linalg.vector_norm({t}, ord={order}, dim={axis}, "
                                      f"keepdim=True), min={eps})")


def _softmax(torch_fn: str) -> Callable:
    def emit(call: cst.Call) -> str:
        a = _Args(call, ("x", "axis"), {"x": ("logits", "features"), **_AXIS})
        return f"{torch_fn}({a.text('x')}, dim={a.text('axis', '-1')})"
    return emit


def _argmax(torch_fn: str) -> Callable:
    def emit(call: cst.Call) -> str:
        a = _Args(call, ("x", "axis"), {"x": ("input",), **_AXIS})
        if a.text("axis") in (None, "None"):  # the defaults differ: ops None, tf 0, backend -1
            raise Untranslatable("argmax/argmin needs an explicit axis")
        return f"{torch_fn}({a.text('x')}, dim={a.text('axis')})"
    return emit


def _where(call: cst.Call) -> str:
    a = _Args(call, ("condition", "x1", "x2"), {"x1": ("x",), "x2": ("y",)})
    x1, x2 = a.text("x1"), a.text("x2")
    if x1 is None or x2 is None:
        raise Untranslatable("where() with one argument")
    return f"torch.where({a.text('condition')}, torch.as_tensor({x1}), torch.as_tensor({x2}))"


def _like(torch_fn: str) -> Callable:
    def emit(call: cst.Call) -> str:
        return f"{torch_fn}({_Args(call, ('x',), {'x': ('input',)}).text('x')})"
    return emit


def _shape(call: cst.Call) -> str:
    return f"{_Args(call, ('x',), {'x': ('input',)}).text('x')}.shape"


def _constant(call: cst.Call) -> str:
    a = _Args(call, ("value", "dtype"))
    dtype = a.text("dtype")
    return f"torch.tensor({a.text('value')}" + (f", dtype={_dtype(dtype)})" if dtype else ")")


def _epsilon(call: cst.Call) -> str:
    return lit(EPSILON)


def _stack(torch_fn: str) -> Callable:
    def emit(call: cst.Call) -> str:
        a = _Args(call, ("xs", "axis"), {"xs": ("values", "tensors"), **_AXIS})
        xs = a.values.get("xs")
        if isinstance(xs, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in xs.elements):
            # Keras ops convert what they are given (numpy arrays too: a plotting function's
            # ``ops.concatenate([pairs[i][0], pairs[i][1]])``, keras.io siamese_contrastive);
            # torch.cat refuses them. torch.as_tensor leaves a tensor (and its gradient) as is.
            items = [_code(e.value) if isinstance(e.value, cst.Call) else f"torch.as_tensor({_code(e.value)})"
                     for e in xs.elements]
            return f"{torch_fn}([{', '.join(items)}], dim={a.text('axis', '0')})"
        return f"{torch_fn}({a.text('xs')}, dim={a.text('axis', '0')})"
    return emit


def _expand_dims(call) -> str:
    """A new axis of size 1 by indexing (torch tensors and numpy arrays alike: a tf.data .map
    function may get a batch of strings, a numpy array); a computed axis: unsqueeze."""
    a = _Args(call, ("x", "axis"), {"x": ("input",)})
    x, axis = a.text("x"), a.text("axis", "0")
    try:
        k = int(axis)
    except ValueError:
        return f"{x}.unsqueeze({axis})"
    if k >= 0:
        return f"{x}[{':, ' * k}None]"
    return f"{x}[..., None{', :' * (-k - 1)}]"


_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")


def _operand(text: str) -> str:
    """An argument's code as an operand of ``*``/``+`` (parenthesised unless a name or number)."""
    return text if re.fullmatch(r"-?[\w.]+", text) else f"({text})"


def _random(kind: str) -> Callable:
    """``keras.random.normal(shape, mean, stddev)`` / ``tf.random.uniform(shape, minval,
    maxval)``: torch's generator (the same distribution, other numbers; a seed is not kept)."""

    def emit(call: cst.Call) -> str:
        first, second = ("mean", "stddev") if kind == "normal" else ("minval", "maxval")
        a = _Args(call, ("shape", first, second, "dtype", "seed"))
        dtype = a.text("dtype")
        extra = ""
        if dtype not in (None, "None"):  # a name, or a tensor's own dtype (``x.dtype``: a torch dtype)
            extra = f", dtype={_dtype(dtype) if dtype.strip(chr(39) + chr(34)).rsplit('.', 1)[-1] in _DTYPES else dtype}"
        if kind == "normal":
            text = f"torch.randn({a.text('shape')}{extra})"
            if a.text("stddev") not in (None, "1", "1.0"):
                text = f"{text} * {_operand(a.text('stddev'))}"
            return text if a.text("mean") in (None, "0", "0.0") else f"{text} + {_operand(a.text('mean'))}"
        low, high = a.text("minval", "0"), a.text("maxval", "1.0")
        if dtype is not None and dtype.strip(chr(39) + chr(34)).rsplit(".", 1)[-1] in _INT_DTYPES:
            # integers in [minval, maxval) (tf.random.uniform needs maxval for them)
            if a.text("maxval") is None:
                raise Untranslatable("tf.random.uniform of integers without maxval")
            bounds = ", ".join(b if re.fullmatch(r"-?\d+", b) else f"int({b})" for b in (low, high))
            return f"torch.randint({bounds}, {a.text('shape')}{extra})"
        low, high = (low if low != "0" else "0.0"), _operand(high)
        low = _operand(low)
        text = f"torch.rand({a.text('shape')}{extra})"
        if high not in ("1", "1.0") or low not in ("0", "0.0"):
            text = f"{text} * ({high} - {low})" if low not in ("0", "0.0") else f"{text} * {high}"
        return text if low in ("0", "0.0") else f"{text} + {low}"
    return emit


def _stop_gradient(call: cst.Call) -> str:
    x = _Args(call, ("x",), {"x": ("input", "variable")}).text("x")
    return f"{x}.detach()" if re.fullmatch(r"[\w.]+", x) else f"({x}).detach()"


def _einsum(call: cst.Call) -> str:
    """``ops.einsum("ae,pe->ap", a, b)`` / ``tf.einsum``: the same subscripts and operands."""
    if not call.args or any(arg.keyword is not None or arg.star for arg in call.args) or \
            not isinstance(call.args[0].value, cst.SimpleString):
        raise Untranslatable("einsum with keywords or subscripts that are not a literal")
    return f"torch.einsum({', '.join(_code(arg.value) for arg in call.args)})"


def _arange(call: cst.Call) -> str:
    """``ops.arange(n)`` / ``ops.arange(start, stop, step)`` of integers (int32 in Keras: an
    index vector; torch's int64 indexes the same)."""
    if not 1 <= len(call.args) <= 3 or any(arg.keyword is not None for arg in call.args) or \
            not all(isinstance(arg.value, (cst.Integer, cst.Name, cst.Attribute)) for arg in call.args):
        raise Untranslatable("arange other than of integer positions (start, stop, step)")
    return f"torch.arange({', '.join(_code(arg.value) for arg in call.args)})"


def _range(call: cst.Call) -> str:
    """``tf.range(n)`` / ``tf.range(start, limit, delta)`` of integers: ``ops.arange``'s torch form
    (TensorFlow's int32 positions; torch's int64 index the same)."""
    a = _Args(call, ("start", "limit", "delta", "dtype"))
    if set(a.values) - {"start", "limit", "delta"} or "start" not in a.values or \
            not all(isinstance(v, (cst.Integer, cst.Name, cst.Attribute, cst.Subscript)) for v in a.values.values()):
        raise Untranslatable("range other than of integer positions (start, limit, delta)")
    if "limit" not in a.values:
        if "delta" in a.values:
            raise Untranslatable("range(n, delta=...)")
        return f"torch.arange({a.text('start')})"
    return f"torch.arange({', '.join(a.text(k) for k in ('start', 'limit', 'delta') if k in a.values)})"


def _matmul(call: cst.Call) -> str:
    """``tf.matmul(a, b, transpose_a=..., transpose_b=...)`` / ``ops.matmul(a, b)``."""
    a = _Args(call, ("x1", "x2", "transpose_a", "transpose_b"), {"x1": ("a",), "x2": ("b",)})
    x1, x2 = a.text("x1"), a.text("x2")
    if set(a.values) - {"x1", "x2", "transpose_a", "transpose_b"}:
        raise Untranslatable("matmul options other than transpose_a/transpose_b")
    if a.text("transpose_a", "False") == "True":
        x1 = f"{x1}.transpose(-2, -1)"
    if a.text("transpose_b", "False") == "True":
        x2 = f"{x2}.transpose(-2, -1)"
    return f"torch.matmul({x1}, {x2})"


def _l2_normalize(call: cst.Call) -> str:
    """TensorFlow's l2_normalize: x / sqrt(max(sum(x ** 2), epsilon)), epsilon 1e-12."""
    a = _Args(call, ("x", "axis", "epsilon"), {"axis": ("dim",)})
    x, axis, eps = a.text("x"), a.text("axis", "None"), a.text("epsilon", "1e-12")
    dim = "" if axis in (None, "None") else f", dim={axis}, keepdim=True"
    return f"{x} / torch.sqrt(torch.clamp(torch.sum(torch.square({x}){dim}), min={eps}))"


def _psnr(call: cst.Call) -> str:
    """``tf.image.psnr(a, b, max_val)``: per image, 20 log10(max_val) - 10 log10(the mean
    squared difference over its last three axes: the image, in either layout)."""
    a = _Args(call, ("a", "b", "max_val"))
    if set(a.values) - {"a", "b", "max_val"} or "max_val" not in a.values:
        raise Untranslatable("psnr arguments other than a, b, max_val")
    x, y, top = a.text("a"), a.text("b"), a.text("max_val")
    mse = f"torch.mean(torch.square(torch.as_tensor({x}, dtype=torch.float32) - {y}), dim=(-3, -2, -1))"
    return f"(20.0 * torch.log10(torch.as_tensor({top}, dtype=torch.float32)) - 10.0 * torch.log10({mse}))"


#: functions shared by keras.ops, keras.backend and TensorFlow (canonical names)
_COMMON: dict[str, Callable] = {
    "mean": _reduce("torch.mean"), "sum": _reduce("torch.sum"), "max": _reduce("torch.amax"),
    "min": _reduce("torch.amin"), "prod": _reduce("torch.prod"), "std": _reduce("torch.std"),
    "square": _unary("torch.square"), "abs": _unary("torch.abs"), "sqrt": _unary("torch.sqrt"),
    "exp": _unary("torch.exp"), "log": _unary("torch.log"), "log1p": _unary("torch.log1p"),
    "tanh": _unary("torch.tanh"), "sigmoid": _unary("torch.sigmoid"), "relu": _unary("torch.relu"),
    "softplus": _unary("F.softplus"), "sign": _unary("torch.sign"), "negative": _unary("torch.neg"),
    "round": _unary("torch.round"), "floor": _unary("torch.floor"), "ceil": _unary("torch.ceil"),
    "cos": _unary("torch.cos"), "sin": _unary("torch.sin"), "cosh": _unary("torch.cosh"),
    "maximum": _binary("torch.maximum", "min"), "minimum": _binary("torch.minimum", "max"),
    "pow": _binary("torch.pow"), "power": _binary("torch.pow"), "multiply": _binary("torch.mul"),
    "add": _binary("torch.add"), "subtract": _binary("torch.sub"), "divide": _binary("torch.div"),
    "equal": _binary("torch.eq"), "not_equal": _binary("torch.ne"), "greater": _binary("torch.gt"),
    "less": _binary("torch.lt"), "greater_equal": _binary("torch.ge"), "less_equal": _binary("torch.le"),
    "clip": _clip, "clip_by_value": _clip, "cast": _cast, "softmax": _softmax("torch.softmax"),
    "log_softmax": _softmax("torch.log_softmax"), "argmax": _argmax("torch.argmax"),
    "argmin": _argmax("torch.argmin"), "where": _where, "ones_like": _like("torch.ones_like"),
    "zeros_like": _like("torch.zeros_like"), "shape": _shape, "epsilon": _epsilon,
    "stack": _stack("torch.stack"), "concatenate": _stack("torch.cat"), "concat": _stack("torch.cat"),
    "convert_to_tensor": _like("torch.as_tensor"), "constant": _constant,
    "add_n": lambda call: f"sum({_Args(call, ('inputs',)).text('inputs')})",  # (a list of tensors)
    "expand_dims": _expand_dims,
    "random.normal": _random("normal"), "random.uniform": _random("uniform"),
    "stop_gradient": _stop_gradient, "l2_normalize": _l2_normalize, "matmul": _matmul,
    "einsum": _einsum, "arange": _arange, "transpose": _transpose, "normalize": _normalize,
    "squeeze": _squeeze, "fill": _fill, "eye": _eye, "tile": _tile, "tf_range": _range,
}
def _spatial_pair(text: str | None, what: str) -> tuple[int, int]:
    """TF's ``ksize``/``strides`` of a 2-D op: an int, two ints, or [1, h, w, 1] (literals only)."""
    import ast as _ast

    try:
        value = _ast.literal_eval(text) if text is not None else None
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        if len(value) == 2:
            return (value[0], value[1])
        if len(value) == 4 and value[0] == value[3] == 1:
            return (value[1], value[2])
    raise Untranslatable(f"{what}={text} (an int, two ints or [1, h, w, 1] literal)")


def _nhwc_args(call: cst.Call, names: tuple[str, ...]) -> _Args:
    a = _Args(call, names, {"x": ("input", "value")})
    if a.text("data_format") not in (None, "'NHWC'", '"NHWC"', "None"):
        raise Untranslatable("data_format other than NHWC")
    return a


def _tf_pool2d(kind: str) -> Callable:
    """``tf.nn.avg_pool2d(x, ksize, strides, "VALID")`` on channels-last images (keras.io's
    zero_dce losses): torch's pooling on the channels-first view, back to channels-last."""

    def emit(call: cst.Call) -> str:
        a = _nhwc_args(call, ("x", "ksize", "strides", "padding", "data_format"))
        if (a.text("padding") or "").strip("'\"").upper() != "VALID":
            raise Untranslatable(f"tf.nn.{kind}_pool2d with padding other than VALID")
        k, st = _spatial_pair(a.text("ksize"), "ksize"), _spatial_pair(a.text("strides"), "strides")
        return f"F.{kind}_pool2d({_operand(a.text('x'))}.permute(0, 3, 1, 2), {k}, {st}).permute(0, 2, 3, 1)"
    return emit


def _tf_conv2d(call: cst.Call) -> str:
    """``tf.nn.conv2d(x, kernel, strides=1, padding)`` on channels-last images with an HWIO kernel
    tensor: torch's conv on the channels-first views (stride 1 only: TF's 'SAME' pads as torch's
    'same' there)."""
    a = _nhwc_args(call, ("x", "filters", "strides", "padding", "data_format", "dilations"))
    if a.text("dilations") not in (None, "None", "1", "[1, 1, 1, 1]"):
        raise Untranslatable("tf.nn.conv2d with dilations")
    if _spatial_pair(a.text("strides"), "strides") != (1, 1):
        raise Untranslatable("tf.nn.conv2d with strides other than 1")
    padding = (a.text("padding") or "").strip("'\"").upper()
    if padding not in ("SAME", "VALID"):
        raise Untranslatable(f"tf.nn.conv2d padding={a.text('padding')}")
    kernel = f"{_operand(a.text('filters'))}.permute(3, 2, 0, 1)"
    return (f"F.conv2d({_operand(a.text('x'))}.permute(0, 3, 1, 2), {kernel}, padding={padding.lower()!r})"
            ".permute(0, 2, 3, 1)")


_COMMON.update({"tf_avg_pool2d": _tf_pool2d("avg"), "tf_max_pool2d": _tf_pool2d("max"), "tf_conv2d": _tf_conv2d})

#: TensorFlow spellings (after tf.math./tf.nn. are flattened) → the shared entries
_TF_FLAT = {"reduce_mean": "mean", "reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min",
            "reduce_prod": "prod", "reduce_std": "std", "square": "square", "abs": "abs", "sqrt": "sqrt",
            "exp": "exp", "log": "log", "log1p": "log1p", "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu",
            "softplus": "softplus", "sign": "sign", "negative": "negative", "round": "round", "floor": "floor",
            "ceil": "ceil", "cos": "cos", "sin": "sin", "maximum": "maximum", "minimum": "minimum",
            "pow": "pow", "multiply": "multiply", "add": "add", "subtract": "subtract", "divide": "divide",
            "equal": "equal", "not_equal": "not_equal", "greater": "greater", "less": "less",
            "greater_equal": "greater_equal", "less_equal": "less_equal", "clip_by_value": "clip_by_value",
            "cast": "cast", "softmax": "softmax", "log_softmax": "log_softmax", "argmax": "argmax",
            "argmin": "argmin", "where": "where", "ones_like": "ones_like", "zeros_like": "zeros_like",
            "shape": "shape", "stack": "stack", "concat": "concat", "convert_to_tensor": "convert_to_tensor",
            "constant": "constant", "epsilon": "epsilon", "add_n": "add_n", "expand_dims": "expand_dims",
            "random.normal": "random.normal", "random.uniform": "random.uniform", "stop_gradient": "stop_gradient",
            "l2_normalize": "l2_normalize", "matmul": "matmul", "linalg.matmul": "matmul",
            "einsum": "einsum", "avg_pool2d": "tf_avg_pool2d", "max_pool2d": "tf_max_pool2d",
            "conv2d": "tf_conv2d", "transpose": "transpose", "squeeze": "squeeze",
            "fill": "fill", "eye": "eye", "tile": "tile", "range": "tf_range"}


#: Keras' short loss function names → the canonical ones
_LOSS_ALIASES = {"mse": "mean_squared_error", "mae": "mean_absolute_error", "kld": "kl_divergence",
                 "kullback_leibler_divergence": "kl_divergence", "huber_loss": "huber"}


#: keras.ops functions that are Keras' loss functions of (target, output[, from_logits])
_OPS_LOSSES = ("categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy")


#: Keras' loss classes whose function name is not their name in snake case
_LOSS_CLASSES = {"KLDivergence": "kl_divergence"}


def rewrite_entry(name: str) -> Callable | None:
    """The emitter for a canonical name (``ops.mean``, ``backend.mean``, ``tf.reduce_mean``)."""
    if name == "tf.image.psnr":  # (a metric of images, in the model's layout)
        return _psnr
    if name.startswith("tf.image."):  # (in functions a tf.data pipeline maps: data_image_ops.py)
        from transpiler.printers.torch import data_image_ops

        return data_image_ops.entry(name[len("tf.image."):])
    from transpiler.printers.torch import data_image_ops

    if data_image_ops.tensor_entry(name) is not None:  # (tf.random.gamma, one_hot, reshape)
        return data_image_ops.tensor_entry(name)
    if name == "utils.normalize":  # (on a tensor: ops.nn.normalize)
        return _normalize
    if name.startswith("tf."):
        flat = _TF_FLAT.get(name[3:])
        return _COMMON.get(flat) if flat else None
    if name in ("random.normal", "random.uniform"):  # keras.random
        return _COMMON[name]
    for prefix in ("ops.nn.", "ops.numpy.", "ops.math.", "ops.", "backend.", "activations.", "config."):
        if name.startswith(prefix):
            rest = name[len(prefix):]
            if prefix == "config." and rest != "epsilon":
                return None
            return _COMMON.get(rest)
    return None


def supported_calls() -> list[str]:
    """Every spelling the table translates (for docs and the report)."""
    return sorted([f"keras.ops.{k}" for k in _COMMON if k not in ("epsilon", "clip_by_value", "constant")
                   and not k.startswith("tf_")]  # (TensorFlow's own: listed as tf.<name>)
                  + [f"tf.{k}" for k in _TF_FLAT] + ["keras.backend.epsilon", "keras.config.epsilon"])


class _Rewriter(cst.CSTTransformer):
    def __init__(self, aliases: dict[str, str], loss_call: Callable[[str, bool], str]):
        self.aliases = aliases
        self.loss_call = loss_call
        self.untranslatable: list[str] = []
        self.uses_f = False

    def _resolve(self, node: cst.CSTNode) -> str | None:
        path = resolve(node, self.aliases)
        return canonical(path) if path else None

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self._resolve(original.func)
        if name is None:
            return updated
        if name.startswith("losses."):
            return cst.parse_expression(self._builtin_loss(name[len("losses."):], updated))
        for prefix in ("ops.nn.", "ops."):  # ``ops.categorical_crossentropy(target, output, from_logits)``
            if name.startswith(prefix) and name[len(prefix):] in _OPS_LOSSES:
                return cst.parse_expression(self._builtin_loss(name[len(prefix):], updated))
        emit = rewrite_entry(name)
        if emit is None:
            self.untranslatable.append(_code(original))
            return updated
        try:
            text = emit(updated)
        except Untranslatable as exc:
            self.untranslatable.append(f"{_code(original)} ({exc})")
            return updated
        self.uses_f = self.uses_f or text.startswith("F.")
        return cst.parse_expression(text)

    def leave_SimpleStatementLine(self, original, updated):
        """``image.set_shape([...])`` (a TensorFlow tensor's static-shape hint, nothing to compute):
        a ``pass`` saying so (torch tensors always carry their shape)."""
        body = updated.body
        if body and all(isinstance(b, cst.Expr) and isinstance(b.value, cst.Call) and
                        isinstance(b.value.func, cst.Attribute) and b.value.func.attr.value == "set_shape"
                        for b in body):
            return updated.with_changes(body=[cst.Pass()], trailing_whitespace=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  "),
                comment=cst.Comment("# TensorFlow's set_shape(): torch tensors carry their shape")))
        return updated

    def _builtin_loss(self, name: str, call: cst.Call) -> str:
        if name[:1].isupper():  # a loss class: the object a later call applies
            return self._loss_object(name, call)
        a = _Args(call, ("y_true", "y_pred"))
        from_logits = a.text("from_logits", "False")
        if from_logits not in ("True", "False") or set(a.values) - {"y_true", "y_pred", "from_logits"}:
            raise_text = f"keras.losses.{name}(...) with arguments"
            self.untranslatable.append(raise_text)
            return _code(call)
        try:
            fn = self.loss_call(_LOSS_ALIASES.get(name, name), from_logits == "True")
        except (KeyError, NotImplementedError):
            self.untranslatable.append(f"keras.losses.{name}")
            return _code(call)
        return f"{fn}({a.text('y_pred')}, {a.text('y_true')})"

    def _loss_object(self, name: str, call: cst.Call) -> str:
        """``keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)`` →
        a function of (y_true, y_pred) with the object's reduction (the batch mean by default,
        the per-sample values for None/"none", their sum for "sum")."""
        function = _LOSS_CLASSES.get(name) or re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
        try:
            a = _Args(call, ())
        except Untranslatable:
            a = None
        from_logits = a.text("from_logits", "False") if a else None
        reduction = a.text("reduction", '"sum_over_batch_size"').strip("'\"") if a else None
        suffix = {"None": "", "none": "", "sum": ".sum()", "sum_over_batch_size": ".mean()"}.get(reduction)
        if a is None or from_logits not in ("True", "False") or suffix is None or \
                set(a.values) - {"from_logits", "reduction", "name"}:
            self.untranslatable.append(f"keras.losses.{name}(...) with arguments other than from_logits, "
                                       "reduction (None, 'none', 'sum', 'sum_over_batch_size') and name")
            return _code(call)
        try:
            fn = self.loss_call(function, from_logits == "True")
        except (KeyError, NotImplementedError):
            self.untranslatable.append(f"keras.losses.{name}")
            return _code(call)
        return f"(lambda y_true, y_pred: {fn}(y_pred, y_true){suffix})"



def _is_framework(path: str) -> bool:
    return path.split(".")[0] in ("keras", "tensorflow", "tf_keras")


def _leftover(node: cst.CSTNode, aliases: dict[str, str]) -> list[str]:
    """Keras/TensorFlow names still used after the rewrite (outside calls)."""
    found: list[str] = []

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            dotted = _dotted(n)
            if dotted and _is_framework(aliases.get(dotted.split(".")[0], "")):
                found.append(dotted)
                return False
            return True

        def visit_Name(self, n: cst.Name) -> None:
            if _is_framework(aliases.get(n.value, "")):
                found.append(n.value)

    node.visit(V())
    return found


def translate_function(node: cst.FunctionDef | cst.ClassDef, aliases: dict[str, str],
                       loss_call: Callable[[str, bool], str]) -> tuple[cst.CSTNode, bool]:
    """The def (or Loss subclass) with its Keras/TensorFlow calls in torch; (node, uses F).

    Raises:
        Untranslatable: naming the first call (or name) without a torch spelling.
    """
    rewriter = _Rewriter(aliases, loss_call)
    body = node.body.visit(rewriter)
    if rewriter.untranslatable:
        raise Untranslatable(rewriter.untranslatable[0])
    left = _leftover(body, aliases)
    if left:
        raise Untranslatable(left[0])
    return node.with_changes(body=body), rewriter.uses_f
