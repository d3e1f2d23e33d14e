"""Inputs whose number of axes only the data decides (issue 18: lazily built models).

``keras.Input(shape=(None, *x_train.shape[2:]))`` where ``x_train`` comes from
``np.load(path)`` of a file the translation cannot read: the interpreter knows the items
around the star (``None``) and the starred code, not how many axes it gives
(:class:`transpiler.frontend_ast.interp.UnknownSplice`). Keras itself does not need to know
until the first layer is built on the input; the reader does the same. The input is held as a
:class:`PendingInput` (an Unknown to everything else, with a reason saying why), and the first
Keras layer it is handed to decides the count when its kind takes inputs of one number of axes
only (``ConvLSTM2D``: 5, ``Conv2D``: 4; found by asking the op's own shape rule, not from a
table). Each axis the star gives is then a run-time size printed as the code that reads it
(``x_train.shape[2]``): the generated module takes it as a constructor argument, as for any
other size the program computes. A layer that takes any number of axes (``Dense``,
``Flatten``) decides nothing: the input stays unknown and its uses are reported as stubs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.frontend_ast.interp import Unknown, UnknownSplice
from transpiler.ir.graph import Node, Span
from transpiler.ir.layout import default_layout
from transpiler.frontend_ast.keras.values import LayerObj

#: how many axes (batch included) a pending input may be given at most
_MAX_RANK = 8
#: the stand-in number a probe gives each starred axis (the shape rules read only the count)
_PROBE = 7


@dataclass(eq=False)
class PendingInput(Unknown):
    """An ``Input`` whose number of axes the first layer it is handed to decides."""

    head: tuple = ()
    #: ``x_train.shape`` of the star ``x_train.shape[2:]``, and 2
    shape_of: Any = None
    start: int = 0
    tail: tuple = ()
    kwargs: dict = field(default_factory=dict)
    span: Any = None
    stmt: Any = None
    #: the Input once decided (a TensorVal): every later read of the name gives it
    tensor: Any = None
    #: the names it was assigned to, with the module being read there (they name the input)
    names: list = field(default_factory=list)


def _star_shape(star: Any) -> tuple[cst.BaseExpression, int] | None:
    """``x.shape[k:]`` → (``x.shape``, k); ``x.shape`` → (``x.shape``, 0); else None."""
    if isinstance(star, cst.Attribute) and star.attr.value == "shape":
        return star, 0
    if isinstance(star, cst.Subscript) and isinstance(star.value, cst.Attribute) \
            and star.value.attr.value == "shape" and len(star.slice) == 1:
        sl = star.slice[0].slice
        if isinstance(sl, cst.Slice) and sl.upper is None and sl.step is None and \
                (sl.lower is None or isinstance(sl.lower, cst.Integer)):
            return star.value, int(sl.lower.value) if sl.lower is not None else 0
    return None


def _shape_code_of(value: Any) -> cst.BaseExpression | None:
    """The ``x.shape[k:]`` / ``x.shape`` code a run-time value was computed by (followed back
    through the names it was bound to), or None."""
    seen = 0
    while isinstance(value, Unknown) and seen < 16:
        source = value.source
        if isinstance(source, cst.BaseExpression) and _star_shape(source) is not None:
            return source
        value, seen = value.origin, seen + 1
    return None


def splice_of(shape: Any) -> UnknownSplice | None:
    """The splice an ``Input`` shape is (or was bound from), if it is one."""
    seen = 0
    while isinstance(shape, Unknown) and seen < 16:
        if isinstance(shape, UnknownSplice):
            return shape
        shape, seen = shape.origin, seen + 1
    return None


class KerasLazyInputs:
    """Mixin of KerasFrontend: inputs whose axis count the first layer decides."""

    def _pending_input(self, shape: Any, kwargs: dict, span: Span) -> PendingInput | None:
        if not self.runtime_sizes:
            return None
        splice = splice_of(shape)
        if splice is None:  # ``shape=x_train.shape[1:]``: the whole shape is the star
            star_code = _shape_code_of(shape)
            splice = UnknownSplice("", head=(), star=star_code, tail=()) if star_code is not None else None
        if splice is None or splice.tail is None:
            return None
        star = _star_shape(splice.star)
        if star is None or not all(d is None or type(d) is int for d in (*splice.head, *splice.tail)):
            return None
        code = cst.Module([]).code_for_node(splice.star)
        written = f"(..., *{code}, ...)" if splice.head or splice.tail or splice.source is not None else code
        reason = (f"Input(shape={written}): the number of axes is only known when the program runs "
                  "(no layer it is handed to fixes it)")
        return PendingInput(reason, head=tuple(splice.head), shape_of=star[0], start=star[1],
                            tail=tuple(splice.tail), kwargs=dict(kwargs), span=span,
                            stmt=self.stmt_stack[-1] if self.stmt_stack else None)

    def _read(self, name: str, value: Any) -> Any:
        if isinstance(value, PendingInput) and value.tensor is not None:
            return value.tensor
        return super()._read(name, value)

    def _assign(self, target, value: Any, env, naming: bool = True) -> None:
        if naming and isinstance(value, PendingInput) and isinstance(target, cst.Name):
            value.names.append((target.value, id(self.module_stack[-1][0]) if self.module_stack else None))
        super()._assign(target, value, env, naming)

    def _decide_pending(self, op: str, attrs: dict, args: list) -> list:
        """``args`` of a layer call with a pending input as first argument replaced by the
        input it becomes, when ``op`` decides its number of axes (else unchanged)."""
        if not args or not isinstance(args[0], PendingInput):
            return args
        pending = args[0]
        if pending.tensor is None:
            ranks = [r for r in range(len(pending.head) + len(pending.tail) + 1, _MAX_RANK + 1)
                     if self._rank_fits(op, attrs, pending, r)]
            if len(ranks) != 1:
                return args
            pending.tensor = self._decided_input(pending, ranks[0])
        return [pending.tensor, *args[1:]]

    def _decide_sequence_input(self, items: list) -> list:
        """``keras.Sequential([Input(shape=(None, *x.shape[2:])), ConvLSTM2D(...), ...])``: the
        pending input decided by the layer after it, as for a call."""
        if len(items) > 1 and isinstance(items[0], PendingInput) and isinstance(items[1], LayerObj):
            return [*self._decide_pending(items[1].spec.op, items[1].spec.attrs, items[:1]), *items[1:]]
        return items

    def _probe_shape(self, pending: PendingInput, rank: int) -> tuple:
        n_star = rank - 1 - len(pending.head) - len(pending.tail)
        return (None, *pending.head, *([_PROBE] * n_star), *pending.tail)

    def _rank_fits(self, op: str, attrs: dict, pending: PendingInput, rank: int) -> bool:
        from transpiler.ir.shapes import _RULES

        rule = _RULES.get(op)
        if rule is None:
            return False
        try:
            rule(Node(op, "probe", [], [], attrs=attrs), [self._probe_shape(pending, rank)], [default_layout(rank)])
        except Exception:  # (any refusal of the rule: that count does not fit)
            return False
        return True

    def _decided_input(self, pending: PendingInput, rank: int):
        """The Input of ``rank`` axes: each starred axis a run-time size read from the data."""
        n_star = rank - 1 - len(pending.head) - len(pending.tail)
        base = cst.Module([]).code_for_node(pending.shape_of)
        star = tuple(Unknown("an axis of the data", source=cst.parse_expression(f"{base}[{pending.start + i}]"))
                     for i in range(n_star))
        kwargs = {**pending.kwargs, "shape": (*pending.head, *star, *pending.tail)}
        kwargs.pop("batch_shape", None)
        kwargs.pop("input_shape", None)
        tensor = self._make_input("Input", [], kwargs, pending.span)
        self.value_stmts[tensor.value] = pending.stmt
        for name, where in pending.names:
            tensor.value.var = tensor.value.var or name
            tensor.value.scope_vars.setdefault(where, name)
        self.program.warn(pending.span, f"Input: {rank - 1} axes after the batch axis, as the first layer it is "
                                        f"handed to takes (the number of axes of {base} is only known when the "
                                        "program runs)", self._line(pending.span))
        return tensor
