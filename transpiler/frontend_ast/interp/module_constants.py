"""The astroid fallback: module-level values the interpreter did not bind while running
the module (a constant set under an undecidable ``if``), answered by astroid's inference.

astroid costs ~0.3 s to start, so it is asked only about names the module can bind at all
(``_module_may_bind``); it reads the module's top level only, without framework imports.
"""

from __future__ import annotations

import functools
from typing import Any

import libcst as cst

from transpiler.frontend_ast.interp.operators import SAFE_BUILTINS
from transpiler.frontend_ast.interp.values import Unknown

_ASTROID_UNKNOWN = object()

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

    @functools.cached_property
    def _astroid_bound(self) -> frozenset[str] | None:
        """Every name :meth:`_astroid_source` binds anywhere, in any scope (a superset of the
        module's: astroid builds it from the same ``ast`` tree, names NFKC-normalised alike),
        or None when a star import could bind any name."""
        import ast

        try:
            tree = ast.parse(self._astroid_source())
        except (SyntaxError, ValueError):
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
        from keras.Model makes astroid read all of Keras (10 s) just to build the module."""
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
