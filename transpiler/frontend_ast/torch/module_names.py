"""The module level of a torch script as printers need it (``ir.program.ModuleNames``): the
names it binds (and what each imports), its classes and its layer models, read off the
frontend once it has run, so that no printer reaches into the frontend (issue 17 item 3)."""

from __future__ import annotations

from transpiler.frontend_ast.torch.values import Ref
from transpiler.ir.program import ClassFacts, ModuleNames


def module_names(fe) -> ModuleNames:
    """What ``fe`` (a ``TorchFrontend`` that has run) bound at module level."""
    source = fe.source_file
    names = {name: value.path if isinstance(value, Ref) else None for name, value in fe.globals.vars.items()}
    classes = {name: ClassFacts(ref.kind, source.sid(ref.node), source.sid(ref.method("__init__")))
               for name, ref in fe.classes.items()}
    return ModuleNames(names, classes, set(fe.layer_models))
