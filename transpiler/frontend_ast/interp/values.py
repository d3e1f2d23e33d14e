"""The values every reader shares, defined once: what the interpreter cannot decide
(``Unknown``), the script's own functions and classes, the batch size, and API signatures.

Provenance: a value may carry ``source``, the source expression it came from (a builder's
parameter, a module constant, ``x_train.shape[1]``); :func:`source_of` reads it. The
interpreter's hooks ``Interpreter._parameter_value`` / ``_module_constant`` / ``_arith_result``
are where a reader that tracks sizes wraps the plain values (see interp/core.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import libcst as cst


class Unsupported(Exception):
    """A construct the frontend cannot translate faithfully."""


@dataclass(eq=False)
class Unknown:
    """A value the interpreter cannot decide statically."""

    reason: str = ""
    #: the source expression this value stands for, when known (provenance): the CST
    #: expression the interpreter evaluated to it (a run-time size prints as its code)
    source: "cst.BaseExpression | str | None" = field(default=None, kw_only=True, repr=False)
    #: the Unknown this one was before the interpreter gave it ``source`` (a name read: the
    #: value bound to it, with the expression that computed it there)
    origin: "Unknown | None" = field(default=None, kw_only=True, repr=False)
    #: the scope ``source`` was read in (a reader may look up the static values of the
    #: locals it reads there: a loop variable's current item)
    read_env: Any = field(default=None, kw_only=True, repr=False)


@dataclass(eq=False)
class UnknownSplice(Unknown):
    """A tuple or list display whose ``*starred`` part is not known statically
    (``(None, *x_train.shape[2:])``): run-time data like any Unknown, which also says what is
    known around the star, so that a reader may rebuild it once the number of items the star
    gives is decided elsewhere (an ``Input`` shape, by the layer it is handed to)."""

    #: the items before the star, as evaluated
    head: tuple = ()
    #: the starred expression (``x_train.shape[2:]``)
    star: Any = None
    #: the items after the star when they are constants (``(*x.shape[1:], 1)``); None when unread
    tail: tuple | None = ()


@dataclass(eq=False)
class ClassRef:
    """A class the script defines. ``kind`` is the reader's: ``layer``/``model`` (Keras),
    ``module``/``plain`` (torch); ``env`` is where it was defined (None: module level)."""

    node: cst.ClassDef
    env: Any = None
    kind: str = ""
    base: "ClassRef | None" = None

    @property
    def is_module(self) -> bool:
        return self.kind == "module"

    def method(self, name: str) -> cst.FunctionDef | None:
        for stmt in self.node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        return self.base.method(name) if self.base is not None else None


@dataclass(eq=False)
class FunctionRef:
    """A function the script defines; ``env`` is the scope it closes over (None: globals)."""

    node: cst.FunctionDef
    env: Any = None


@dataclass(frozen=True)
class BatchDim:
    """The batch size (``x.size(0)``, ``tf.shape(x)[0]``): known only at run time; ``value``
    is the tensor it was read from, when the reader keeps it."""

    value: Any = None


@dataclass(frozen=True)
class Signature:
    """A framework function's parameters: names in order, and the defaults it has."""

    names: tuple[str, ...]
    defaults: dict[str, Any]

    @classmethod
    def parse(cls, text: str) -> "Signature":
        names, defaults = [], {}
        for part in filter(None, (p.strip() for p in text.split(";"))):
            name, eq, default = part.partition("=")
            names.append(name.strip())
            if eq:
                defaults[name.strip()] = ast.literal_eval(default.strip())
        return cls(tuple(names), defaults)

    def bind(self, name: str, args: list, kwargs: dict[str, Any], known_only: bool = False) -> dict[str, Any]:
        """A call's arguments by parameter name (``name``: the callee, for messages). Too many
        positional arguments, one given twice or (``known_only``) an unknown keyword is
        :class:`Unsupported`."""
        if len(args) > len(self.names):
            raise Unsupported(f"{name}: too many positional arguments")
        values: dict[str, Any] = dict(zip(self.names, args))
        for key, value in kwargs.items():
            if known_only and key not in self.names:
                raise Unsupported(f"{name}: unknown argument {key!r}")
            if key in values:
                raise Unsupported(f"{name}: argument {key!r} given twice")
            values[key] = value
        return values


def source_of(value: Any) -> str | None:
    """The source expression ``value`` came from, if it carries one."""
    return getattr(value, "source", None)


def contains(value: Any, types: type | tuple[type, ...]) -> bool:
    """Whether ``value``, or an item of it (of lists, tuples, dicts: keys and values, nested),
    is one of ``types``."""
    if isinstance(value, types):
        return True
    if isinstance(value, dict):
        return any(contains(k, types) or contains(v, types) for k, v in value.items())
    return isinstance(value, (list, tuple)) and any(contains(v, types) for v in value)
