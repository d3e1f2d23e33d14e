"""A user's map-style ``torch.utils.data.Dataset`` subclass, for the Keras program.

Such a class (``__len__`` and ``__getitem__`` over arrays it built or was given) is
framework-neutral Python apart from the tensors its items are wrapped in. It is kept,
with the ``Dataset`` base dropped and the wrapping rewritten to array functions (numpy's
names, ir/array_functions.py, written as marks the printer spells: ``np.`` in the Keras output)::

    torch.from_numpy(a) / torch.as_tensor(a)   → a
    torch.tensor(a, dtype=torch.long)          → np.asarray(a, dtype="int64")
    torch.FloatTensor(a) / torch.LongTensor(a) → np.asarray(a, dtype="float32"/"int64")
    a.float() / a.long()                       → np.asarray(a, dtype="float32"/"int64")
    torch.float32 (a dtype)                    → "float32"
    torch.rand(n, m) / torch.randn(n, m)       → np.random.random_sample((n, m)).astype("float32") / standard_normal
    torch.zeros(n, m) / torch.ones(n, m)       → np.zeros((n, m), dtype="float32") / np.ones
    torch.randint(lo, hi, size)                → np.random.randint(lo, hi, size=size).astype("int64")
    torch.cat(xs, dim=d) / torch.stack(...)    → np.concatenate(xs, axis=d) / np.stack
    a.type(torch.int64)                        → np.asarray(a, dtype="int64")
    a.clone() / a.numpy()                      → np.array(a) / np.asarray(a)
    a.unsqueeze(d) / a.squeeze(d)              → np.expand_dims(a, d) / np.squeeze(a, d)
    a.permute(*dims) / a.view(*shape)          → np.transpose(a, dims) / np.reshape(a, shape)
    a.size() / a.size(d)                       → a.shape / a.shape[d]
    a.to(device) / a.cpu() / a.cuda()          → a (the Keras program places data itself)
    datasets.MNIST(root, train=t, download=d)  → VisionDataset("mnist", train=t) (its .data, .targets:
                                                 torchvision's arrays, as numpy)

(numpy draws other numbers than torch's generator: a dataset of random data gets random data
of the same distribution, shape and dtype.)

A plain class (no base from torch) that makes its tensors of data the same way
(word_language_model's ``Corpus``: ``torch.tensor(ids).type(torch.int64)``, ``torch.cat``)
is rewritten by the same rules.

The generated ``DatasetLoader`` stacks its items into batches as torch's default collate
does. A class that still uses torch after the rewrite, or calls a torch tensor method numpy
arrays lack (``.masked_fill``, ``.expand``: kept, it would fail when run), is not translated
(a stub).
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.plumbing import TENSOR_ONLY_METHODS
from transpiler.ir.array_functions import tree_mark
from transpiler.ir.code_literals import dotted_name

#: torch dtypes → numpy dtype names
DTYPE_NAMES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
               "float16": "float16", "half": "float16", "int64": "int64", "long": "int64", "int32": "int32",
               "int": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}
_TENSOR_CLASSES = {"FloatTensor": "float32", "DoubleTensor": "float64", "LongTensor": "int64",
                   "IntTensor": "int32", "BoolTensor": "bool", "ByteTensor": "uint8"}
_CAST_METHODS = {"float": "float32", "double": "float64", "long": "int64", "int": "int32", "bool": "bool"}


def _dotted(node) -> str | None:
    return dotted_name(node)


def is_dataset_class(cls: cst.ClassDef, resolve) -> bool:
    """``class X(Dataset)`` with ``Dataset`` resolving (``resolve(dotted)``) to torch's."""
    return any(resolve(_dotted(b.value) or "") in ("torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset")
               for b in cls.bases)


def item_arity(cls: cst.ClassDef) -> int:
    """How many arrays one item holds (``return x, y`` in ``__getitem__``: 2)."""
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__getitem__":
            found: list[int] = []

            class V(cst.CSTVisitor):
                def visit_Return(self, n: cst.Return) -> None:
                    if n.value is not None:
                        found.append(len(n.value.elements) if isinstance(n.value, cst.Tuple) else 1)

            stmt.visit(V())
            if found and all(k == found[0] for k in found):
                return found[0]
            raise Unsupported(f"{cls.name.value}.__getitem__ returns items of different lengths")
    raise Unsupported(f"{cls.name.value} has no __getitem__ (an iterable-style dataset is not translated)")


def _np_asarray(value: cst.BaseExpression, dtype: str | None) -> cst.Call:
    args = [cst.Arg(value)]
    if dtype is not None:
        args.append(cst.Arg(cst.SimpleString(f'"{dtype}"'), keyword=cst.Name("dtype"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return cst.Call(cst.parse_expression(tree_mark("asarray")), args)


def numpy_dataset_class(cls: cst.ClassDef, torch_names: set[str], resolve, what: str = "a Dataset") -> cst.ClassDef:
    """The class without its ``Dataset`` base and with its tensors numpy arrays; raises
    Unsupported when torch is still used after the rewrite. (``what``: the class's kind in
    the messages; a plain class holding tensors it makes of data, word_language_model's
    ``Corpus``, is rewritten the same way.)"""

    def torch_path(node) -> str | None:
        dotted = _dotted(node)
        if dotted is None or dotted.split(".")[0] not in torch_names:
            return None
        return resolve(dotted)

    helpers: list[str] = []

    class Rewrite(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            path = torch_path(original.func)
            pos = [a for a in updated.args if a.keyword is None and not a.star]
            kw = {a.keyword.value: a.value for a in updated.args if a.keyword is not None}
            if path is not None and path.startswith("torchvision.datasets."):
                made = _vision_dataset(path.rsplit(".", 1)[-1], pos, kw)
                helpers.extend(h for h in ("ArrayDataset", "VisionDataset") if h not in helpers)
                return made
            if path in ("torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.asarray") and len(pos) == 1:
                extra = set(kw) - {"dtype"}
                if extra:
                    raise Unsupported(f"{path}({', '.join(sorted(extra))}=...) in a Dataset")
                dtype = kw.get("dtype")
                if path == "torch.from_numpy" or (path == "torch.as_tensor" and dtype is None):
                    return pos[0].value
                return _np_asarray(pos[0].value, None if dtype is None else _dtype_name(dtype))
            if path is not None and path.split(".")[-1] in _TENSOR_CLASSES and len(pos) == 1 and not kw:
                return _np_asarray(pos[0].value, _TENSOR_CLASSES[path.split(".")[-1]])
            if path is not None and path.startswith("torch.") and path[len("torch."):] in _CREATIONS:
                return _creation(path[len("torch."):], pos, kw)
            if path in ("torch.cat", "torch.concat", "torch.stack") and len(pos) <= 2 and set(kw) <= {"dim"}:
                axis = kw.get("dim", pos[1].value if len(pos) > 1 else None)
                return _np("stack" if path == "torch.stack" else "concatenate",
                           [cst.Arg(pos[0].value)] + ([_kwarg("axis", axis)] if axis is not None else []))
            if isinstance(original.func, cst.Attribute) and original.func.attr.value in _CAST_METHODS and \
                    not original.args and torch_path(original.func) is None:
                return _np_asarray(updated.func.value, _CAST_METHODS[original.func.attr.value])
            if isinstance(original.func, cst.Attribute) and torch_path(original.func) is None:
                return _array_method(updated, original.func.attr.value, pos, kw)
            return updated

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
            path = torch_path(original)
            if path is not None and path.startswith("torch.") and path[len("torch."):] in DTYPE_NAMES:
                return cst.SimpleString(f'"{DTYPE_NAMES[path[len("torch."):]]}"')
            return updated

    bases = [b for b in cls.bases if not (resolve(_dotted(b.value) or "") or "").startswith("torch.")]
    new = cls.with_changes(bases=bases, lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)
    new = new.visit(Rewrite())
    left: list[str] = []

    class Check(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value in torch_names:
                left.append(n.value)

    new.body.visit(Check())
    if left:
        raise Unsupported(f"class {cls.name.value}: {what} that uses PyTorch beyond wrapping its arrays "
                          "(not translated)")
    kept = sorted({c.func.attr.value for c in nodes_of(new.body, cst.Call) if isinstance(c.func, cst.Attribute)
                   and c.func.attr.value in TENSOR_ONLY_METHODS and c.func.attr.value not in _NUMPY_TOO
                   and not (isinstance(c.func.value, cst.Name) and resolve(c.func.value.value))})  # (math.exp)
    if kept:
        raise Unsupported(f"class {cls.name.value}: {what} calling torch tensor methods numpy arrays lack "
                          f"({', '.join('.' + k + '()' for k in kept)}; not translated)")
    return {"node": new, "helpers": helpers} if helpers else new


def _vision_dataset(name: str, pos: list, kw: dict) -> cst.Call:
    """``datasets.MNIST(root, train=t, download=d[, transform=f])`` inside a Dataset → the
    generated ``VisionDataset("mnist", train=t[, transform=f])`` (keras.datasets' copy: no
    root, nothing to download), whose ``data`` and ``targets`` are torchvision's arrays."""
    from transpiler.frontend_ast.torch.vision import DATASETS

    if name not in DATASETS:
        raise Unsupported(f"torchvision.datasets.{name} in a Dataset is not translated to Keras yet")
    given = dict(zip(("root", "train", "transform", "target_transform", "download"), [a.value for a in pos]))
    given.update(kw)
    extra = set(given) - {"root", "train", "transform", "target_transform", "download"}
    if extra or given.get("target_transform") is not None:
        raise Unsupported(f"datasets.{name}({', '.join(sorted(extra)) or 'target_transform'}=...) in a Dataset")
    args = [cst.Arg(cst.SimpleString(f'"{DATASETS[name][0]}"'))]
    args += [_kwarg(k, given[k]) for k in ("train", "transform") if k in given]
    return cst.Call(cst.Name("VisionDataset"), args)


#: torch functions making arrays → numpy (sizes as separate ints or one tuple)
_CREATIONS = {"rand": "random_sample", "randn": "standard_normal", "zeros": "zeros", "ones": "ones",
              "randint": "randint"}
#: tensor-only method names (plumbing.TENSOR_ONLY_METHODS) a Dataset may call on what is not a tensor
_NUMPY_TOO = frozenset({"copy_", "item", "tolist"})


def _sizes(pos: list) -> cst.BaseExpression:
    if len(pos) == 1 and isinstance(pos[0].value, (cst.Tuple, cst.List)):
        return pos[0].value
    return cst.Tuple([cst.Element(a.value) for a in pos])


def _np(name: str, args: list) -> cst.Call:
    """A call of the array function ``name`` (ir/array_functions.py), marked: the printer spells it."""
    return cst.Call(cst.parse_expression(tree_mark(name)), args)


def _kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def _astype(value: cst.BaseExpression, dtype: str) -> cst.Call:
    return cst.Call(cst.Attribute(value, cst.Name("astype")), [cst.Arg(cst.SimpleString(f'"{dtype}"'))])


def _creation(name: str, pos: list, kw: dict) -> cst.BaseExpression:
    """``torch.rand(20)`` → ``np.random.random_sample((20,)).astype("float32")`` (torch's
    default dtypes: float32, int64 for randint); a ``device=`` is dropped."""
    extra = set(kw) - {"dtype", "device", "size"}
    if extra or not (pos or "size" in kw):
        raise Unsupported(f"torch.{name}({', '.join(sorted(extra)) or 'no size'}=...) in a Dataset")
    dtype = _dtype_name(kw["dtype"]) if "dtype" in kw else ("int64" if name == "randint" else "float32")
    if name == "randint":
        if "size" in kw:
            bounds, size = pos, kw["size"]
        elif len(pos) in (2, 3):
            bounds, size = pos[:-1], pos[-1].value
        else:
            raise Unsupported("torch.randint without (low, high, size) in a Dataset")
        return _astype(_np("random.randint", [cst.Arg(a.value) for a in bounds] + [_kwarg("size", size)]), dtype)
    size = kw["size"] if "size" in kw else _sizes(pos)
    if name in ("zeros", "ones"):
        return _np(name, [cst.Arg(size), _kwarg("dtype", cst.SimpleString(f'"{dtype}"'))])
    return _astype(_np(f"random.{_CREATIONS[name]}", [cst.Arg(size)]), dtype)


def _array_method(call: cst.Call, name: str, pos: list, kw: dict) -> cst.BaseExpression:
    """A tensor method on an array → numpy (the module docstring's table); else the call."""
    recv = call.func.value
    if kw:
        return call
    if name == "clone" and not pos:
        return _np("array", [cst.Arg(recv)])
    if name == "numpy" and not pos:
        return _np("asarray", [cst.Arg(recv)])
    if name == "to" and len(pos) == 1 and isinstance(pos[0].value, cst.SimpleString) and \
            pos[0].value.evaluated_value in DTYPE_NAMES.values():  # (a torch dtype, rewritten above)
        return _np_asarray(recv, pos[0].value.evaluated_value)
    if name in ("cpu", "cuda") or (name == "to" and len(pos) == 1):
        return recv
    if name == "type" and len(pos) == 1 and isinstance(pos[0].value, cst.SimpleString) and \
            pos[0].value.evaluated_value in DTYPE_NAMES.values():  # (x.type(torch.int64): a cast)
        return _np_asarray(recv, pos[0].value.evaluated_value)
    if name == "unsqueeze" and len(pos) == 1:
        return _np("expand_dims", [cst.Arg(recv), cst.Arg(pos[0].value)])
    if name == "squeeze" and len(pos) <= 1:
        return _np("squeeze", [cst.Arg(recv)] + [cst.Arg(a.value) for a in pos])
    if name in ("permute", "view") and pos:
        return _np("transpose" if name == "permute" else "reshape", [cst.Arg(recv), cst.Arg(_sizes(pos))])
    if name == "size" and len(pos) <= 1:
        shape = cst.Attribute(recv, cst.Name("shape"))
        return cst.Subscript(shape, [cst.SubscriptElement(cst.Index(pos[0].value))]) if pos else shape
    return call



def _dtype_name(node) -> str:
    dotted = _dotted(node)
    if dotted and dotted.split(".")[-1] in DTYPE_NAMES:
        return DTYPE_NAMES[dotted.split(".")[-1]]
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    raise Unsupported(f"dtype {cst.Module([]).code_for_node(node)!r} in a Dataset")
