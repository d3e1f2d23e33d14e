"""``torchvision.models.__dict__``: the networks a program picks by name (issue 19 item 2).

The ImageNet example lists ``model_names = sorted(name for name in models.__dict__ if
name.islower() ... and callable(models.__dict__[name]))`` for its ``--arch`` option and builds
``models.__dict__[args.arch]()``. The translation builds the network of the option's default
(``zoo.py``, guarded by ``cli_args.default_guard``); in the Keras program the module's
namespace becomes the networks it holds, name → a function building it
(``{"resnet18": lambda: build_model()}``): its listing gives the names that run, an
option naming another network is refused where the program checks its choices.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.torch import zoo
from transpiler.frontend_ast.torch.values import Ref


def _namespace_of(fe, node) -> bool:
    """``models.__dict__`` / ``torchvision.models.__dict__`` (a torchvision.models reference)."""
    if not (isinstance(node, cst.Attribute) and node.attr.value == "__dict__"):
        return False
    try:
        ref = fe._eval(node.value, fe.globals)
    except Exception:  # noqa: BLE001 - not a static reference
        return False
    return isinstance(ref, Ref) and ref.path == "torchvision.models"


def built_networks(fe, models, layer_models: dict) -> dict[str, str]:
    """The torchvision networks the program builds by name (``models.__dict__[args.arch]()``):
    name → the builder the translation prints for it."""
    out = {}
    for md in models:
        stmt = layer_models.get(md.builder)
        if stmt is None:
            continue
        call = stmt.body[0].value
        func = call.func if isinstance(call, cst.Call) else None
        if isinstance(func, cst.Subscript) and _namespace_of(fe, func.value):
            try:
                ref = fe._eval(func, fe.globals)
            except Exception:  # noqa: BLE001
                continue
            if isinstance(ref, Ref) and zoo.is_constructor(ref.path):
                out[ref.path.rsplit(".", 1)[-1]] = md.builder
    return out


def reads_namespace(fe, stmt) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if _namespace_of(fe, node):
                found.append(node)
                return False
            return True

    stmt.visit(Finder())
    return bool(found)


def called_with_arguments(fe, stmt) -> str | None:
    """The first ``models.__dict__[name](...)`` of ``stmt`` given arguments (its text), else
    None: the Keras networks build without any (``pretrained=True``: torchvision's downloaded
    weights are not translated; ``num_classes=``: another network than the one built)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if node.args and isinstance(node.func, cst.Subscript) and _namespace_of(fe, node.func.value):
                found.append(cst.Module([]).code_for_node(node))

    stmt.visit(Finder())
    return found[0] if found else None


def rewrite(fe, stmt, networks: dict[str, str]):
    """``stmt`` with each ``models.__dict__`` replaced by the networks the translation holds."""
    text = "{" + ", ".join(f"{name!r}: lambda: {builder}()" for name, builder in
                           sorted(networks.items())) + "}"

    class Swap(cst.CSTTransformer):
        def leave_Attribute(self, original, updated):
            return cst.parse_expression(text) if _namespace_of(fe, original) else updated

    return stmt.visit(Swap())
