"""The project's own source files parsed once per test process: the architecture guards
(tests/test_layering.py, tests/test_meta_keys.py) each walk every module of ``transpiler/``,
several times over, and parsing them all costs seconds."""

from __future__ import annotations

import ast
import functools
import pathlib


@functools.cache
def text(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def parsed(path: pathlib.Path) -> ast.Module:
    """``ast.parse`` of ``path`` (shared: callers must not change the tree)."""
    return ast.parse(text(path), filename=str(path))
