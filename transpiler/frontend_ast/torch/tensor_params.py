"""Functions over tensors that nothing in their file calls → keras.ops code.

A library module of a PyTorch program (``utils.py`` of fast_neural_style: ``gram_matrix(y)``,
``normalize_batch(batch)``) holds functions another file calls with torch tensors, often
inside a training step where gradients flow through them. Nothing in the file itself says
what their parameters hold, so the reader has to infer it, and it does so from the
function's own body only:

    a parameter is array data (a tensor) when the body calls on it, directly or on a
    comparison or arithmetic of it (``(src == pad).transpose(0, 1)``), a torch tensor method
    that neither a numpy array nor a torch module has (``TENSOR_EVIDENCE``: ``y.size()``,
    ``y.view(...)``, ``x.bmm(...)``, ``x.new_tensor(...)``, ``x.div_(...)``, ``x.clone()``,
    ``x.masked_fill(...)``...), or ``transpose`` with two axes (numpy's takes them all).

``.to()``, ``.cpu()``, ``.float()`` and the like are no evidence (a module has them too),
nor is a method numpy arrays share (``x.sum()``, ``x.reshape(...)``): those keep the
parameter's kind unknown, as before. Values computed from a tensor parameter are tensors
in turn (the reader's interpretation follows them).

Such a parameter is read as a tensor of the Keras program (``TensorArgV``, a ``LiveV``):
its methods and the torch functions over it become ``keras.ops`` (ir/tensor_functions.py),
which take numpy arrays and Keras (backend) tensors alike and let gradients flow, so one
translation serves both kinds of caller. The layout is torch's (the caller's tensors are
what torch held: channels-first images). The inference is never silent: the translated
function carries a ``# transpiler:`` note naming the parameters taken for tensors and the
method calls that showed it. A method the Keras side does not translate is still a marked
stub (the statement), never code kept as it was.

In-place methods (``x.div_(v)``) compute a new tensor: Keras tensors are immutable. torch
changes the caller's tensor as well; the note says so (a caller that reads its argument
again after the call sees other numbers).

Imports no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.plumbing import TENSOR_ONLY_METHODS
from transpiler.frontend_ast.torch.reader_values import LiveV, tensor_template

#: methods a torch module has too (``model.to(device)``, ``model.float()``): no evidence
MODULE_METHODS = frozenset({"to", "cpu", "cuda", "float", "double", "half", "bfloat16", "type", "requires_grad_",
                            "zero_grad", "share_memory", "apply", "train", "eval", "backward"})
#: torch tensor methods whose call on a parameter shows it to be a tensor
TENSOR_EVIDENCE = TENSOR_ONLY_METHODS - MODULE_METHODS
#: in-place arithmetic → its operator (a new tensor in the Keras program)
IN_PLACE = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/"}
#: an in-place operator's numpy ufunc
UFUNCS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}


@dataclass(eq=False)
class TensorArgV(LiveV):
    """A parameter the function's body uses as a tensor (torch's layout: not permuted)."""

    name: str = ""


def tensor_parameters(fn: cst.FunctionDef) -> dict[str, list[str]]:
    """The parameters of ``fn`` its body uses as tensors → the calls that show it, in order
    (``{"y": ["y.size()", "y.view()"]}``). Nested functions and lambdas are not looked into
    (their own parameters may shadow the names)."""
    names = {p.name.value for p in fn.params.params + fn.params.kwonly_params + fn.params.posonly_params}
    found: dict[str, list[str]] = {}

    class Uses(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if not isinstance(f, cst.Attribute):
                return
            evidence = f.attr.value in TENSOR_EVIDENCE or (f.attr.value == "transpose" and len(node.args) == 2)
            recv = f.value
            if isinstance(recv, (cst.Comparison, cst.BinaryOperation)):  # ((src == pad).transpose(0, 1))
                recv = recv.left
            if isinstance(recv, cst.Name) and recv.value in names and evidence:
                shown = f"{cst.Module([]).code_for_node(f.value)}.{f.attr.value}()"
                calls = found.setdefault(recv.value, [])
                if shown not in calls:
                    calls.append(shown)

    fn.visit(Uses())
    return found


def note(fn: cst.FunctionDef, found: dict[str, list[str]]) -> str:
    """The note above a function whose parameters were taken for tensors."""
    which = "; ".join(f"{name} ({', '.join(calls)})" for name, calls in found.items())
    several = len(found) > 1
    text = (f"{fn.name.value}: nothing in this file calls it; its body uses {'parameters' if several else 'a parameter'} "
            f"as {'torch tensors' if several else 'a torch tensor'}, so {'they are' if several else 'it is'} read as "
            f"{'tensors' if several else 'one'}: {which}. {'Their' if several else 'Its'} torch methods are keras.ops, which take numpy arrays "
            "and Keras tensors alike (in torch's layout, as the caller's tensors were)")
    if any(c.split(".")[1][:-2] in IN_PLACE for calls in found.values() for c in calls):
        text += "; an in-place method makes a new tensor here (torch also changed the caller's tensor)"
    return text


def unknown_tensor_arguments(reader, fn: cst.FunctionDef, bound: dict) -> None:
    """A function this file calls with a value the reader cannot tell (a model's output where
    the model is not known here, an item of a loader it does not follow) for a parameter its
    body uses as a torch tensor (``output.topk(...)``): that parameter is read as a tensor, as
    in a function nothing calls (the torch methods kept as written would fail on Keras
    tensors and numpy arrays alike); the note says so."""
    from transpiler.frontend_ast.torch.reader_values import Other

    found = {name: calls for name, calls in tensor_parameters(fn).items() if type(bound.get(name)) is Other}
    for name in found:
        bound[name] = TensorArgV(name=name)
    if found and reader.sid(fn) not in reader.facts:
        which = "; ".join(f"{name} ({', '.join(calls)})" for name, calls in found.items())
        reader.fact(fn, "note", f"{fn.name.value}: this file calls it with values it cannot tell for parameters "
                    f"its body uses as torch tensors, so they are read as tensors: {which}. Their torch methods "
                    "are keras.ops, which take numpy arrays and Keras tensors alike (in torch's layout)")


def method(reader, obj: LiveV, name: str, node: cst.Call, pos: list, kw: dict):
    """A tensor method on a Keras tensor beyond the training step's own (steps.live_method):
    matrix products, axis swaps, tensors made like another, in-place arithmetic, masks. The
    value; ``Unsupported`` when ``name`` is none of them."""
    value = _method(reader, obj, name, node, pos, kw)
    if value is None:
        where = "in a training step" if reader.live else "on a tensor (keras.ops)"
        raise Unsupported(f"tensor method .{name}() {where} is not translated yet")
    return value


# long: one case per tensor method, each a few lines
def _method(reader, obj: LiveV, name: str, node: cst.Call, pos: list, kw: dict):
    p, done = tensor_template(reader, node, node.func.value, obj.permuted)

    def axes_ok():
        if obj.permuted:
            raise Unsupported(f".{name}() on a feature map the Keras model returns channels-last")

    if kw and name not in ("masked_fill", "new_tensor", "new_zeros", "new_ones", "new_full", "softmax",
                           "log_softmax", "topk"):
        return None
    if name == "topk":
        return _topk(reader, obj, node, pos, kw)
    if name in ("softmax", "log_softmax") and len(pos) + len(kw) == 1 and (pos or "dim" in kw):
        axes_ok()
        return done(f"${name}({{0}}, axis=" + p(pos[0] if pos else kw["dim"]) + ")")
    if name in ("bmm", "mm", "matmul") and len(pos) == 1:
        axes_ok()
        return done("$matmul({0}, " + p(pos[0]) + ")")
    if name == "transpose" and len(pos) == 2:
        axes_ok()
        return done("$swapaxes({0}, " + p(pos[0]) + ", " + p(pos[1]) + ")")
    if name == "t" and not pos:
        return done("$transpose({0})")
    if name == "permute" and pos:
        axes_ok()
        dims = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
        return done("$transpose({0}, " + dims + ")")
    if name in ("new_tensor", "new_zeros", "new_ones", "new_full"):
        data = pos[0] if pos else kw.get("data", kw.get("size"))
        if data is None or set(kw) - {"data", "size", "fill_value", "dtype", "device", "requires_grad"} or \
                kw.get("requires_grad") is not None:
            return None
        dtype = p(kw["dtype"]) if "dtype" in kw else "{0}.dtype"
        if name == "new_tensor":
            return done("$convert_to_tensor(" + p(data) + ", dtype=" + dtype + ")")
        if name == "new_full":
            fill = pos[1] if len(pos) > 1 else kw.get("fill_value")
            if fill is None:
                return None
            return done("$full(" + p(data) + ", " + p(fill) + ", dtype=" + dtype + ")")
        return done(f"${name[4:]}(" + p(data) + ", dtype=" + dtype + ")")
    if name in IN_PLACE and len(pos) == 1:
        return done("({0} " + IN_PLACE[name] + " " + p(pos[0]) + ")")
    if name == "expand_as" and len(pos) == 1:
        return done("$broadcast_to({0}, " + p(pos[0]) + ".shape)")
    if name == "view_as" and len(pos) == 1:
        axes_ok()
        return done("$reshape({0}, " + p(pos[0]) + ".shape)")
    if name == "type_as" and len(pos) == 1:
        return done("$cast({0}, " + p(pos[0]) + ".dtype)")
    if name in ("masked_fill", "masked_fill_"):
        mask = pos[0] if pos else kw.get("mask")
        value = pos[1] if len(pos) > 1 else kw.get("value")
        if mask is None or value is None:
            return None
        return done("$where(" + p(mask) + ", $full_like({0}, " + p(value) + "), {0})")
    if name == "narrow" and len(pos) == 3 and isinstance(pos[0], cst.Integer):
        # (x.narrow(dim, start, length): a slice of axis dim; numpy arrays and Keras tensors alike)
        axes_ok()
        start = p(pos[1])
        stop = start + " + " + p(pos[2])
        if pos[0].value == "0":
            return done("{0}[" + start + ":" + stop + "]")
        return done("{0}[(slice(None),) * " + p(pos[0]) + " + (slice(" + start + ", " + stop + "),)]")
    if name == "numel" and not pos:
        return done("$size({0})", result=_other())
    if name == "dim" and not pos:
        return done("len({0}.shape)", result=_other())
    return None


def _topk(reader, obj: LiveV, node: cst.Call, pos: list, kw: dict):
    """``x.topk(k, dim=-1, largest=True, sorted=True)`` → the generated ``tensor_topk`` (runtime/keras/
    arrays.py): a (values, indices) pair of Keras tensors; None for other arguments."""
    from transpiler.frontend_ast.torch.reader_values import TupleV

    names = ("k", "dim", "largest", "sorted")
    given = dict(zip(names, pos))
    given.update(kw)
    if set(given) - set(names) or "k" not in given or len(pos) > len(names):
        return None
    if obj.permuted and "dim" in given:
        raise Unsupported(".topk(k, dim) on a feature map the Keras model returns channels-last")
    keys = [k for k in names if k in given]
    texts = ["{0}"] + [f"{{{i + 1}}}" if i < len(pos) else f"{k}={{{i + 1}}}" for i, k in enumerate(keys)]
    reader.runtime_expr(node, f"tensor_topk({', '.join(texts)})", [node.func.value] + [given[k] for k in keys], ["tensor_topk"])
    return TupleV([LiveV(obj.permuted), LiveV(obj.permuted)])


def array_method(name: str, r: str, pos: list, kw: dict, p) -> tuple:
    """``(template, value)`` of a torch tensor method on array data (numpy in the Keras
    program: reader_methods.tensor_method's cases beyond its own), ``r`` the receiver's
    placeholder, ``p(node)`` a part's; ``Unsupported`` for any other method."""
    from transpiler.frontend_ast.torch.reader_values import Arr

    one = pos[0] if len(pos) == 1 and not kw else None
    if name == "topk":
        names = ("k", "dim", "largest", "sorted")
        given = dict(zip(names, pos))
        given.update(kw)
        if set(given) - set(names) or "k" not in given or len(pos) > len(names):
            raise Unsupported("tensor method .topk() with arguments it does not take")
        texts = [r] + [p(given[k]) if i < len(pos) else f"{k}={p(given[k])}" for i, k in enumerate(names)
                       if k in given]
        from transpiler.frontend_ast.torch.reader_values import TupleV

        return f"array_topk({', '.join(texts)})", TupleV([Arr(), Arr()]), ["array_topk"]
    if name == "expand_as" and one is not None:
        return f"$broadcast_to({r}, {p(one)}.shape)", Arr()
    if name == "view_as" and one is not None:
        return f"{r}.reshape({p(one)}.shape)", Arr()
    if name == "type_as" and one is not None:
        return f"{r}.astype({p(one)}.dtype)", Arr()
    if name in ("bmm", "mm", "matmul") and one is not None:
        return f"({r} @ {p(one)})", Arr()
    if name == "t" and not pos and not kw:
        return f"{r}.T", Arr()
    if name in ("to_sparse", "to_dense", "coalesce") and not pos and not kw:
        # (sparse tensors are dense arrays in the Keras program: the same numbers)
        return r, Arr(), None
    if name == "repeat" and pos and not kw:  # (torch's repeat is numpy's tile: leading axes added alike)
        sizes = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
        return f"$tile({r}, {sizes})", Arr()
    if name == "masked_fill" and len(pos) + len(kw) == 2 and set(kw) <= {"mask", "value"}:
        mask = pos[0] if pos else kw["mask"]
        value = pos[1] if len(pos) > 1 else kw["value"]
        # (torch keeps the tensor's dtype: the generated helper casts the value to it)
        return f"masked_fill({r}, {p(mask)}, {p(value)})", Arr(), ["masked_fill"]
    if name in ("new_tensor", "new_zeros", "new_ones", "new_full") and pos and \
            set(kw) <= {"dtype", "device"} and len(pos) <= (2 if name == "new_full" else 1):
        dtype = p(kw["dtype"]) if "dtype" in kw else f"{r}.dtype"
        if name == "new_tensor":
            return f"$asarray({p(pos[0])}, dtype={dtype})", Arr()
        if name == "new_full":
            if len(pos) != 2:
                raise Unsupported("tensor method .new_full() without its fill value")
            return f"$full({p(pos[0])}, {p(pos[1])}, dtype={dtype})", Arr()
        return f"${name[4:]}({p(pos[0])}, dtype={dtype})", Arr()
    raise Unsupported(f"tensor method .{name}() is not translated to Keras yet")


def in_place(reader, name: str, recv, node: cst.Call, r: str, pos: list, p) -> tuple:
    """``(template, value)`` of an in-place method on array data: as a statement of its own,
    ``np.copyto`` (the array changes, as torch's tensor); used as a value, on a temporary
    (``torch.ones(1, 1).fill_(v)``: nobody else sees it), the new array; used as a value on
    an array a variable holds, arithmetic is numpy's ufunc with ``out=`` (both the change and
    the value), anything else ``Unsupported``."""
    from transpiler.frontend_ast.torch.reader_values import OTHER, Arr

    if name != "zero_" and len(pos) != 1:
        raise Unsupported(f"tensor method .{name}() with other than one argument")
    value = "0" if name == "zero_" else p(pos[0])
    op = IN_PLACE.get(name)
    line = reader.stmt_stack[-1] if reader.stmt_stack else None
    alone = isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and \
        isinstance(line.body[0], cst.Expr) and line.body[0].value is node
    if alone:
        return (f"$copyto({r}, {r} {op} {value})" if op else f"$copyto({r}, {value})"), OTHER
    if op and isinstance(recv, (cst.Name, cst.Attribute, cst.Subscript)):
        # numpy's ufunc with out= does both: the array changes, and it is the value (torch's
        # casting rule too: an integer array times a float fails in both)
        return f"${UFUNCS[op]}({r}, {value}, out={r})", Arr()
    if isinstance(recv, (cst.Name, cst.Attribute, cst.Subscript)):
        raise Unsupported(f"tensor method .{name}() used as a value of an array a variable holds (numpy "
                          "changes it in place or makes a new one, not both)")
    if op:
        return f"({r} {op} {value})", Arr()
    return f"$full_like({r}, {value})", Arr()


#: DataLoader's arguments in order, and the ones the generated CollateLoader takes
LOADER_ORDER = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
                "pin_memory", "drop_last", "timeout", "worker_init_fn")
COLLATE_LOADER = ("dataset", "batch_size", "shuffle", "drop_last", "collate_fn")


def collate_loader(reader, node: cst.Call, pos: list, vals: list, kw: dict, kwv: dict):
    """``DataLoader(dataset, batch_size=B, collate_fn=fn)`` → the generated ``CollateLoader``
    (runtime/keras/data.py): lists of B items of any dataset (map-style or an iterable)
    handed to ``fn``. A function of this file given as ``fn`` is read with its batch (a list
    of items) unknown, so its tensor code is translated; what the loader yields is what
    ``fn`` returns (not known to the reader: the loop over it is not ``fit``'s)."""
    from transpiler.frontend_ast.torch.reader_values import OTHER, FuncV

    given = dict(zip(LOADER_ORDER, pos))
    given.update(kw)
    values = dict(zip(LOADER_ORDER, vals))
    values.update(kwv)
    ignored = {"num_workers", "pin_memory", "timeout", "persistent_workers", "prefetch_factor"}
    extra = set(given) - set(COLLATE_LOADER) - ignored
    if extra:
        raise Unsupported(f"DataLoader({', '.join(sorted(extra))}=...) with a collate_fn is not translated")
    fn = values.get("collate_fn")
    if isinstance(fn, FuncV) and fn.node.name.value not in reader.read_functions:
        reader.guessing += 1  # (its batch: a list of the dataset's items, unknown here)
        try:
            reader.read_function(fn.node, [OTHER], {})
        finally:
            reader.guessing -= 1
    keys = [k for k in COLLATE_LOADER if k in given]
    texts = ["{0}" if k == "dataset" else f"{k}={{{i}}}" for i, k in enumerate(keys)]
    reader.runtime_expr(node, f"CollateLoader({', '.join(texts)})", [given[k] for k in keys], ["CollateLoader"])
    return OTHER


def pad_sequence(reader, node: cst.Call, pos: list, kw: dict):
    """``pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right")``
    → the generated ``pad_sequence`` of numpy arrays (runtime/keras/arrays.py): array data."""
    from transpiler.frontend_ast.torch.reader_values import Arr

    names = ("sequences", "batch_first", "padding_value", "padding_side")
    given = dict(zip(names, pos))
    given.update(kw)
    if set(given) - set(names) or "sequences" not in given:
        raise Unsupported("pad_sequence() with arguments it does not take")
    keys = [k for k in names if k in given]
    texts = ["{0}"] + [f"{k}={{{i + 1}}}" for i, k in enumerate(keys[1:])]
    reader.runtime_expr(node, f"pad_sequence({', '.join(texts)})", [given[k] for k in keys], ["pad_sequence"])
    return Arr()


#: the legacy typed constructors of tensors from data → numpy dtype
TYPED_TENSORS = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                 "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "ByteTensor": "uint8",
                 "BoolTensor": "bool"}


def typed_tensor(reader, node: cst.Call, pos: list, kw: dict):
    """``torch.FloatTensor(data)`` / ``torch.LongTensor(data)`` → ``np.asarray(data, dtype=...)``
    (a copy of data as array data; sizes instead of data are not translated)."""
    from transpiler.frontend_ast.torch.reader_values import Arr

    name = _called_name(node)
    if len(pos) != 1 or kw or isinstance(pos[0], (cst.Integer, cst.Tuple)):
        raise Unsupported(f"torch.{name}() of other than one array of data (sizes: torch.empty)")
    reader.array(node, f'$asarray({{0}}, dtype="{TYPED_TENSORS[name]}")', [pos[0]])
    return Arr()


def sparse_coo_tensor(reader, node: cst.Call, pos: list, kw: dict):
    """``torch.sparse_coo_tensor(indices, values, size[, dtype=])`` → the generated dense
    ``sparse_coo_tensor`` (runtime/keras/arrays.py): the same numbers as torch's
    ``to_dense()`` (duplicate indices summed); the Keras program holds the matrix dense."""
    from transpiler.frontend_ast.torch.reader_values import Arr

    names = ("indices", "values", "size")
    given = dict(zip(names, pos))
    given.update({k: v for k, v in kw.items() if k not in ("device", "requires_grad")})
    if set(given) - set(names) - {"dtype"} or "size" not in given or "values" not in given:
        raise Unsupported("torch.sparse_coo_tensor() without a size, or with arguments it does not take")
    keys = [k for k in names + ("dtype",) if k in given]
    texts = [f"{{{i}}}" for i, k in enumerate(keys) if k != "dtype"] + \
        [f"dtype={{{keys.index('dtype')}}}"] * ("dtype" in given)
    reader.runtime_expr(node, f"sparse_coo_tensor({', '.join(texts)})", [given[k] for k in keys],
                        ["sparse_coo_tensor"])
    dense_note(reader)
    return Arr()


DENSE_NOTE = ("a sparse tensor is a dense numpy array here (the same numbers: duplicates summed, as "
              "torch's to_dense(); memory grows with the full size)")


def dense_note(reader) -> None:
    """The note above the statement holding a sparse tensor (unless the statement has a fact)."""
    line = reader.stmt_stack[-1] if reader.stmt_stack else None
    if line is not None and reader.sid(line) not in reader.facts:
        reader.fact(line, "note", DENSE_NOTE)


def _called_name(node: cst.Call) -> str:
    return node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value


DATA_CALLS = {"torch.nn.utils.rnn.pad_sequence": lambda r, n, p, k: pad_sequence(r, n, p, k),
              "torch.sparse_coo_tensor": sparse_coo_tensor,
              **{f"torch.{name}": typed_tensor for name in TYPED_TENSORS}}


def read_nested(reader, fn: cst.FunctionDef, scope) -> None:
    """The functions defined in ``fn``'s body that nothing called while it was read (a
    closure handed on as a value: ``_seq_transform(tokenizer, vocab, _tensor_transform)``),
    read as the module's uncalled functions are (their parameters guessed). Only a name
    ``scope`` still binds to that function (``FuncV``) is one: a definition the reader
    recognised as something else (Keras' loss object written as ``def loss_fn(target,
    output)``: a ``LossV`` that compile takes, its body and the per-sample loss helper it
    calls dropped) is not a function to translate, and reading its body would stub the
    helper's tensor code."""
    from transpiler.frontend_ast.torch.reader_values import FuncV

    for stmt in fn.body.body:
        bound = scope.vars.get(stmt.name.value) if isinstance(stmt, cst.FunctionDef) else None
        if isinstance(bound, FuncV) and bound.node is stmt and stmt.name.value not in reader.read_functions and \
                stmt.name.value not in reader.reading:
            reader.guessing += 1
            try:
                reader.read_function(stmt, reader._guess_params(stmt), {}, closure=scope)
            finally:
                reader.guessing -= 1


def unknown_method(reader, name: str, recv, args, guessed: bool) -> str | None:
    """The stub message for ``recv.name(args)`` on a value the reader cannot tell: given a
    feature map the Keras model returns channels-last (another file's function,
    ``utils.gram_matrix(features)``, indexes torch's channels-first layout); ``guessed`` (in a
    function nothing calls) a torch tensor method numpy arrays lack
    (plumbing.unknown_tensor_method), or ``transpose`` with two axes (torch swaps them,
    numpy's permutes all axes: ``x.transpose(0, 1)`` of a 2-D array is x); else None."""
    from transpiler.frontend_ast.torch.plumbing import unknown_tensor_method

    if any(isinstance(v, LiveV) and v.permuted for _, v in args):
        return (f"{cst.Module([]).code_for_node(recv)}.{name}() gets a feature map the Keras model returns "
                "channels-last (code outside this file indexes torch's channels-first layout); not translated")
    if not guessed:
        return None
    message = unknown_tensor_method(reader, name, recv)
    if message is None and name == "transpose" and len(args) == 2:
        message = (f"{cst.Module([]).code_for_node(recv)}.transpose(a, b): torch swaps two axes, numpy's "
                   "transpose permutes them all (on a value this file does not show to be array data); not translated")
    return message


def _other():
    from transpiler.frontend_ast.torch.reader_values import OTHER

    return OTHER


__all__ = ["TENSOR_EVIDENCE", "TensorArgV", "method", "note", "tensor_parameters"]
