"""The astroid fallback: module-level values the interpreter did not bind while running
the module (a constant set under an undecidable ``if``), answered by astroid's inference.

astroid costs ~0.3 s to start, so it is asked only about names the module can bind at all
(``_module_may_bind``); it reads the module's top level only, without framework imports.
"""

from __future__ import annotations

import ast
import builtins
import functools
from typing import Any

import libcst as cst

from transpiler import cst_fast

from transpiler.frontend_ast.interp.operators import SAFE_BUILTINS
from transpiler.frontend_ast.interp.values import Unknown

_ASTROID_UNKNOWN = object()
_ASK_ASTROID = object()
#: what an assignment's value may be for its answer to be read without astroid
_PLAIN = (int, float, str, bool, type(None))

#: modules whose values are never static constants for the translation (and whose
#: sources astroid would otherwise parse, for seconds, to find that out)
FRAMEWORK_MODULES = {"keras", "tensorflow", "tf_keras", "torch", "jax"}


class ModuleConstants:
    """Mixin of :class:`Interpreter`: needs ``self.module`` (the libcst Module) and ``self.path``."""

    _astroid_module: Any = None

    def _astroid_value(self, name: str) -> Any:
        """Ask astroid for a module-level value the interpreter did not bind.

        Only a value every assignment of ``name`` agrees on is static: ``UNITS = 64``
        in one branch of an undecidable ``if`` and ``UNITS = 8`` in the other is not.
        """
        _none = object()
        found: Any = _none
        if not self._module_may_bind(name):
            return Unknown(f"name {name!r}")  # what astroid answers too, without its ~0.3 s start-up
        answer = self._answer_without_astroid(name)
        if answer is not _ASK_ASTROID:
            return answer
        try:
            import astroid

            if self._astroid_module is None:
                self._astroid_module = astroid.parse(self._astroid_source(), path=self.path)
            for assigned in self._astroid_module.locals.get(name, []):
                if not _astroid_static(assigned, astroid):
                    return Unknown(f"name {name!r}")
                for inferred in assigned.infer():
                    value = _astroid_constant(inferred, astroid)
                    if value is _ASTROID_UNKNOWN:
                        return Unknown(f"name {name!r}")
                    if found is not _none and (type(found) is not type(value) or found != value):
                        return Unknown(f"name {name!r} has several values")
                    found = value
        except Exception:  # astroid raises many kinds of inference errors
            return Unknown(f"name {name!r}")
        return Unknown(f"name {name!r}") if found is _none else self._module_constant(name, found)

    def _module_constant(self, name: str, value: Any) -> Any:
        """Provenance hook: a module-level constant ``name`` bound to ``value`` (identity here)."""
        return value

    def _module_may_bind(self, name: str) -> bool:
        """False when astroid's module cannot bind ``name`` (``print``, ``slice``): nothing in
        the source astroid reads binds it, and no star import there could."""
        bound = self._astroid_bound
        return bound is None or name in bound

    def _answer_without_astroid(self, name: str) -> Any:
        """astroid's answer for ``name`` where it is plain from the ``ast`` tree of the same
        source (importing and starting astroid costs more than translating a script), else
        ``_ASK_ASTROID``. Plain: a module-level assignment of ``name`` whose value calls
        anything but a safe builtin (astroid's answer is Unknown, :func:`_astroid_static`),
        or every assignment a single-name ``=`` of a literal astroid reads as a constant."""
        bindings = self._module_bindings
        stmts = bindings.get(name) if bindings is not None else None
        if not stmts:
            return _ASK_ASTROID
        found: list = []
        for stmt in stmts:  # (astroid's order and checks, one assignment after the other)
            if not _ast_static(stmt) or self._unresolvable(stmt):
                return Unknown(f"name {name!r}")
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                return _ASK_ASTROID
            try:
                value = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return _ASK_ASTROID
            if not _plain(value):
                return _ASK_ASTROID
            if found and (type(found[0]) is not type(value) or found[0] != value):
                return Unknown(f"name {name!r} has several values")
            found = [value]
        return self._module_constant(name, found[0])

    def _unresolvable(self, stmt: ast.stmt) -> bool:
        """The assignment's value is ``a.b.c`` (or ``a``) whose root name nothing in astroid's
        source binds and no builtin is (a framework module whose import was left out, such as
        ``tf.data.AUTOTUNE``): astroid cannot infer it."""
        value = getattr(stmt, "value", None)
        while isinstance(value, ast.Attribute):
            value = value.value
        bound = self._astroid_bound
        return (isinstance(value, ast.Name) and bound is not None and value.id not in bound
                and not hasattr(builtins, value.id))

    @functools.cached_property
    def _module_bindings(self) -> dict[str, list] | None:
        """Name → the assignment statements (``=``, ``+=``, annotated) that bind it in the
        module scope of :meth:`_astroid_source` (under ifs, loops, ``with`` and ``try`` too; not
        in functions, classes, lambdas or comprehensions), or None when the source has a
        ``global`` or a walrus (bindings this scan does not follow: astroid is asked)."""
        tree = self._astroid_tree
        if tree is None:
            return None
        out: dict[str, list] = {}
        stack = list(tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
                                 ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                if any(isinstance(n, (ast.Global, ast.Nonlocal, ast.NamedExpr)) for n in ast.walk(node)):
                    return None
                continue
            if isinstance(node, (ast.Global, ast.Nonlocal, ast.NamedExpr)):
                return None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                            out.setdefault(n.id, []).append(node)
            stack.extend(ast.iter_child_nodes(node))
        for stmts in out.values():  # (source order: astroid's order, for "has several values")
            stmts.sort(key=lambda s: (s.lineno, s.col_offset))
        return out

    @functools.cached_property
    def _astroid_tree(self) -> ast.Module | None:
        try:
            return ast.parse(self._astroid_source())
        except (SyntaxError, ValueError):
            return None

    @functools.cached_property
    def _astroid_bound(self) -> frozenset[str] | None:
        """Every name :meth:`_astroid_source` binds anywhere, in any scope (a superset of the
        module's: astroid builds it from the same ``ast`` tree, names NFKC-normalised alike),
        or None when a star import could bind any name."""
        tree = self._astroid_tree
        if tree is None:
            return None
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                if node.name == "*":
                    return None
                names.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.add(node.rest)
        return frozenset(names)

    def _astroid_source(self) -> str:
        """The module's top level without functions and classes (imports of frameworks left out):
        the names astroid is asked about are module-level constants, and a class deriving
        from keras.Model makes astroid read all of Keras (10 s) just to build the module.
        (Once per module: several readers of one script each ask.)"""
        hit = _ASTROID_SOURCES.get_fresh(id(self.module))
        if hit is not None and hit[0] is self.module:
            return hit[1]
        text = self._astroid_source_of_module()
        _ASTROID_SOURCES.put(id(self.module), (self.module, text))
        return text

    def _astroid_source_of_module(self) -> str:
        keep = []
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if not isinstance(stmt, cst.SimpleStatementLine):
                keep.append(cst.Module([]).code_for_node(stmt))  # constants set under an if
                continue
            small = stmt.body[0]
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                code = cst.Module([]).code_for_node(small)
                words = code.replace(",", " ").replace(".", " ").split()
                if any(w in FRAMEWORK_MODULES for w in words):
                    continue
            keep.append(cst.Module([]).code_for_node(stmt))
        return "".join(keep)


_ASTROID_SOURCES = cst_fast.Bounded(4)  # id(module) -> (module, its _astroid_source)


def _astroid_static(assigned: Any, astroid: Any) -> bool:
    """Whether an assignment can bind a constant worth asking astroid about: no calls but
    to safe builtins, nothing imported from a framework."""
    stmt = assigned.statement()
    if isinstance(stmt, (astroid.Import, astroid.ImportFrom)):
        modname = getattr(stmt, "modname", None) or stmt.names[0][0]
        return modname.split(".")[0] not in FRAMEWORK_MODULES
    value = getattr(stmt, "value", None)
    if value is None:
        return True
    for call in value.nodes_of_class(astroid.Call):
        if not (isinstance(call.func, astroid.Name) and call.func.name in SAFE_BUILTINS):
            return False
    return True


def _ast_static(stmt: ast.stmt) -> bool:
    """:func:`_astroid_static` of an ``ast`` assignment: its value calls nothing but safe builtins."""
    value = getattr(stmt, "value", None)
    if value is None:
        return True
    return all(isinstance(call.func, ast.Name) and call.func.id in SAFE_BUILTINS
               for call in ast.walk(value) if isinstance(call, ast.Call))


def _plain(value: Any) -> bool:
    """A value astroid infers as a Const, or a list or tuple of such (what _astroid_constant returns)."""
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return type(value) in _PLAIN


def _astroid_constant(inferred: Any, astroid: Any) -> Any:
    """A Python value for an astroid constant, list or tuple of constants."""
    if isinstance(inferred, astroid.Const):
        return inferred.value
    if isinstance(inferred, (astroid.List, astroid.Tuple)):
        values = [_astroid_constant(e, astroid) for e in inferred.elts]
        if any(v is _ASTROID_UNKNOWN for v in values):
            return _ASTROID_UNKNOWN
        return values if isinstance(inferred, astroid.List) else tuple(values)
    return _ASTROID_UNKNOWN
