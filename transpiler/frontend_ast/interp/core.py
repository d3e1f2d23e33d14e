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
* ``SYNTAX``     rules on the syntax of an expression (by libcst node type), tried before it is
  evaluated → ``rule(self, node, env)`` (an idiom read whole: ``sum(p.numel() for p in ...)``)

A reader that *translates* what it reads (the torch training reader: each torch call it reads
is a fact the printer replaces) sets ``READ_EVERY_PART``: every sub-expression is then read,
also where Python would not evaluate it (the other side of ``and``, the branch not taken, the
rest of a comparison, the parts of an f-string after one that is not static). Its own values
stand for what it cannot decide (``_unknown``, ``_undecided``); its calls may take their
arguments as it needs them (``_call_target``, ``_call_expression``).

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
from transpiler.frontend_ast.interp.registry import PASS, NodeRules, RuleTable, TypeTable
from transpiler.frontend_ast.interp.scope import Env
from transpiler.frontend_ast.interp.values import Unknown, UnknownSplice

_MISSING = object()
#: the dispatch tables, in the order ``Interpreter.extended_tables`` returns them
_TABLES = ("CALLS", "ATTRIBUTES", "SUBSCRIPTS", "UNARY", "OPERANDS", "COMPARANDS", "SYNTAX")
_CONTAINERS = (list, tuple, dict, str, range)


class DynamicIterable(Exception):
    """A comprehension over values known only at run time."""


class ArgumentError(Exception):
    """A call's arguments do not bind to the function's parameters (``kind``: ``missing`` or
    ``too many``; ``name`` the parameter)."""

    def __init__(self, kind: str, name: str = ""):
        super().__init__(kind, name)
        self.kind, self.name = kind, name


#: expressions whose parentheses never change what their code means, wherever it is pasted
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString)


def unparen(node: cst.CSTNode) -> cst.CSTNode:
    """``node`` without redundant parentheses around a name, attribute, call, subscript or
    string (``fit((train_ds))``, ``.map((fn))``): readers compare and paste such code as
    text, so ``(train_ds)`` must read as ``train_ds`` (issue 22, whole-program fuzz)."""
    if isinstance(node, _ATOMS) and node.lpar:
        return node.with_changes(lpar=[], rpar=[])
    return node


def code_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(unparen(node))


class Interpreter(ModuleConstants):
    """Static Python; readers subclass it (see the module docstring)."""

    CALLS = TypeTable()
    ATTRIBUTES = TypeTable()
    SUBSCRIPTS = TypeTable()
    UNARY = TypeTable()
    OPERANDS = RuleTable()
    COMPARANDS = RuleTable()
    SYNTAX = NodeRules()
    #: a translating reader: every part of an expression is read (see the module docstring)
    READ_EVERY_PART = False
    #: f-strings of static values are evaluated to their text (else: Unknown, parts unread)
    STATIC_FSTRINGS = True
    #: the builtins a name may resolve to
    BUILTINS: dict[str, Any] = SAFE_BUILTINS
    #: ask astroid about module-level names the run did not bind
    ASTROID_FALLBACK = False
    #: what ``_builtin`` answers for a name that is not a builtin
    NOT_BUILTIN = _MISSING
    #: libcst expression type → evaluator, built per class from its ``_eval_<Type>`` methods
    _EVAL: dict[type, Callable] = {}

    @classmethod
    def extended_tables(cls) -> tuple:
        """A reader's own dispatch tables, each extending ``cls``'s; in its class body:
        ``CALLS, ATTRIBUTES, SUBSCRIPTS, UNARY, OPERANDS, COMPARANDS, SYNTAX =
        Interpreter.extended_tables()``."""
        return tuple(getattr(cls, name).extend() for name in _TABLES)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._EVAL = {getattr(cst, name[6:]): getattr(cls, name) for name in dir(cls)
                     if name.startswith("_eval_") and isinstance(getattr(cst, name[6:], None), type)}

    # -- dispatch -------------------------------------------------------------------------
    def _eval(self, node: cst.BaseExpression, env: Env) -> Any:
        for rule in self.SYNTAX.rules(type(node)):
            value = rule(self, node, env)
            if value is not PASS:
                return value
        fn = self._EVAL.get(type(node))
        if fn is None:
            return self._other_expression(node, env)
        value = fn(self, node, env)
        if type(value) is Unknown and value.source is not node:
            # provenance: the (outermost) expression it stands for; ``origin`` the value it was
            # before (a parameter's: the caller's argument), so a reader can follow it back
            value = Unknown(value.reason, source=node, origin=value if value.source is not None else None,
                            read_env=env)
        elif type(value) is UnknownSplice and value.source is None:  # (fresh: the display it was read from)
            value.source, value.read_env = node, env
        return value

    def _other_expression(self, node: cst.CSTNode, env: Env) -> Any:
        """An expression of a kind no ``_eval_<Type>`` reads (a translating reader still reads its parts)."""
        return self._no_expression(node)

    def _no_expression(self, node: cst.CSTNode) -> Any:
        """An expression kind the interpreter does not read."""
        return self._unknown(f"cannot evaluate {type(node).__name__}")

    def _unknown(self, reason: str) -> Any:
        """What the reader holds for a value the interpreter cannot decide."""
        return Unknown(reason)

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
        if not self.STATIC_FSTRINGS and not self.READ_EVERY_PART:
            return self._unknown("f-string")
        text = self._format_parts(node.parts, env)
        return self._unknown("f-string") if text is None else text

    def _format_parts(self, parts, env) -> str | None:
        """The text of f-string ``parts`` (format specs and ``!r`` included), or None."""
        out: list | None = []
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                if out is not None:
                    out.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            value = self._eval(part.expression, env)
            spec = "" if part.format_spec is None else self._format_parts(part.format_spec, env)
            if out is None or spec is None or not self._formattable(value):
                if not self.READ_EVERY_PART:
                    return None
                out = None
                continue
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
                out = None
                if not self.READ_EVERY_PART:
                    return None
        return None if out is None else "".join(out)

    def _formattable(self, value: Any) -> bool:
        """Whether an f-string may show ``value`` (a static Python value)."""
        return isinstance(value, (int, float, str, bool, type(None)))

    # -- names ----------------------------------------------------------------------------
    def _eval_Name(self, node, env):
        name = node.value
        if name in CONSTANTS:
            return CONSTANTS[name]
        value = env.find(name, _MISSING)
        if value is not _MISSING:
            return self._read(name, value)
        value = self._builtin(name)
        if value is not _MISSING:
            return value
        return self._unbound(name, node)

    def _read(self, name: str, value: Any) -> Any:
        """A read of a name a scope binds (a reader may count reads; identity here)."""
        return value

    def _builtin(self, name: str) -> Any:
        """The builtin ``name`` names, or ``Interpreter.NOT_BUILTIN``."""
        return self.BUILTINS.get(name, _MISSING)

    def _unbound(self, name: str, node: cst.Name | None = None) -> Any:
        """A name no scope binds: astroid's answer for a module-level value, or Unknown."""
        if self.ASTROID_FALLBACK:
            return self._astroid_value(name)
        return self._unknown(f"name {name}")

    # -- attributes -----------------------------------------------------------------------
    def _eval_Attribute(self, node, env):
        return self._attribute(self._eval(node.value, env), node.attr.value, node)

    def _attribute(self, base: Any, attr: str, node) -> Any:
        value = self.ATTRIBUTES.apply(self, base, attr, node)
        return self._no_attribute(base, attr, node) if value is PASS else value

    def _no_attribute(self, base: Any, attr: str, node) -> Any:
        return self._unknown(f".{attr}")

    # -- containers -----------------------------------------------------------------------
    def _eval_Tuple(self, node, env):
        items = self._elements(node.elements, env)
        return self._container(items if isinstance(items, Unknown) else tuple(items), node)

    def _eval_List(self, node, env):
        items = self._elements(node.elements, env)
        return self._container(items if isinstance(items, Unknown) else list(items), node)

    def _eval_Set(self, node, env):
        if self.READ_EVERY_PART:
            self._elements(node.elements, env)
        return self._unknown("set")

    def _container(self, value: Any, node) -> Any:
        """The reader's value for a tuple, list or dict display (``value`` the Python one,
        or Unknown); identity here."""
        return value

    def _elements(self, elements, env) -> list | Unknown:
        """The items of a tuple/list display; ``Unknown`` when a ``*starred`` part is not
        known statically (``(None, *x_train.shape[2:])``): the display is then run-time data."""
        out = []
        for i, el in enumerate(elements):
            value = self._eval(el.value, env)
            if isinstance(el, cst.StarredElement):
                if isinstance(value, Unknown):
                    rest = elements[i + 1:]
                    tail = None
                    if self.READ_EVERY_PART:
                        tail = self._elements(rest, env)
                    elif all(isinstance(e, cst.Element) and (isinstance(e.value, cst.Integer) or
                             isinstance(e.value, cst.Name) and e.value.value == "None") for e in rest):
                        tail = [self._eval(e.value, env) for e in rest]  # (constants: nothing else runs)
                    return UnknownSplice(f"*{value.reason}" if value.reason else "*run-time data", head=tuple(out),
                                         star=el.value, tail=tuple(tail) if isinstance(tail, list) else None)
                out.extend(self._iterate(value, el.value))
            else:
                out.append(value)
        return out

    def _iterate(self, value: Any, node) -> Any:
        """The items of ``value`` where Python iterates it (``*value``, ``for``)."""
        return value

    def _eval_Dict(self, node, env):
        out: dict | Unknown = {}
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                key, value = self._eval(el.key, env), self._eval(el.value, env)
                if isinstance(out, dict):
                    try:
                        out[key] = value
                    except TypeError:  # an unhashable key
                        out = Unknown("a dict with an unhashable key")
                continue
            rest = self._eval(el.value, env)
            if not isinstance(rest, dict):  # ``**{...comprehension over run-time data}``
                out = Unknown("a dict built from run-time data")
                if not self.READ_EVERY_PART:
                    break
            elif isinstance(out, dict):
                out.update(rest)
        return self._container(out, node)

    # -- comprehensions -------------------------------------------------------------------
    def _eval_ListComp(self, node, env):
        return self._comprehension(node, env)

    def _eval_GeneratorExp(self, node, env):
        return self._comprehension(node, env)

    def _eval_SetComp(self, node, env):
        return self._comprehension(node, env) if self.READ_EVERY_PART else self._no_expression(node)

    #: whether a reader that does not read every part still reads dict comprehensions (the Keras
    #: reader: their calls are facts, ``{name: tf.convert_to_tensor([v]) for name, v in ...}``)
    READ_DICT_COMPREHENSIONS = False

    def _eval_DictComp(self, node, env):
        """(read by a translating reader; to the others not yet a static value)"""
        if self.READ_EVERY_PART or self.READ_DICT_COMPREHENSIONS:
            return self._comprehension(node, env)
        return self._no_expression(node)

    def _comprehension(self, node, env) -> Any:
        results: list = []
        inner = env.child()
        every = self.READ_EVERY_PART

        def walk(comp):
            for item in self._comprehension_items(self._eval(comp.iter, inner), comp, node):
                self._bind_target(comp.target, item, inner)
                tests = [self._eval(cond.test, inner) for cond in comp.ifs] if every else \
                    (self._eval(cond.test, inner) for cond in comp.ifs)
                if every or all(tests):
                    if comp.inner_for_in is not None:
                        walk(comp.inner_for_in)
                    elif isinstance(node, cst.DictComp):
                        results.append((self._eval(node.key, inner), self._eval(node.value, inner)))
                    else:
                        results.append(self._eval(node.elt, inner))

        try:
            walk(node.for_in)
        except DynamicIterable:
            return self._unknown("comprehension over run-time data")
        return self._comprehension_value(results, node)

    def _comprehension_value(self, results: list, node) -> Any:
        """What a comprehension makes of its ``results`` (a dict's are (key, value) pairs)."""
        if isinstance(node, cst.DictComp):
            try:
                return dict(results)
            except TypeError:
                return self._unknown("dict comprehension")
        if isinstance(node, cst.SetComp):
            return self._unknown("set")
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

    def _eval_Lambda(self, node, env):
        """A translating reader reads the body (its parameters undecided); others say what a
        lambda is to them (``_lambda``)."""
        if not self.READ_EVERY_PART:
            return self._lambda(node, env)
        inner = env.child()
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg,
                      params.star_kwarg]:
            if isinstance(param, cst.Param):
                inner.set(param.name.value, self._unknown("a lambda's parameter"))
        self._eval(node.body, inner)
        return self._unknown("lambda")

    def _lambda(self, node: cst.Lambda, env: Env) -> Any:
        return self._no_expression(node)

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
        return self._unknown(what)

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
        try:
            result = fn(value)
        except Exception as exc:  # ``-"text"``
            return self._arith_error(exc, node)
        return self._arith_result(result, op, (value,), node)

    def _eval_BooleanOperation(self, node, env):
        left = self._eval(node.left, env)
        if self.READ_EVERY_PART:
            right = self._eval(node.right, env)
            if self._undecided(left):
                return self._unknown("boolean operation")
            if isinstance(node.operator, cst.And):
                return right if left else left
            return left if left else right
        if isinstance(left, Unknown):
            return left
        if isinstance(node.operator, cst.And):
            return self._eval(node.right, env) if left else left
        return left if left else self._eval(node.right, env)

    def _eval_Comparison(self, node, env):
        left = self._eval(node.left, env)
        if self.READ_EVERY_PART:  # every comparator read, then compared
            rights = [self._eval(target.comparator, env) for target in node.comparisons]
            return self._compare_chain(left, rights, node)
        for target in node.comparisons:
            right = self._eval(target.comparator, env)
            value = self.COMPARANDS.apply(self, left, right, node, target)
            if value is not PASS:
                return value
            if not CMPOPS[type(target.operator)](left, right):
                return False
            left = right
        return True

    def _compare_chain(self, left: Any, rights: list, node) -> Any:
        """``left op0 rights[0] op1 rights[1] ...`` on values already read."""
        for target, right in zip(node.comparisons, rights):
            value = self.COMPARANDS.apply(self, left, right, node, target)
            if value is not PASS:
                return value
            try:
                if not CMPOPS[type(target.operator)](left, right):
                    return False
            except TypeError:
                return self._unknown("comparison")
            left = right
        return True

    def _eval_IfExp(self, node, env):
        mode = self._mode_of(node.test, env)
        if mode is not None:  # ``a if training else b``: both, selected by the mode
            body, orelse = self._eval(node.body, env), self._eval(node.orelse, env)
            train, infer = (body, orelse) if mode else (orelse, body)
            return self._select_mode(train, infer, node)
        test = self._eval(node.test, env)
        if self.READ_EVERY_PART:
            body, orelse = self._eval(node.body, env), self._eval(node.orelse, env)
            if self._undecided(test):
                return self._either(body, orelse, node)
            return body if test else orelse
        if self._undecided(test):
            return self._undecided_choice(node, test, env)
        return self._eval(node.body if test else node.orelse, env)

    def _undecided_choice(self, node, test: Any, env) -> Any:
        """``body if <undecided> else orelse`` (the sides not read yet)."""
        return self._no_condition(node.test)

    def _either(self, body: Any, orelse: Any, node) -> Any:
        """``body if <undecided> else orelse`` (both read: ``READ_EVERY_PART``)."""
        return self._no_condition(node.test)

    def _mode_of(self, test, env) -> bool | None:
        """True/False when ``test`` is the training mode (or its negation), else None."""
        return None

    def _select_mode(self, train: Any, infer: Any, node) -> Any:
        raise NotImplementedError

    def _undecided(self, test: Any) -> bool:
        return isinstance(test, Unknown)

    def _no_condition(self, test) -> Any:
        return self._unknown("condition")

    # -- subscripts -----------------------------------------------------------------------
    def _eval_Subscript(self, node, env):
        base = self._eval(node.value, env)
        value = self.SUBSCRIPTS.apply(self, base, node, env)
        return self._static_subscript(base, node, env) if value is PASS else value

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
            return self._unknown("subscript of a value known only at run time")  # sys.argv[1]
        key = self._subscript_key(node, env)
        try:
            return base[key]
        except Exception as exc:
            return self._subscript_error(exc, node)

    def _subscript_error(self, exc: Exception, node) -> Any:
        raise exc

    # -- calls ----------------------------------------------------------------------------
    def _eval_Call(self, node, env):
        return self._written_call(node, env)

    def _written_call(self, node: cst.Call, env) -> Any:
        """A call written in the source, its target and arguments read (a reader may wrap it whole:
        what the call's reading touched)."""
        return self._call_expression(self._call_target(node.func, env), node, env)

    def _call_target(self, func: cst.BaseExpression, env) -> Any:
        """What a call calls (a reader may read ``obj.method`` as a method, not an attribute)."""
        return self._eval(func, env)

    def _call_expression(self, func: Any, node: cst.Call, env) -> Any:
        """A call of ``func``: its arguments read, then the call."""
        args, kwargs = [], {}
        for arg in node.args:
            value = self._eval(arg.value, env)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star and isinstance(value, Unknown) and self._unknown_star_call(arg):
                return self._unknown("call with unknown *args")
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
        value = self.CALLS.apply(self, func, args, kwargs, node)
        return self._no_call(func, args, kwargs, node) if value is PASS else value

    def _no_call(self, func: Any, args: list, kwargs: dict, node) -> Any:
        """A callee no handler took: a builtin runs on static arguments."""
        if func in self._builtin_functions and not any(
                isinstance(a, Unknown) for a in [*args, *kwargs.values()]):
            return func(*args, **kwargs)
        return self._unknown("call")

    @property
    def _builtin_functions(self) -> list:
        return list(self.BUILTINS.values())

    # -- user functions -------------------------------------------------------------------
    def _bind_arguments(self, fn: cst.FunctionDef, args: list, kwargs: dict, defaults_env: Env,
                        skip: int = 0, missing: Any = _MISSING) -> dict[str, Any]:
        """``fn``'s parameters (after the first ``skip``: ``self``) bound to a call's arguments:
        positional, by keyword, defaults (evaluated in ``defaults_env``), ``*args``/``**kwargs``,
        as Python binds them. Raises ArgumentError; with ``missing`` given, a parameter without
        an argument is bound to it and surplus arguments are dropped instead."""
        params = fn.params
        positional = (list(params.posonly_params) + list(params.params))[skip:]
        star_arg = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        if len(args) > len(positional) and star_arg is None:
            if missing is _MISSING:
                raise ArgumentError("too many")
            args = args[:len(positional)]
        rest = dict(kwargs)
        bound: dict[str, Any] = {}

        def bind(param: cst.Param, given: list) -> None:
            name = param.name.value
            if given:
                bound[name] = self._parameter_value(name, given[0], fn, None)
            elif name in rest:
                bound[name] = self._parameter_value(name, rest.pop(name), fn, None)
            elif param.default is not None:
                bound[name] = self._parameter_value(name, self._eval(param.default, defaults_env), fn, param.default)
            elif missing is not _MISSING:
                bound[name] = missing
            else:
                raise ArgumentError("missing", name)

        for i, param in enumerate(positional):
            bind(param, args[i:i + 1])
        if star_arg is not None:
            bound[star_arg.name.value] = tuple(args[len(positional):])
        for param in params.kwonly_params:
            bind(param, [])
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
