"""transpiler.cst_fast: the fast read-only walks give what libcst's own visit/resolve give."""

from __future__ import annotations

import glob
import os

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from transpiler import cst_fast
from transpiler.cst_fast import nodes_of, positions, walk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: every statement and expression kind the corpus does not already show
SYNTAX = '''\
"""doc"""
from __future__ import annotations
import a.b as c, d
from . import e
from .f import (g, h as i)
x: int = 1
y = z = [*x, {**{}}, {1, 2}, (3,), lambda q, /, *r, s=1, **t: q, f"{x!r:>{y}}", b"b", 1j, 1.5]
y += 1; del z; global w
async def fn(p, *args, k: int = 2, **kw) -> None:
    """Doc."""
    nonlocal_ = [i async for i in p if i] + [j for j in range(3)]
    await p
    async with p as (u, v), p:
        yield
    async for _ in p:
        yield from p
    return (yield)
@decorator(1)
class C(Base, metaclass=M):
    attr: ClassVar[int]
    def m(self):
        try:
            raise E from None
        except* (A, B) as err:
            pass
        else:
            pass
        finally:
            assert self, "msg"
        while (n := 1) > 0:
            break
        else:
            continue
        match self:
            case {"k": v, **rest} | [1, *more] | Point(x=0) as pt if pt:
                pass
            case _:
                pass
        return self[1:2, ::3] if self is not None and not self else ~self ** -self @ self
'''


def _sources() -> list[str]:
    paths = sorted(glob.glob(os.path.join(ROOT, "corpus", "*", "*.py")))
    return [SYNTAX] + [open(p, encoding="utf-8").read() for p in paths]


class _AllNodes(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.seen: list[int] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.append(id(node))
        return True


@pytest.mark.parametrize("index", range(len(_sources())))
def test_walk_reaches_the_nodes_visit_reaches(index):
    module = cst.parse_module(_sources()[index])
    visitor = _AllNodes()
    module.visit(visitor)
    walked = [id(n) for n in walk(module)]
    assert len(walked) == len(set(walked))  # each node once
    assert sorted(walked) == sorted(visitor.seen)


def test_nodes_of_matches_the_exact_type_like_visit_methods():
    module = cst.parse_module(SYNTAX)
    names: list[str] = []

    class V(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.append(node.value)

    module.visit(V())
    assert sorted(n.value for n in nodes_of(module, cst.Name)) == sorted(names)
    assert all(type(n) is cst.Call for n in nodes_of(module, cst.Call))


@pytest.mark.parametrize("index", range(len(_sources())))
def test_positions_equal_the_wrappers_resolve(index):
    module = cst.parse_module(_sources()[index])
    fast = positions(MetadataWrapper(module, unsafe_skip_copy=True))
    slow = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert dict(fast) == dict(slow)


@pytest.mark.parametrize("index", range(len(_sources())))
def test_nodes_of_from_the_index_equals_a_filtered_walk_in_the_same_order(index):
    """nodes_of answers from an index built by one walk of the node (issue 22 item 5: a big
    literal was walked ~40 times): same nodes, same order as filtering a walk, for the module
    (and, for the syntax sample, each statement), asked twice (the second from the cache)."""
    module = cst.parse_module(_sources()[index])
    for node in [module, *module.body] if index == 0 else [module]:
        walked = list(walk(node))
        by_kind: dict[type, list[int]] = {}
        for n in walked:
            by_kind.setdefault(type(n), []).append(id(n))
        for _ in range(2):
            for kind, expected in by_kind.items():
                assert [id(n) for n in nodes_of(node, kind)] == expected
        assert list(nodes_of(node, cst.Nonlocal)) == [n for n in walked if type(n) is cst.Nonlocal]


def test_cached_parse_and_code_are_those_of_libcst():
    text = _sources()[1]
    module = cst_fast.parse(text)
    assert module is cst_fast.parse(text)  # one parse per text
    assert module.deep_equals(cst.parse_module(text)) and module.code == text
    for stmt in module.body:
        assert cst_fast.code(stmt) == cst.Module([]).code_for_node(stmt)
        assert cst_fast.code(stmt) is cst_fast.code(stmt)


def test_the_caches_stay_bounded():
    for i in range(300):
        cst_fast.parse(f"x = {i}\n")
        nodes_of(cst.parse_module(f"y = {i}\n"), cst.Name)
        cst_fast.code(cst.parse_expression(str(i)))
    assert len(cst_fast._PARSED) <= 4 and len(cst_fast._MODULE_INDEXES) <= 4
    assert len(cst_fast._INDEXES) <= 64 and len(cst_fast._CODE) <= 256


def _dotted_name(node) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class _ReferenceRootNames(cst.CSTVisitor):
    """The reference for frontend_ast/keras/names.py's ``_names`` (what it was before it walked
    without libcst's visit): the names ``node`` reads, the dotted chains, the called expressions."""

    def __init__(self):
        self.names: list[cst.Name] = []
        self.chains: list[cst.BaseExpression] = []  # the longest dotted names: ``keras.layers.Dense``
        self.calls: list[cst.BaseExpression] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)
        self.chains.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _dotted_name(node):
            self.chains.append(node)
            root = node
            while isinstance(root, cst.Attribute):
                root = root.value
            self.names.append(root)
            return False
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            node.default.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node.func)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        node.params.visit(self)
        node.body.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for base in node.bases:
            base.visit(self)
        node.body.visit(self)
        return False

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False


@pytest.mark.parametrize("index", range(len(_sources())))
def test_keras_root_names_equal_the_visitors(index):
    """frontend_ast/keras/names.py's _names walks without libcst's visit (which rebuilds every
    node): the same names, dotted chains and called expressions as the reference visitor."""
    from transpiler.frontend_ast.keras import names

    module = cst.parse_module(_sources()[index])
    for node in [module, *module.body]:
        slow = _ReferenceRootNames()
        node.visit(slow)
        fast = names._names(node)
        for attr in ("names", "chains", "calls"):
            assert sorted(map(id, getattr(fast, attr))) == sorted(map(id, getattr(slow, attr))), attr
