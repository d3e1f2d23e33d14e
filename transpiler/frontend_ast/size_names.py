"""Where a frontend binds source names to sizes (issue 17 item 2, sizes with provenance).

The frontends call these at the one place each binds the names: module constants after
the definitions pass; a builder's parameters where the builder is probed
(:func:`transpiler.ir.sizes.named`). The sizes then carry the name into shape inference
and the printers, which print ``nn.Linear(64, NUM_CLASSES)`` instead of ``nn.Linear(64, 10)``.
"""

from __future__ import annotations

import keyword
import re
import zlib
from typing import Any

import libcst as cst

from transpiler import cst_fast

from transpiler.cst_fast import statement_blocks, target_names
from transpiler.ir import sizes
from transpiler.ir.reserved import GENERATED_IMPORTS


def name_module_constants(module: cst.Module, env) -> None:
    """Make every integer constant the module assigns exactly once at its top level
    (``NUM_CLASSES = 10``, ``WIDTH = 2 * 16``) and nothing rebinds (no other assignment, loop
    target, import or ``global`` statement) a size named after it, in ``env`` (the module's
    globals, an ``interp.Env``) now and whenever the interpreter binds it again: a
    generated model that uses it reads the same constant."""
    counts: dict[str, int] = {}
    single: set[str] = set()

    def count(name: str, simple: bool = False) -> None:
        counts[name] = counts.get(name, 0) + 1
        if simple:
            single.add(name)

    def visit_block(stmts) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        simple = len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                        for t in small.targets:
                            for n in target_names(t.target):
                                count(n, simple)
                    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                        for n in target_names(small.target):
                            count(n)
                    elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                        for alias in small.names:
                            name = alias.asname.name if alias.asname else alias.name
                            if isinstance(name, cst.Name):
                                count(name.value)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                count(stmt.name.value)
            elif isinstance(stmt, (cst.For,)):
                for n in target_names(stmt.target):
                    count(n)
                visit_block(stmt.body.body)
            elif isinstance(stmt, (cst.If, cst.While, cst.With, cst.Try)):
                # (an assignment in a block counts, so a constant set there is not single)
                for child in statement_blocks(stmt):
                    visit_block(child)
                if isinstance(stmt, cst.With):
                    for item in stmt.items:
                        if item.asname is not None:
                            for n in target_names(item.asname.name):
                                count(n)

    visit_block(module.body)
    declared_global = _global_names(module)
    constants = {n for n in single if counts.get(n) == 1 and n not in declared_global}

    def bind(name: str, value: Any) -> Any:
        if name in constants and isinstance(value, int) and not isinstance(value, (bool, sizes.Size)):
            return sizes.named(value, name, kind="const")
        return value

    for name, value in list(env.vars.items()):
        env.vars[name] = bind(name, value)
    env.bind_hook = bind




def _global_names(module: cst.Module) -> set[str]:
    return {n.name.value for node in cst_fast.nodes_of(module, cst.Global) for n in node.names}


def with_builder_defaults(source: str, builder: str, values: dict[str, Any]) -> str:
    """``source`` with the defaults of ``builder``'s parameters set to ``values`` (the
    frontend reads a builder at its defaults: this reads it at other arguments)."""
    module = cst.parse_module(source)

    class Defaults(cst.CSTTransformer):
        def leave_Param(self, original, updated):
            name = updated.name.value
            if name in values and updated.default is not None:
                return updated.with_changes(default=cst.parse_expression(repr(values[name])))
            return updated

    body = [s.with_changes(params=s.params.visit(Defaults()))
            if isinstance(s, cst.FunctionDef) and s.name.value == builder else s for s in module.body]
    return module.with_changes(body=body).code


def with_init_defaults(source: str, cls: str, values: dict[str, Any]) -> str | None:
    """``source`` with the parameters of class ``cls``'s ``__init__`` named in ``values``
    given those as defaults (the torch frontend builds a class at its defaults: this reads
    it at the sizes a checkpoint was saved with); None when a parameter without a default
    would then follow one with a default (or the class has no such ``__init__``)."""
    module = cst.parse_module(source)
    found = []

    def params_of(fn: cst.FunctionDef) -> cst.Parameters | None:
        params = list(fn.params.params)
        new, defaulted = [], False
        for param in params:
            if param.name.value in values:
                param = param.with_changes(default=cst.parse_expression(repr(values[param.name.value])),
                                           equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                                 whitespace_after=cst.SimpleWhitespace("")))
            elif param.default is None and defaulted and param.name.value != "self":
                return None
            defaulted = defaulted or param.default is not None
            new.append(param)
        return fn.params.with_changes(params=new)

    body = []
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == cls:
            members = []
            for member in stmt.body.body:
                if isinstance(member, cst.FunctionDef) and member.name.value == "__init__":
                    params = params_of(member)
                    if params is None:
                        return None
                    member = member.with_changes(params=params)
                    found.append(member)
                members.append(member)
            stmt = stmt.with_changes(body=stmt.body.with_changes(body=members))
        body.append(stmt)
    return module.with_changes(body=body).code if found else None


def name_arguments(fn: cst.FunctionDef | None, args: list, kwargs: dict, scope, self_param: bool = False):
    """A helper's or a Layer class's call: its static integer arguments as sizes named
    after its parameters (each remembering the caller's value, :attr:`ir.sizes.Sym.arg`),
    so the module printed for it takes them (``ConvBlock(filters)``); ``scope.args`` (the
    ``ir.modules.ModuleScope``) gets the named values. Returns the new ``(args, kwargs)``."""
    if fn is None:
        return args, kwargs
    names = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)]
    if self_param:
        names = names[1:]
    args = list(args)
    for i, name in enumerate(names[:len(args)]):
        if name in scope.args:
            args[i] = scope.args[name] = sizes.named(args[i], name, arg=args[i])
    kwargs = dict(kwargs)
    for name in kwargs:
        if name in scope.args and name in names:
            kwargs[name] = scope.args[name] = sizes.named(kwargs[name], name, arg=kwargs[name])
    return args, kwargs


#: the layer arguments that are sizes (a run-time value there becomes a run-time size)
SIZE_ARGUMENTS = frozenset({"units", "filters", "input_dim", "output_dim", "num_heads", "key_dim", "value_dim",
                            "n", "latent_dim", "pool_size"})


def runtime_size(value: Any, name: str | None = None) -> Any:
    """A value only the running program knows (``len(chars)``, ``num_classes`` computed from
    the data), read from a source expression, as a size that prints as that expression
    (issue 18 item 1): a :class:`ir.sizes.Size` named after it (its name when the source
    reads a name, else an identifier made from its code), whose caller's argument
    (:attr:`ir.sizes.Sym.arg`) is the code that computes it. Its number is a stand-in
    (large, and different for different code, so that no shape rule confuses two):
    the printers refuse a translation that would print it (:func:`runtime_leaks`).
    Anything else comes back unchanged."""
    source = getattr(value, "source", None)
    if type(value).__name__ != "Unknown" or not isinstance(source, cst.BaseExpression):
        return value
    text = cst.Module([]).code_for_node(source)
    if name is not None:
        pass
    elif isinstance(source, cst.Name):
        name = source.value
    else:
        name = re.sub(r"\W+", "_", text).strip("_") or "size"
        if name[0].isdigit():
            name = f"n_{name}"
    return sizes.Size(_standin(text), sizes.Sym(_parameter_name(name), "runtime", arg=text))


def _parameter_name(name: str) -> str:
    """``name`` as the generated module's constructor parameter: not a keyword, ``self``, or a
    name the generated code reads for something else (``self_`` / ``lambda_`` / ``nn_`` in the
    source stay themselves, where the made-up identifier had dropped the underscore)."""
    while keyword.iskeyword(name) or name in ("self", "super") or name in GENERATED_IMPORTS:
        name += "_"
    return name


def _standin(text: str) -> int:
    return 1_000_003 + 2 * (zlib.crc32(text.encode()) % 499_979)  # (the same in every run)


runtime_leaks = sizes.runtime_leaks


def runtime_sizes_of(graph) -> dict[str, Any]:
    """The run-time sizes a model's graph holds (its inputs' shapes, its nodes' attributes
    and shapes), by name, each as the size :func:`runtime_size` made: the generated module
    takes them as constructor arguments."""
    found: dict[str, Any] = {}
    for v in graph.inputs:
        _collect_runtime(v.shape, found)
    for node in graph.nodes:
        found.update({k: v for k, v in runtime_sizes_of_node(node).items() if k not in found})
    return found


def _collect_runtime(value, found: dict[str, Any]) -> None:
    """Add the run-time sizes in ``value`` (nested tuples, lists and dicts of sizes) to
    ``found`` by name; a second size of one name from other code is refused (specialised)."""
    if isinstance(value, sizes.Size):
        for sym in _runtime_leaves(value.expr):
            if sym.name in found and sizes.symbol_of(found[sym.name]).arg != sym.arg:
                sym.specialised.add("its name is another run-time size's")  # (refused: a leak)
            elif sym.name not in found:
                found[sym.name] = sizes.Size(_standin(sym.arg), sym)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _collect_runtime(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _collect_runtime(v, found)


def runtime_sizes_of_node(node) -> dict[str, Any]:
    """The run-time sizes of one node's attributes and input/output shapes, by name."""
    found: dict[str, Any] = {}
    _collect_runtime(node.attrs, found)
    for v in list(node.inputs) + list(node.outputs):
        _collect_runtime(v.shape, found)
    return found


def _runtime_leaves(expr, depth: int = 0):
    """The run-time sizes ``expr`` depends on: its own leaves of kind ``"runtime"``, and those
    of the values its parameters were passed (a Layer's ``hidden`` given ``num_classes * 4``)."""
    for sym in sizes.leaves(expr):
        if sym.kind == "runtime":
            yield sym
        elif sym.arg is not None and depth < 16:
            for arg in (sym.arg if isinstance(sym.arg, tuple) else (sym.arg,)):
                if isinstance(arg, sizes.Size):
                    yield from _runtime_leaves(arg.expr, depth + 1)
