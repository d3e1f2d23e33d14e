"""Runtime helpers formatted once, not in every translation (issue 21: black was half of a
cold translation, and on the real-world scripts about half of an output is runtime helpers
copied from ``transpiler/runtime/``, the same text from one program to the next).

``format_python`` (printers/formatter.py) asks ``set_aside`` for the top-level ``def``/``class``
statements of the text it is to format that are runtime helpers (texts ``runtime_source`` and
``runtime_prune`` handed out, ``runtime_source.HELPER_TEXTS``) and whose black form is known;
each is replaced by a placeholder of the same kind (a ``def`` at column 0 with a one-line body),
black formats the rest, and ``put_back`` puts the helpers' black form in the placeholders' place.
The result is what black gives for the whole text:

- black lays out a top-level statement from its own tokens; what the rest of the file
  contributes is the blank lines around it and the Python versions black infers from the
  whole file's syntax (printers/formatter.py says why). The blank lines before a statement
  and after it follow from the kind of its first line (a decorator, ``def`` or ``class``
  line: all take the same path in black's ``EmptyLineTracker``), from its depth and from its
  last line (a body line; two kinds of last line are read further, a stub ``def f(): ...``
  and a class docstring, and statements ending in one are not set aside);
- the versions: a helper is set aside only when everything black detects in it
  (``black.get_features_used``) is supported by every Python from 3.6 on, and only in a
  text holding an f-string (so black infers 3.6 or later for it); the placeholders carry an
  f-string, so the rest infers the versions the whole text does. The helper's black form is
  computed alone, followed by an f-string statement (as formatter.py's second-pass check
  does), and not kept when its layout could depend on versions past 3.6
  (``formatter._checkable_alone``);
- a helper is not set aside when an indented comment follows it (black would attach that
  comment to the placeholder's body) or the text holds ``fmt:`` directives, form feeds or
  carriage returns.

The black form of each helper is kept in memory and in the cache folder (printers/text_cache.py),
one entry per helper text and black version.
Only runtime helper texts are cached, never text derived from the user's script: the cache
saves formatting what every output shares, not a translation's own work.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import warnings

import black
from black.mode import Feature, TargetVersion, VERSION_TO_FEATURES

from transpiler.printers import text_cache
from transpiler.printers.runtime_source import HELPER_TEXTS

#: features every target version from 3.6 on supports (a helper using only these cannot
#: change the versions black infers for a text that holds an f-string)
_FROM_36 = frozenset(f for f in Feature if all(f in VERSION_TO_FEATURES[v] for v in TargetVersion
                                               if v.value >= TargetVersion.PY36.value))
#: the name of the placeholders (numbered); a text naming it is formatted whole
_MARK = "__transpiler_formatted_helper_"
#: helper text → its black form in a file holding an f-string (None: not set aside); per process
_FORMED: dict[str, tuple[str, bool] | None] = {}


def _parsed(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _segment_span(node: ast.stmt) -> tuple[int, int]:
    """First and last line (1-based) of a top-level statement, decorators included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]), node.end_lineno


def _ends_plainly(stmts: list[ast.stmt]) -> bool:
    """Whether the last line black prints for these statements is a plain body line: not a
    stub ``def``/``class`` (``...`` body) nor a class's only statement being its docstring."""
    last = stmts[-1]
    if isinstance(last, ast.ClassDef) and len(last.body) == 1 and isinstance(last.body[0], ast.Expr) and \
            isinstance(last.body[0].value, ast.Constant) and isinstance(last.body[0].value.value, str):
        return False
    for field in ("finalbody", "orelse"):
        if getattr(last, field, None):
            return _ends_plainly(getattr(last, field))
    if getattr(last, "handlers", None):
        return _ends_plainly(last.handlers[-1].body)
    if getattr(last, "cases", None):
        return _ends_plainly(last.cases[-1].body)
    if isinstance(getattr(last, "body", None), list):
        return _ends_plainly(last.body)
    return not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Constant) and last.value.value is Ellipsis)


def _form(text: str) -> tuple[str, bool] | None:
    """The black form of helper ``text`` (one top-level def/class) in a file holding an
    f-string, and whether it holds one itself; None when it is not to be set aside."""
    from transpiler.printers.formatter import _checkable_alone

    try:
        tree = _parsed(text)
        features = black.get_features_used(black.lib2to3_parse(text))
    except Exception:  # noqa: BLE001  (anything black or ast refuse: formatted with the rest)
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    if not features <= _FROM_36 or "fmt:" in text or "\f" in text or "\r" in text or _MARK in text:
        return None
    mode = black.Mode()
    alone = text + '\n\nf""\n'
    try:
        once = black._format_str_once(alone, mode=mode)
        final = once if once == alone else black._format_str_once(once, mode=mode)
        formed = _parsed(final)
    except Exception:  # noqa: BLE001
        return None
    if len(formed.body) != 2:
        return None
    node = formed.body[0]
    lines = final.split("\n")
    start, end = _segment_span(node)
    if not _checkable_alone(node, lines) or not _ends_plainly([node]):
        return None
    return "\n".join(lines[start - 1:end]) + "\n", Feature.F_STRINGS in features


def _key(text: str) -> str:
    return f"black {black.__version__}\n{_own_source()}\n{text}"


@functools.lru_cache(maxsize=None)
def _own_source() -> str:
    """This module's and the formatter's text (what a kept form was derived with)."""
    here = pathlib.Path(__file__).parent
    return "".join((here / name).read_text(encoding="utf-8") for name in ("format_cache.py", "formatter.py"))


def _read(text: str) -> tuple[str, bool] | None | bool:
    """The kept form (False: nothing kept)."""
    entry = text_cache.read("helpers-black", _key(text))
    if entry is None:
        return False
    head, _, formed = entry.partition("\n")
    if head == "#none":
        return None
    if head not in ("#fstring", "#plain") or not formed.endswith("\n"):
        return False  # (not an entry this module wrote: formatted again, and written again)
    return formed, head == "#fstring"


def _write(text: str, form: tuple[str, bool] | None) -> None:
    text_cache.write("helpers-black", _key(text),
                     "#none\n" if form is None else ("#fstring\n" if form[1] else "#plain\n") + form[0])


def form_of(text: str) -> tuple[str, bool] | None:
    """The black form of helper ``text`` (memory, then the cache folder, then black)."""
    if text in _FORMED:
        return _FORMED[text]
    form = _read(text)
    if form is False:
        form = _form(text)
        _write(text, form)
    _FORMED[text] = form
    return form


def set_aside(text: str) -> tuple[str, list[str]]:
    """``text`` with its helpers that have a known black form replaced by placeholders, and
    those forms in placeholder order (``put_back`` undoes it after black ran)."""
    if not HELPER_TEXTS or "fmt:" in text or "\f" in text or "\r" in text or _MARK in text:
        return text, []
    try:
        tree = _parsed(text)
    except (SyntaxError, ValueError):
        return text, []
    lines = text.split("\n")
    chosen: list[tuple[int, int, str, bool]] = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        start, end = _segment_span(node)
        segment = "\n".join(lines[start - 1:end]) + "\n"
        if segment not in HELPER_TEXTS:
            continue
        following = next((ln for ln in lines[end:] if ln.strip()), "")
        if following[:1].isspace():  # an indented comment after it would join the placeholder
            continue
        form = form_of(segment)
        if form is not None:
            chosen.append((start, end, form[0], form[1]))
    if not chosen:
        return text, []
    if not any(has_f for *_, has_f in chosen):
        kept = {id(n) for n in tree.body} - {id(n) for n in tree.body
                                              if _segment_span(n)[0] in {c[0] for c in chosen}}
        if not any(isinstance(sub, ast.JoinedStr) for n in tree.body if id(n) in kept for sub in ast.walk(n)):
            return text, []  # (no f-string: black may infer versions before 3.6 for the whole text)
    forms = []
    for k, (start, end, form, _) in reversed(list(enumerate(chosen))):
        lines[start - 1:end] = [f"def {_MARK}{k}():", '    _ = f""']
        forms.append(form)
    return "\n".join(lines), forms[::-1]


def put_back(formatted: str, forms: list[str]) -> str | None:
    """The placeholders of ``formatted`` replaced by ``forms``; None when black moved one
    (then the caller formats the whole text)."""
    out = formatted
    for k, form in enumerate(forms):
        placeholder = f'def {_MARK}{k}():\n    _ = f""\n'
        if out.count(placeholder) != 1:
            return None
        out = out.replace(placeholder, form)
    return out
