"""The project's own PyTorch runtime read back: definitions of ``transpiler/runtime/torch/``
that a generated PyTorch program holds (copied there by printers/runtime_source.py:
``one_channel_layout``, ...), once its calls are translated away.

A PyTorch program the transpiler wrote and the torch reader reads back (a round trip) calls
runtime helpers the Keras program needs no more: ``one_channel_layout(x, perm)`` around an
array fed to a one-channel input is undone where the array enters ``model.fit`` (Keras' model
takes Keras' layout: printers/keras/helper_calls.py). The definition then has no caller; kept,
the Keras program would carry dead PyTorch-runtime code and a round trip would not converge.
So a module-level definition is dropped when it is a runtime definition of the same name (the
same code, but for its docstring and layout), the script called it, and nothing in the Keras
output refers to it any more. A definition the script never called stays (another module may
import it), and so does one the user changed.

Imports no deep-learning framework.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap

import libcst as cst

from transpiler.printers import runtime_source

_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)


def _shape(tree: ast.AST) -> str:
    """The definition's code without docstrings, as ``ast`` reads it (layout ignored)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body and \
                isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


@functools.lru_cache(maxsize=None)
def _runtime_shapes() -> dict[str, frozenset[str]]:
    """name → the shapes of the torch runtime's top-level definitions of that name."""
    out: dict[str, set[str]] = {}
    for path in sorted((runtime_source.RUNTIME / "torch").glob("*.py")):
        module = runtime_source.load(f"torch.{path.stem}")
        for name, definition in module.definitions.items():
            try:
                tree = ast.parse(textwrap.dedent(definition.text))
            except SyntaxError:  # (a definition the runtime file writes across others: never copied alone)
                continue
            if len(tree.body) == 1 and isinstance(tree.body[0], (ast.FunctionDef, ast.ClassDef)):
                out.setdefault(name, set()).add(_shape(tree))
    return {name: frozenset(shapes) for name, shapes in out.items()}


def is_runtime_copy(stmt: cst.CSTNode) -> bool:
    """Is ``stmt`` (a module-level statement of the torch script) a definition copied from the
    torch runtime, as it was copied?"""
    if not isinstance(stmt, _DEFINITIONS):
        return False
    shapes = _runtime_shapes().get(stmt.name.value)
    if not shapes:
        return False
    try:
        tree = ast.parse(cst.Module([stmt]).code)
    except SyntaxError:
        return False
    return _shape(tree) in shapes


def _mentions(name: str, texts) -> bool:
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(word.search(t) for t in texts if t)


def _called(module: cst.Module, definition) -> bool:
    """Does the script name ``definition`` outside its own body?"""
    name = definition.name.value

    class Finder(cst.CSTVisitor):
        found = False

        def visit_FunctionDef(self, node) -> bool:
            return node is not definition

        def visit_ClassDef(self, node) -> bool:
            return node is not definition

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                Finder.found = True

    module.visit(Finder())
    return Finder.found


def uncalled(module: cst.Module, statements: list, texts: list, other_texts=()) -> set[int]:
    """The indexes (into ``statements``, the module's statements in the order printed as
    ``texts``) of the runtime copies to drop: called in ``module`` (the torch script), named
    nowhere in the Keras output but in their own text. Repeated until none goes, so a runtime
    definition only a dropped one used goes with it."""
    candidates = {i for i, stmt in enumerate(statements)
                  if texts[i] and is_runtime_copy(stmt) and _called(module, stmt)}
    dropped: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in sorted(candidates - dropped):
            others = [t for j, t in enumerate(texts) if j != i and j not in dropped]
            if not _mentions(statements[i].name.value, others + list(other_texts)):
                dropped.add(i)
                changed = True
    return dropped
