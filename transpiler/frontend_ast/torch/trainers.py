"""Trainer classes: a plain class holding the model, its loader and optimizer, whose methods
train (the DDP tutorial series' ``Trainer``)::

    class Trainer:
        def __init__(self, model, train_data, optimizer, save_every):
            self.model = model                 # what the program passed in
            ...
        def _run_batch(self, source, targets): # one training step
            self.optimizer.zero_grad(); loss = F.cross_entropy(self.model(source), targets)
            loss.backward(); self.optimizer.step()
        def _run_epoch(self, epoch):
            for source, targets in self.train_data:
                self._run_batch(source, targets)
        def train(self, max_epochs): ...

Its methods are read by the reader of module-level training code, as the program calls
them: ``Trainer(...)`` reads ``__init__`` with ``self`` an instance whose attributes hold what
was assigned (``self.model`` the model), ``trainer.train(n)`` reads ``train`` with the
instance, and so on; a step method becomes one training step per call under a tape
(``steps.read_step_function``), ``self.model`` naming the model. Methods the program never
calls are read with their parameters unknown. The class is kept, its torch calls translated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.frontend_ast.torch.reader_values import OTHER, V


@dataclass(eq=False)
class TrainerClassV(V):
    """A trainer class of the script (calling it builds an instance)."""

    node: cst.ClassDef


@dataclass(eq=False)
class InstanceV(V):
    """An instance of a trainer class: what its attributes hold."""

    cls: TrainerClassV
    attrs: dict = field(default_factory=dict)


def _methods(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    return {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}


def _calls_backward(node) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            if isinstance(n.func, cst.Attribute) and n.func.attr.value == "backward":
                found.append(n)

    node.visit(Finder())
    return bool(found)


def is_trainer_class(stmt: cst.ClassDef) -> bool:
    """A class with no base classes, an ``__init__`` and a method that calls ``backward()``."""
    methods = _methods(stmt)
    return not stmt.bases and "__init__" in methods and any(
        _calls_backward(fn) for name, fn in methods.items() if name != "__init__")


def construct(reader, cls: TrainerClassV, node: cst.Call, args) -> V:
    """``Trainer(model, loader, optimizer, ...)``: ``__init__`` read with a new instance."""
    instance = InstanceV(cls)
    init = _methods(cls.node).get("__init__")
    if init is not None:
        call_method(reader, instance, "__init__", args)
    return instance


def call_method(reader, instance: InstanceV, name: str, args) -> V:
    fn = _methods(instance.cls.node).get(name)
    if fn is None:
        return OTHER
    values = [v for a, v in args if a.keyword is None and not a.star]
    kw = {a.keyword.value: v for a, v in args if a.keyword is not None}
    return reader.read_function(fn, [instance] + values, kw, key=f"{instance.cls.node.name.value}.{name}")


def held_callable(instance: InstanceV, name: str) -> V | None:
    """``self.model(x)``: what the attribute ``name`` holds, when it is not one of the class's
    methods (the model, a loss object the instance was given)."""
    if name in _methods(instance.cls.node) or name not in instance.attrs:
        return None
    held = instance.attrs[name]
    return None if held is OTHER else held


def attribute(instance: InstanceV, name: str) -> V:
    return instance.attrs.get(name, OTHER)


def assigned(reader, target: cst.Attribute, value, scope) -> bool:
    """``self.model = model`` in a method: the instance's attribute holds the value."""
    base = reader.peek(target.value, scope)
    if not isinstance(base, InstanceV):
        return False
    base.attrs[target.attr.value] = value
    return True


def name_in_scope(scope, model, preferred: str) -> str:
    """How the code of ``scope`` names ``model``: ``preferred`` (the text the optimizer was
    made with) where it still names it, else a variable, else an attribute of ``self``."""
    if preferred.isidentifier() and scope.lookup(preferred) is model:
        return preferred
    for name, value in scope.vars.items():
        if value is model:
            return name
    this = scope.vars.get("self")
    if isinstance(this, InstanceV):
        for name, value in this.attrs.items():
            if value is model:
                return f"self.{name}"
    return preferred


def unread_methods(reader) -> list[tuple[InstanceV | None, cst.FunctionDef, str]]:
    """The methods of the script's trainer classes the program never called."""
    out = []
    for cls in reader.trainer_classes.values():
        for name, fn in _methods(cls.node).items():
            key = f"{cls.node.name.value}.{name}"
            if key not in reader.read_functions:
                out.append((fn, key))
    return out


def read_plain_classes(reader) -> None:
    """The program's other classes that use torch outside a model (``AverageMeter`` reducing its
    sums with ``torch.tensor`` and ``dist.all_reduce``): each method read as a function nothing
    calls (its parameters unknown, ``self`` an instance of the class), its torch code translated
    as anywhere else; a class with an untranslated part is one marked stub (its first reason)."""
    from transpiler.cst_fast import walk

    for cls in reader.plain_classes:
        plain = TrainerClassV(cls)
        instance = InstanceV(plain)
        name = cls.name.value
        for method, fn in _methods(cls).items():
            reader.guessing += 1
            try:
                params = reader._guess_params(fn)
                reader.read_function(fn, [instance] + params[1:], {}, key=f"{name}.{method}")
            finally:
                reader.guessing -= 1
        inside = {reader.sid(n) for n in walk(cls)}
        failed = [ts for nid, ts in reader.facts.items() if nid in inside and ts.kind == "stub"]
        if failed or any(not isinstance(s, (cst.FunctionDef, cst.SimpleStatementLine)) for s in cls.body.body) or \
                any(isinstance(s, cst.SimpleStatementLine) and _mentions_torch(reader, s) for s in cls.body.body):
            gone = {(ts.span, ts.config) for ts in failed}
            reader.program.diagnostics[:] = [d for d in reader.program.diagnostics if not (
                d.severity == "stub" and (d.span, d.message) in gone)]
            reason = min(failed, key=lambda ts: (ts.span.line, ts.span.col) if ts.span else (0, 0)).config \
                if failed else "uses PyTorch outside its methods"
            reader.stub(cls, f"class {name}: {reason}")


def _mentions_torch(reader, node) -> bool:
    from transpiler.frontend_ast.torch.reader_values import _mentions

    return _mentions(node, reader.torch_names())


def fold_failures(reader) -> None:
    """A trainer class with an untranslated part is one marked stub (its first reason), as it
    was before its methods were read: a class half translated around stubs is no use."""
    from transpiler.cst_fast import walk

    for cls in reader.trainer_classes.values():
        inside = {reader.sid(n) for n in walk(cls.node)}
        failed = [(nid, ts) for nid, ts in reader.facts.items() if nid in inside and ts.kind == "stub"]
        if not failed:
            continue
        gone = {(ts.span, ts.config) for _nid, ts in failed}
        reader.program.diagnostics[:] = [d for d in reader.program.diagnostics if not (
            d.severity == "stub" and (d.span, d.message) in gone)]
        reason = min(failed, key=lambda f: (f[1].span.line, f[1].span.col) if f[1].span else (0, 0))[1].config
        reader.stub(cls.node, f"class {cls.node.name.value}: {reason}")
