"""Black formatting of generated scripts: ``black.format_str``'s result, byte for byte, at
less cost (issue 21: black was 58 % of a warm translation).

``black.format_str`` formats twice: a first pass, then, whenever that pass changed anything,
a second pass over its own output (trailing commas the first pass added become "magic" and
may change how a line splits). The second pass costs as much as the first and, on the
generated scripts measured, never changed anything; but it can, so it is not skipped. It is
narrowed instead, to the top-level statements the first pass changed:

- black formats a top-level statement (a ``def``/``class`` with its decorators, or one
  simple statement) from its own tokens; what the rest of the file contributes is the blank
  lines before it (fixed by the first pass: they follow from the kinds of the lines around
  it, which formatting does not change) and the Python versions black infers from the
  whole file's syntax (which decide two things for splitting: a trailing comma after
  ``*args``/``**kwargs``, and parentheses around ``with`` items or ``except`` types);
- so a statement the first pass left as it was reads the same to the second pass, and
  comes out the same again;
- the statements the first pass changed are formatted again on their own (together, in
  one text, followed by an f-string statement so that black infers what it does for the
  file: 3.6 and later, as the file holds an f-string; an f-string is never a docstring);
  a statement
  holding a ``with`` whose header black would split, where the versions matter further,
  is not checked on its own). If any comes out different, or the text is unusual (``fmt:``
  directives, form feeds, a top-level string statement, no f-string, a tree ``ast`` does
  not agree with), black's own second pass runs over the whole text, as before.

Either way the result is ``black.format_str(text, mode=black.Mode())``;
``tests/test_formatter.py`` checks that on texts where the second pass does change
something, and ``bench/outputs.py`` that every output over the corpora and the real-world
scripts stayed byte-identical.
"""

from __future__ import annotations

import ast
import sys
import warnings

import black  # (at import: the CLI loads the translation path with the GC paused, then frozen)

from transpiler.printers import format_cache, format_units

#: the line length of the mode every printer formats with (black's default)
LINE_LENGTH = black.Mode().line_length


def format_python(text: str) -> str:
    """``black.format_str(text, mode=black.Mode())``, with the second pass narrowed."""
    mode = black.Mode()
    once = getattr(black, "_format_str_once", None)
    if once is None:  # (a black without the private single pass: its own format_str)
        return black.format_str(text, mode=mode)
    rest, helpers = format_cache.set_aside(text)  # (runtime helpers whose black form is known)
    if helpers:
        whole = format_cache.put_back(_twice(rest, once, mode), helpers)
        if whole is not None:
            return whole
    return _twice(text, once, mode)


def _twice(text: str, once, mode) -> str:
    """black's two passes, the second narrowed to what the first changed."""
    first = once(text, mode=mode)
    if first == text:  # (black.format_str stops here too)
        return first
    if _second_pass_is_identity(text, first, once):
        return first
    return once(first, mode=mode)


def _second_pass_is_identity(text: str, first: str, once) -> bool:
    """Whether black's second pass over ``first`` (its first pass over ``text``) would
    return it unchanged: every top-level statement the first pass changed is formatted
    again on its own (see the module docstring); False whenever that is not conclusive."""
    if "fmt:" in first or "\f" in first or "\r" in first:
        return False
    try:
        before, after = _parsed(text), _parsed(first)
    except (SyntaxError, ValueError):
        return False
    if len(before.body) != len(after.body):
        return False
    if not any(isinstance(n, ast.JoinedStr) for n in ast.walk(after)):
        return False  # (no f-string: the versions black infers may reach below 3.6)
    old_lines, new_lines = text.split("\n"), first.split("\n")
    changed, pairs = [], []
    for old, new in zip(before.body, after.body):
        segment = _segment(new, new_lines)
        if _segment(old, old_lines) != segment:
            if not _checkable_alone(new, new_lines):
                return False
            changed.append(segment)
            pairs.append((old, new))
    if not changed:
        return True
    if _changed_lines_are_stable(pairs, old_lines, new_lines, changed, once):
        return True
    # the changed statements formatted again together, away from the rest (each on its
    # own, as argued above: a statement's layout does not depend on its neighbours), and
    # an f-string statement after them, so that black infers 3.6+ as for the whole text
    alone = "\n\n".join(changed) + '\n\nf""\n'
    again = once(alone, mode=black.Mode())
    if again == alone:
        return True
    try:  # (the blank lines between them may differ: only the statements count)
        tree = _parsed(again)
    except (SyntaxError, ValueError):
        return False
    again_lines = again.split("\n")
    return len(tree.body) == len(changed) + 1 and all(
        _segment(node, again_lines) == segment for node, segment in zip(tree.body, changed))


def _changed_lines_are_stable(pairs, old_lines: list[str], new_lines: list[str], changed: list[str], once) -> bool:
    """The check narrowed further, to the logical lines the first pass changed inside each
    changed top-level statement (printers/format_units.py), the statements where that is not
    conclusive whole; formatted again together, each a top-level block of its own, and an
    f-string statement after them. False: not shown (the caller checks whole statements)."""
    parts = []
    for (old, new), segment in zip(pairs, changed):
        found = format_units.units(old, new, old_lines, new_lines, _checkable_alone)
        parts.extend([segment] if found is None else found)
    if not parts:
        return True
    alone = "\n\n".join(parts) + '\n\nf""\n'
    return once(alone, mode=black.Mode()) == alone


def _parsed(text: str) -> ast.Module:
    """``ast.parse`` without its warnings (an invalid escape in the user's strings): the text
    is only read here, the user sees what black and Python say about it elsewhere."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _segment(node: ast.stmt, lines: list[str]) -> str:
    """The source lines of a top-level statement, decorators included."""
    decorators = getattr(node, "decorator_list", None)
    start = min([node.lineno] + [d.lineno for d in decorators or ()])
    return "\n".join(lines[start - 1:node.end_lineno]) + "\n"


def _checkable_alone(node: ast.stmt, lines: list[str]) -> bool:
    """Whether formatting ``node`` on its own shows what black does to it in the file: not
    a string statement (alone it would be a module docstring), and nothing whose layout
    may depend on the Python versions past 3.6: a ``with`` whose header is not one short
    line (black may wrap its items in parentheses from 3.9 on, but leaves a line that fits
    as it is), an ``except`` of several types where ``ast`` reads syntax newer than 3.11
    (black drops their parentheses only for files that need 3.14)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return False
    for sub in ast.walk(node):
        if isinstance(sub, (ast.With, ast.AsyncWith)):
            header = lines[sub.lineno - 1]
            ends = [i.context_expr.end_lineno for i in sub.items] + [
                i.optional_vars.end_lineno for i in sub.items if i.optional_vars is not None]
            if max(ends) != sub.lineno or len(header) > LINE_LENGTH or not header.isascii():
                return False
        if isinstance(sub, ast.ExceptHandler) and isinstance(sub.type, ast.Tuple) and sys.version_info >= (3, 12):
            return False
    return True
