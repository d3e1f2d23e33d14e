"""Read-only libcst traversals without the rebuilding cost of ``CSTNode.visit``.

``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children``
constructs and validates a new node even for a read-only ``CSTVisitor``), and
``MetadataWrapper.resolve`` walks the whole module once more that way after computing
a non-batchable provider such as ``PositionProvider``. On the translation path these
walks cost more than parsing the file; the functions here give the same answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

#: node class → the names of its dataclass fields (every child of a node is in one)
_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node under it (the nodes ``node.visit`` reaches; depth first,
    not in source order), without rebuilding any of them."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        cls = type(n)
        names = _FIELDS.get(cls)
        if names is None:
            names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
        for name in names:
            value = getattr(n, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif isinstance(value, (tuple, list)):
                stack.extend(v for v in value if isinstance(v, cst.CSTNode))


def references(node: cst.CSTNode) -> list[cst.Name]:
    """The ``Name`` nodes under ``node`` (itself included) that refer to a binding, in source
    order: not attribute names (``torch`` of ``x.torch``) nor keyword names (``f(torch=1)``).
    (A ``CSTVisitor``: its order, decorators before a def's name, is the one callers keep.)"""
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

    node.visit(Names())
    return found


def nodes_of(node: cst.CSTNode, cls: type) -> Iterator:
    """The nodes under ``node`` (itself included) whose type is exactly ``cls``: the nodes
    a ``CSTVisitor``'s ``visit_<cls name>`` is called for."""
    return (n for n in walk(node) if type(n) is cls)


def positions(wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, CodeRange]:
    """``wrapper.resolve(PositionProvider)``, without the extra empty batched walk
    ``resolve`` makes after computing a provider that is not batchable."""
    provider = PositionProvider()
    try:
        gen = provider._gen  # noqa: SLF001  (what resolve calls; libcst >= 0.3)
    except AttributeError:  # pragma: no cover - a libcst without it: the public way
        return wrapper.resolve(PositionProvider)
    return gen(wrapper)


def statement_blocks(stmt) -> list:
    """The statement lists a compound statement holds: its body, each ``elif``/``else``
    branch, each ``except`` handler and its ``finally`` block, in order."""
    out = []
    body = getattr(stmt, "body", None)
    if body is not None and hasattr(body, "body"):
        out.append(body.body)
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        if isinstance(orelse, cst.If):
            out.append(orelse.body.body)
            orelse = orelse.orelse
        else:
            out.append(orelse.body.body)
            orelse = None
    for handler in getattr(stmt, "handlers", ()) or ():
        out.append(handler.body.body)
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        out.append(final.body.body)
    return out


def attribute_chain(node) -> tuple[cst.Name | None, list[str]]:
    """``a.b.c`` → (the Name ``a``, ``["b", "c"]``); the base is None when the chain does not
    start at a plain name (``f().b``)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    return (node if isinstance(node, cst.Name) else None), parts[::-1]
