"""Sizes with provenance: a size remembers the source expression it came from.

Design (issue 17, item 2). A size known at transpile time is a :class:`Size`, an ``int``
subclass: every piece of code that consumed bare ints (shape rules, the ops table's
``Attr.check``, the weight mapping, comparisons, dict keys) keeps working on the concrete
value, while the size also carries ``expr``, the expression that computes it from the
source program's names (a builder parameter ``width``, a module constant ``NUM_CLASSES``, a
tuple parameter's item ``input_shape[0]``, and ``+ - * // %`` on those, which covers
products, Flatten's ``math.prod`` and the conv/pool output-size formulas). A size known only
at run time is a :class:`SymbolicSize`: the same expression, no value.

Printers render a size through :func:`render` inside a :func:`scope` naming the source
names the generated code can see there: ``nn.Linear(width * 169, width * 2)`` in the
``__init__`` that takes ``width``. Anywhere else a size prints as its number.

Soundness rule: whenever a size escapes as a plain number (printed outside a scope,
``str``/``repr``/``format``, ``int()``/``float()``/``operator.index`` as in ``range(n)``,
``/``, truth tests, or a comparison the source program makes, see :func:`observe_compare`),
the names it depends on are marked *specialised* (:attr:`Sym.specialised`): the generated
code holds the number, not the name, so a printer must not let the name vary there (the
builder keeps its "is translated for ... only" guard (a TODO comment, reported as a warning) for exactly those parameters). Comparisons made by
the transpiler's own shape rules are consistency checks and do not mark; code that emits text
only to inspect it runs under :class:`quiet`.

A helper's or a Layer class's parameter is a :class:`Sym` that remembers the value its caller
passed (:attr:`Sym.arg`): inside the module's class the size prints as the parameter, in the
caller's code as the caller's argument (``ResidualBlock(filters)``), and a size that came out
of a helper reads as what the caller passed. :func:`bind_shapes` runs the other way: concrete
shapes (a checkpoint's) bind the names (``num_classes = 5``).

Why an ``int`` subclass rather than a separate ``Dim`` type everywhere: shape inference, the
layout and selection passes, ``params.expected_shapes`` and the emitters' ``.shape[...]`` reads
do arithmetic, comparisons and indexing on sizes; with a subclass they keep working unchanged and only the places that print code (``lit``)
and the binding hooks are new. The price is the soundness rule above, which catches every
way a number can escape into the output without its name.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any, Iterator

#: operator symbol → (function, precedence)
_OPS = {"+": (operator.add, 1), "-": (operator.sub, 1), "*": (operator.mul, 2),
        "//": (operator.floordiv, 2), "%": (operator.mod, 2), "/": (operator.truediv, 2),
        "**": (operator.pow, 3)}


class Sym:
    """A name of the source program a size comes from.

    ``kind``: ``"param"`` (a builder's or a module class's constructor parameter; ``"placeholder"``:
    one traced with a made-up number, ``is_placeholder``),
    ``"const"`` (a module-level constant), ``"runtime"`` (known only when the program runs).
    """

    __slots__ = ("name", "kind", "specialised", "arg")

    def __init__(self, name: str, kind: str = "param", arg: Any = None):
        self.name = name
        self.kind = kind
        self.specialised: set[str] = set()  # why the number was used instead of the name
        #: a helper's or a class's parameter: the value its caller passed (a size of the
        #: caller's names, or a number), which the caller's code prints as the argument
        self.arg = arg

    def __repr__(self) -> str:
        return f"Sym({self.name!r}, {self.kind!r})"


class Item:
    """``base[index]``: one size of a tuple-valued parameter (``input_shape[0]``)."""

    __slots__ = ("base", "index")

    def __init__(self, base: Sym, index: int):
        self.base = base
        self.index = index


class Op:
    """``left <op> right``; operands are expressions or plain ints."""

    __slots__ = ("op", "left", "right")

    def __init__(self, op: str, left, right):
        self.op = op
        self.left = left
        self.right = right


Expr = Any  # Sym | Item | Op | int | float (a float only inside a Scalar's expression)


def leaves(expr: Expr) -> Iterator[Sym]:
    """The source names ``expr`` depends on, left to right (repeats included)."""
    if isinstance(expr, Sym):
        yield expr
    elif isinstance(expr, Item):
        yield expr.base
    elif isinstance(expr, Op):
        yield from leaves(expr.left)
        yield from leaves(expr.right)


def expr_text(expr: Expr, names: dict[str, str] | None = None) -> str:
    """Python source for ``expr``; ``names`` renames source names (``width`` → ``self.width``)."""
    return _text(expr, names or {}, 0)


def _text(expr: Expr, names: dict[str, str], outer: int, right: bool = False) -> str:
    if isinstance(expr, (int, float)):
        number = int(expr) if isinstance(expr, int) else float(expr)
        return repr(number) if expr >= 0 or outer == 0 else f"({number!r})"
    if isinstance(expr, Sym):
        return names.get(expr.name, expr.name)
    if isinstance(expr, Item):
        return f"{names.get(expr.base.name, expr.base.name)}[{expr.index}]"
    op, prec = expr.op, _OPS[expr.op][1]
    left, rhs = expr.left, expr.right
    if op == "*" and isinstance(left, int) and not isinstance(rhs, int):
        left, rhs = rhs, left  # ``width * 2`` rather than ``2 * width``
    if op == "**":  # (right-associative: the left operand of equal precedence needs parentheses)
        text = f"{_text(left, names, prec + 1)} ** {_text(rhs, names, prec)}"
        return f"({text})" if prec < outer else text
    text = f"{_text(left, names, prec)} {op} {_text(rhs, names, prec, right=True)}"
    if prec < outer or (right and prec == outer):
        return f"({text})"
    return text


def _expr_of(value) -> Expr | None:
    return value.expr if isinstance(value, (Size, SymbolicSize, Scalar)) else None


def _number(expr) -> bool:
    return isinstance(expr, (int, float)) and not isinstance(expr, bool)


def _fold(op: str, left: Expr, right: Expr) -> Expr:
    """``op`` on two expressions, with the identities and constant folding a reader expects."""
    if _number(left) and _number(right):
        return _OPS[op][0](left, right)
    if op == "/" and _number(left) and isinstance(right, Op) and right.op == "/" and right.left == left == 1:
        return right.right  # 1 / (1 / x) → x
    if op == "+" and isinstance(right, int) and right == 0 or op == "-" and isinstance(right, int) and right == 0:
        return left
    if op == "+" and isinstance(left, int) and left == 0:
        return right
    if op == "*" and (isinstance(right, int) and right == 0 or isinstance(left, int) and left == 0):
        return 0
    if op in ("*", "//") and isinstance(right, int) and right == 1:
        return left
    if op == "*" and isinstance(left, int) and left == 1:
        return right
    if op == "*" and isinstance(right, int) and isinstance(left, Op) and left.op == "*" \
            and isinstance(left.right, int):
        return _fold("*", left.left, left.right * right)  # (w * 13) * 13 → w * 169
    if op == "*" and isinstance(left, int) and isinstance(right, Op) and right.op == "*" \
            and isinstance(right.right, int):
        return _fold("*", right.left, right.right * left)
    if op in ("+", "-") and isinstance(right, int) and isinstance(left, Op) and left.op in ("+", "-") \
            and isinstance(left.right, int):  # (n - 3) + 1 → n - 2
        total = (left.right if left.op == "+" else -left.right) + (right if op == "+" else -right)
        if total == 0:
            return left.left
        return Op("+" if total > 0 else "-", left.left, abs(total))
    if op in ("+", "-") and isinstance(right, int) and right < 0:
        return Op("-" if op == "+" else "+", left, -right)
    return Op(op, left, right)


_QUIET = [0]


class quiet:
    """``with quiet():`` code that prints sizes only to inspect the text (is there a mode
    switch? which helpers?) and does not place it in the output: nothing is specialised."""

    def __enter__(self) -> None:
        _QUIET[0] += 1

    def __exit__(self, *exc) -> None:
        _QUIET[0] -= 1


def specialise(value, why: str) -> None:
    """Mark the names ``value`` depends on as used by their number (see the module doc)."""
    if _QUIET[0]:
        return
    if isinstance(value, (tuple, list)):  # ``(input_shape, filters) != (INPUT_SHAPE, 8)``
        for item in value:
            specialise(item, why)
        return
    expr = _expr_of(value)
    if expr is not None:
        for sym in leaves(expr):
            if why not in sym.specialised:
                sym.specialised.add(why)
                if sym.arg is not None:  # a helper's parameter: the caller's names too
                    for arg in (sym.arg if isinstance(sym.arg, tuple) else (sym.arg,)):
                        specialise(arg, why)


def _arith(op: str, a, b):
    ea, eb = _expr_of(a), _expr_of(b)
    if ea is None and eb is None:
        return _OPS[op][0](int(a), int(b))
    if isinstance(a, SymbolicSize) or isinstance(b, SymbolicSize):
        return SymbolicSize(_fold(op, ea if ea is not None else int.__int__(a),
                                  eb if eb is not None else int.__int__(b)))
    value = _OPS[op][0](int.__int__(a), int.__int__(b))
    expr = _fold(op, ea if ea is not None else int.__int__(a), eb if eb is not None else int.__int__(b))
    return Size(value, expr) if not isinstance(expr, int) else value


def _binary(op: str, reflected: bool = False, plain=None):
    """An arithmetic method of :class:`Size` and :class:`SymbolicSize`: with an int or a
    size the result keeps the provenance; a Size with a float gives a :class:`Scalar`;
    anything else uses the number through ``plain`` (specialised), or is NotImplemented.
    (A :class:`Scalar`'s: :func:`_float_arith`.)"""
    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        if isinstance(self, Scalar):
            return _float_arith(op, a, b)
        if _is_int(other):
            return _arith(op, a, b)
        if isinstance(self, Size) and isinstance(other, float):
            return _float_arith(op, a, b)
        return NotImplemented if plain is None else _plain_op(plain, a, b)
    return method


def _float_binary(op: str, reflected: bool = False):
    """An arithmetic method whose result is a float (:func:`_float_arith`)."""
    def method(self, other):
        return _float_arith(op, other, self) if reflected else _float_arith(op, self, other)
    return method


_MUL, _RMUL = _binary("*", plain=operator.mul), _binary("*", reflected=True, plain=operator.mul)


def _escape(why: str, fn):
    """A method that hands out the number (``fn`` of it): the names behind it are specialised."""
    def method(self, *args):
        specialise(self, why)
        return fn(_plain_number(self), *args)
    return method


def _plain_unary(fn):
    def method(self):
        return _plain_op(fn, self)
    return method


def _plain_binary(fn, reflected: bool = False):
    def method(self, other):
        return _plain_op(fn, other, self) if reflected else _plain_op(fn, self, other)
    return method


class _Provenance:
    """What :class:`Size` and :class:`Scalar` share: the expression, ``+`` and ``-`` and
    ``/`` that keep it, the ways the number escapes into code (the soundness rule of the
    module doc), and copies that keep the provenance."""

    __slots__ = ()

    def __new__(cls, value, expr: Expr):
        self = super().__new__(cls, value)
        self.expr = expr
        return self

    __add__, __radd__ = _binary("+"), _binary("+", reflected=True)
    __sub__, __rsub__ = _binary("-"), _binary("-", reflected=True)
    # a quotient is a Scalar that keeps the provenance (``x / filters``)
    __truediv__, __rtruediv__ = _float_binary("/"), _float_binary("/", reflected=True)
    __int__ = _escape("int()", int)
    __float__ = _escape("float()", float)
    __bool__ = _escape("truth test", bool)
    __repr__ = __str__ = _escape("printed", repr)
    __format__ = _escape("printed", format)

    def __reduce__(self):  # deep copies and pickles keep the size
        return (type(self), (_plain_number(self), self.expr))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Size(_Provenance, int):
    """A size known at transpile time that remembers where it came from (see the module doc)."""

    # (no __slots__: CPython refuses them on int subclasses)

    # arithmetic keeps the provenance (with a float: a Scalar)
    __floordiv__ = _binary("//", plain=operator.floordiv)
    __rfloordiv__ = _binary("//", reflected=True, plain=operator.floordiv)
    __mod__, __rmod__ = _binary("%", plain=operator.mod), _binary("%", reflected=True, plain=operator.mod)

    def __mul__(self, other):
        if isinstance(other, (tuple, list, str)):  # [0] * n: the number decides a structure
            specialise(self, "repetition")
            return int.__int__(self) * other
        return _MUL(self, other)

    def __rmul__(self, other):
        if isinstance(other, (tuple, list, str)):
            specialise(self, "repetition")
            return other * int.__int__(self)
        return _RMUL(self, other)

    def __pow__(self, other, mod=None):
        if mod is None and type(other) is int and 1 <= other <= 4:  # ``factor ** 2``: a product
            out = self
            for _ in range(other - 1):
                out = out * self
            return out
        if mod is None and isinstance(other, float):  # a Scalar that keeps the provenance
            return _float_arith("**", self, other)
        return _plain_op(operator.pow, self, other)

    __rpow__ = _plain_binary(operator.pow, True)

    # everything else uses the number: the names behind it are specialised (_Provenance)
    __neg__, __abs__ = _plain_unary(operator.neg), _plain_unary(abs)
    __index__ = _escape("index", int)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, SymbolicSize)


def _plain_op(fn, *args):
    for a in args:
        specialise(a, "arithmetic")
    plain = [int.__int__(a) if isinstance(a, Size) else float.__float__(a) if isinstance(a, Scalar) else a
             for a in args]
    return fn(*plain)


def _float_arith(op: str, a, b):
    """``a <op> b`` where the result is a float: a :class:`Scalar` when a side has a
    provenance, else the plain number; anything but numbers and sizes: NotImplemented."""
    if not all(isinstance(v, (int, float, Size, Scalar)) and not isinstance(v, bool) for v in (a, b)):
        return NotImplemented
    ea, eb = _expr_of(a), _expr_of(b)
    na, nb = _plain_number(a), _plain_number(b)
    try:
        value = _OPS[op][0](na, nb)
    except (ZeroDivisionError, OverflowError):
        return _plain_op(_OPS[op][0], a, b)  # (raises as Python does)
    if isinstance(value, complex):  # ``(-8) ** 0.5``
        return _plain_op(_OPS[op][0], a, b)
    value = float(value)
    if ea is None and eb is None:
        return value
    expr = _fold(op, ea if ea is not None else na, eb if eb is not None else nb)
    return Scalar(value, expr) if not _number(expr) else value


def _plain_number(value):
    if isinstance(value, Size):
        return int.__int__(value)
    if isinstance(value, Scalar):
        return float.__float__(value)
    return value


class Scalar(_Provenance, float):
    """A float the program computes from sizes (``1 / filters ** 0.5``) that remembers its
    expression, as :class:`Size` does for ints; the same soundness rule: the number escaping
    (printed, a truth test, ``int()``, other arithmetic) specialises the names behind it."""

    __mul__, __rmul__ = _float_binary("*"), _float_binary("*", reflected=True)

    def __pow__(self, other, mod=None):
        return _float_arith("**", self, other) if mod is None else _plain_op(pow, self, other, mod)

    def __rpow__(self, other):
        return _float_arith("**", other, self)

    __floordiv__, __rfloordiv__ = _plain_binary(operator.floordiv), _plain_binary(operator.floordiv, True)
    __mod__, __rmod__ = _plain_binary(operator.mod), _plain_binary(operator.mod, True)
    __neg__, __abs__ = _plain_unary(operator.neg), _plain_unary(abs)
    __round__ = _escape("round()", round)
    __trunc__, __floor__, __ceil__ = (_escape("int()", f) for f in (math.trunc, math.floor, math.ceil))


def as_float(value: Any) -> Any:
    """``float(value)`` that keeps a size's provenance (a :class:`Scalar` for a size)
    instead of specialising it: a scale or an offset read from the program's numbers."""
    if isinstance(value, Scalar):
        return value
    if isinstance(value, Size):
        return Scalar(float(int.__int__(value)), value.expr)
    return float(value)


def divisor(value: Any) -> Any:
    """``x`` when ``value`` is a :class:`Scalar` computed as ``1 / x`` (``x`` a size or a
    scalar of the program's names), else None: ``t * (1 / x)`` prints as ``t / x``."""
    expr = _expr_of(value)
    if not (isinstance(value, Scalar) and isinstance(expr, Op) and expr.op == "/" and _number(expr.left)
            and expr.left == 1 and not _number(expr.right)):
        return None
    return Scalar(float(expr.left) / float.__float__(value), expr.right)


class SymbolicSize:
    """A size known only when the program runs: an expression without a value.

    Arithmetic with ints and sizes gives symbolic sizes; anything that needs the number
    (a comparison, ``int()``, a truth test) raises ``TypeError``, which a shape rule turns
    into "not known statically".
    """

    __slots__ = ("expr",)

    def __init__(self, expr: Expr):
        self.expr = expr

    __add__, __radd__ = _binary("+"), _binary("+", reflected=True)
    __sub__, __rsub__ = _binary("-"), _binary("-", reflected=True)
    __mul__, __rmul__ = _binary("*"), _binary("*", reflected=True)
    __floordiv__, __rfloordiv__ = _binary("//"), _binary("//", reflected=True)
    __mod__ = _binary("%")

    def _no_value(self, *_args):
        raise TypeError(f"the size {expr_text(self.expr)} is known only at run time")

    __int__ = __index__ = __float__ = __bool__ = _no_value
    __lt__ = __le__ = __gt__ = __ge__ = _no_value

    def __repr__(self):
        return f"SymbolicSize({expr_text(self.expr)})"


class RuntimeSizeLeak(NotImplementedError):
    """A size computed at run time was used by its (stand-in) number where code needs it."""


def runtime_leaks(values) -> list[str]:
    """The run-time sizes among ``values`` whose number was used (specialised), as text
    (a builder's parameter the program passes a run-time size counts as that size)."""
    out = []
    for value in values:
        sym = symbol_of(value)
        if sym is not None and sym.specialised and runtime_symbol(value) is not None:
            out.append(f"{runtime_symbol(value).arg} ({', '.join(sorted(sym.specialised))})")
    return out


def runtime_symbol(value: Any) -> Sym | None:
    """The run-time size ``value`` stands for: its own :class:`Sym` when that is of kind
    ``"runtime"``, or, for a parameter (a builder's, a class's) the program passed a
    run-time size, that size's; None for anything else."""
    sym = symbol_of(value)
    seen = 0
    while sym is not None and seen < 32:
        if sym.kind == "runtime":
            return sym
        arg = sym.arg
        if isinstance(arg, tuple) and isinstance(value, tuple) and len(arg) == len(value):
            found = [runtime_symbol(a) for a in arg]
            return next((f for f in found if f is not None), None)
        sym = symbol_of(arg) if arg is not None else None
        value = arg
        seen += 1
    return None


def runtime_sizes_in(values) -> dict[str, "Size"]:
    """The run-time sizes (leaves of kind ``"runtime"``) in ``values`` (nested tuples, lists
    and dicts of sizes), by name, each as a size standing for that name alone."""
    found: dict[str, Size] = {}
    # (a parameter passed a run-time size: that size)
    for value, sym in _leaves_in(values, (Size,), lambda sym: sym.kind != "runtime"):
        if sym.kind == "runtime" and sym.name not in found:
            found[sym.name] = Size(int.__int__(value) if value.expr is sym else 1, sym)
    return found


def specialised_runtime(values) -> list[str]:
    """Every run-time size in ``values`` (nested tuples, lists and dicts of sizes; a
    parameter's argument followed) whose number was used, as text: the check that no
    stand-in number reached the output, whichever object of that size was printed."""
    def stop(sym: Sym) -> bool:
        return sym.kind == "runtime" and bool(sym.specialised)

    return [f"{sym.arg} ({', '.join(sorted(sym.specialised))})"
            for _, sym in _leaves_in(values, (Size, SymbolicSize), lambda sym: not stop(sym)) if stop(sym)]


def _leaves_in(values, types: tuple, follow) -> Iterator[tuple[Any, Sym]]:
    """``(size, name)`` for each name each size of ``types`` in ``values`` (nested tuples,
    lists and dicts) depends on, each name once; where ``follow(name)``, the sizes of the
    argument a parameter was passed too."""
    seen: set[int] = set()

    def walk(value, depth: int) -> Iterator[tuple[Any, Sym]]:
        if isinstance(value, types):
            for sym in leaves(value.expr):
                if id(sym) in seen:
                    continue
                seen.add(id(sym))
                yield value, sym
                if follow(sym) and sym.arg is not None and depth < 16:
                    yield from walk(sym.arg, depth + 1)
        elif isinstance(value, (tuple, list)):
            for v in value:
                yield from walk(v, depth)
        elif isinstance(value, dict):
            for v in value.values():
                yield from walk(v, depth)

    return walk(values, 0)


def carries_runtime(value: Any) -> bool:
    """True when ``value`` (a size, or a tuple of sizes) depends on a run-time size."""
    if isinstance(value, (tuple, list)):
        return any(carries_runtime(v) for v in value)
    expr = _expr_of(value)
    if expr is None:
        return False
    for sym in leaves(expr):
        if sym.kind == "runtime" or (sym.arg is not None and carries_runtime(sym.arg)):
            return True
    return False


# -- making sizes -------------------------------------------------------------------

def named(value: Any, name: str, kind: str = "param", arg: Any = None) -> Any:
    """``value`` bound to the source name ``name``: an int becomes a :class:`Size` whose
    expression is the name, a tuple of ints a tuple of ``name[i]`` sizes; anything else
    (floats, strings, bools, layers) comes back unchanged."""
    if isinstance(value, bool) or not isinstance(value, (int, tuple)):
        return value
    sym = Sym(name, kind, arg)
    if isinstance(value, int):
        return Size(int.__int__(value), sym)
    if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(Size(int.__int__(v), Item(sym, i)) for i, v in enumerate(value))
    return value


def is_placeholder(value: Any) -> bool:
    """A size computed from a number the reader made up for a caller's argument (``kind``
    ``"placeholder"``: a required constructor parameter traced without its value), whose
    number is no fact of the program: a consistency check on it (``embed_dim % num_heads``)
    cannot fail for the caller's numbers here, only for the made-up ones."""
    expr = _expr_of(value)
    return expr is not None and any(sym.kind == "placeholder" for sym in leaves(expr))


def runtime(name: str) -> SymbolicSize:
    """A size the program computes when it runs (``len(chars)``), named ``name``."""
    return SymbolicSize(Sym(name, "runtime"))


def symbol_of(value: Any) -> Sym | None:
    """The :class:`Sym` a value made by :func:`named` stands for (a tuple: its items' base)."""
    if isinstance(value, tuple) and value and isinstance(value[0], Size) and isinstance(value[0].expr, Item):
        return value[0].expr.base
    expr = _expr_of(value)
    return expr if isinstance(expr, Sym) else None


def observe_compare(fn):
    """``fn`` (an operator the source program's comparisons use) marking the sizes it
    compares as specialised: the program's structure then depends on their numbers."""

    def compare(a, b):
        specialise(a, "compared")
        specialise(b, "compared")
        return fn(a, b)

    return compare


def observe_arith(fn, reflected: str):
    """``fn`` (an arithmetic operator of the source program) keeping a size's provenance
    with a float on its left (``1.0 / units``, ``0.5 * units``): Python asks ``float``'s
    operator first, which takes the number and leaves no trace."""

    def apply(a, b):
        if type(a) is float and isinstance(b, Size):
            out = getattr(b, reflected)(a)
            if out is not NotImplemented:
                return out
        return fn(a, b)

    return apply


def observe_range(fn):
    """``range`` for the source program: its bounds decide structure by their numbers
    (``operator.index`` does not call an int subclass's ``__index__``)."""

    def counted(*args):
        for a in args:
            specialise(a, "range")
        return fn(*args)

    return counted


# -- printing -----------------------------------------------------------------------

#: a placeholder reads as a name to code that inspects emitted text (is it atomic?)
_MARK = "__transpiler_size{}__"
_MARK_RE = re.compile("__transpiler_size(\\d+)__")


class scope:
    """Where generated code can see source names. Inside ``with scope(names):`` a size
    whose names are all in ``names`` (name → the code that reads it there) renders as a
    placeholder; the printer then places each piece of text it generated with
    :meth:`code` (``__init__``: the expressions) or :meth:`numbers` (other methods: the
    numbers, and the names are marked specialised). ``used`` collects the names placed as code.
    """

    def __init__(self, names: dict[str, str], syms=None, consts: bool = False, alias: bool = True):
        self.names = dict(names)
        #: the very names visible (a helper's ``filters`` is not the builder's ``filters``)
        self.sym_objs = [] if syms is None else list(syms)
        self.syms = None if syms is None else {id(s) for s in self.sym_objs}
        #: module constants are visible too (``nn.Linear(64, NUM_CLASSES)``), unless a
        #: visible parameter has their name
        self.consts = consts
        #: a size from outside that a visible parameter was passed prints as that parameter
        #: (off in a module's own body: its input channels stay a constructor argument)
        self.alias = alias
        self.used: set[str] = set()
        self.entries: list = []  # the sizes rendered as placeholders
        self.visible: list[bool] = []  # per entry: its names are visible (else its number prints)

    def sees(self, sym: Sym) -> bool:
        if sym.kind == "const" and self.consts:
            return sym.name not in self.names
        return sym.name in self.names and (self.syms is None or id(sym) in self.syms)

    def __enter__(self) -> "scope":
        _SCOPES.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _SCOPES.remove(self)

    def _mark(self, value, visible: bool = True) -> str:
        self.entries.append(value)
        self.visible.append(visible)
        return _MARK.format(len(self.entries) - 1)

    def code(self, text: str, names: dict[str, str] | None = None, defer: list | None = None) -> str:
        """``text`` with its sizes as expressions of the visible names (``names``: how
        this piece of code reads them, default the scope's own). A size whose names are not
        visible prints as its number and is specialised, or, with ``defer``, collected
        there for the caller to decide (it may yet become a constructor argument)."""
        def sub(m):
            i = int(m.group(1))
            value = self.entries[i]
            if not self.visible[i]:
                if defer is None:
                    specialise(value, "printed")
                else:
                    defer.append(value)
                return repr(_plain_number(value))
            self.used.update(sym.name for sym in leaves(value.expr) if sym.kind != "const")
            code = expr_text(value.expr, self.names if names is None else names)  # (constants: their name)
            if isinstance(value.expr, Op) and not _whole_operand(m.string, m.start(), m.end(), value.expr.op):
                code = f"({code})"  # inside other arithmetic: ``6.0 / (d * 3)``
            return code
        return _MARK_RE.sub(sub, text)

    def numbers(self, text: str) -> str:
        """``text`` with its sizes as numbers (the names they depend on are specialised)."""
        return _MARK_RE.sub(lambda m: render(self.entries[int(m.group(1))], plain=True), text)


def _whole_operand(text: str, start: int, end: int, op: str = "+") -> bool:
    """True when ``text[start:end]`` is a whole argument, item or slice bound: no
    operator binds to it from either side (a power ``op``: none binds tighter)."""
    before = text[:start].rstrip()
    after = text[end:].lstrip()
    if op == "**":
        return not before.endswith("**") and not after.startswith(("**", ".", "[", "("))
    return (not before or before[-1] in "([{,:=") and (not after or after[0] in ")]},:")


_SCOPES: list[scope] = []


def _outer(expr: Expr, keep) -> Expr:
    """``expr`` with each parameter ``keep`` rejects replaced by its caller's value (a
    helper's ``filters`` seen from the code that called it: the argument it passed)."""
    if isinstance(expr, Op):
        left, right = _outer(expr.left, keep), _outer(expr.right, keep)
        if left is expr.left and right is expr.right:
            return expr  # (unchanged: the caller stops substituting)
        return _fold(expr.op, left, right)
    sym = expr.base if isinstance(expr, Item) else expr
    if not isinstance(sym, Sym) or keep(sym) or sym.arg is None:
        return expr
    arg = sym.arg
    if isinstance(expr, Item):
        if not isinstance(arg, tuple) or expr.index >= len(arg):
            return expr
        arg = arg[expr.index]
    inner = _expr_of(arg)
    if inner is not None:
        return inner
    return int.__int__(arg) if isinstance(arg, int) and not isinstance(arg, bool) else expr


def _outermost(expr: Expr) -> Expr:
    while True:
        outer = _outer(expr, lambda s: False)
        if outer is expr:
            return expr
        expr = outer


def _same(a: Expr, b: Expr) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int) and int(a) == int(b)
    if isinstance(a, Sym) or isinstance(b, Sym):
        return a is b
    if isinstance(a, Item) or isinstance(b, Item):
        return isinstance(a, Item) and isinstance(b, Item) and a.base is b.base and a.index == b.index
    return a.op == b.op and _same(a.left, b.left) and _same(a.right, b.right)


class aliasing:
    """``with aliasing():`` the active scope prints an outside size as the visible parameter
    that was passed it (a constructor call's arguments)."""

    def __enter__(self) -> None:
        self.scope = _SCOPES[-1] if _SCOPES else None
        if self.scope is not None:
            self.saved, self.scope.alias = self.scope.alias, True

    def __exit__(self, *exc) -> None:
        if self.scope is not None:
            self.scope.alias = self.saved


def same_size(a, b) -> bool:
    """True when two sizes come from the same source expression (callers' arguments substituted)."""
    ea, eb = _expr_of(a), _expr_of(b)
    return ea is not None and eb is not None and _same(_outermost(ea), _outermost(eb))


def _alias(expr: Expr, active: "scope") -> Expr | None:
    """A visible parameter that was passed this very size (the block's input channels are
    the ``filters`` its caller passed it): by provenance, not by an equal number."""
    full = _outermost(expr)
    if isinstance(full, int):
        return None
    for sym in active.sym_objs:
        if sym.arg is not None and not isinstance(sym.arg, tuple) and _expr_of(sym.arg) is not None \
                and _same(_outermost(_expr_of(sym.arg)), full):
            return sym
    return None


def render(value: Any, plain: bool = False) -> str:
    """Python source for one size: in an active :class:`scope` that sees its names (after
    replacing the parameters of helpers it came out of by their callers' arguments), a
    placeholder the printer resolves; else its number (the names are specialised)."""
    expr = _expr_of(value)
    if expr is not None and _SCOPES and not plain:
        active = _SCOPES[-1]
        while True:
            if _number(expr):  # (every name it came from was passed a number)
                return repr(float(expr) if isinstance(value, Scalar) else expr)
            if all(active.sees(s) for s in leaves(expr)):
                seen = value if expr is _expr_of(value) else (
                    SymbolicSize(expr) if isinstance(value, SymbolicSize) else
                    Scalar(float.__float__(value), expr) if isinstance(value, Scalar) else
                    Size(int.__int__(value), expr))
                return active._mark(seen)
            outer = _outer(expr, active.sees)
            if outer is expr:
                break
            expr = outer
        alias = _alias(expr, active) if active.alias and not isinstance(value, Scalar) else None
        if alias is not None:
            return active._mark(Size(int.__int__(value), alias) if isinstance(value, Size) else SymbolicSize(alias))
        if isinstance(value, (Size, Scalar)):  # its number, once the printer places the text
            return active._mark(value, visible=False)
    if isinstance(value, SymbolicSize):
        raise TypeError(f"the size {expr_text(value.expr)} is known only at run time")
    return repr(value)  # marks the names as specialised


def placeholder(i: int) -> str:
    return _MARK.format(i)


def has_placeholders(text: str) -> bool:
    """True when ``text`` still holds a size placeholder (raw or escaped into a string)."""
    return "__transpiler_size" in text


def number_text(value: Any) -> str:
    """A size's number for documentation and comments (not code): names stay unmarked.
    Tuples print as Python tuples."""
    if isinstance(value, tuple):
        inner = ", ".join(number_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Size):
        if carries_runtime(value):
            return expr_text(value.expr)  # (its number is a stand-in)
        return repr(int.__int__(value))
    if isinstance(value, Scalar):
        return repr(float.__float__(value))
    return repr(value)


# -- binding from concrete shapes (a checkpoint's) ------------------------------------

def _key(expr) -> tuple | None:
    """``("width", None)`` for a name, ``("input_shape", 0)`` for a tuple item."""
    if isinstance(expr, Sym):
        return (expr.name, None)
    if isinstance(expr, Item):
        return (expr.base.name, expr.index)
    return None


def evaluate(expr: Expr, env: dict[tuple, int]) -> int | None:
    """``expr``'s value with the names in ``env`` (keys as :func:`_key`); None when a name is missing."""
    if isinstance(expr, int):
        return int(expr)
    key = _key(expr)
    if key is not None:
        return env.get(key)
    left, right = evaluate(expr.left, env), evaluate(expr.right, env)
    if left is None or right is None:
        return None
    return _OPS[expr.op][0](left, right)


def number_for(value: Any, bound: dict[int, Any]) -> int | None:
    """``value``'s number when the names it comes from take the values ``bound`` gives them
    (``id`` of a :class:`Sym` → an int, or a tuple for a tuple parameter), after replacing
    the parameters of helpers it came out of by their callers' arguments: what a size is
    for one call of a builder (``build_model(max_len=20)``). None when ``value`` is not a
    size or a name it depends on is not bound. Nothing is specialised."""
    expr = _expr_of(value)
    if expr is None:
        return None

    def ev(e):
        if isinstance(e, int):
            return int(e)
        if isinstance(e, (Sym, Item)):
            got = bound.get(id(e.base if isinstance(e, Item) else e))
            if isinstance(e, Item):
                got = got[e.index] if isinstance(got, tuple) and e.index < len(got) else None
            return got if isinstance(got, int) and not isinstance(got, bool) else None
        left, right = ev(e.left), ev(e.right)
        return None if left is None or right is None else _OPS[e.op][0](left, right)

    try:
        return ev(_outermost(expr))
    except ZeroDivisionError:
        return None


def _invert(expr: Expr, value: int) -> tuple[tuple, int] | None:
    """``(key, v)`` with ``expr == value`` when ``expr`` is one name under ``+ - *`` by constants,
    or a name times itself (``upscale_factor ** 2`` output channels)."""
    while isinstance(expr, Op):
        if expr.op == "*" and not isinstance(expr.right, int) and _key(expr.left) is not None and \
                _key(expr.left) == _key(expr.right):
            root = math.isqrt(value) if value >= 0 else -1
            if root < 0 or root * root != value:
                return None
            value, expr = root, expr.left
        elif isinstance(expr.right, int) and expr.op in ("+", "-", "*"):
            if expr.op == "+":
                value -= expr.right
            elif expr.op == "-":
                value += expr.right
            elif value % expr.right:
                return None
            else:
                value //= expr.right
            expr = expr.left
        else:
            return None
    key = _key(expr)
    return None if key is None else (key, value)


def bind_shapes(pairs) -> dict[tuple, int]:
    """The values of the source names that make every expected shape equal the concrete one.

    ``pairs``: ``(expected, actual)`` shapes, expected dims plain ints or :class:`Size`. Raises
    ``ValueError`` naming the first dim no binding satisfies (a plain int that differs, two
    tensors that need different values of one name, or an expression that cannot be solved).
    """
    pairs = [(tuple(e), tuple(int(a) for a in act)) for e, act in pairs]
    env: dict[tuple, int] = {}
    for expected, actual in pairs:  # names first, from the dims they alone determine
        for e, a in zip(expected, actual):
            expr = _expr_of(e)
            if expr is not None:
                solved = _invert(expr, a)
                if solved is not None and solved[0] not in env:
                    env[solved[0]] = solved[1]
    for expected, actual in pairs:
        if len(expected) != len(actual):
            raise ValueError(f"rank {len(actual)} where the model has {len(expected)}")
        for e, a in zip(expected, actual):
            expr = _expr_of(e)
            want = int.__int__(e) if expr is None else evaluate(expr, env)
            if want != a:
                what = f"{int.__int__(e)}" if expr is None else f"{expr_text(expr)} = {want}"
                raise ValueError(f"shape {actual} where the model has {what} (not a size it takes)")
    return env
