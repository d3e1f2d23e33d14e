"""PyTorch emitters: merges and tensor math (keras.ops / tf.* / Python operators).

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

import ast

from transpiler.ir.graph import Node
from transpiler.ir.shapes import spatial_axes
from transpiler.printers.code import lit, size_arg
from transpiler.printers.torch.ops import Emission, Emitter, atom, emitter
from transpiler.printers.torch.ops_activations import _fn


# ---------------------------------------------------------------------------------
# Merges
# ---------------------------------------------------------------------------------
#: Python's binding strength of the operators the emitters write (higher binds tighter)
_PRECEDENCE = {ast.Pow: 7, ast.USub: 6, ast.Mult: 5, ast.Div: 5, ast.FloorDiv: 5, ast.Mod: 5, ast.MatMult: 5,
               ast.Add: 4, ast.Sub: 4}
_SYMBOLS = {"**": ast.Pow, "*": ast.Mult, "/": ast.Div, "@": ast.MatMult, "+": ast.Add, "-": ast.Sub}
_COMPARISONS = (">", ">=", "<", "<=", "==", "!=")


def _strength(expr: str) -> int:
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return 0
    if isinstance(tree, ast.BinOp):
        return _PRECEDENCE.get(type(tree.op), 0)
    if isinstance(tree, ast.UnaryOp):
        return _PRECEDENCE[ast.USub]
    if isinstance(tree, ast.Compare):
        return 3
    if isinstance(tree, (ast.BoolOp, ast.IfExp, ast.Lambda)):
        return 1
    return 9


def operand(expr: str, op: str, right: bool) -> str:
    """``expr`` as the left or right operand of the infix ``op``: parenthesised when it binds
    looser (``(a + b) * c``), or as tightly on the side Python would group differently
    (``a - (b - c)``, ``a * (b * c)``: floating point is not associative, ``(a ** b) ** c``)."""
    theirs = _strength(expr)
    if op in _COMPARISONS:  # a comparison operand that compares would chain: (a > b) > c
        return f"({expr})" if theirs <= 3 else expr
    mine = _PRECEDENCE[_SYMBOLS[op]]
    if theirs < mine or (theirs == mine and right != (op == "**")):  # the source's grouping, exactly
        return f"({expr})"
    return expr


def _infix(op: str) -> Emitter:
    def emit_merge_torch(node: Node, m: str) -> Emission:
        return Emission(None, lambda ins: f" {op} ".join(operand(x, op, i > 0) for i, x in enumerate(ins)),
                        infix=op in ("+", "-", "*", "/", "**"))  # (a matmul keeps its operands named)

    return emit_merge_torch


emitter("add")(_infix("+"))
emitter("subtract")(_infix("-"))
emitter("multiply")(_infix("*"))


@emitter("average")
def emit_average_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"({' + '.join(ins)}) / {len(ins)}")


@emitter("maximum", "minimum")
def emit_extremum_torch(node: Node, m: str) -> Emission:
    fn = "torch.maximum" if node.op == "maximum" else "torch.minimum"
    if len(node.inputs) == 2 and any(_is_constant(v) for v in node.inputs):
        # torch.maximum takes tensors only: a number operand is a bound of clamp
        side = "min" if node.op == "maximum" else "max"
        k = 0 if _is_constant(node.inputs[1]) else 1
        return Emission(None, lambda ins: f"{atom(ins[k])}.clamp({side}={ins[1 - k]})")

    def nest(ins):
        expr = ins[0]
        for other in ins[1:]:
            expr = f"{fn}({expr}, {other})"
        return expr

    return Emission(None, nest)


@emitter("concat")
def emit_concat_torch(node: Node, m: str) -> Emission:
    dim = node.attrs["axis"] % len(node.inputs[0].shape)
    return Emission(None, lambda ins: f"torch.cat([{', '.join(ins)}], dim={dim})")


# Tensor math (keras.ops / tf.* / Python operators)
# ---------------------------------------------------------------------------------
def _is_constant(value) -> bool:
    return value.producer is not None and value.producer.op == "constant"


@emitter("constant")
def emit_constant_torch(node: Node, m: str) -> Emission:
    value = node.attrs["value"]
    text = lit(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        text = f"({text})"  # `(-2.0) ** x`, not `-(2.0 ** x)`
    return Emission(None, lambda ins: text, inline_anywhere=True)


emitter("divide")(_infix("/"))
emitter("power")(_infix("**"))
emitter("matmul")(_infix("@"))
for _op, _sym in (("greater", ">"), ("greater_equal", ">="), ("less", "<"), ("less_equal", "<="),
                  ("equal", "=="), ("not_equal", "!=")):
    emitter(_op)(_infix(_sym))


@emitter("negative")
def emit_negative_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"-{atom(ins[0])}", unary=True)


for _op in ("abs", "square", "sqrt", "rsqrt", "exp", "log", "floor", "sin", "cos"):
    emitter(_op)(_fn(f"torch.{_op}({{x}})"))


@emitter("clip")
def emit_clip_torch(node: Node, m: str) -> Emission:
    lo, hi = node.attrs["min"], node.attrs["max"]
    if lo is None and hi is None:
        return Emission(None, lambda ins: ins[0], unary=True)
    if lo is not None and hi is not None:
        args = f"{lit(lo)}, {lit(hi)}"
    else:
        args = f"min={lit(lo)}" if lo is not None else f"max={lit(hi)}"
    return Emission(None, lambda ins: f"{atom(ins[0])}.clamp({args})", unary=True)


@emitter("where")
def emit_where_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"torch.where({', '.join(ins)})")


@emitter("training_select")
def emit_training_select_torch(node: Node, m: str) -> Emission:
    # forward writers print an ``if self.training:`` block (torch_printer._ForwardWriter._select)
    return Emission(None, lambda ins: f"{ins[0]} if self.training else {ins[1]}", mode_select=True)


#: IR dtypes → torch tensor methods (or torch dtypes for .to())
_TORCH_CASTS = {"float32": ".float()", "float64": ".double()", "float16": ".half()", "int32": ".int()",
                "int64": ".long()", "bool": ".bool()"}


@emitter("cast")
def emit_cast_torch(node: Node, m: str) -> Emission:
    dtype = node.attrs["dtype"]
    method = _TORCH_CASTS.get(dtype, f".to(torch.{dtype})")
    return Emission(None, lambda ins: f"{atom(ins[0])}{method}", unary=True)


def _dims(node: Node, axes) -> str:
    """``dim=`` for torch: one int, or a tuple; the last axis as -1."""
    rank = len(node.inputs[0].shape)
    dims = tuple(-1 if a % rank == rank - 1 and len(axes) == 1 else a % rank for a in axes)
    return lit(dims[0] if len(dims) == 1 else dims)


_REDUCTIONS = {"reduce_mean": "mean", "reduce_sum": "sum", "reduce_max": "amax", "reduce_min": "amin",
               "argmax": "argmax", "argmin": "argmin"}


@emitter("reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin")
def emit_reduce_torch(node: Node, m: str) -> Emission:
    axis = node.attrs["axis"]
    dim = _dims(node, axis if isinstance(axis, tuple) else (axis,))
    keep = ", keepdim=True" if node.attrs["keepdims"] else ""
    method = _REDUCTIONS[node.op]
    return Emission(None, lambda ins: f"{atom(ins[0])}.{method}(dim={dim}{keep})", unary=True)


def new_axis_dim(node: Node) -> int:
    """The output position of a new axis (``axis``), the last one as -1."""
    rank = len(node.outputs[0].shape)
    axis = node.attrs["axis"] % rank
    return -1 if axis == rank - 1 else axis


@emitter("expand_dims")
def emit_expand_dims_torch(node: Node, m: str) -> Emission:
    dim = new_axis_dim(node)
    return Emission(None, lambda ins: f"{atom(ins[0])}.unsqueeze({dim})", unary=True)


@emitter("squeeze")
def emit_squeeze_torch(node: Node, m: str) -> Emission:
    dim = _dims(node, node.attrs["axis"])
    return Emission(None, lambda ins: f"{atom(ins[0])}.squeeze({dim})", unary=True)


@emitter("stack")
def emit_stack_torch(node: Node, m: str) -> Emission:
    dim = new_axis_dim(node)
    return Emission(None, lambda ins: f"torch.stack([{', '.join(ins)}], dim={dim})")


@emitter("split")
def emit_split_torch(node: Node, m: str) -> Emission:
    sizes = node.attrs["sizes"]
    dim = _dims(node, (node.attrs["axis"],))
    # (one size for equal pieces; pieces of size 0 listed: x.split(0) is one piece)
    pieces = lit(sizes[0]) if len(set(sizes)) == 1 and sizes[0] > 0 else lit(list(sizes))
    return Emission(None, statements=lambda ins, outs: [
        f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {atom(ins[0])}.split({pieces}, dim={dim})"])


@emitter("take")
def emit_take_torch(node: Node, m: str) -> Emission:
    rank = len(node.inputs[0].shape)
    axis = node.attrs["axis"] % rank
    indices = node.attrs["indices"]
    key = lit(indices) if isinstance(indices, int) else lit(list(indices))
    index = ", ".join([":"] * axis + [key]) if axis < rank - 1 or rank == 2 else f"..., {key}"
    return Emission(None, lambda ins: f"{atom(ins[0])}[{index}]", unary=True)


@emitter("random_normal", "random_uniform")
def emit_random_torch(node: Node, m: str) -> Emission:
    like, out = node.inputs[0], node.outputs[0]
    a = node.attrs
    normal = node.op == "random_normal"
    if tuple(out.shape) == tuple(like.shape) and out.layout == like.layout:
        draw = "torch.randn_like({x})" if normal else "torch.rand_like({x})"
    else:
        sizes = ", ".join(str(d) for d in a["shape"])
        draw = ("torch.randn" if normal else "torch.rand") + f"({{x}}.shape[0], {sizes}, device={{x}}.device)"
    scale, shift = (a["stddev"], a["mean"]) if normal else (a["maxval"] - a["minval"], a["minval"])

    def fn(ins):
        expr = draw.format(x=atom(ins[0]))
        if scale != 1.0:
            expr = f"{expr} * {lit(scale)}"
        if shift:
            expr = f"{expr} + {lit(shift)}" if shift > 0 else f"{expr} - {lit(-shift)}"
        return expr

    return Emission(None, fn)


@emitter("full_like")
def emit_full_like_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    dtype = f", dtype=torch.{a['dtype']}" if a["dtype"] else ""
    if a["value"] in (0.0, 1.0):
        fn = "torch.zeros_like" if a["value"] == 0.0 else "torch.ones_like"
        return Emission(None, lambda ins: f"{fn}({ins[0]}{dtype})", unary=True)
    return Emission(None, lambda ins: f"torch.full_like({ins[0]}, {lit(a['value'])}{dtype})", unary=True)


@emitter("full")
def emit_full_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    sizes = "".join(f", {lit(d)}" for d in a["shape"])
    tail = f"dtype=torch.{a['dtype']}, device={{x}}.device"
    if a["value"] in (0.0, 1.0):
        fn = "torch.zeros" if a["value"] == 0.0 else "torch.ones"
        form = f"{fn}({{x}}.shape[0]{sizes}, {tail})"
    else:
        form = f"torch.full(({{x}}.shape[0]{sizes or ','}), {lit(a['value'])}, {tail})"
    return Emission(None, lambda ins: form.format(x=atom(ins[0])))


@emitter("eye")
def emit_eye_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    sizes = "".join(f", {lit(d)}" for d in a["shape"])
    form = (f"torch.eye({lit(a['rows'])}, {lit(a['columns'])}, dtype=torch.{a['dtype']}, device={{x}}.device)"
            f".expand({{x}}.shape[0]{sizes}, {lit(a['rows'])}, {lit(a['columns'])})")
    return Emission(None, lambda ins: form.format(x=atom(ins[0])))


@emitter("einsum")
def emit_einsum_torch(node: Node, m: str) -> Emission:
    # the operands arrive in the source (Keras) layout: the same equation holds
    equation = node.attrs["equation"].replace(" ", "")
    return Emission(None, lambda ins: f"torch.einsum({lit(equation)}, {', '.join(ins)})")


@emitter("extract_patches")
def emit_extract_patches_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    x, y = node.inputs[0], node.outputs[0]
    kh, kw = a["kernel_size"]
    channels = x.shape[1]
    out_h, out_w = (y.shape[ax] for ax in spatial_axes(y.layout))
    kwargs = ""
    if any(d != 1 for d in a["dilation"]):
        kwargs += f", dilation={lit(size_arg(a['dilation']))}"
    pads = (0, 0) if a["padding"] == "valid" else tuple(b for b, _ in a["padding"])
    if any(pads):
        kwargs += f", padding={lit(size_arg(pads))}"
    kwargs += f", stride={lit(size_arg(a['strides']))}"
    # unfold orders each window (C, kh, kw); Keras' patches are (kh, kw, C)
    return Emission(None, lambda ins: (
        f"F.unfold({ins[0]}, {lit(size_arg((kh, kw)))}{kwargs})"
        f".unflatten(1, ({channels}, {kh * kw})).transpose(1, 2).flatten(1, 2).unflatten(2, ({out_h}, {out_w}))"),
        unary=True)


def slice_text(start: int, stop: int, step: int, size: int | None) -> str:
    """``start:stop:step`` with the defaults left out (``1:``, ``::2``, ``:3``)."""
    text = f"{start or ''}:{'' if stop == size else stop}"
    return text + (f":{step}" if step != 1 else "")


def subscript_text(node: Node) -> str:
    """The index of a ``slice`` node for the input's current layout: ``:, 1:3``, ``..., ::2``."""
    x, a = node.inputs[0], node.attrs
    rank = len(x.shape)
    parts = [":"] * rank
    for ax, start, stop, step in zip(a["axes"], a["starts"], a["stops"], a["steps"]):
        parts[ax % rank] = slice_text(start, stop, step, x.shape[ax % rank])
    while parts and parts[-1] == ":":
        parts.pop()
    first = next(i for i, p in enumerate(parts) if p != ":")
    if first > 1 and first == len(parts) - 1 and first == rank - 1:  # only the tensor's last axis
        return f"..., {parts[-1]}"
    return ", ".join(parts)


@emitter("slice")
def emit_slice_torch(node: Node, m: str) -> Emission:
    index = subscript_text(node)
    return Emission(None, lambda ins: f"{atom(ins[0])}[{index}]", unary=True)
