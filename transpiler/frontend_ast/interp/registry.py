"""Dispatch tables of the interpreter: handlers chosen by the type of a value, not if-chains.

A reader registers its hooks in class-level tables that extend its base's::

    class KerasFrontend(Interpreter):
        CALLS, ATTRIBUTES, SUBSCRIPTS, UNARY, OPERANDS, COMPARANDS, SYNTAX = Interpreter.extended_tables()

        @CALLS.register(LayerObj)
        def _call_layer_obj(self, func, args, kwargs, node): ...

``TypeTable`` picks the handler of the most specific registered type along the value's MRO
(``ArrayVal`` before ``Unknown``); ``RuleTable`` tries rules in order on an operand pair
(a reader's rules before its base's), ``NodeRules`` on an expression's syntax by libcst node
type; each rule may decline by returning ``PASS``.
"""

from __future__ import annotations

from typing import Any, Callable

#: what a handler returns to decline (the next rule, or the interpreter's default, applies)
PASS = object()


class TypeTable:
    """Handlers keyed by value type, looked up along the MRO (cached per type)."""

    def __init__(self, parent: "TypeTable | None" = None):
        self._own: dict[type, Callable] = {}
        self._parent = parent
        self._cache: dict[type, Callable | None] = {}

    def extend(self) -> "TypeTable":
        """A table for a subclass: its own entries first, then this one's."""
        return TypeTable(self)

    def register(self, *types: type) -> Callable[[Callable], Callable]:
        def deco(fn: Callable) -> Callable:
            for typ in types:
                if typ in self._own:
                    raise ValueError(f"{typ.__name__} is registered twice")
                self._own[typ] = fn
            self._cache.clear()
            return fn
        return deco

    def _find(self, typ: type) -> Callable | None:
        table: TypeTable | None = self
        while table is not None:
            fn = table._own.get(typ)
            if fn is not None:
                return fn
            table = table._parent
        return None

    def lookup(self, typ: type) -> Callable | None:
        try:
            return self._cache[typ]
        except KeyError:
            pass
        found = None
        for klass in typ.__mro__:
            found = self._find(klass)
            if found is not None:
                break
        self._cache[typ] = found
        return found

    def apply(self, interp: Any, value: Any, *rest: Any) -> Any:
        """``handler(interp, value, *rest)`` of ``value``'s type, else PASS."""
        handler = self.lookup(type(value))
        return PASS if handler is None else handler(interp, value, *rest)


class RuleTable:
    """Rules on a pair of operands, each for the operand types it names (either side)."""

    def __init__(self, parent: "RuleTable | None" = None):
        self._own: list[tuple[tuple[type, ...], Callable]] = []
        self._parent = parent
        self._all: list | None = None

    def extend(self) -> "RuleTable":
        return RuleTable(self)

    def register(self, *types: type) -> Callable[[Callable], Callable]:
        def deco(fn: Callable) -> Callable:
            self._own.append((types, fn))
            self._all = None
            return fn
        return deco

    def rules(self) -> list[tuple[tuple[type, ...], Callable]]:
        return self._own + (self._parent.rules() if self._parent is not None else [])

    def apply(self, interp: Any, left: Any, right: Any, *rest: Any) -> Any:
        """The first rule for ``left``'s or ``right``'s type that does not decline, else PASS."""
        if self._all is None:
            self._all = self.rules()
        for types, fn in self._all:
            if isinstance(left, types) or isinstance(right, types):
                result = fn(interp, left, right, *rest)
                if result is not PASS:
                    return result
        return PASS


class NodeRules:
    """Rules on the syntax of an expression, keyed by its libcst node type (several per type:
    a reader's before its base's, each in the order registered)."""

    def __init__(self, parent: "NodeRules | None" = None):
        self._own: dict[type, list[Callable]] = {}
        self._parent = parent
        self._cache: dict[type, tuple[Callable, ...]] = {}

    def extend(self) -> "NodeRules":
        return NodeRules(self)

    def register(self, *types: type) -> Callable[[Callable], Callable]:
        def deco(fn: Callable) -> Callable:
            for typ in types:
                self._own.setdefault(typ, []).append(fn)
            self._cache.clear()
            return fn
        return deco

    def rules(self, typ: type) -> tuple[Callable, ...]:
        found = self._cache.get(typ)
        if found is None:
            own = tuple(self._own.get(typ, ()))
            found = self._cache[typ] = own + (self._parent.rules(typ) if self._parent is not None else ())
        return found
