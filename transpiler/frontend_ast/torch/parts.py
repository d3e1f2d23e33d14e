"""A model whose own ``train_step`` calls its submodules (``self.encoder(data)``) → a Keras
model built of those submodules as ``layers.Layer`` subclasses, so the step can call them.

The torch → Keras printer otherwise puts every layer of a model in one class (the layers
inline, a submodule's structure gone): enough for ``forward``, but a step that needs a
submodule's outputs on their own (a VAE's ``z_mean`` and ``z_log_var``) has nothing to call.
When the module's ``forward`` is a composition of its submodules, each one called once::

    def forward(self, inputs):
        z_mean, z_log_var, z = self.encoder(inputs)
        return self.decoder(z)

each called submodule is read as a model of its own (its layers named within it, on the
inputs ``forward`` gave it), printed as a ``layers.Layer`` subclass, and the model's ``call``
is ``forward``'s code with ``training=training`` passed on. The model's own graph (all layers
inline) stays what the passes, the checkpoint mapping and the training code read; the parts
say how it is printed and where each weight lives (``graph.from_torch.composed``).
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.torch.modules import Unsupported


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _body(fn: cst.FunctionDef) -> list:
    """The statements of ``fn`` but a leading docstring."""
    body = list(fn.body.body)
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and \
            isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        body = body[1:]
    return body


def _self_call(node) -> str | None:
    """``self.<attr>(names...)`` → attr (no keywords, no unpacking)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            isinstance(node.func.value, cst.Name) and node.func.value.value == "self" and \
            all(a.keyword is None and not a.star and isinstance(a.value, cst.Name) for a in node.args):
        return node.func.attr.value
    return None


def _names_only(node) -> bool:
    if isinstance(node, cst.Name):
        return True
    return isinstance(node, cst.Tuple) and all(isinstance(e.value, cst.Name) for e in node.elements)


def composition(forward: cst.FunctionDef, user_children: set[str]) -> list[str] | None:
    """The submodules ``forward`` calls, in order, when it does nothing else (each statement
    ``targets = self.<child>(names)`` with a user module child, called once, and a ``return``
    of names); else None."""
    called: list[str] = []
    body = _body(forward)
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if isinstance(small, cst.Return):
            if i != len(body) - 1 or small.value is None or not _names_only(small.value):
                return None
            continue
        if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not _names_only(small.targets[0].target):
            return None
        attr = _self_call(small.value)
        if attr is None or attr not in user_children or attr in called:
            return None
        called.append(attr)
    return called if called and isinstance(body[-1].body[0], cst.Return) else None


class AddTraining(cst.CSTTransformer):
    """``self.<part>(...)`` (and ``self(...)`` when ``own`` is set) → the call with
    ``training=<value>``, unless it passes ``training`` already."""

    def __init__(self, parts: set[str], value: str, own: bool = False):
        self.parts = parts
        self.value = value
        self.own = own

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        is_own = self.own and isinstance(func, cst.Name) and func.value == "self"
        is_part = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
            func.value.value == "self" and func.attr.value in self.parts
        if not (is_own or is_part) or any(a.keyword is not None and a.keyword.value == "training"
                                           for a in updated.args):
            return updated
        args = list(updated.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        arg = cst.Arg(cst.Name(self.value), keyword=cst.Name("training"),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
        return updated.with_changes(args=args + [arg])


def call_text(forward: cst.FunctionDef, parts: set[str]) -> str:
    """``forward`` as Keras' ``call(self, ..., training=None)``, passing ``training`` on."""
    params = [p.name.value for p in forward.params.params[1:]]
    if any(p.default is not None for p in forward.params.params[1:]) or "training" in params:
        raise Unsupported("forward with default arguments or a training parameter")
    body = [s.visit(AddTraining(parts, "training")) for s in _body(forward)]
    fn = cst.FunctionDef(name=cst.Name("call"), params=cst.Parameters(
        params=[cst.Param(cst.Name(n)) for n in ["self", *params]] +
        [cst.Param(cst.Name("training"), default=cst.Name("None"),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))]),
        body=cst.IndentedBlock(body=body))
    return _code(fn).strip("\n")
