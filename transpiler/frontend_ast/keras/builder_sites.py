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

from transpiler.frontend_ast.interp.core import ArgumentError, code_of
from transpiler.frontend_ast.interp.values import ClassRef, FunctionRef, Unknown
from transpiler.frontend_ast.keras.values import is_keras_binding
from transpiler.ir import sizes

_STATIC = (int, float, str, bool, type(None))


def _static(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_static(v) for v in value)
    return isinstance(value, _STATIC)


class KerasBuilderSites:
    """Mixin of the Keras reader: the call-site arguments a builder is read with."""

    def _call_site_arguments(self, name: str) -> tuple[list, dict] | None:
        """(args, kwargs) of the first module-level ``name(...)`` call whose arguments are
        known statically, or computed at run time by code that calls none of the script's
        functions, classes or Keras (read as run-time sizes); None when there is none."""
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            calls = [c for c in nodes_of(stmt, cst.Call) if isinstance(c.func, cst.Name) and c.func.value == name]
            for call in calls:  # (plain walks: libcst.matchers costs ~0.5 s to import)
                if any(arg.star for arg in call.args) or any(self._calls_program(arg.value) for arg in call.args):
                    return None
                try:
                    args = [self._eval(a.value, self.globals) for a in call.args if a.keyword is None]
                    kwargs = {a.keyword.value: self._eval(a.value, self.globals) for a in call.args if a.keyword}
                except Exception:  # noqa: BLE001 - a name bound later: not read as a builder
                    return None
                args = [self._site_value(v) for v in args]
                kwargs = {k: self._site_value(v) for k, v in kwargs.items()}
                if not all(_static(v) for v in [*args, *kwargs.values()]):
                    return None
                return args, kwargs
        return None

    def _read_at_call_site(self, fn: cst.FunctionDef) -> bool:
        """A builder read with the arguments of its first module-level call: one with
        required parameters, or one whose None default for a name cannot be read."""
        return (not self._all_defaults(fn) or self._named_by_caller(fn)) and self._constructs_models(fn)

    def _named_by_caller(self, fn: cst.FunctionDef) -> bool:
        """A builder with a parameter defaulting to None that only names things
        (``name=None`` ... ``layers.Input(..., name=name + "_img_input")``): its default cannot
        be read (None + str), its callers give it (keras.io cyclegan's get_discriminator)."""
        defaults = {p.name.value for p in fn.params.params if isinstance(p.default, cst.Name)
                    and p.default.value == "None"}
        return bool(defaults & name_only_parameters(fn))

    def _structural_args(self, fn: cst.FunctionDef, args: dict | None) -> dict | None:
        """``args`` (what a builder was read with) without the parameters that only name
        layers and models: the torch module is the same whatever they are, so a call with
        other names is the same module (not a call "with other arguments")."""
        if not args:
            return args
        names = name_only_parameters(fn)
        return {k: v for k, v in args.items() if k not in names}

    def _calls_program(self, node: cst.CSTNode) -> bool:
        """``node`` calls something other than plain Python on data (``len(class_names)``,
        ``x.shape[1]`` are fine): a function or class of the script, or Keras."""
        for call in nodes_of(node, cst.Call):
            func = call.func
            # (a method of data: ``movies[cols].to_numpy()``, ``df.values.max()``)
            while isinstance(func, (cst.Attribute, cst.Subscript)) or \
                    isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute):
                func = func.func.value if isinstance(func, cst.Call) else func.value
            if not isinstance(func, cst.Name):
                return True
            value = self.globals.vars.get(func.value)
            if isinstance(value, (FunctionRef, ClassRef)) or is_keras_binding(value) or func.value in self.user_classes:
                return True
        return False

    def _site_value(self, value):
        """A call-site argument: a run-time value (its code known) as a run-time size, a tuple
        item by item; anything else unchanged."""
        if not self.runtime_sizes:
            return value
        if isinstance(value, tuple):
            return tuple(self._site_value(v) for v in value)
        if isinstance(value, Unknown):
            size = self._runtime_int(value)
            return size if isinstance(size, sizes.Size) else value
        return value

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
        differ = [k for k in read if k in bound and not isinstance(bound[k], Unknown) and bound[k] != read[k]
                  and not _same_code(bound[k], read[k])]
        unknown = [k for k in read if k in bound and isinstance(bound[k], Unknown) and not _same_code(bound[k], read[k])]
        if differ or unknown:
            shown = ", ".join(f"{k}={sizes.number_text(read[k])}" for k in read)  # (a message: not code)
            self.program.stub(span, f"{fn.node.name.value}(): its model was translated for "
                                    f"{fn.node.name.value}({shown}); called here with other arguments",
                              self._line(span))


def _same_code(value, read) -> bool:
    """``value`` (a call's argument) is computed by the same code as the run-time size
    ``read`` (what the builder was read with): the same run-time value."""
    if isinstance(read, tuple):
        return isinstance(value, tuple) and len(value) == len(read) and all(
            _same_code(v, r) for v, r in zip(value, read))
    sym = sizes.runtime_symbol(read)
    if sym is None:
        return value == read
    source = getattr(value, "source", None)
    if isinstance(value, sizes.Size):
        other = sizes.runtime_symbol(value)
        return other is not None and other.arg == sym.arg
    if not isinstance(source, cst.BaseExpression):
        return False
    # (compared without redundant parentheses: ``f((n))`` passes what ``f(n)`` does; the
    # whole-program fuzz's odd syntax, issue 22)
    try:
        read_code = code_of(cst.parse_expression(sym.arg))
    except cst.ParserSyntaxError:
        read_code = sym.arg
    return code_of(source) == read_code


def name_only_parameters(fn: cst.FunctionDef) -> set[str]:
    """The parameters of ``fn`` its body reads only inside ``name=`` arguments of calls
    (``name=name + "_img_input"``, ``keras.Model(x, y, name=name)``): Keras names, which
    the torch module does not keep."""
    params = {p.name.value for p in fn.params.params}
    inside: set[int] = set()  # (ids of the names within a name= argument's value)
    skipped: set[int] = set()  # (keyword and attribute names: not reads of a variable)
    for arg in nodes_of(fn.body, cst.Arg):
        if arg.keyword is not None:
            skipped.add(id(arg.keyword))
            if arg.keyword.value == "name":
                inside.update(id(n) for n in nodes_of(arg.value, cst.Name))
    for attr in nodes_of(fn.body, cst.Attribute):
        skipped.add(id(attr.attr))
    named, elsewhere = set(), set()
    for node in nodes_of(fn.body, cst.Name):
        if node.value in params and id(node) not in skipped:
            (named if id(node) in inside else elsewhere).add(node.value)
    return named - elsewhere
