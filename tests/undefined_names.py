"""A static oracle for generated code that fails when run: names a program reads that nothing
defines (pyflakes' "undefined name", from the standard library's ``symtable``: no dependency).

A name is *explained* when a ``#`` comment of the output mentions it (a marked stub says what it
leaves out); every other undefined name is a NameError waiting for the program to reach it.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import symtable
import tokenize

_MODULE_NAMES = {"__file__", "__name__", "__doc__", "__builtins__", "__spec__", "__loader__",
                 "__package__", "__path__", "__annotations__", "__dict__"}
_KNOWN = set(dir(builtins)) | _MODULE_NAMES


def _module_bound(table: symtable.SymbolTable) -> set[str]:
    bound = {s.get_name() for s in table.get_symbols()
             if s.is_assigned() or s.is_imported() or s.is_namespace() or s.is_parameter()}
    # ``global x`` + an assignment inside a function binds x at module level
    stack = list(table.get_children())
    while stack:
        t = stack.pop()
        stack.extend(t.get_children())
        bound |= {s.get_name() for s in t.get_symbols() if s.is_declared_global() and s.is_assigned()}
    return bound


def undefined_names(text: str) -> dict[str, int]:
    """Names read in ``text`` that no scope binds -> the first line reading each."""
    tree = ast.parse(text)
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return {}  # a star import binds names nobody can list statically
    top = symtable.symtable(text, "<output>", "exec")
    bound = _module_bound(top) | _KNOWN
    missing: set[str] = set()
    stack = [top]
    while stack:
        t = stack.pop()
        stack.extend(t.get_children())
        for s in t.get_symbols():
            name = s.get_name()
            if s.is_referenced() and name not in bound and (t is top or s.is_global()):
                missing.add(name)
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in missing and isinstance(node.ctx, ast.Load):
            lines[node.id] = min(lines.get(node.id, node.lineno), node.lineno)
    return {name: lines.get(name, 0) for name in sorted(missing)}


def _comments(text: str) -> list[str]:
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out.append(tok.string)
    return out


def unexplained_names(text: str) -> dict[str, int]:
    """``undefined_names`` less the names a ``#`` comment (a marked stub) mentions."""
    comments = _comments(text)
    return {name: line for name, line in undefined_names(text).items()
            if not any(re.search(rf"\b{re.escape(name)}\b", c) for c in comments)}
