"""Run-time sizes read inside the script's functions and Layer methods (issue 18 item 1).

At module level a size the program computes when it runs (``Dense(len(chars))``,
``Dense(num_classes)`` with ``num_classes = len(np.unique(y))``) becomes a run-time size:
a stand-in number that remembers its code (:func:`transpiler.frontend_ast.size_names.runtime_size`);
the generated module takes it as a constructor argument and the code that builds the
model passes that code.

Inside a function (a builder ``create_model()``, a helper it calls, a Layer's
``__init__``) the same holds when the code reads only names of the module (``num_classes``,
``len(class_names)``): the generated builder evaluates that code where it constructs the
module, at the same point of the run as Keras evaluated it inside the function. Code that
reads a local of a function (``n = len(vocab)`` then ``Dense(n)``) is followed back to
what the local was bound to, as long as that is code reading module names; otherwise the
size is refused as before (a stub), never printed as its stand-in number.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from transpiler.cst_fast import nodes_of, statement_blocks, walk
from transpiler.frontend_ast.interp.values import Unknown
from transpiler.frontend_ast.size_names import runtime_size


class KerasRuntimeSizes:
    """Mixin of the Keras reader: which run-time values become run-time sizes."""

    def _runtime_size(self, value: Any) -> Any:
        """``value`` as a run-time size when the program computes it (an ``Unknown`` whose code
        is known) by code the place constructing the model can evaluate; else unchanged."""
        first = value
        if not self.runtime_sizes or type(value).__name__ != "Unknown":
            return value
        source = getattr(value, "source", None)
        if not isinstance(source, cst.BaseExpression):
            return value
        if not self.scope_stack and not self.self_stack:
            return self._interned(value, None)
        seen = 0
        while value is not None and seen < 16:  # the name read, then what it was bound to, ...
            source = getattr(value, "source", None)
            self._read_literal = False
            code = self._module_level_code(source, env=getattr(value, "read_env", None)) \
                if isinstance(source, cst.BaseExpression) else None
            if code is not None:  # (named after the code as written there: ``width // 2``,
                # or, where it reads a loop item, after the code computing it: ``len_VOCAB_age``)
                text = cst.Module([]).code_for_node(code)
                name = _identifier_of(text if self._read_literal else cst.Module([]).code_for_node(source))
                name = self._free_name(name, text)
                return self._interned(Unknown(value.reason, source=code), name)
            value, seen = getattr(value, "origin", None), seen + 1
        return first

    def _runtime_int(self, value: Any) -> Any:
        """``value`` as a run-time size where the code computing it is that of a whole number
        (``len(class_names)``, ``x.shape[1]``, ``n_classes * 2``, or a name bound to such
        code): an argument of a builder or a Layer that is not passed to a size argument
        (``Input(shape=...)`` may be handed a whole run-time shape, which is not one size)."""
        if type(value).__name__ == "Unknown" and _int_like(value):
            return self._runtime_size(value)
        return value

    def _free_name(self, name: str, code: str) -> str:
        """``name`` for the run-time size computing ``code``, unless another size's code
        took it (one ``len(vocabulary)`` read per loop item ``"age"``, ``"city"``, ...):
        then a name made from ``code`` (``len_VOCAB_age``), numbered if that is taken too."""
        taken = self.__dict__.setdefault("_runtime_names", {})
        for candidate in (name, _identifier_of(code)):
            if taken.setdefault(candidate, code) == code:
                return candidate
        n = 2
        while taken.setdefault(f"{name}_{n}", code) != code:
            n += 1
        return f"{name}_{n}"

    def _interned(self, value, name: str | None):
        """One run-time size per piece of code: the same code read twice (``width // 2`` for
        a helper and for a layer) is the same size, so printing one prints the other."""
        cache = self.__dict__.setdefault("_runtime_cache", {})
        size = runtime_size(value, name)
        sym = getattr(size, "expr", None)
        if sym is None:
            return size
        return cache.setdefault(sym.arg, size)

    def _module_level_code(self, node: cst.BaseExpression, depth: int = 0, env=None) -> cst.BaseExpression | None:
        """``node`` (an expression of a function's body) rewritten to read module names only:
        each function local it reads replaced by the code the local was bound to (followed
        back through the function's statements), or, for a local holding a static value
        where it is read (``env``: a loop variable's item ``"age"``, a parameter's ``3``), by
        that value as a literal; None when some name is not a module name
        and cannot be followed back, or the code calls the script's own functions or classes."""
        if depth > 8:
            return None
        if self._calls_program(node):
            return None
        bound_inside = _bound_in_expression(node)
        replacements: dict[str, cst.BaseExpression] = {}
        for name in {n.value for n in _read_names(node)} - bound_inside:
            functions = self._functions_around(node)
            if not any(name in _locals_of(fn) for fn in functions):
                if name not in self.globals.vars and name not in self.BUILTINS \
                        and not self._bound_before_builder_call(name):
                    return None  # (bound later, or nowhere: not code the output can run)
                continue
            origin = self._binding_of(name, functions, node)
            code = None if origin is None else self._module_level_code(origin, depth + 1, env)
            if code is None:
                code = _literal(env.find(name, _UNBOUND)) if env is not None else None
                self._read_literal = self._read_literal or code is not None
            if code is None:
                return None
            replacements[name] = code
        if not replacements:
            return node
        if isinstance(node, cst.Name):
            return replacements[node.value]
        return node.visit(_Substitute(replacements))

    def _bound_before_builder_call(self, name: str) -> bool:
        """``name`` is bound by a statement of the module's top level that the definitions
        pass does not run (a loop's ``lookup = StringLookup(...)``, a ``with`` block's
        assignment), above the first top-level line calling the builder being read: the
        output keeps that statement, so the code reading ``name`` runs after it."""
        bound = self.__dict__.get("_runtime_top_bindings")
        if bound is None:
            bound = self._runtime_top_bindings = _top_level_bindings(self.module.body, self.positions)
        lines = bound.get(name)
        if not lines:
            return False
        builder = self.scope_stack[0] if self.scope_stack else None
        first_call = None
        for stmt in self.module.body:
            if builder is None or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if any(isinstance(c.func, cst.Name) and c.func.value == builder for c in nodes_of(stmt, cst.Call)):
                where = self.positions.get(stmt)
                first_call = where.start.line if where is not None else None
                break
        return first_call is None or min(lines) < first_call

    def _functions_around(self, node: cst.CSTNode) -> list[cst.FunctionDef]:
        """The function definitions (innermost last) whose lines hold ``node``."""
        try:
            pos = self.positions[node]
        except KeyError:
            return []
        if "_function_spans" not in self.__dict__:
            spans = []
            for fn in nodes_of(self.module, cst.FunctionDef):
                where = self.positions.get(fn)
                if where is not None:
                    spans.append((where.start.line, where.end.line, fn))
            self._function_spans = spans
        return [fn for start, end, fn in self._function_spans if start <= pos.start.line <= end]

    def _binding_of(self, name: str, functions: list[cst.FunctionDef], where: cst.CSTNode):
        """The expression the one plain assignment ``name = <expr>`` above ``where`` in the
        innermost function binding ``name`` assigns; None for a parameter, a loop variable,
        a name bound more than once, or anything else."""
        fn = next((f for f in reversed(functions) if name in _locals_of(f)), None)
        if fn is None or name in _parameters_of(fn):
            return None
        assigns = []
        for small in nodes_of(fn.body, cst.Assign):
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and small.targets[0].target.value == name:
                assigns.append(small)
        if len(assigns) != 1 or _binding_count(fn, name) != 1:
            return None
        line = self.positions.get(assigns[0])
        here = self.positions.get(where)
        if line is None or here is None or line.start.line > here.start.line:
            return None
        return assigns[0].value


_UNBOUND = object()


def _top_level_bindings(body, positions) -> dict[str, list[int]]:
    """Name → the lines of the module's top-level statements (in blocks of loops, ``if``,
    ``with``, ``try`` too, never in a function or class) that bind it."""
    out: dict[str, list[int]] = {}

    def add(target, stmt) -> None:
        where = positions.get(stmt)
        if where is None:
            return
        for n in ([target] if isinstance(target, cst.Name) else nodes_of(target, cst.Name)):
            out.setdefault(n.value, []).append(where.start.line)

    def block(stmts) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            add(t.target, stmt)
                    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                        add(small.target, stmt)
            elif isinstance(stmt, cst.For):
                add(stmt.target, stmt)
                block(stmt.body.body)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        add(item.asname.name, stmt)
                block(stmt.body.body)
            elif isinstance(stmt, (cst.If, cst.While, cst.Try)):
                for child in statement_blocks(stmt):
                    block(child)
    block(body)
    return out


def _literal(value: Any, depth: int = 0) -> cst.BaseExpression | None:
    """``value`` (a static Python value: a string, a plain number, a tuple or list of
    those) as source code, or None (a size, a run-time value, anything else)."""
    if depth > 4:
        return None
    if value is None or isinstance(value, (bool, str)) or type(value) in (int, float):
        try:
            return cst.parse_expression(repr(value))
        except Exception:  # (a float repr such as inf/nan is no literal)
            return None
    if type(value) in (tuple, list) and len(value) <= 16:
        items = [_literal(v, depth + 1) for v in value]
        if any(i is None for i in items):
            return None
        text = ", ".join(cst.Module([]).code_for_node(i) for i in items)
        return cst.parse_expression(f"({text},)" if type(value) is tuple else f"[{text}]")
    return None


class _Substitute(cst.CSTTransformer):
    def __init__(self, replacements: dict[str, cst.BaseExpression]):
        self.replacements = replacements

    def leave_Name(self, original, updated):
        new = self.replacements.get(original.value)
        if new is None:
            return updated
        if isinstance(new, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.SimpleString,
                            cst.Float, cst.Tuple, cst.List)):
            return new
        return new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    def leave_Attribute(self, original, updated):
        # ``x.shape``: only the object is a name read, never the attribute
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _nodes(node: cst.CSTNode, types: tuple):
    return (n for n in walk(node) if type(n) in types)


def _read_names(node: cst.CSTNode):
    """The names ``node`` reads (not attribute names, keyword names or lambda parameters)."""
    skip: set[int] = set()
    for attr in nodes_of(node, cst.Attribute):
        skip.add(id(attr.attr))
    for arg in nodes_of(node, cst.Arg):
        if arg.keyword is not None:
            skip.add(id(arg.keyword))
    for name in nodes_of(node, cst.Name):
        if id(name) not in skip:
            yield name


def _bound_in_expression(node: cst.CSTNode) -> set[str]:
    """Names a comprehension or lambda inside ``node`` binds."""
    out: set[str] = set()
    for comp in nodes_of(node, cst.CompFor):
        out |= {n.value for n in nodes_of(comp.target, cst.Name)}
    for lam in nodes_of(node, cst.Lambda):
        out |= {p.name.value for p in lam.params.params}
    return out


#: a cache of :func:`_locals_of` (it holds the function it answers for, so an id is never
#: reused while its entry lives); bounded, so that a long-lived process (directory mode, a
#: test run) does not keep every translated script's functions alive
_LOCALS: dict[int, tuple[cst.FunctionDef, set[str]]] = {}
_LOCALS_MAX = 512


def _parameters_of(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    params = list(p.posonly_params) + list(p.params) + list(p.kwonly_params)
    params += [x for x in (p.star_arg, p.star_kwarg) if isinstance(x, cst.Param)]
    return {x.name.value for x in params}


def _locals_of(fn: cst.FunctionDef) -> set[str]:
    """The names ``fn`` binds (parameters, assignment and loop targets, imports, nested
    definitions, ``with ... as``, ``except ... as``), less those it declares global."""
    cached = _LOCALS.get(id(fn))
    if cached is not None and cached[0] is fn:
        return cached[1]
    names = set(_parameters_of(fn))
    for node in _nodes(fn.body, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor,
                                 cst.WithItem, cst.ExceptHandler, cst.NamedExpr)):
        targets = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            targets = [node.asname.name]
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            targets = [node.name.name]
        for t in targets:
            names |= {n.value for n in nodes_of(t, cst.Name)} if not isinstance(t, cst.Name) else {t.value}
    for node in _nodes(fn.body, (cst.FunctionDef, cst.ClassDef)):
        names.add(node.name.value)
    for node in _nodes(fn.body, (cst.Import, cst.ImportFrom)):
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname else alias.name
                names |= {bound.value} if isinstance(bound, cst.Name) else {_root(bound)}
    for node in nodes_of(fn.body, cst.Global):
        names -= {n.name.value for n in node.names}
    if len(_LOCALS) >= _LOCALS_MAX:
        _LOCALS.clear()
    _LOCALS[id(fn)] = (fn, names)
    return names


def _root(node) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _binding_count(fn: cst.FunctionDef, name: str) -> int:
    """How many statements of ``fn`` bind ``name`` (assignments of every kind, loops, ...)."""
    count = 0
    for node in _nodes(fn.body, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.WithItem, cst.NamedExpr)):
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, cst.WithItem):
            targets = [node.asname.name] if node.asname is not None else []
        else:
            targets = [node.target]
        count += sum(1 for t in targets for n in ([t] if isinstance(t, cst.Name) else nodes_of(t, cst.Name))
                     if n.value == name)
    return count


def _identifier_of(text: str) -> str:
    name = re.sub(r"\W+", "_", text).strip("_") or "size"
    return f"n_{name}" if name[0].isdigit() else name


#: calls whose result is a whole number
_INT_CALLS = {"len", "int", "round"}
#: methods whose result is a whole number (the size of a text/lookup layer's vocabulary)
_INT_METHODS = {"vocabulary_size"}


def _int_like(value, depth: int = 0) -> bool:
    """The code an Unknown came from (or a value it was bound from) computes a whole number."""
    while value is not None and depth < 16:
        if _int_code(getattr(value, "source", None)):
            return True
        value, depth = getattr(value, "origin", None), depth + 1
    return False


def _int_code(node) -> bool:
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Call):
        func = node.func
        # (``vectorizer.vocabulary_size()``: Keras' text and lookup layers count their ids)
        return isinstance(func, cst.Name) and func.value in _INT_CALLS or \
            isinstance(func, cst.Attribute) and func.attr.value in _INT_METHODS and not node.args
    if isinstance(node, cst.Subscript):  # ``x.shape[1]``: one axis of a shape
        base = node.value
        items = node.slice
        return isinstance(base, cst.Attribute) and base.attr.value == "shape" and len(items) == 1 \
            and isinstance(items[0].slice, cst.Index) and isinstance(
                items[0].slice.value, (cst.Integer, cst.UnaryOperation))
    if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)):
        return _int_code(node.left) and (_int_code(node.right) or isinstance(node.right, cst.Name)) or \
            _int_code(node.right) and isinstance(node.left, cst.Name)
    return False
