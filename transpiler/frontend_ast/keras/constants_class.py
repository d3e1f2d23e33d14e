"""A class of the script that only holds constants: ``class Config: MAX_LEN = 256``.

keras.io scripts keep their hyperparameters as class attributes (``config = Config()``,
then ``layers.Input((config.MAX_LEN,))``, ``layers.Resizing(config.image_size, ...)``).
The reader reads such a class statically: its body is only assignments of names (each
evaluated in the class's namespace, so ``buffer_size = batch_size * 2`` reads the line
above), it has no methods and no base but ``object``, and nothing in the script assigns an
attribute of the class or of a name bound to an instance of it. A ``@dataclass`` decorator
changes nothing there (no annotated fields: no field, the same class attributes). ``Config`` and ``Config()``
then read their attributes as those values; anything else about the class stays unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.cst_fast import nodes_of, walk
from transpiler.frontend_ast.interp import Env, Unknown
from transpiler.frontend_ast.keras.expressions import KerasExpressions


@dataclass(eq=False)
class ConstantsClass:
    """A constants-only class of the script (and its instances made without arguments)."""

    name: str
    values: dict[str, Any] = field(default_factory=dict)


def _is_dataclass(decorator: cst.BaseExpression) -> bool:
    """``@dataclass`` / ``@dataclasses.dataclass`` (or a call of it, ``@dataclass(frozen=True)``):
    on a body of plain assignments (no annotated fields) it adds no field and changes no class
    attribute, so the class reads as without it."""
    if isinstance(decorator, cst.Call):
        decorator = decorator.func
    return cst.Module([]).code_for_node(decorator) in ("dataclass", "dataclasses.dataclass")


class KerasConstantClasses:
    """Mixin of the Keras reader: constants-only classes read statically."""

    def _constants_class(self, stmt: cst.ClassDef, env: Env) -> ConstantsClass | None:
        if not all(_is_dataclass(d.decorator) for d in stmt.decorators) or any(arg.keyword is not None or not (
                isinstance(arg.value, cst.Name) and arg.value.value == "object") for arg in stmt.bases):
            return None
        assigns = []
        for line in stmt.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                return None
            for small in line.body:
                if isinstance(small, cst.Pass) or isinstance(small, cst.Expr) and isinstance(
                        small.value, (cst.SimpleString, cst.ConcatenatedString)):
                    continue
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)):
                    return None
                assigns.append(small)
        if not assigns or self._constants_mutated(stmt.name.value, {a.targets[0].target.value for a in assigns}):
            return None
        namespace = Env(env)
        values: dict[str, Any] = {}
        for small in assigns:
            value = self._eval(small.value, namespace)
            name = small.targets[0].target.value
            namespace.vars[name] = values[name] = value
        return ConstantsClass(stmt.name.value, values)

    def _constants_mutated(self, class_name: str, attrs: set[str]) -> bool:
        """Something in the script assigns one of ``attrs`` on the class, or on a name bound
        to ``class_name(...)`` anywhere (the static values would then be stale)."""
        holders = {class_name}
        for node in nodes_of(self.module, cst.Assign):
            value = node.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == class_name:
                holders |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
        for node in walk(self.module):
            targets = []
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in (
                    "setattr", "delattr") and node.args and isinstance(node.args[0].value, cst.Name) \
                    and node.args[0].value.value in holders:
                return True
            for target in targets:
                for attr in [target, *nodes_of(target, cst.Attribute)]:
                    if isinstance(attr, cst.Attribute) and isinstance(attr.value, cst.Name) \
                            and attr.value.value in holders:
                        return True
        return False


def _constants_call(self, func: ConstantsClass, args, kwargs, node):
    """``Config()``: an instance reads the class's constants (with arguments: unknown)."""
    if args or kwargs:
        return Unknown(f"{func.name}(...)")
    return func


def _constants_attribute(self, base: ConstantsClass, attr: str, node):
    if attr in base.values:
        return base.values[attr]
    return Unknown(f"{base.name}.{attr}")


KerasExpressions.CALLS.register(ConstantsClass)(_constants_call)
KerasExpressions.ATTRIBUTES.register(ConstantsClass)(_constants_attribute)
