"""Read-only libcst traversals without the rebuilding cost of ``CSTNode.visit``.

``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children``
constructs and validates a new node even for a read-only ``CSTVisitor``), and
``MetadataWrapper.resolve`` walks the whole module once more that way after computing
a non-batchable provider such as ``PositionProvider``. On the translation path these
walks cost more than parsing the file; the functions here give the same answers.

Nodes are immutable, so what is computed from one can be kept while it lives: ``parse``
(one parse per source text, however many readers and printers ask), ``nodes_of`` over a
whole ``Module`` (one walk indexes every node type; later asks cost what they return) and
``code`` (a node's source text, once). Each cache is small and holds its nodes strongly
(libcst nodes take no weak references), so an id() key cannot be reused while cached.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
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
        stack += child_nodes(n)


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes directly under ``node``, in the order of its fields (``walk``'s children)."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    out = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend(v for v in value if isinstance(v, cst.CSTNode))
    return out


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
    a ``CSTVisitor``'s ``visit_<cls name>`` is called for (in ``walk`` order). Over a whole
    node the answer comes from an index built by one walk of it (a real script asks a few dozen
    such questions of each statement and of the module: a big literal was walked ~40 times)."""
    return iter(_type_index(node).get(cls, ()))


class Bounded(OrderedDict):
    """A cache that forgets its oldest entries beyond ``limit`` (least recently set or read)."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def get_fresh(self, key):
        value = super().get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        self[key] = value
        while len(self) > self.limit:
            self.popitem(last=False)


_MODULE_INDEXES = Bounded(4)  # id(module) -> (module, {node type: [nodes in walk order]})
_INDEXES = Bounded(64)  # the same for other nodes (statements, expressions)
_PARSED = Bounded(4)  # source text -> Module
_CODE = Bounded(256)  # id(node) -> (node, its source text)


def _type_index(node: cst.CSTNode) -> dict[type, list]:
    cache = _MODULE_INDEXES if type(node) is cst.Module else _INDEXES
    hit = cache.get_fresh(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    index: dict[type, list] = {}
    for n in walk(node):
        index.setdefault(type(n), []).append(n)
    cache.put(id(node), (node, index))
    return index


def parse(source: str) -> cst.Module:
    """``cst.parse_module(source)``, parsed once per text (the frontends and the printers
    read the same script; a libcst Module is immutable, so sharing it is safe)."""
    module = _PARSED.get_fresh(source)
    if module is None:
        module = cst.parse_module(source)
        _PARSED.put(source, module)
    return module


def code(node: cst.CSTNode) -> str:
    """The source text of ``node`` (``Module([]).code_for_node``), generated once per node."""
    hit = _CODE.get_fresh(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    text = cst.Module([]).code_for_node(node)
    _CODE.put(id(node), (node, text))
    return text


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


def target_names(node, subscripted: bool = False) -> list[str]:
    """The names an assignment (or ``for``) target binds, in order: ``a``, ``a, (b, *c)``; an
    attribute or a subscript rebinds no name (``subscripted``: ``d[k] = ...`` counts as
    changing the name ``d`` it subscripts)."""
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for e in node.elements for n in target_names(e.value, subscripted)]
    if isinstance(node, cst.StarredElement):
        return target_names(node.value, subscripted)
    if subscripted and isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        return [node.value.value]
    return []
