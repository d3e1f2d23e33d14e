"""Imports in a module-level ``try:`` / ``except ImportError:`` chain (a program supporting
several torch versions: ``try: from torch.utils.model_zoo import _download_url_to_file``
``except ImportError: from torch.hub import download_url_to_file as _download_url_to_file``):
each name bound as the first import of the chain that binds it (the try body's, then each
handler's, nested chains too), as Python binds it when the first import succeeds; the reader
then knows the name as torch's. Imports no deep-learning framework."""

from __future__ import annotations

import libcst as cst


def fallback_imports(stmt: cst.Try) -> list:
    """The import statements of ``stmt``'s chain, in the order tried."""
    found = []
    blocks = [stmt.body] + [h.body for h in stmt.handlers]
    for block in blocks:
        for inner in block.body:
            if isinstance(inner, cst.SimpleStatementLine):
                found += [s for s in inner.body if isinstance(s, (cst.Import, cst.ImportFrom))]
            elif isinstance(inner, cst.Try):
                found += fallback_imports(inner)
    return found


def bind_fallback_imports(fe, stmt: cst.Try) -> None:
    """Each name the chain imports, bound in ``fe``'s globals by its first import."""
    from transpiler.frontend_ast.interp import Env

    for small in fallback_imports(stmt):
        scratch = Env()
        fe._exec_import(small, scratch)
        for name, value in scratch.vars.items():
            if name not in fe.globals.vars:
                fe.globals.vars[name] = value
