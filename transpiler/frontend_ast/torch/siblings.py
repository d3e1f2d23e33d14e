"""Classes a script imports from a sibling file of its folder (``from model import Net``).

A multi-file PyTorch program defines its model in ``model.py`` and builds and trains it in
``main.py``; the model's input shape shows only where main.py feeds it data. The reader of
main.py therefore reads the class from the sibling file (parsed with the same reader): the
class definitions the import names — and the sibling's classes, functions and constants they
use, with the sibling's imports — take the import statement's place in the module the reader
reads, and the import keeps only the names it still needs from the sibling. The Keras
main.py so defines the translated model where it builds it, and runs on its own.
When main.py builds none of the classes it imports from a sibling (no input shape shows
there either), the import stays as it is and the sibling file is translated on its own
(``run_torch_frontend`` reads the script again so).

A function main.py imports from a sibling and hands a model it builds (``train(model, ...)``,
``Process(target=train, args=(model, ...))``), which feeds that model data (calls it, itself or
through another function of the sibling), is read in main.py's module too: how the model is
fed (the layout its batches need, fit or a custom step) is known only where the model's class
is, so the Keras main.py carries that function, translated for that model.
The sibling file is still translated on its own, as a library module.

The sibling's nodes keep their own positions: a diagnostic about them names the sibling
file and its line. Forms read: ``from model import Net``, ``from .model import Net`` (a
module file next to the script). ``import model`` / ``model.Net(...)`` is not read here (the
name stays the sibling module's). Imports no deep-learning framework.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper

from transpiler.cst_fast import positions as cst_positions


@dataclass
class Sibling:
    """One sibling file read: its path, lines and the positions of its nodes."""

    path: str
    lines: list[str]
    positions: dict = field(default_factory=dict)
    names: set[str] = field(default_factory=set)  # the classes main.py imports from it
    functions: set[str] = field(default_factory=set)  # its functions main.py hands a model


def _module_file(script: str, node: cst.ImportFrom) -> str | None:
    """``from model import ...`` / ``from .model import ...`` → the sibling file's path."""
    if node.module is None or isinstance(node.names, cst.ImportStar):
        return None
    if len(node.relative) > 1 or not isinstance(node.module, cst.Name):
        return None
    folder = os.path.dirname(os.path.abspath(script))
    candidate = os.path.join(folder, node.module.value + ".py")
    if os.path.abspath(candidate) == os.path.abspath(script) or not os.path.isfile(candidate):
        return None
    return candidate


def _names_used(node: cst.CSTNode) -> set[str]:
    out: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.add(n.value)

    node.visit(_V())
    return out


def _defined(stmt: cst.CSTNode) -> set[str]:
    """Top-level names a class, function or simple assignment of the sibling defines."""
    if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
        return {stmt.name.value}
    if isinstance(stmt, cst.SimpleStatementLine):
        names = set()
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    if isinstance(t.target, cst.Name):
                        names.add(t.target.value)
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                names.add(small.target.value)
        return names
    return set()


def _is_import(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _closure(body, wanted: set[str]) -> list:
    """The sibling's top-level definitions ``wanted`` names and, transitively, those they use
    (in the sibling's order)."""
    by_name = {}
    for stmt in body:
        for name in _defined(stmt):
            by_name[name] = stmt
    keep: set[cst.CSTNode] = set()  # (syntax nodes hash by identity)
    todo = [by_name[n] for n in wanted if n in by_name]
    while todo:
        stmt = todo.pop()
        if stmt in keep:
            continue
        keep.add(stmt)
        todo.extend(by_name[n] for n in _names_used(stmt) if n in by_name and by_name[n] not in keep)
    return [stmt for stmt in body if stmt in keep]


def read_siblings(script: str, module: cst.Module, keep: frozenset = frozenset()) -> tuple[cst.Module, list[Sibling]]:
    """``module`` with each ``from <sibling> import Cls`` of a class the sibling file defines
    replaced by the sibling's imports and the definitions the class needs; the siblings read.
    The imports of the sibling files in ``keep`` (paths) stay as they are."""
    if not script or script.startswith("<"):
        return module, []
    siblings: list[Sibling] = []
    takers = _model_takers(script, module)
    new_body: list = []
    taken: set[str] = set()  # (each sibling definition spliced once)
    changed = False
    for stmt in module.body:
        spliced = _splice(script, stmt, siblings, taken, keep, takers) if isinstance(stmt, cst.SimpleStatementLine) else None
        if spliced is None:
            new_body.append(stmt)
        else:
            new_body.extend(spliced)
            changed = True
    return (module.with_changes(body=new_body) if changed else module), siblings


def _sibling_module(script: str, stmt) -> tuple[str, cst.ImportFrom, str, cst.Module] | None:
    """(path, import node, source, parsed module) of a ``from <sibling> import ...`` line."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
            or not isinstance(stmt.body[0], cst.ImportFrom):
        return None
    node = stmt.body[0]
    path = _module_file(script, node)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        return path, node, source, cst.parse_module(source)
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return None


def _model_takers(script: str, module: cst.Module) -> dict[str, set]:
    """The functions ``module`` calls with a value it builds from a class (its own or one it
    imports from a sibling), directly (``train(model, ...)``) or as a process target
    (``Process(target=train, args=(model, ...))``): {name: the argument slots holding such a
    value (positions, keywords)}."""
    classes = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    for stmt in module.body:
        found = _sibling_module(script, stmt)
        if found is not None:
            classes |= {s.name.value for s in found[3].body if isinstance(s, cst.ClassDef)}
    built: set[str] = set()
    calls: list[cst.Call] = []

    class _V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            v = n.value  # (``Net()``, ``Net().to(device)``: a method chain on the new instance)
            while isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and isinstance(v.func.value, cst.Call):
                v = v.func.value
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value in classes:
                built.update(t.target.value for t in n.targets if isinstance(t.target, cst.Name))

        def visit_Call(self, n: cst.Call) -> None:
            calls.append(n)

    module.visit(_V())

    def slots(args) -> set:
        return {getattr(getattr(a, "keyword", None), "value", None) or i for i, a in enumerate(args)
                if isinstance(a.value, cst.Name) and a.value.value in built}

    takers: dict[str, set] = {}
    for call in calls:
        if isinstance(call.func, cst.Name) and slots(call.args):
            takers.setdefault(call.func.value, set()).update(slots(call.args))
        kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        target, args = kw.get("target"), kw.get("args")
        if isinstance(target, cst.Name) and isinstance(args, (cst.Tuple, cst.List)) and slots(args.elements):
            takers.setdefault(target.value, set()).update(slots(args.elements))
    return takers


def _feeders(body, takers: dict[str, set]) -> set[str]:
    """The functions of a sibling's ``body`` among ``takers`` that feed the model they are handed:
    call it (``model(data)``), directly or through another function of the sibling they hand it
    to. A function that only reads its parameters (``create_optimizer(model, cfg)``) stays in
    the sibling: nothing in it depends on how the model takes its inputs."""
    funcs = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}

    def param(fn: cst.FunctionDef, slot) -> str | None:
        names = [p.name.value for p in fn.params.params]
        if isinstance(slot, int):
            return names[slot] if slot < len(names) else None
        return slot if slot in names or slot in {p.name.value for p in fn.params.kwonly_params} else None

    memo: dict[tuple[str, str], bool] = {}

    def feeds(name: str, p: str) -> bool:
        key = (name, p)
        if key in memo:
            return memo[key]
        memo[key] = False  # (recursion)
        found = []

        class _V(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                if isinstance(n.func, cst.Name) and n.func.value == p:
                    found.append(True)
                elif isinstance(n.func, cst.Name) and n.func.value in funcs:
                    for i, a in enumerate(n.args):
                        if isinstance(a.value, cst.Name) and a.value.value == p:
                            q = param(funcs[n.func.value], a.keyword.value if a.keyword else i)
                            if q and feeds(n.func.value, q):
                                found.append(True)

        funcs[name].body.visit(_V())
        memo[key] = bool(found)
        return memo[key]

    return {name for name, slots in takers.items() if name in funcs
            and any((p := param(funcs[name], slot)) and feeds(name, p) for slot in slots)}


def _splice(script: str, stmt: cst.SimpleStatementLine, siblings: list[Sibling], taken: set[str], keep,
            takers: dict | None = None):
    """The statements replacing the import line ``stmt`` (None: it stays as it is)."""
    found = _sibling_module(script, stmt)
    if found is None or found[0] in keep:
        return None
    path, node, source, sib_module = found
    classes = {s.name.value for s in sib_module.body if isinstance(s, cst.ClassDef)}
    functions = _feeders(sib_module.body, takers or {})
    imported = [a for a in node.names if isinstance(a.name, cst.Name) and a.asname is None
                and a.name.value in classes | functions]
    if not imported:
        return None
    wrapper = MetadataWrapper(sib_module, unsafe_skip_copy=True)
    wanted = {a.name.value for a in imported}
    siblings.append(Sibling(path, source.splitlines(), dict(cst_positions(wrapper)), wanted & classes,
                            wanted & functions))
    defs = [s for s in _closure(sib_module.body, wanted) if not (_defined(s) & taken)]
    for s in defs:
        taken.update(_defined(s))
    imports = [s for s in sib_module.body if _is_import(s) and
               not any(isinstance(x, cst.ImportFrom) and x.relative for x in s.body)]
    rest = [a for a in node.names if a not in imported]
    out = list(imports)
    if rest:  # (the names it does not define as classes: still imported from the sibling)
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        out.append(stmt.with_changes(body=[node.with_changes(names=rest)]))
    return out + defs
