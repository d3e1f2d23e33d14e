"""transpiler.cst_fast: the fast read-only walks give what libcst's own visit/resolve give."""

from __future__ import annotations

import glob
import os

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

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
