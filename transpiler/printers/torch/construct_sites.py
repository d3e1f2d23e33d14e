"""Where the PyTorch script constructs each model a Keras script builds inline.

A model is constructed where the Keras code made it. A function called from several
module-level statements that made another model at each call (one ``return keras.Model(...)``,
keras.io's ``build_classifier(blocks)`` called with three kinds of blocks) cannot be one class:
each call's statement constructs its own (``a_model = AModel()``), the function then builds
nothing and goes (or is a marked stub when code the translation keeps still calls it), and a
call whose model has no name to bind is a marked stub.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.ir.source_file import SourceFile


@dataclass
class ConstructSites:
    #: statement id → (model, its code): the statement that constructs the model
    construct: dict[str, tuple] = field(default_factory=dict)
    #: the statements (``return keras.Model(...)``) that made a model at each of several calls
    shared: set[str] = field(default_factory=set)
    #: statement id → class: a call site whose model has no name to bind (a marked stub)
    per_call_stubs: dict[str, str] = field(default_factory=dict)
    #: function name → whether code the translation keeps still calls it
    per_call_builders: dict[str, bool] = field(default_factory=dict)


def construct_sites(source: SourceFile, inline_models: list) -> ConstructSites:
    module, sid = source.module, source.sid
    made_at: dict[str, list] = {}
    for md, code in inline_models:
        if md.construct_statement is not None:
            made_at.setdefault(md.construct_statement, []).append((md, code))
    out = ConstructSites()
    for where, made in made_at.items():
        if len(made) == 1:
            out.construct[where] = made[0]
            continue
        outers = [[stmt for stmt in module.body if sid(stmt) in md.statements] for md, _ in made]
        if not all(outers):
            out.construct[where] = made[-1]  # (a model made elsewhere than a module-level statement: as before)
            continue
        out.shared.add(where)
        for (md, code), found in zip(made, outers):
            outer = next((stmt for stmt in found if _binds(stmt, md.var)), None)
            if outer is not None:
                out.construct[sid(outer)] = (md, code)
            else:
                out.per_call_stubs[sid(found[0])] = md.class_name
    if out.shared:
        out.per_call_builders = _per_call_builders(source, out)
    return out


def _per_call_builders(source: SourceFile, sites: ConstructSites) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for stmt in source.module.body:
        if isinstance(stmt, cst.FunctionDef) and any(source.sid(n) in sites.shared
                                                     for n in nodes_of(stmt, cst.SimpleStatementLine)):
            out[stmt.name.value] = False
    for stmt in source.module.body:
        if source.sid(stmt) in sites.construct or isinstance(stmt, cst.FunctionDef) and stmt.name.value in out:
            continue
        for n in nodes_of(stmt, cst.Name):
            if n.value in out:
                out[n.value] = True
    return out


def per_call_builder(sites: ConstructSites, program, fn: cst.FunctionDef, span) -> list:
    """The function's place in the output: nothing, or a marked stub when something still calls it."""
    name = fn.name.value
    if not sites.per_call_builders[name]:
        return []  # each call site constructs its own model class
    made = sorted(md.class_name for md, _ in sites.construct.values() if md.construct_statement in sites.shared)
    reason = (f"{name}() builds another model at each call; the calls assigned at module level "
              f"construct their classes ({', '.join(made)}), this call is not translated")
    program.stub(span, f"not translated yet: {reason}", name)
    params = cst.Module([]).code_for_node(fn.params)
    return list(cst.parse_module(f"def {name}({params}):\n    raise NotImplementedError("
                                 f"{('transpiler: ' + reason)!r})\n").body)


def _binds(stmt: cst.CSTNode, name: str | None) -> bool:
    """``name = ...`` (one target) as a module-level statement line."""
    if name is None or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    return isinstance(small, cst.Assign) and len(small.targets) == 1 and \
        isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name
