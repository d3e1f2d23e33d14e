"""Scopes and the control-flow signals of interpreted code."""

from __future__ import annotations

from typing import Any


class Env:
    """A scope chain: locals, then the enclosing function's, then module globals."""

    __slots__ = ("vars", "parent", "bind_hook")

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

    def find(self, name: str, default: Any = None) -> Any:
        """What ``name`` is bound to, else ``default``."""
        env: Env | None = self
        while env is not None:
            if name in env.vars:
                return env.vars[name]
            env = env.parent
        return default

    def child(self) -> "Env":
        """An inner scope (a comprehension's) of the same kind."""
        return type(self)(self)

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
