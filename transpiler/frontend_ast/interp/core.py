"""The one interpreter of static Python, shared by the readers (Keras, torch model).

It evaluates what every reader evaluates alike: literals and f-strings, names (scopes,
builtins, and the astroid fallback for module-level values), containers, comprehensions,
operators, conditional expressions, subscripts, calls with their arguments, and binds a
user function's parameters (positional, keyword, defaults, ``*args``, ``**kwargs``).

What a value *means* is the reader's: a reader subclasses :class:`Interpreter` and registers
its hooks in the class tables (interp/registry.py), keyed by the type of its own values:

* ``CALLS``      callee type → ``handler(self, func, args, kwargs, node)``
* ``ATTRIBUTES`` base type → ``handler(self, base, attr, node)``
* ``SUBSCRIPTS`` base type → ``handler(self, base, node, env)``
* ``UNARY``      operand type → ``handler(self, node, value)``
* ``OPERANDS``   rules on (left, right) of a binary operator → ``rule(self, left, right, op, node)``
* ``COMPARANDS`` rules on (left, right) of a comparison → ``rule(self, left, right, node, target)``

Any handler may return ``PASS`` to leave the value to the next rule or to the default.
The reader's policy for what cannot be read (an ``Unknown``, or a raised error) is in the
``_no_*`` / ``_undecided`` hooks.

Provenance (sizes that remember where they came from) flows through three hooks, identity
here: ``_parameter_value`` (a function parameter bound to an argument or a default),
``_module_constant`` (a module-level value astroid answered, interp/module_constants.py) and
``_arith_result`` (the result of Python arithmetic on static operands).
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from transpiler.frontend_ast.interp.module_constants import ModuleConstants
from transpiler.frontend_ast.interp.operators import BINOPS, CMPOPS, CONSTANTS, SAFE_BUILTINS, UNARYOPS
from transpiler.frontend_ast.interp.registry import PASS, RuleTable, TypeTable
from transpiler.frontend_ast.interp.scope import Env
from transpiler.frontend_ast.interp.values import Unknown

_MISSING = object()
_CONTAINERS = (list, tuple, dict, str, range)


class DynamicIterable(Exception):
    """A comprehension over values known only at run time."""


class ArgumentError(Exception):
    """A call's arguments do not bind to the function's parameters (``kind``: ``missing`` or
    ``too many``; ``name`` the parameter)."""

    def __init__(self, kind: str, name: str = ""):
        super().__init__(kind, name)
        self.kind, self.name = kind, name


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class Interpreter(ModuleConstants):
    """Static Python; readers subclass it (see the module docstring)."""

    CALLS = TypeTable()
    ATTRIBUTES = TypeTable()
    SUBSCRIPTS = TypeTable()
    UNARY = TypeTable()
    OPERANDS = RuleTable()
    COMPARANDS = RuleTable()
    #: the builtins a name may resolve to
    BUILTINS: dict[str, Any] = SAFE_BUILTINS
    #: ask astroid about module-level names the run did not bind
    ASTROID_FALLBACK = False
    #: libcst expression type → evaluator, built per class from its ``_eval_<Type>`` methods
    _EVAL: dict[type, Callable] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._EVAL = {getattr(cst, name[6:]): getattr(cls, name) for name in dir(cls)
                     if name.startswith("_eval_") and isinstance(getattr(cst, name[6:], None), type)}

    # -- dispatch -------------------------------------------------------------------------
    def _eval(self, node: cst.BaseExpression, env: Env) -> Any:
        fn = self._EVAL.get(type(node))
        if fn is None:
            return self._no_expression(node)
        value = fn(self, node, env)
        if type(value) is Unknown and value.source is not node:
            # provenance: the (outermost) expression it stands for; ``origin`` the value it was
            # before (a parameter's: the caller's argument), so a reader can follow it back
            value = Unknown(value.reason, source=node, origin=value if value.source is not None else None)
        return value

    def _no_expression(self, node: cst.CSTNode) -> Any:
        """An expression kind the interpreter does not read."""
        return Unknown(f"cannot evaluate {type(node).__name__}")

    # -- literals -------------------------------------------------------------------------
    def _eval_Integer(self, node, env):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:  # ``00``
            return node.evaluated_value

    def _eval_Float(self, node, env):
        return float(node.value.replace("_", ""))

    def _eval_SimpleString(self, node, env):
        return node.evaluated_value

    def _eval_ConcatenatedString(self, node, env):
        return node.evaluated_value

    def _eval_Ellipsis(self, node, env):
        return Ellipsis

    def _eval_FormattedString(self, node, env):
        text = self._format_parts(node.parts, env)
        return Unknown("f-string") if text is None else text

    def _format_parts(self, parts, env) -> str | None:
        """The text of f-string ``parts`` (format specs and ``!r`` included), or None."""
        out = []
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            value = self._eval(part.expression, env)
            if not self._formattable(value):
                return None
            spec = "" if part.format_spec is None else self._format_parts(part.format_spec, env)
            if spec is None:
                return None
            conversion = part.conversion
            if conversion is None and part.equal is not None and part.format_spec is None:
                conversion = "r"  # f"{name=}" shows repr(name)
            if conversion is not None:
                value = {"r": repr, "s": str, "a": ascii}[conversion](value)
            if part.equal is not None:
                out.append(code_of(part.expression) + "=")
            try:
                out.append(format(value, spec))
            except (TypeError, ValueError):
                return None
        return "".join(out)

    def _formattable(self, value: Any) -> bool:
        """Whether an f-string may show ``value`` (a static Python value)."""
        return isinstance(value, (int, float, str, bool, type(None)))

    # -- names ----------------------------------------------------------------------------
    def _eval_Name(self, node, env):
        name = node.value
        if name in CONSTANTS:
            return CONSTANTS[name]
        try:
            return env.lookup(name)
        except KeyError:
            pass
        value = self._builtin(name)
        if value is not _MISSING:
            return value
        return self._unbound(name)

    def _builtin(self, name: str) -> Any:
        return self.BUILTINS.get(name, _MISSING)

    def _unbound(self, name: str) -> Any:
        """A name no scope binds: astroid's answer for a module-level value, or Unknown."""
        if self.ASTROID_FALLBACK:
            return self._astroid_value(name)
        return Unknown(f"name {name}")

    # -- attributes -----------------------------------------------------------------------
    def _eval_Attribute(self, node, env):
        return self._attribute(self._eval(node.value, env), node.attr.value, node)

    def _attribute(self, base: Any, attr: str, node) -> Any:
        handler = self.ATTRIBUTES.lookup(type(base))
        if handler is not None:
            value = handler(self, base, attr, node)
            if value is not PASS:
                return value
        return self._no_attribute(base, attr, node)

    def _no_attribute(self, base: Any, attr: str, node) -> Any:
        return Unknown(f".{attr}")

    # -- containers -----------------------------------------------------------------------
    def _eval_Tuple(self, node, env):
        items = self._elements(node.elements, env)
        return items if isinstance(items, Unknown) else tuple(items)

    def _eval_List(self, node, env):
        items = self._elements(node.elements, env)
        return items if isinstance(items, Unknown) else list(items)

    def _eval_Set(self, node, env):
        return Unknown("set")

    def _elements(self, elements, env) -> list | Unknown:
        """The items of a tuple/list display; ``Unknown`` when a ``*starred`` part is not
        known statically (``(None, *x_train.shape[2:])``): the display is then run-time data."""
        out = []
        for el in elements:
            value = self._eval(el.value, env)
            if isinstance(el, cst.StarredElement):
                if isinstance(value, Unknown):
                    return Unknown(f"*{value.reason}" if value.reason else "*run-time data")
                out.extend(self._iterate(value, el.value))
            else:
                out.append(value)
        return out

    def _iterate(self, value: Any, node) -> Any:
        """The items of ``value`` where Python iterates it (``*value``, ``for``)."""
        return value

    def _eval_Dict(self, node, env):
        out = {}
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                out[self._eval(el.key, env)] = self._eval(el.value, env)
            else:
                rest = self._eval(el.value, env)
                if not isinstance(rest, dict):  # ``**{...comprehension over run-time data}``
                    return Unknown("a dict built from run-time data")
                out.update(rest)
        return out

    # -- comprehensions -------------------------------------------------------------------
    def _eval_ListComp(self, node, env):
        return self._comprehension(node, env)

    def _eval_GeneratorExp(self, node, env):
        return self._comprehension(node, env)

    def _comprehension(self, node, env) -> Any:
        results: list = []
        inner = Env(env)

        def walk(comp):
            for item in self._comprehension_items(self._eval(comp.iter, inner), comp, node):
                self._bind_target(comp.target, item, inner)
                if all(self._eval(cond.test, inner) for cond in comp.ifs):
                    if comp.inner_for_in is not None:
                        walk(comp.inner_for_in)
                    else:
                        results.append(self._eval(node.elt, inner))

        try:
            walk(node.for_in)
        except DynamicIterable:
            return Unknown("comprehension over run-time data")
        return results

    def _comprehension_items(self, iterable: Any, comp, node) -> Any:
        """What a comprehension's ``for`` runs over; raise DynamicIterable when only the
        running program knows."""
        if isinstance(iterable, Unknown) or not hasattr(iterable, "__iter__"):
            raise DynamicIterable()
        return iterable

    def _bind_target(self, target, value: Any, env: Env) -> None:
        """Bind a loop's (or a comprehension's) target to one item."""
        self._assign(target, value, env)

    def _assign(self, target, value: Any, env: Env) -> None:
        if isinstance(target, cst.Name):
            env.set(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el, item in zip(target.elements, value, strict=True):
                self._assign(el.value, item, env)

    # -- operators ------------------------------------------------------------------------
    def _eval_BinaryOperation(self, node, env):
        return self._binop(type(node.operator), self._eval(node.left, env), self._eval(node.right, env), node)

    def _binop(self, op: type, left: Any, right: Any, node) -> Any:
        left, right = self._operands(left, right, node)
        value = self.OPERANDS.apply(self, left, right, op, node)
        if value is not PASS:
            return value
        fn = BINOPS.get(op)
        if fn is None:
            return self._no_operator(op, node, op.__name__)
        try:
            result = fn(left, right)
        except Exception as exc:  # user arithmetic on odd types
            return self._arith_error(exc, node)
        return self._arith_result(result, op, (left, right), node)

    def _operands(self, left: Any, right: Any, node) -> tuple[Any, Any]:
        """The operands as the reader's operators take them (identity here)."""
        return left, right

    def _no_operator(self, op: type, node, what: str) -> Any:
        return Unknown(what)

    def _arith_error(self, exc: Exception, node) -> Any:
        raise exc

    def _arith_result(self, result: Any, op: type, operands: tuple, node) -> Any:
        """Provenance hook: Python arithmetic's ``result`` on static ``operands`` (identity)."""
        return result

    def _eval_UnaryOperation(self, node, env):
        value = self._eval(node.expression, env)
        handler = self.UNARY.lookup(type(value))
        if handler is not None:
            result = handler(self, node, value)
            if result is not PASS:
                return result
        op = type(node.operator)
        fn = UNARYOPS.get(op)
        if fn is None:
            return self._no_operator(op, node, "unary")
        return self._arith_result(fn(value), op, (value,), node)

    def _eval_BooleanOperation(self, node, env):
        left = self._eval(node.left, env)
        if isinstance(left, Unknown):
            return left
        if isinstance(node.operator, cst.And):
            return self._eval(node.right, env) if left else left
        return left if left else self._eval(node.right, env)

    def _eval_Comparison(self, node, env):
        left = self._eval(node.left, env)
        for target in node.comparisons:
            right = self._eval(target.comparator, env)
            value = self.COMPARANDS.apply(self, left, right, node, target)
            if value is not PASS:
                return value
            if not CMPOPS[type(target.operator)](left, right):
                return False
            left = right
        return True

    def _eval_IfExp(self, node, env):
        mode = self._mode_of(node.test, env)
        if mode is not None:  # ``a if training else b``: both, selected by the mode
            body, orelse = self._eval(node.body, env), self._eval(node.orelse, env)
            train, infer = (body, orelse) if mode else (orelse, body)
            return self._select_mode(train, infer, node)
        test = self._eval(node.test, env)
        if self._undecided(test):
            return self._no_condition(node.test)
        return self._eval(node.body if test else node.orelse, env)

    def _mode_of(self, test, env) -> bool | None:
        """True/False when ``test`` is the training mode (or its negation), else None."""
        return None

    def _select_mode(self, train: Any, infer: Any, node) -> Any:
        raise NotImplementedError

    def _undecided(self, test: Any) -> bool:
        return isinstance(test, Unknown)

    def _no_condition(self, test) -> Any:
        return Unknown("condition")

    # -- subscripts -----------------------------------------------------------------------
    def _eval_Subscript(self, node, env):
        base = self._eval(node.value, env)
        handler = self.SUBSCRIPTS.lookup(type(base))
        if handler is not None:
            value = handler(self, base, node, env)
            if value is not PASS:
                return value
        return self._static_subscript(base, node, env)

    def _subscript_key(self, node, env) -> Any:
        """The index of ``node``: one value or slice, or a tuple of them."""
        keys = []
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                keys.append(self._eval(sl.value, env))
            else:
                keys.append(slice(*(None if p is None else self._eval(p, env) for p in (sl.lower, sl.upper, sl.step))))
        return keys[0] if len(keys) == 1 else tuple(keys)

    def _static_subscript(self, base: Any, node, env) -> Any:
        if not isinstance(base, _CONTAINERS):
            return Unknown("subscript of a value known only at run time")  # sys.argv[1]
        key = self._subscript_key(node, env)
        try:
            return base[key]
        except Exception as exc:
            return self._subscript_error(exc, node)

    def _subscript_error(self, exc: Exception, node) -> Any:
        raise exc

    # -- calls ----------------------------------------------------------------------------
    def _eval_Call(self, node, env):
        func = self._eval(node.func, env)
        args, kwargs = [], {}
        for arg in node.args:
            value = self._eval(arg.value, env)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star and isinstance(value, Unknown) and self._unknown_star_call(arg):
                return Unknown("call with unknown *args")
            elif arg.star == "*":
                args.extend(self._iterate(value, arg.value))
            elif arg.star == "**":
                kwargs.update(value)
            else:
                args.append(value)
        return self._call_site(func, args, kwargs, node)

    def _call_site(self, func: Any, args: list, kwargs: dict, node) -> Any:
        """A call written in the source (a reader may wrap it: spans of its errors)."""
        return self._call(func, args, kwargs, node)

    def _unknown_star_call(self, arg) -> bool:
        """Whether a call with ``*unknown`` / ``**unknown`` is itself unknown (else the
        reader's ``_iterate`` decides)."""
        return True

    def _call(self, func: Any, args: list, kwargs: dict, node) -> Any:
        handler = self.CALLS.lookup(type(func))
        if handler is not None:
            value = handler(self, func, args, kwargs, node)
            if value is not PASS:
                return value
        return self._no_call(func, args, kwargs, node)

    def _no_call(self, func: Any, args: list, kwargs: dict, node) -> Any:
        """A callee no handler took: a builtin runs on static arguments."""
        if func in self._builtin_functions and not any(
                isinstance(a, Unknown) for a in [*args, *kwargs.values()]):
            return func(*args, **kwargs)
        return Unknown("call")

    @property
    def _builtin_functions(self) -> list:
        return list(self.BUILTINS.values())

    # -- user functions -------------------------------------------------------------------
    def _bind_arguments(self, fn: cst.FunctionDef, args: list, kwargs: dict, defaults_env: Env,
                        skip: int = 0) -> dict[str, Any]:
        """``fn``'s parameters (after the first ``skip``: ``self``) bound to a call's arguments:
        positional, by keyword, defaults (evaluated in ``defaults_env``), ``*args``/``**kwargs``,
        as Python binds them. Raises ArgumentError."""
        params = fn.params
        positional = (list(params.posonly_params) + list(params.params))[skip:]
        star_arg = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        if len(args) > len(positional) and star_arg is None:
            raise ArgumentError("too many")
        rest = dict(kwargs)
        bound: dict[str, Any] = {}
        for i, param in enumerate(positional):
            name = param.name.value
            if i < len(args):
                bound[name] = self._parameter_value(name, args[i], fn, None)
            elif name in rest:
                bound[name] = self._parameter_value(name, rest.pop(name), fn, None)
            elif param.default is not None:
                bound[name] = self._parameter_value(name, self._eval(param.default, defaults_env), fn, param.default)
            else:
                raise ArgumentError("missing", name)
        if star_arg is not None:
            bound[star_arg.name.value] = tuple(args[len(positional):])
        for param in params.kwonly_params:
            name = param.name.value
            if name in rest:
                bound[name] = self._parameter_value(name, rest.pop(name), fn, None)
            elif param.default is not None:
                bound[name] = self._parameter_value(name, self._eval(param.default, defaults_env), fn, param.default)
            else:
                raise ArgumentError("missing", name)
        if params.star_kwarg is not None:
            bound[params.star_kwarg.name.value] = rest
        return bound

    def _parameter_value(self, name: str, value: Any, fn: cst.FunctionDef, default) -> Any:
        """Provenance hook: parameter ``name`` of ``fn`` bound to ``value`` (from its
        ``default`` expression, or None for a passed argument); identity here."""
        return value


@Interpreter.COMPARANDS.register(Unknown)
def _unknown_comparands(interp: Interpreter, left, right, node, target) -> Any:
    return Unknown("comparison")
