"""``model.get_weights()`` / ``model.set_weights(...)`` between translated models, in torch.

Keras' ``get_weights`` lists a model's weights as arrays, in the order of its layers, and
``set_weights`` assigns such a list by position (the shapes must match). Between two
modules this printer wrote, the torch spelling keeps that meaning: both modules list their
state in the same order (their layers' order), so the destination's ``state_dict`` keys are
zipped with the source's values and loaded with ``load_state_dict``, which checks every
shape (``strict=True`` in ``zip`` checks the counts)::

    inference_model.set_weights(model.get_weights())
    →  inference_model.load_state_dict(dict(zip(inference_model.state_dict(),
                                                model.state_dict().values(), strict=True)))

``weights = model.get_weights()`` becomes the list of the module's state tensors (torch's
layout, e.g. a Linear weight is ``(out, in)``), and ``other.set_weights(weights)`` loads such
a list back. Arrays from anywhere else (a Keras-layout kernel, a list computed from the
weights) are not translated here: their layout is Keras', the caller stubs the statement.
"""

from __future__ import annotations

import libcst as cst


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _method_call(node: cst.BaseExpression, method: str, models: set[str]) -> str | None:
    """``<model>.<method>(...)``'s model name, when ``<model>`` is one of ``models``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == method \
            and isinstance(node.func.value, cst.Name) and node.func.value.value in models:
        return node.func.value.value
    return None


def _load(dst: str, values: str) -> str:
    return f"{dst}.load_state_dict(dict(zip({dst}.state_dict(), {values}, strict=True)))"


class WeightLists:
    """The statements of one script that move weight lists between its translated models;
    ``names`` remembers which variables hold a ``get_weights()`` list."""

    NOTE = "# Keras' get_weights/set_weights: the modules' state in order (torch layout), shapes checked"

    def __init__(self, models: set[str]):
        self.models = set(models)
        self.names: set[str] = set()
        self.noted = False

    def translate(self, stmt: cst.BaseStatement) -> cst.BaseStatement | None:
        """The torch statement for ``stmt``, or None when it is not a weight-list move."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        new = None
        if isinstance(small, cst.Expr):
            dst = _method_call(small.value, "set_weights", self.models)
            if dst is not None and len(small.value.args) == 1 and small.value.args[0].keyword is None:
                arg = small.value.args[0].value
                src = _method_call(arg, "get_weights", self.models)
                if src is not None and not arg.args:
                    new = _load(dst, f"{src}.state_dict().values()")
                elif isinstance(arg, cst.Name) and arg.value in self.names:
                    new = _load(dst, f"map(torch.as_tensor, {arg.value})")
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name):
            src = _method_call(small.value, "get_weights", self.models)
            if src is not None and not small.value.args:
                target = small.targets[0].target.value
                self.names.add(target)
                new = f"{target} = [t.detach().cpu().numpy().copy() for t in {src}.state_dict().values()]"
        elif isinstance(small, cst.Assign):  # a list variable bound to something else now
            self.names -= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
        if new is None:
            return None
        lines = list(stmt.leading_lines)
        if not self.noted:  # said once, before the first such statement
            self.noted = True
            lines.append(cst.EmptyLine(comment=cst.Comment(self.NOTE)))
        return cst.parse_statement(f"{new}\n").with_changes(leading_lines=lines)
