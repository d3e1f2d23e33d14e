"""One registry for what is kept per canonical op (shape rules, emitters per framework).

``OpRegistry`` is a dict from op name to a function, filled by decorator: a name must be in
the ops table (``ir/ops.py``) and may be registered once.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from transpiler.ir import ops as ops_table

F = TypeVar("F", bound=Callable)


class OpRegistry(dict):
    """``{op name: function}``; ``what`` names the entries in errors ("torch emitter")."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def register(self, *ops: str) -> Callable[[F], F]:
        """Decorator: register the function for ``ops`` (refuses duplicates and unknown ops)."""

        def deco(fn: F) -> F:
            for name in ops:
                ops_table.get(name)  # must be in the table
                if name in self:
                    raise ValueError(f"{self.what} for {name} registered twice")
                self[name] = fn
            return fn

        return deco
