"""What both source interpreters (Keras and PyTorch frontends) share: scopes, control-flow
signals and the Python operators they evaluate on static values."""

from __future__ import annotations

import builtins
import operator
from typing import Any

import libcst as cst

from transpiler.ir.sizes import observe_compare, observe_range


class Env:
    """A scope chain: locals, then the enclosing function's, then module globals."""

    def __init__(self, parent: "Env | None" = None):
        self.vars: dict[str, Any] = {}
        self.parent = parent
        #: ``(name, value) -> value`` applied on every binding (module constants become
        #: named sizes: frontend_ast.size_names)
        self.bind_hook = None

    def lookup(self, name: str) -> Any:
        env: Env | None = self
        while env is not None:
            if name in env.vars:
                return env.vars[name]
            env = env.parent
        raise KeyError(name)

    def set(self, name: str, value: Any) -> None:
        self.vars[name] = value if self.bind_hook is None else self.bind_hook(name, value)


class Return(Exception):
    """``return value`` inside an interpreted function."""

    def __init__(self, value: Any):
        self.value = value


class Break(Exception):
    pass


class Continue(Exception):
    pass


#: builtins an interpreter may call on static values
SAFE_BUILTINS = {name: getattr(builtins, name) for name in (
    "range", "len", "int", "float", "min", "max", "tuple", "list", "dict", "zip", "enumerate",
    "abs", "round", "sum", "str", "reversed", "sorted", "bool", "any", "all", "isinstance")}
SAFE_BUILTINS["range"] = observe_range(range)  # a loop count decides structure: see ir.sizes
BINOPS = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
    cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}
#: (a comparison the program makes on a size decides its structure by the number: see ir.sizes)
CMPOPS = {
    cst.Equal: observe_compare(operator.eq), cst.NotEqual: observe_compare(operator.ne),
    cst.LessThan: observe_compare(operator.lt), cst.LessThanEqual: observe_compare(operator.le),
    cst.GreaterThan: observe_compare(operator.gt), cst.GreaterThanEqual: observe_compare(operator.ge),
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
    cst.Is: operator.is_, cst.IsNot: operator.is_not,
}
