"""Where the PyTorch script constructs each model a Keras script builds inline.

A model is constructed where the Keras code made it. A function called from several
statements that made another model at each call (one ``return keras.Model(...)``, keras.io's
``build_classifier(blocks)`` called with three kinds of blocks, at module level or in main())
cannot be one class: each call's statement constructs its own (``a_model = AModel()``), the
function then builds nothing and goes (or is a marked stub when code the translation keeps
still calls it), and a call whose model has no name to bind is a marked stub.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import libcst as cst

from transpiler.cst_fast import nodes_of, walk
from transpiler.ir.source_file import SourceFile


@dataclass
class ConstructSites:
    #: statement id → (model, its code): the statement that constructs the model
    construct: dict[str, tuple] = field(default_factory=dict)
    #: statement id → the name a call site binds its model to (``teacher = build(16)``
    #: in main's body, whose model has no module-level variable)
    targets: dict[str, str] = field(default_factory=dict)
    #: the statements (``return keras.Model(...)``) that made a model at each of several calls
    shared: set[str] = field(default_factory=set)
    #: statement id → class: a call site whose model has no name to bind (a marked stub)
    per_call_stubs: dict[str, str] = field(default_factory=dict)
    #: function name → whether code the translation keeps still calls it
    per_call_builders: dict[str, bool] = field(default_factory=dict)


def construct_sites(source: SourceFile, inline_models: list, replaced: frozenset = frozenset()) -> ConstructSites:
    """``replaced``: the script's classes the output replaces by their translation (a calling
    class's source is not kept: its calls of a builder are not code the translation keeps)."""
    made_at: dict[str, list] = {}
    for md, code in inline_models:
        if md.construct_statement is not None:
            made_at.setdefault(md.construct_statement, []).append((md, code))
    out = ConstructSites()
    for where, made in made_at.items():
        if len(made) == 1:
            out.construct[where] = made[0]
            continue
        builder = _enclosing_function(source, where)
        calls = [_call_site(source, md, builder) for md, _ in made] if builder is not None else []
        if not calls or not all(calls):
            out.construct[where] = made[-1]  # (a model made elsewhere than at a call of its function: as before)
            continue
        out.shared.add(where)
        per_site: dict = {}
        for (md, code), site in zip(made, calls):
            per_site.setdefault(source.sid(site), []).append((md, code, site))
        for site_id, at_site in per_site.items():
            md, code, site = at_site[0]
            target = _bound_name(site, builder.name.value)
            if len(at_site) == 1 and (target is not None or _returns_call(site, builder.name.value)):
                out.construct[site_id] = (md, code)
                if target is not None:
                    out.targets[site_id] = target
            else:  # (no name to bind, or one statement making several models: a loop's)
                out.per_call_stubs[site_id] = md.class_name
    if out.shared:
        out.per_call_builders = _per_call_builders(source, out, replaced)
    return out


def _enclosing_function(source: SourceFile, where) -> cst.FunctionDef | None:
    """The innermost function whose body holds the statement ``where``."""
    holding = [fn for fn in nodes_of(source.module, cst.FunctionDef)
               if any(source.sid(n) == where for n in walk(fn.body))]
    return max(holding, key=lambda fn: source.span(fn).line, default=None)  # (a nested def starts later)


def _call_site(source: SourceFile, md, builder: cst.FunctionDef):
    """The statement line that called ``builder`` to make ``md``: the innermost statement
    it was made under that calls it (``teacher = build_classifier(16)`` in main's body,
    not ``main()``); None when there is none."""
    name = builder.name.value
    for site_id in reversed(md.made_under):
        node = source.node(site_id)
        if node is not None and any(isinstance(c.func, cst.Name) and c.func.value == name
                                    for c in nodes_of(node, cst.Call)):
            return node if isinstance(node, cst.SimpleStatementLine) else None
    return None


def _per_call_builders(source: SourceFile, sites: ConstructSites, replaced: frozenset) -> dict[str, bool]:
    functions = [_enclosing_function(source, where) for where in sites.shared]
    out: dict[str, bool] = {fn.name.value: False for fn in functions if fn is not None}
    # what the output keeps: everything but the functions themselves and the statements that
    # construct the models now (in main() as at module level)
    stack: list = list(source.module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine) and source.sid(node) in sites.construct or \
                any(node is fn for fn in functions) or isinstance(node, cst.ClassDef) and node.name.value in replaced:
            continue
        if isinstance(node, cst.Name) and node.value in out:
            out[node.value] = True
        stack.extend(_children(node))
    return out


def per_call_builder(sites: ConstructSites, program, fn: cst.FunctionDef, span) -> list:
    """The function's place in the output: nothing, or a marked stub when something still calls it."""
    name = fn.name.value
    if not sites.per_call_builders[name]:
        return []  # each call site constructs its own model class
    made = sorted(md.class_name for md, _ in sites.construct.values() if md.construct_statement in sites.shared)
    bound = (f"the calls assigned to a name construct their classes ({', '.join(made)})" if made
             else "no call assigns its model to a name")
    reason = f"{name}() builds another model at each call; {bound}, this call is not translated"
    program.stub(span, f"not translated yet: {reason}", name)
    params = cst.Module([]).code_for_node(fn.params)
    return list(cst.parse_module(f"def {name}({params}):\n    raise NotImplementedError("
                                 f"{('transpiler: ' + reason)!r})\n").body)


def _bound_name(stmt: cst.SimpleStatementLine, function: str) -> str | None:
    """``name = function(...)``: the name the call's model is bound to; else None."""
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
            isinstance(small.targets[0].target, cst.Name) and _calls(small.value, function):
        return small.targets[0].target.value
    return None


def _returns_call(stmt: cst.SimpleStatementLine, function: str) -> bool:
    """``return function(...)`` (a helper passing the model on: it returns the class now)."""
    return len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return) and _calls(stmt.body[0].value, function)


def _calls(node, function: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == function


def _children(node: cst.CSTNode) -> list:
    out = []
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend(v for v in value if isinstance(v, cst.CSTNode))
    return out
