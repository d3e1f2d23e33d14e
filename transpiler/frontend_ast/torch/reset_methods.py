"""A module method that only re-initialises layers the module holds (issue 19):
``def reset_parameters(self): self.tok_emb.reset_parameters()`` (minGPT's ``EmbeddingStem``).

Building the model never runs it, so it is not part of the Keras model; but what it does
has a Keras counterpart: each weight of those layers drawn again from the initializer the
Keras layer was built with (the translation's choice of initializers, as at construction).
The printer writes a function over the Keras model (printers/keras/reset_methods.py). A
method doing anything else, a layer of another kind or a class held at more than one place
in the model stays a stub.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

#: the layer ops whose Keras layer holds each weight as ``<weight>`` with ``<weight>_initializer``
RESETTABLE = frozenset({"dense", "embedding", "conv1d", "conv2d", "conv3d", "layer_norm"})


def _reset_call(stmt) -> str | None:
    """``self.<attr>.reset_parameters()`` as one statement: ``attr``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if not (isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "reset_parameters"):
        return None
    held = call.func.value
    if isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name) and held.value.value == "self":
        return held.attr.value
    return None


def _docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def reset_paths(fn: cst.FunctionDef, cls_node, root) -> list[str] | None:
    """The paths in the model ``root`` (a ``Mod``) of the layers the method ``fn`` of the class
    ``cls_node`` re-initialises, when that is all it does (see the module doc); None otherwise."""
    from transpiler.frontend_ast.torch.support import _walk

    if len(fn.params.params) != 1 or fn.params.star_arg not in (None,) and not isinstance(
            fn.params.star_arg, cst.MaybeSentinel) or fn.params.star_kwarg is not None or fn.decorators:
        return None
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    stmts = [s for s in body if not _docstring(s)]
    attrs = [_reset_call(s) for s in stmts]
    if not attrs or None in attrs:
        return None
    places = [(path, m) for path, m in _walk(root) if m.kind == "user" and m.cls is not None and m.cls.node is cls_node]
    if len(places) != 1:
        return None
    path, owner = places[0]
    paths = []
    for attr in attrs:
        child = owner.attrs.get(attr)
        if getattr(child, "kind", None) != "leaf" or child.layer is None or child.layer.op not in RESETTABLE:
            return None
        paths.append(f"{path}.{attr}" if path else attr)
    return paths
