"""Whether code uses Keras, decided by what its names are bound to, not by its text.

The reader asks this of a statement before running it (does a loop build layers? does a
module-level statement wait for the builders?). A word in the source text ("keras" in a
string or a comment, ``n_layers``, ``self.layers``) says nothing: a name says what it is
bound to in the scope the code runs in (an import of Keras or TensorFlow, a Keras API
object, a Layer/Model subclass, a layer or model object, a function of the script that
itself builds layers).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler import cst_fast

from transpiler.frontend_ast.interp.values import ClassRef, FunctionRef
from transpiler.frontend_ast.keras.values import (ApiRef, LambdaLayerObj, LayerObj, ModelHandle, ModelObj,
                                                  ModuleRef, UserObj, is_keras_binding, keras_api_name,
                                                  resolve_api)

_KERAS_OBJECTS = (LayerObj, ModelObj, ModelHandle, LambdaLayerObj, UserObj)
_MODEL_KINDS = ("model", "sequential", "input")
_LAYER_KINDS = ("layer", "merge", *_MODEL_KINDS)


class _RootNames:
    """The names ``node`` reads: ``a`` of ``a.b.c``, not attribute names, keyword names of
    calls, parameters or the names of what it defines (found by ``_names``)."""

    def __init__(self):
        self.names: list[cst.Name] = []
        self.chains: list[cst.BaseExpression] = []  # the longest dotted names: ``keras.layers.Dense``
        self.calls: list[cst.BaseExpression] = []


def _dotted(node: cst.BaseExpression) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _names(node: cst.CSTNode) -> _RootNames:
    """What a read-only visitor of the rules above finds (tests/test_cst_fast.py holds it as the
    reference: the same nodes, not in source order, which no caller needs), without libcst's
    visit, which rebuilds every node it passes."""
    found = _RootNames()
    stack = [node]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is cst.Name:
            found.names.append(n)
            found.chains.append(n)
            continue
        if t is cst.Attribute:
            if _dotted(n):
                found.chains.append(n)
                root = n
                while isinstance(root, cst.Attribute):
                    root = root.value
                found.names.append(root)
            else:
                stack.append(n.value)
            continue
        if t is cst.Arg:
            stack.append(n.value)
        elif t is cst.Param:
            if n.default is not None:
                stack.append(n.default)
        elif t is cst.FunctionDef:
            stack += [n.body, n.params]
        elif t is cst.ClassDef:
            stack.append(n.body)
            stack.extend(n.bases)
        elif t is not cst.Import and t is not cst.ImportFrom:
            if t is cst.Call:
                found.calls.append(n.func)
            stack.extend(cst_fast.child_nodes(n))
    return found


class KerasNames:
    """Mixin of the Keras reader: questions about code answered by name resolution."""

    def _bound(self, name: str, env) -> Any:
        try:
            return (env or self.globals).lookup(name)
        except KeyError:
            return None

    def _keras_value(self, value: Any, seen: set) -> bool:
        if is_keras_binding(value) or isinstance(value, _KERAS_OBJECTS):
            return True
        if isinstance(value, ClassRef):
            return value.kind in ("layer", "model")
        if isinstance(value, FunctionRef) and id(value.node) not in seen:
            seen.add(id(value.node))  # a function of the script that builds layers itself
            return self._uses_keras(value.node.body, value.env, seen)
        return False

    def _uses_keras(self, node: cst.CSTNode, env=None, seen: set | None = None) -> bool:
        """``node`` reads a name bound to Keras/TensorFlow or to a Keras object."""
        seen = set() if seen is None else seen
        return any(self._keras_value(self._bound(n.value, env), seen) for n in _names(node).names)

    def _builds_layers(self, node: cst.CSTNode, env=None, seen: set | None = None) -> bool:
        """``node`` names a Keras layer or model constructor (supported or not), a Layer/Model
        subclass of the script, or a function of the script that does (calling a model or a
        layer that exists builds nothing)."""
        seen = set() if seen is None else seen
        for chain in _names(node).chains:
            value = self._resolve_dotted(chain, env)
            if isinstance(value, ApiRef) and value.kind in _LAYER_KINDS:
                return True
            if isinstance(value, ModuleRef) and (keras_api_name(value.path) or "").startswith("layers."):
                return True  # a layer class this translator does not know is still a layer
            if isinstance(value, ClassRef) and value.kind in ("layer", "model"):
                return True
            if isinstance(value, FunctionRef) and id(value.node) not in seen:
                seen.add(id(value.node))
                if self._builds_layers(value.node.body, value.env, seen):
                    return True
        return False

    def _resolve_dotted(self, expr: cst.BaseExpression, env) -> Any:
        """What a name or a dotted name is bound to, without running anything."""
        if isinstance(expr, cst.Name):
            return self._bound(expr.value, env)
        if isinstance(expr, cst.Attribute):
            base = self._resolve_dotted(expr.value, env)
            if isinstance(base, ModuleRef):
                return resolve_api(f"{base.path}.{expr.attr.value}")
        return None

    def _makes_models(self, node: cst.CSTNode, env=None) -> bool:
        """``node`` calls ``keras.Model``/``Sequential``/``Input`` or a Model subclass."""
        for func in _names(node).calls:
            value = self._resolve_dotted(func, env)
            if isinstance(value, ApiRef) and value.kind in _MODEL_KINDS:
                return True
            if isinstance(value, ClassRef) and value.kind == "model":
                return True
        return False
