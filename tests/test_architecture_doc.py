"""docs/architecture.md names only files and folders that exist.

Every backticked path in the document is checked: ``a/b.py`` or ``a/b/`` relative to
``transpiler/`` (or to the repository for ``tests/``, ``docs/``, ``corpus/``, ``transpiler/``), a ``*`` in it
as a glob. A bare file name (``statements.py``) must exist in a folder the same paragraph or
its section heading names, so a short name cannot point into the wrong package either.
"""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "transpiler"
DOC = ROOT / "docs" / "architecture.md"
REPO_PREFIXES = ("tests/", "docs/", "corpus/", "transpiler/")

_TICKED = re.compile(r"`([^`\s]+)`")
_PATHLIKE = re.compile(r"^[\w*./-]+(\.py|/)$")


def _exists(path: str, base: pathlib.Path) -> bool:
    if "*" in path:
        return any(base.glob(path.rstrip("/")))
    return (base / path).exists()


def _resolve(path: str) -> pathlib.Path:
    return ROOT if path.startswith(REPO_PREFIXES) else PACKAGE


def _paths(text: str) -> list[str]:
    return [t.rstrip("'s") if t.endswith("'s") else t for t in _TICKED.findall(text)
            if _PATHLIKE.match(t.rstrip("'s") if t.endswith("'s") else t)]


def _folders(paths: list[str]) -> list[pathlib.Path]:
    """The folders these paths name or lie in (a file's folder, a folder itself)."""
    out = []
    for p in paths:
        if "/" not in p.rstrip("/"):
            if p.endswith("/"):
                out.append(_resolve(p) / p)
            continue
        base = _resolve(p)
        out.append(base / p if p.endswith("/") else (base / p).parent)
    return out


def _blocks(text: str):
    """(first line number, text) of each paragraph (lines between blank lines)."""
    block, start = [], 1
    for number, line in enumerate(text.splitlines() + [""], start=1):
        if line.strip():
            if not block:
                start = number
            block.append(line)
        elif block:
            yield start, "\n".join(block)
            block = []


def missing_paths(text: str) -> list[str]:
    """The paths ``text`` (markdown) names that do not exist, as ``path (line n)``."""
    missing = []
    heading_paths: list[str] = []
    for start, block in _blocks(text):
        if block.startswith("#"):
            heading_paths = _paths(block.splitlines()[0])
        paths = _paths(block)
        context = _folders(paths + heading_paths) + [PACKAGE]
        for p in dict.fromkeys(paths):
            if "/" in p:
                ok = _exists(p, _resolve(p))
            else:
                ok = any(_exists(p, folder) for folder in context)
            if not ok:
                line = next(i for i, ln in enumerate(block.splitlines()) if f"`{p}" in ln) + start
                missing.append(f"{p} (line {line})")
    return missing


def test_every_path_in_the_architecture_doc_exists():
    assert missing_paths(DOC.read_text(encoding="utf-8")) == []


def test_the_path_check_finds_a_missing_file():
    text = ("## Frontends (`frontend_ast/`)\n\n"
            "`frontend_ast/keras/frontend.py` reads; `statements.py` and `nowhere.py` too.\n\n"
            "`ir/passes/no_such_pass.py`, `printers/torch/`, `runtime/*/loop.py`, `tests/test_golden.py`.\n\n"
            "`frontend.py` is named without its folder here.\n")
    assert missing_paths(text) == ["nowhere.py (line 3)", "ir/passes/no_such_pass.py (line 5)",
                                   "frontend.py (line 7)"]
