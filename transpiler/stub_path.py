"""Where a generated program stops: the first marked stub on its run path.

A translated file is usable as far as it runs. Stubs are ``raise NotImplementedError("transpiler:
...")``; one inside a function or class only matters once something calls it. This module reads
the generated source (``ast``, no framework) top to bottom as the interpreter would run it and
names the first module-level statement that raises a stub, directly or through a call of a
module-level function or class whose body (transitively) holds one. The reading is conservative
in one direction: a stub under an ``if`` counts as reached, so "stops at" means "reaches a stub
there if that branch runs"; a program reported as running past every stub has none on its path.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_MARK = "transpiler:"


@dataclass(frozen=True)
class StubStop:
    """The first statement (1-based line of the output) at which the run reaches a stub."""

    line: int
    text: str  # the statement's first line, stripped
    via: str | None = None  # the stubbed function/class it calls, when the stub is not in the line itself


def _is_stub_raise(node: ast.AST) -> bool:
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc
    if not (isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and exc.func.id == "NotImplementedError"):
        return False
    return any(isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith(_MARK)
               for a in exc.args)


def _own_nodes(node: ast.AST):
    """The nodes a statement runs itself: nested function/class bodies are not entered
    (a class body runs at definition, but its methods do not)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.ClassDef):
                stack.extend(child.decorator_list)
                stack.extend(child.bases)
                continue
            stack.append(child)


def _called_names(node: ast.AST) -> list[str]:
    names = []
    for n in _own_nodes(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            names.append(n.func.id)
    return names


def _untranslated_names(tree: ast.Module) -> set[str]:
    """Names a module-level stub bound to ``Untranslated("transpiler: ...")`` (which raises the
    stub's message at its first use: runtime/torch/untranslated.py)."""
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "Untranslated":
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return names


def _reads(node: ast.AST, names: set[str]) -> bool:
    return type(node) is ast.Name and isinstance(node.ctx, ast.Load) and node.id in names


def _local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function binds itself (its parameters, what its body assigns): they shadow
    module-level names of the same spelling (a parameter ``inputs`` is not a stub's ``inputs``)."""
    a = fn.args
    names = {arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg is not None}
    names |= {n.id for s in fn.body for n in _own_nodes(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names - {n for s in fn.body if isinstance(s, ast.Global) for n in s.names}


def _stubbed_definitions(tree: ast.Module, untranslated: set[str] = frozenset()) -> set[str]:
    """Module-level functions and classes that raise a stub when called (their body, a
    class's ``__init__``/``__call__``/``forward``/``call``, a stubbed callee, or a read of a
    name a stub left ``Untranslated``), to a fixpoint."""
    # (the nodes each statement runs, the names of its function): each read once, not per
    # statement of the function or per round of the fixpoint (a long generated program has
    # thousands of statements)
    bodies: dict[str, list[tuple[list[ast.AST], set[str]]]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = _local_names(stmt)
            bodies[stmt.name] = [(list(_own_nodes(s)), local) for s in stmt.body]
        elif isinstance(stmt, ast.ClassDef):
            methods = [m for m in stmt.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and m.name in ("__init__", "__new__", "__call__", "forward", "call")]
            bodies[stmt.name] = [(list(_own_nodes(s)), local) for m in methods
                                 for local in (_local_names(m),) for s in m.body]
    stubbed: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, body in bodies.items():
            if name in stubbed:
                continue
            for nodes, local in body:
                if any(_is_stub_raise(n) or _reads(n, untranslated - local) for n in nodes) or any(
                        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in stubbed
                        for n in nodes):
                    stubbed.add(name)
                    changed = True
                    break
    return stubbed


def first_stop(source: str) -> StubStop | None:
    """The first module-level statement of ``source`` that reaches a stub, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    untranslated = _untranslated_names(tree)
    stubbed = _stubbed_definitions(tree, untranslated)
    lines = source.splitlines()
    live: set[str] = set()  # names bound to Untranslated at this point of the run
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nodes = [d for dec in stmt.decorator_list for d in _own_nodes(dec)]
        elif isinstance(stmt, ast.ClassDef):
            nodes = [n for part in (*stmt.decorator_list, *stmt.bases) for n in _own_nodes(part)]
            nodes += [n for s in stmt.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                      for n in _own_nodes(s)]
        else:
            nodes = list(_own_nodes(stmt))
        raises = [n for n in nodes if _is_stub_raise(n) or _reads(n, live)]
        if raises:
            line = min(n.lineno for n in raises)
            return StubStop(line, lines[line - 1].strip())
        calls = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id in stubbed]
        if calls:
            call = min(calls, key=lambda n: (n.lineno, n.col_offset))
            return StubStop(call.lineno, lines[call.lineno - 1].strip(), via=call.func.id)
        if isinstance(stmt, ast.Assign):
            bound = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
            live = (live | bound) if bound <= untranslated and isinstance(stmt.value, ast.Call) and \
                _reads(stmt.value.func, {"Untranslated"}) else live - bound
    return None


def describe(stop: StubStop | None, stubs: int) -> str:
    """One clause for the summary: whether the program runs past its stubs."""
    if not stubs:
        return "no stubs: the program runs as generated"
    if stop is None:
        return "no stub on the run path (the stubbed code is not called at top level)"
    if stop.via:
        return f"the program stops at its first stub, output line {stop.line}, where it calls {stop.via}() (a stub)"
    text = stop.text if len(stop.text) <= 60 else stop.text[:57] + "..."
    return f"the program stops at its first stub, output line {stop.line} ({text})"
