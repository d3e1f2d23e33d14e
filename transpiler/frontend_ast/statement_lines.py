"""Statements a script writes on one line (``x = 1; y = 2``, ``model = build(); model.fit(...)``)
read as the separate statements they are, by the Keras reader (issue 22: a ``;``-joined builder
call was lost, and one stub line stood for two statements).

(The torch reader keeps its own, frontend_ast/torch/lines.py, whose positions of the rebuilt
class or function holding a split line are those of the re-written module.)

``split_statement_lines`` gives the module with every ``a; b`` line of simple statements (in
every block) written as one line per statement, and the node each rebuilt node stands for:
the statements of the split line, and every node above them that had to be rebuilt (the
function, class and module that hold the line). ``read_split`` gives a reader what it
needs to work on the split module while every node keeps its place in the user's file
(diagnostics and the printed "Transpiled from file:line" name the script's own lines).

Only the layout of simple statements changes: the leading comments of the line go with its
first statement, its trailing comment with its last. A compound statement whose body is on
its own line (``if c: a; b``) is one statement and is left as it is.

Imports no deep-learning framework.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper

from transpiler.cst_fast import nodes_of, positions as cst_positions


class _Split(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        #: rebuilt node → the node of the original module it stands for
        self.made: dict[cst.CSTNode, cst.CSTNode] = {}

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if isinstance(result, cst.CSTNode) and result is not original:
            self.made.setdefault(result, original)
        return result

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) < 2:
            return updated
        last = len(updated.body) - 1
        lines = []
        for i, small in enumerate(updated.body):
            small = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            line = cst.SimpleStatementLine(
                [small], leading_lines=updated.leading_lines if i == 0 else (),
                trailing_whitespace=updated.trailing_whitespace if i == last else cst.TrailingWhitespace())
            self.made[line] = self.made[small] = original.body[i]
            lines.append(line)
        return cst.FlattenSentinel(lines)


def _has_joined_line(module: cst.Module) -> bool:
    return any(len(line.body) > 1 for line in nodes_of(module, cst.SimpleStatementLine))


def split_statement_lines(module: cst.Module) -> tuple[cst.Module, dict]:
    """``module`` with every ``a; b`` line of simple statements as one line per statement, and
    {rebuilt node: the node of ``module`` it stands for} (empty, and ``module`` itself, when
    no line holds two statements)."""
    if not _has_joined_line(module):
        return module, {}
    split = _Split()
    return module.visit(split), split.made


def read_split(module: cst.Module) -> tuple[MetadataWrapper, Mapping[cst.CSTNode, CodeRange]]:
    """A wrapper of ``module`` with its ``a; b`` lines split (``wrapper.module``: what a reader
    walks) and the positions of its nodes in the user's file: a node kept from ``module`` has
    its own, a rebuilt one the position of the node it stands for (a statement of the split
    line: that statement's place on the line)."""
    split, made = split_statement_lines(module)
    wrapper = MetadataWrapper(split, unsafe_skip_copy=True)
    if not made:
        return wrapper, cst_positions(wrapper)
    positions = dict(cst_positions(wrapper))  # (nodes written new, whitespace: near their place)
    original = cst_positions(MetadataWrapper(module, unsafe_skip_copy=True))
    positions.update(original)
    positions.update((new, original[old]) for new, old in made.items() if old in original)
    for old in made.values():  # (a replaced node would share its stand-in's stable id: SourceFile.node)
        positions.pop(old, None)
    return wrapper, positions
