"""Small libcst rewrites the whole-script printer (``printers/torch/script.py``) applies to the
user's own statements: recognised training calls replaced inside any expression,
``tf.newaxis`` as ``None``, and comment lines kept with the statement that follows them."""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import walk
from transpiler.ir.source_file import NodeId, SourceFile


class _CallReplacer(cst.CSTTransformer):
    """Replaces recognised training calls inside any expression (``model.predict(x).ravel()``)."""

    def __init__(self, expressions: dict[NodeId, str], model_names: dict[str, str], source: SourceFile):
        self.expressions = expressions  # (by the call's stable id)
        self.model_names = model_names
        self.sid = source.sid

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        text = self.expressions.get(self.sid(original))
        return cst.parse_expression(text) if text is not None else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._model_name(original):
            return cst.SimpleString(repr(self.model_names[original.value.value]))
        return updated

    def _model_name(self, node: cst.Attribute) -> bool:
        return (isinstance(node.value, cst.Name) and node.value.value in self.model_names
                and node.attr.value == "name")

    def changes(self, node: cst.CSTNode) -> bool:
        """Whether visiting ``node`` would replace anything (the visit rebuilds every node)."""
        return any((type(n) is cst.Call and self.sid(n) in self.expressions)
                   or (type(n) is cst.Attribute and self._model_name(n)) for n in walk(node))


class _NewAxis(cst.CSTTransformer):
    """``tf.newaxis`` → ``None`` (what it is), so indexing code stays framework-free."""

    def __init__(self, keras_names):
        self.keras_names = set(keras_names)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value == "newaxis" and isinstance(updated.value, cst.Name) \
                and updated.value.value in self.keras_names:
            return cst.Name("None")
        return updated


class _Comments:
    """Comment lines standing where a statement was (attached to the next statement)."""

    def __init__(self, lines):
        self.lines = lines


def _attach_comments(body: list) -> tuple[list, list]:
    """Move ``_Comments`` placeholders onto the statement that follows them; comments
    left at the end are returned for the block's footer."""
    out: list = []
    pending: list = []
    for stmt in body:
        if isinstance(stmt, _Comments):
            pending += stmt.lines
            continue
        if pending:
            stmt = stmt.with_changes(leading_lines=[*pending, *stmt.leading_lines])
            pending = []
        out.append(stmt)
    return out, pending
