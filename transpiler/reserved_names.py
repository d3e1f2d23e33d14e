"""User names that would shadow the generated program's own imports (issue 22, whole-program fuzz).

A generated script imports ``torch``, ``nn``, ``F``, ``np``, ``keras``, ``layers``, ``ops``, ...
and its translated code reads them. A source that binds one of those names itself (a
function ``def torch(): ...``, a variable ``nn = build()``, a local ``F = 3``) without
importing it gave an output that compiled and then failed when run (``torch.optim`` read the
user's function), with no stub. Such bindings are renamed, consistently, before the source is
read (``nn`` → ``nn_``): the program means the same and the target's names stay free.

Parameters keep their names (a caller may pass them by keyword; the builders' readers handle
a parameter named like a framework), so do class attributes and names the source itself
imports (the user's own shadowing is theirs).
"""

from __future__ import annotations

import ast

from transpiler.ir.reserved import GENERATED_IMPORTS

#: names the printers may import at module level in a generated script (either target)
RESERVED = GENERATED_IMPORTS


def _candidates(tree: ast.AST) -> set[str]:
    imported: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            imported |= set(node.names)  # (left alone: the binding is elsewhere)
    return ((bound & RESERVED) | _module_builtins(tree)) - imported


def _module_builtins(tree: ast.AST) -> set[str]:
    """Builtins (``list``, ``type``, ``next``) the source binds at module level: the generated
    program's helpers (``make_loader``: ``list(inputs)``, ``isinstance(x, (list, tuple))``)
    read them as globals, so a user ``def list(): ...`` beside them broke the output when run
    (issue 22, whole-program fuzz). Only module-level bindings: a local one hides nothing."""
    import builtins

    bound: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            return  # (its body is its own scope)
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in getattr(tree, "body", ()):
        visit(stmt)
    return {n for n in bound if not n.startswith("_") and hasattr(builtins, n)}


def free_reserved_names(source: str) -> tuple[str, dict[str, str]]:
    """``source`` with its own bindings of reserved names renamed, and the renaming
    (``{}`` and the source unchanged when there is none, which is the usual case)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source, {}  # (the frontend reports it)
    names = _candidates(tree)
    if not names:
        return source, {}
    local_ok = names - RESERVED  # (builtins: renamed where bound at module level only)
    import libcst as cst
    from libcst.metadata import ClassScope, GlobalScope, MetadataWrapper, ScopeProvider

    wrapper = MetadataWrapper(cst.parse_module(source))
    scopes = wrapper.resolve(ScopeProvider)
    targets: dict[cst.CSTNode, str] = {}
    for scope in {s for s in scopes.values() if s is not None}:
        found: set[cst.CSTNode] = set()
        kept: set[str] = set()
        for assignment in scope.assignments:
            name = assignment.name
            if name not in names or (name in local_ok and not isinstance(scope, GlobalScope)):
                continue
            node = getattr(assignment, "node", None)
            if isinstance(scope, ClassScope) or isinstance(node, cst.Param) or \
                    not isinstance(node, (cst.Name, cst.FunctionDef, cst.ClassDef)):
                kept.add(name)
                continue
            found.add(node.name if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else node)
            for access in assignment.references:
                if isinstance(access.node, cst.Name):
                    found.add(access.node)
                else:
                    kept.add(name)  # (read by string: ``__all__``, an f-string, ...)
        targets.update((n, n.value) for n in found if n.value not in kept)
    names = set(targets.values())
    if not names:
        return source, {}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    mapping: dict[str, str] = {}
    for name in sorted(names):
        new = name + "_"
        while new in used or new in RESERVED:
            new += "_"
        mapping[name] = new

    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            if original in targets:
                return updated.with_changes(value=mapping[targets[original]])
            return updated

    return wrapper.module.visit(_Rename()).code, mapping
