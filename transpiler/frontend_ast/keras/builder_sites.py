"""Builder functions with required parameters, read with the arguments of their call.

``def build_model(input_shape, num_classes): ... return keras.Model(...)`` called once at
module level as ``model = build_model((16,), 3)`` is a builder like one whose parameters
all have defaults: it is read with the arguments of its first module-level call (when
they are known statically), and the generated function returns the translated module for
those arguments. A later call with other arguments is a marked stub (the module was
translated for the first ones).
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of

from transpiler.frontend_ast.interp.core import ArgumentError
from transpiler.frontend_ast.interp.values import Unknown

_STATIC = (int, float, str, bool, type(None))


def _static(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_static(v) for v in value)
    return isinstance(value, _STATIC)


class KerasBuilderSites:
    """Mixin of the Keras reader: the call-site arguments a builder is read with."""

    def _call_site_arguments(self, name: str) -> tuple[list, dict] | None:
        """(args, kwargs) of the first module-level ``name(...)`` call whose arguments are
        known statically and call nothing; None when there is none."""
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            calls = [c for c in nodes_of(stmt, cst.Call) if isinstance(c.func, cst.Name) and c.func.value == name]
            for call in calls:  # (plain walks: libcst.matchers costs ~0.5 s to import)
                if any(next(nodes_of(arg.value, cst.Call), None) for arg in call.args) or any(arg.star for arg in call.args):
                    return None
                try:
                    args = [self._eval(a.value, self.globals) for a in call.args if a.keyword is None]
                    kwargs = {a.keyword.value: self._eval(a.value, self.globals) for a in call.args if a.keyword}
                except Exception:  # noqa: BLE001 - a name bound later: not read as a builder
                    return None
                if not all(_static(v) for v in [*args, *kwargs.values()]):
                    return None
                return args, kwargs
        return None

    def _check_builder_call(self, fn, args, kwargs, span) -> None:
        """A builder called with arguments other than those it was read with: a stub (its
        module was translated for those)."""
        entry = next((e for e in self.models if e[1] == fn.node.name.value), None)
        if entry is None or not entry[3]:
            return
        try:
            bound = self._bind_arguments(fn.node, list(args), dict(kwargs), fn.env)
        except ArgumentError:
            return
        read = entry[3]
        differ = [k for k in read if k in bound and not isinstance(bound[k], Unknown) and bound[k] != read[k]]
        unknown = [k for k in read if k in bound and isinstance(bound[k], Unknown)]
        if differ or unknown:
            shown = ", ".join(f"{k}={read[k]!r}" for k in read)
            self.program.stub(span, f"{fn.node.name.value}(): its model was translated for "
                                    f"{fn.node.name.value}({shown}); called here with other arguments",
                              self._line(span))
