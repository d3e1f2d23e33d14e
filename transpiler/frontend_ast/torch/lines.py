"""Statements a script writes on one line (``model.train(); opt.zero_grad()``,
``loss.backward(); opt.step()``, the SNLI example's step) read as the separate statements they
are: the reader of a training step pairs ``zero_grad`` / ``backward`` / ``step`` statement by
statement, and the Keras step splits where ``backward()`` ends the tape. Each statement keeps
its own position (diagnostics name the script's line); the output writes one per line.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst


def split_statement_lines(module: cst.Module) -> tuple[cst.Module, dict]:
    """``module`` with every ``a; b`` line of simple statements as one line per statement (in
    every block), and {new node: the statement of ``module`` it stands for} (placed there)."""
    made: dict = {}

    class _Split(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):
            if len(updated.body) < 2:
                return updated
            lines = []
            for i, small in enumerate(updated.body):
                small = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                line = cst.SimpleStatementLine(
                    [small], leading_lines=updated.leading_lines if i == 0 else (),
                    trailing_whitespace=updated.trailing_whitespace if i == len(updated.body) - 1 else
                    cst.TrailingWhitespace())
                made[line] = made[small] = original.body[i]
                lines.append(line)
            return cst.FlattenSentinel(lines)

    if not any(isinstance(n, cst.SimpleStatementLine) and len(n.body) > 1 for n in _lines(module)):
        return module, made
    return module.visit(_Split()), made


def _lines(module: cst.Module):
    out = []

    class _Find(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> None:
            out.append(node)

    module.visit(_Find())
    return out
