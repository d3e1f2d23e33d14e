"""The statements of a Keras builder function that do something besides building the model
(``print(...)``, ``os.system(...)``, ``logging.info(...)``): carried into the generated builder,
which otherwise only returns the module, so they still happen when it is called. One that reads
a value of the Keras build (``print(x.shape)``) cannot run in PyTorch as written: it becomes a
marked comment and a reported stub, never dropped without a word."""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of


def _locals(fn: cst.FunctionDef) -> set[str]:
    """Names the builder's body binds (assignment targets, loop variables, ``with ... as``)."""
    bound: set[str] = set()
    for node in nodes_of(fn.body, cst.AssignTarget):
        bound |= {n.value for n in nodes_of(node, cst.Name)}
    for node in nodes_of(fn.body, cst.AnnAssign):
        bound |= {n.value for n in nodes_of(node.target, cst.Name)}
    for node in nodes_of(fn.body, cst.AugAssign):
        bound |= {n.value for n in nodes_of(node.target, cst.Name)}
    for node in nodes_of(fn.body, cst.For):
        bound |= {n.value for n in nodes_of(node.target, cst.Name)}
    for node in nodes_of(fn.body, cst.AsName):
        bound |= {n.value for n in nodes_of(node.name, cst.Name)}
    return bound


def _receiver(func: cst.BaseExpression) -> str | None:
    """The name a method call is made on (``model`` of ``model.build(...)``), or None."""
    if not isinstance(func, cst.Attribute):
        return None
    while isinstance(func, cst.Attribute):
        func = func.value
    return func.value if isinstance(func, cst.Name) else None


def side_effects(fn: cst.FunctionDef, keras_names: set[str], code_of) -> tuple[list[str], list[cst.CSTNode]]:
    """The builder body's top-level call statements that build nothing: ``(carried, stubbed)``,
    the first as source lines (unindented), the second the statements that read the Keras
    build and cannot be carried."""
    local = _locals(fn)
    carried: list[str] = []
    stubbed: list[cst.CSTNode] = []
    for stmt in fn.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        if not all(isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) for s in stmt.body):
            continue
        names = {n.value for n in nodes_of(stmt, cst.Name)}
        if names & keras_names:
            continue  # a Keras call: part of the build (or reported by the frontend)
        if any(_receiver(s.value.func) in local for s in stmt.body):
            continue  # a method of an object of the build (``model.build(...)``): the build itself
        if names & local:
            stubbed.append(stmt)
        else:
            carried.append(code_of(stmt).strip())
    return carried, stubbed
