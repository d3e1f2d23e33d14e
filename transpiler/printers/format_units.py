"""The lines black's first pass changed inside a top-level statement, each in a small text of
its own, for the second-pass check of printers/formatter.py (issue 21: on the real-world
scripts the check formatted again most of the output, as the model classes and training
functions are long top-level statements of which the first pass changes a few lines).

black lays out each logical line (a simple statement, or the header of a compound one:
decorators and ``def ...:``, ``if ...:``, ``except ...:``, ...) from its own tokens, its depth
and the Python versions it infers for the file; the lines around it decide only the blank
lines before it (which formatter.py's argument covers: the kinds of the lines around it do not
change). So inside a top-level statement the first pass changed, a logical line it left as it
was reads the same to the second pass, and the changed ones can be formatted again on their
own, at their depth: each wrapped in ``def _():`` blocks up to its indentation, a compound
header given a ``pass`` body (an ``elif`` a preceding ``if``, an ``except`` a ``try``).

:func:`units` walks the statement as read from the text and from black's first pass together
and returns those texts, or None when the walk is not conclusive: the two trees differ in
shape, a changed line is a string statement (alone it would be a docstring) or a body that is
only ``...`` (black keeps a stub body on its ``def``'s line), a ``match``, a one-line compound
statement, or any line outside the logical lines (blank lines, comments, ``else:``,
``try:``) changed. The caller then formats the whole statement again, as before.
"""

from __future__ import annotations

import ast
import copy
import io
import tokenize

#: statements with a header line and blocks of statements
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


class _Inconclusive(Exception):
    pass


#: tokens of layout only (what black recomputes)
_LAYOUT = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def _start(node: ast.stmt) -> int:
    """First line (1-based) of a statement, decorators included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])


def _header_end(node, lines: list[str]) -> int:
    """Last line (1-based) of a compound statement's header: the last line before its first
    body statement that is neither blank nor only a comment."""
    end = _start(node.body[0]) - 1
    while end >= node.lineno and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    if end < node.lineno:  # (a one-line compound statement: ``if x: y``)
        raise _Inconclusive
    return end


def _is_plain_ellipsis(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis


class _Walk:
    """Both trees of one top-level statement walked together: the line spans of each logical
    line (old, new), its depth, its kind and its node in the new tree."""

    def __init__(self, old_lines: list[str], new_lines: list[str]):
        self.lines = (old_lines, new_lines)
        self.units: list[tuple[tuple[int, int], tuple[int, int], int, str, ast.stmt]] = []

    def body(self, old: list[ast.stmt], new: list[ast.stmt], depth: int) -> None:
        if len(old) != len(new):
            raise _Inconclusive
        for o, n in zip(old, new):
            self.statement(o, n, depth)

    def statement(self, o: ast.stmt, n: ast.stmt, depth: int, kind: str | None = None) -> None:
        if type(o) is not type(n):
            raise _Inconclusive
        if not isinstance(n, _COMPOUND):
            if isinstance(n, getattr(ast, "Match", ())):
                raise _Inconclusive
            self.units.append(((_start(o), o.end_lineno), (_start(n), n.end_lineno), depth, "simple", n))
            return
        if isinstance(n, ast.Try) or type(n).__name__ == "TryStar":
            # (the ``try:`` line stays outside every unit: compared as it is)
            self.body(o.body, n.body, depth + 1)
            if len(o.handlers) != len(n.handlers):
                raise _Inconclusive
            for ho, hn in zip(o.handlers, n.handlers):
                self._header(ho, hn, depth, "except")
                self.body(ho.body, hn.body, depth + 1)
            self.body(o.orelse, n.orelse, depth + 1)
            self.body(o.finalbody, n.finalbody, depth + 1)
            return
        self._header(o, n, depth, kind or "header")
        self.body(o.body, n.body, depth + 1)
        if isinstance(n, ast.If) and self._is_elif(o, 0) != self._is_elif(n, 1):
            raise _Inconclusive
        if isinstance(n, ast.If) and self._is_elif(n, 1):
            self.statement(o.orelse[0], n.orelse[0], depth, "elif")
        else:
            self.body(getattr(o, "orelse", []), getattr(n, "orelse", []), depth + 1)

    def _is_elif(self, node: ast.If, side: int) -> bool:
        return len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and \
            self.lines[side][node.orelse[0].lineno - 1].lstrip().startswith("elif")

    def _header(self, o, n, depth: int, kind: str) -> None:
        if len(n.body) == 1 and _is_plain_ellipsis(n.body[0]):
            raise _Inconclusive  # (a stub body: black may keep it on the header's line)
        spans = [(_start(node), _header_end(node, lines)) for node, lines in ((o, self.lines[0]), (n, self.lines[1]))]
        self.units.append((spans[0], spans[1], depth, kind, n))


def _text(lines: list[str], span: tuple[int, int]) -> str:
    return "\n".join(lines[span[0] - 1:span[1]]) + "\n"


def _outside(lines: list[str], first: int, last: int, spans: list[tuple[int, int]]) -> list[str]:
    """The lines of ``first..last`` that no span covers (raises when spans overlap)."""
    covered = set()
    for a, b in spans:
        span = set(range(a, b + 1))
        if covered & span:
            raise _Inconclusive
        covered |= span
    return [lines[i - 1] for i in range(first, last + 1) if i not in covered]


def _header_only(node: ast.AST) -> ast.AST:
    """A copy of a compound statement without its blocks (what its header line holds)."""
    node = copy.copy(node)
    for field in ("body", "orelse", "handlers", "finalbody"):
        if hasattr(node, field):
            setattr(node, field, [])
    return node


def _wrapped(text: str, depth: int, kind: str) -> str:
    """``text`` (lines at ``depth``) in blocks that make it a whole module of its own."""
    pad = "    " * depth
    head = "".join("    " * k + "def _():\n" for k in range(depth))
    if kind == "elif":
        head += f"{pad}if _:\n{pad}    pass\n"
    elif kind == "except":
        head += f"{pad}try:\n{pad}    pass\n"
    tail = f"{pad}    pass\n" if kind != "simple" else ""
    return head + text + tail


def units(old: ast.stmt, new: ast.stmt, old_lines: list[str], new_lines: list[str],
          checkable) -> list[str] | None:
    """The logical lines of top-level statement ``new`` (black's first pass over ``old``) that
    differ from ``old``'s, each wrapped to stand alone (see the module docstring); None when
    that is not conclusive. ``checkable(node, lines)``: whether a changed line's node may be
    formatted apart from the file (formatter._checkable_alone)."""
    walk = _Walk(old_lines, new_lines)
    try:
        walk.statement(old, new, 0)
        outside = [_outside(lines, _start(node), node.end_lineno, [u[side] for u in walk.units])
                   for side, (node, lines) in enumerate(((old, old_lines), (new, new_lines)))]
    except (_Inconclusive, RecursionError):
        return None
    if outside[0] != outside[1]:
        return None  # (a blank line, a comment, an ``else:`` changed)
    out = []
    for old_span, new_span, depth, kind, node in walk.units:
        text = _text(new_lines, new_span)
        if _text(old_lines, old_span) == text:
            continue
        if kind == "simple" and isinstance(node, ast.Expr) and (isinstance(node.value, ast.JoinedStr) or (
                isinstance(node.value, ast.Constant) and isinstance(node.value.value, (str, type(Ellipsis))))):
            return None  # (a string statement alone would be a docstring; ``...`` a stub body)
        if not checkable(_header_only(node) if kind != "simple" else node, new_lines):
            return None
        if _tokens(text) is None or _tokens(text) != _tokens(_text(old_lines, old_span)):
            out.append(_wrapped(text, depth, kind))
    return out


def _tokens(text: str) -> list[tuple] | None:
    """What black's layout of a logical line reads besides its depth: its tokens, with each
    comment's text and whether it stands on a line of its own (whitespace and line breaks
    inside brackets are what black decides). None (not comparable) for a text that holds a
    blank or comment-only line, a backslash continuation, or does not tokenize."""
    lines = text.split("\n")[:-1]
    if any(not ln.strip() or ln.lstrip().startswith("#") or ln.rstrip().endswith("\\") for ln in lines):
        return None
    out: list[tuple] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _LAYOUT:
                continue
            if tok.type == tokenize.COMMENT:
                out.append((tok.type, tok.string, not tok.line[:tok.start[1]].strip()))
            else:
                out.append((tok.type, tok.string))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out
