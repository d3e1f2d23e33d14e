"""A user's map-style ``torch.utils.data.Dataset`` subclass, for the Keras program.

Such a class (``__len__`` and ``__getitem__`` over arrays it built or was given) is
framework-neutral Python apart from the tensors its items are wrapped in. It is kept,
with the ``Dataset`` base dropped and the wrapping rewritten to numpy::

    torch.from_numpy(a) / torch.as_tensor(a)   → a
    torch.tensor(a, dtype=torch.long)          → np.asarray(a, dtype="int64")
    torch.FloatTensor(a) / torch.LongTensor(a) → np.asarray(a, dtype="float32"/"int64")
    a.float() / a.long()                       → np.asarray(a, dtype="float32"/"int64")
    torch.float32 (a dtype)                    → "float32"

The generated ``DatasetLoader`` stacks its items into batches as torch's default collate
does. A class that still uses torch after the rewrite is not translated (a stub).
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.torch.modules import Unsupported

#: torch dtypes → numpy dtype names
DTYPE_NAMES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
               "float16": "float16", "half": "float16", "int64": "int64", "long": "int64", "int32": "int32",
               "int": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}
_TENSOR_CLASSES = {"FloatTensor": "float32", "DoubleTensor": "float64", "LongTensor": "int64",
                   "IntTensor": "int32", "BoolTensor": "bool", "ByteTensor": "uint8"}
_CAST_METHODS = {"float": "float32", "double": "float64", "long": "int64", "int": "int32", "bool": "bool"}


def _dotted(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


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
    return cst.Call(cst.Attribute(cst.Name("np"), cst.Name("asarray")), args)


def numpy_dataset_class(cls: cst.ClassDef, torch_names: set[str], resolve) -> cst.ClassDef:
    """The class without its ``Dataset`` base and with its tensors numpy arrays; raises
    Unsupported when torch is still used after the rewrite."""

    def torch_path(node) -> str | None:
        dotted = _dotted(node)
        if dotted is None or dotted.split(".")[0] not in torch_names:
            return None
        return resolve(dotted)

    class Rewrite(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            path = torch_path(original.func)
            pos = [a for a in updated.args if a.keyword is None and not a.star]
            kw = {a.keyword.value: a.value for a in updated.args if a.keyword is not None}
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
            if isinstance(original.func, cst.Attribute) and original.func.attr.value in _CAST_METHODS and \
                    not original.args and torch_path(original.func) is None:
                return _np_asarray(updated.func.value, _CAST_METHODS[original.func.attr.value])
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
        raise Unsupported(f"class {cls.name.value}: a Dataset that uses PyTorch beyond wrapping its arrays "
                          "(not translated)")
    return new


def _dtype_name(node) -> str:
    dotted = _dotted(node)
    if dotted and dotted.split(".")[-1] in DTYPE_NAMES:
        return DTYPE_NAMES[dotted.split(".")[-1]]
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    raise Unsupported(f"dtype {cst.Module([]).code_for_node(node)!r} in a Dataset")
