"""Reading user source kept as text (``ir.training.Code``): the element sources of a
literal ``[a, f(b)]`` / ``(x, y)``, the values of ``{"name": expr}``, the dotted name of
``tf.math.log``. Frontends and printers both read user expressions this way
(``callbacks=[...]``, ``loss={...}``)."""

from __future__ import annotations

import libcst as cst


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def list_items(code: str) -> list[str] | None:
    """The element sources of a list/tuple literal, else None."""
    try:
        expr = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return None
    if not isinstance(expr, (cst.List, cst.Tuple)):
        return None
    return [_code(el.value) for el in expr.elements]


def dict_items(code: str) -> dict[str, str] | None:
    """The value sources of a dict literal with string keys, else None."""
    try:
        expr = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return None
    if not isinstance(expr, cst.Dict):
        return None
    out = {}
    for el in expr.elements:
        if not isinstance(el, cst.DictElement) or not isinstance(el.key, cst.SimpleString):
            return None
        out[el.key.evaluated_value] = _code(el.value)
    return out


def dotted_name(node: cst.CSTNode) -> str | None:
    """``tf.math.log`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def bare_argument(node: cst.BaseExpression) -> cst.BaseExpression:
    """A call's argument without the parentheses around it (``dtype=(tf.float32)`` is
    ``tf.float32``): an argument is delimited by commas already, so they never change its
    meaning, except around a tuple (or what only parses parenthesised), where they are kept.
    Rewrite tables that read an argument's code as text read it through this (the
    whole-program fuzz's redundant parentheses and split strings, issue 22)."""
    if isinstance(node, cst.ConcatenatedString) and isinstance(node.evaluated_value, str):
        # ``("float3" "2")``: one string, whose value readers compare
        return cst.SimpleString(repr(node.evaluated_value))
    if getattr(node, "lpar", None) and not isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.Yield,
                                                             cst.NamedExpr)):
        return node.with_changes(lpar=[], rpar=[])
    return node
