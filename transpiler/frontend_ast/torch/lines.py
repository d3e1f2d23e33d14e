"""Statements a script writes on one line (``model.train(); opt.zero_grad()``,
``loss.backward(); opt.step()``, the SNLI example's step) read as the separate statements they
are: the reader of a training step pairs ``zero_grad`` / ``backward`` / ``step`` statement by
statement, and the Keras step splits where ``backward()`` ends the tape. Each statement keeps
its own position (diagnostics name the script's line); the output writes one per line.

The splitting is shared with the Keras reader (frontend_ast/statement_lines.py): its map names
the node of the script every rebuilt node stands for, the class and function that hold a split
line included (they keep their own lines, not those of the re-written module).

Imports no deep-learning framework.
"""

from __future__ import annotations

from transpiler.frontend_ast.statement_lines import split_statement_lines

__all__ = ["split_statement_lines"]
