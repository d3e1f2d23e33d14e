"""Models Keras builds lazily: a subclassed model or a ``keras.Sequential`` whose input
shape the script never states (no ``keras.Input``, no ``build((None, ...))``, fitted on a
``tf.data`` pipeline whose element shape is not known statically).

Keras builds such a model on its first call, from the shape of what it is called on. The
reader does the same from what the model's ``call()`` first hands its input to
("sizes from first use"): a model that is built (a Functional or Sequential model given as a
constructor argument: a GAN's generator, a distiller's teacher), a layer whose input is
fixed by its kind (``Embedding``: integer ids of shape ``(batch, steps)``, steps free), a
layer given ``input_shape=``, or another custom layer/model, read the same way. A tuple
input (``source = inputs[0]``) is read element by element.

A model whose input shape cannot be found that way is never refused as a whole program:
its training statements are reported as stubs (see ``frontend.run``), and a
``keras.Sequential`` held by a custom layer that is never called is simply part of that
layer (Keras would never build it either).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler.frontend_ast.interp import ClassRef, Unknown
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.values import (
    ArrayVal, FrontendError, LayerObj, ModelHandle, ModelObj, TensorVal, UserObj)
from transpiler.ir.graph import Span

#: a spec: one (shape without the batch axis, dtype) per model input
Spec = list[tuple[tuple, str]]

#: how deep the reader follows a custom layer into the layers it calls
_MAX_DEPTH = 8

#: layers whose input is fixed by their kind: token ids of any length
_TOKEN_LAYERS = ("embedding",)


def _is_name(node: cst.BaseExpression, names: set[str]) -> bool:
    return isinstance(node, cst.Name) and node.value in names


def _index_of(node: cst.BaseExpression, names: set[str]) -> int | None:
    """``inputs[1]`` → 1 when ``inputs`` is one of ``names``."""
    if isinstance(node, cst.Subscript) and _is_name(node.value, names) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            return int(index.value.value)
    return None


class _FirstUses(cst.CSTVisitor):
    """The calls that hand the input parameter (or one element of it) to something, in the
    order Python evaluates them (an inner call first): (callee expression, element index
    or None)."""

    def __init__(self, param: str):
        self.names = {param}
        self.elements: dict[str, int] = {}  # ``source = inputs[0]``
        self.uses: list[tuple[cst.BaseExpression, int | None]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        target = node.targets[0].target.value
        if _is_name(node.value, self.names):
            self.names.add(target)
        index = _index_of(node.value, self.names)
        if index is not None:
            self.elements[target] = index

    def leave_Call(self, node: cst.Call) -> None:
        for arg in node.args[:1]:
            if arg.keyword is not None:
                continue
            if _is_name(arg.value, self.names):
                self.uses.append((node.func, None))
            elif _is_name(arg.value, set(self.elements)):
                self.uses.append((node.func, self.elements[arg.value.value]))
            else:
                index = _index_of(arg.value, self.names)
                if index is not None:
                    self.uses.append((node.func, index))

    # a nested function or class is not run where it is defined
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


class KerasLazyModels:
    """Mixin of KerasFrontend: models whose input shape comes from their first use."""

    # -- the input a model or layer takes ---------------------------------------------------
    def _input_spec(self, thing: Any, depth: int = 0) -> Spec | None:
        """What ``thing`` (a model, a Keras layer, a custom layer) must be called on, when its
        own definition fixes it; None when it takes any shape."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(thing, ModelHandle):
            thing = self._handle_model(thing)
        if isinstance(thing, ModelObj):
            if thing.graph is not None:
                return [(tuple(v.shape[1:]), v.dtype) for v in thing.graph.inputs]
            if thing.user is not None:
                return self._input_spec(thing.user, depth + 1)
            if thing.input_shape is not None:
                return [(tuple(thing.input_shape), thing.input_dtype)]
            return self._input_spec(thing.layers[0], depth + 1) if thing.layers else None
        if isinstance(thing, LayerObj):
            if thing.input_shape is not None:
                return [(tuple(thing.input_shape), "float32")]
            if thing.spec.op in _TOKEN_LAYERS:
                return [((None,), "int64")]
            return None
        if isinstance(thing, UserObj):
            fn = thing.cls.method("call")
            params = [p.name.value for p in fn.params.params] if fn is not None else []
            if len(params) < 2:
                return None
            return self._first_use(thing, fn, params[1], depth)
        return None

    def _first_use(self, obj: UserObj, fn: cst.FunctionDef, param: str, depth: int) -> Spec | None:
        """The input spec of ``obj.call``'s ``param``, from the first things it is handed to."""
        uses = _FirstUses(param)
        fn.body.visit(uses)
        found: dict[int | None, tuple] = {}
        for func, index in uses.uses:
            if index in found:
                continue
            spec = self._input_spec(self._callee(obj, func), depth + 1)
            if spec is None or len(spec) != 1:
                if index is None and spec is not None:
                    found[None] = spec  # the whole input handed to a model of several inputs
                continue
            found[index] = spec[0]
        if None in found:
            whole = found[None]
            return whole if isinstance(whole, list) else [whole]
        if found and sorted(found) == list(range(len(found))):
            return [found[i] for i in range(len(found))]
        return None

    def _callee(self, obj: UserObj, func: cst.BaseExpression) -> Any:
        """What ``self.encoder`` / ``data_augmentation`` names in a method of ``obj``."""
        if isinstance(func, cst.Attribute) and _is_name(func.value, {"self"}):
            return obj.attrs.get(func.attr.value)
        if isinstance(func, cst.Name):
            env = obj.cls.env if obj.cls.env is not None else self.globals
            try:
                return env.lookup(func.value)
            except KeyError:
                return None
        return None

    def _handle_model(self, handle: ModelHandle) -> ModelObj | None:
        """The model a builder function returned (``model = build()`` at module level)."""
        if isinstance(handle.model, ModelObj):
            return handle.model
        return next((m for m, builder, _v, _a in self.models if builder == handle.builder), None)

    def _build_handle(self, handle: ModelHandle, args, kwargs, node: cst.CSTNode) -> bool:
        """``model.build((None, 13))`` on the model a builder function returned unbuilt
        (``return keras.Sequential([...])``): the builder's model takes that input shape, as
        the Keras model does; the statement goes with the model."""
        model = self._handle_model(handle)
        shape = args[0] if args else kwargs.get("input_shape")
        if not isinstance(model, ModelObj) or not self._unbuilt(model) or not isinstance(shape, (tuple, list)) \
                or not shape or any(not isinstance(d, int) for d in shape[1:]):
            return False
        if model.user is None:
            model.input_shape = tuple(shape[1:])
        else:
            self._build_subclass(model, tuple(shape), self._span(node))
        model.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
        return True

    # -- building ----------------------------------------------------------------------------
    def _build_from_spec(self, model: ModelObj, spec: Spec, span: Span) -> None:
        """Build ``model`` as Keras would on its first call with inputs of ``spec``."""
        if model.user is None:
            (shape, dtype), = spec
            model.input_shape, model.input_dtype = tuple(shape), dtype
            self._model_graph(model)
            return
        inputs = [self._make_input("Input", [shape], {"dtype": dtype}, span) for shape, dtype in spec]
        outputs = self._call_user(model.user, [inputs if len(inputs) > 1 else inputs[0]], {}, span)
        model.graph = self._extract_graph(inputs if len(inputs) > 1 else inputs[0], outputs, span)
        self._register_model(model, builder=None, var=None, args={})

    def _build_lazily(self, model: ModelObj, data: Any, span: Span) -> None:
        """Build a model that is used before anything gave it a shape: from ``data`` when its
        shape is known (``fit(x_train, ...)``), else from its first use. Leaves it unbuilt
        when neither says (its statements are then reported)."""
        if model.graph is not None or not self._unbuilt(model):
            return
        if model.user is not None:
            self._build_from_data(model, data, span)
        elif isinstance(data, ArrayVal) and len(data.shape) >= 1 and all(d is not None for d in data.shape[1:]):
            model.input_shape = tuple(data.shape[1:])
            return
        if model.graph is not None:
            return
        spec = self._input_spec(model.user if model.user is not None else model)
        if spec is None or any(isinstance(d, Unknown) for shape, _ in spec for d in shape):
            return
        try:
            self._build_from_spec(model, spec, span)
        except (Unsupported, FrontendError):
            model.graph = None
            if model.user is None:
                model.input_shape = None
            raise

    @staticmethod
    def _unbuilt(model: ModelObj) -> bool:
        """No graph and nothing yet that fixes the input shape."""
        if model.graph is not None:
            return False
        if model.user is not None:
            return True
        first = model.layers[0] if model.layers else None
        return model.input_shape is None and getattr(first, "input_shape", None) is None

    def _unbuilt_model_of(self, statement) -> ModelObj | None:
        """The model a training statement trains, when it was never built (nothing to train)."""
        model = self.training_models.get(statement)
        if isinstance(model, ModelHandle):
            model = self._handle_model(model)
        if isinstance(model, ModelObj) and model.graph is None and not self._is_wrapper(model):
            return model
        return None

    def _finishable(self, model: ModelObj) -> bool:
        """Whether a registered model is a model of the program that can be printed. One made
        in a custom layer's ``__init__`` is a part of that layer (printed as its submodule when
        the layer is called; never called, Keras never builds it either). A Sequential
        without an input shape is built from its first use when that fixes it, else reported
        where it is made."""
        if model.held_by is not None:
            return False  # made in a custom layer's __init__: a part of that layer's module
        if not self._unbuilt(model):
            return True
        spec = self._input_spec(model)
        if spec is not None and not any(isinstance(d, Unknown) for shape, _ in spec for d in shape):
            try:
                self._build_from_spec(model, spec, model.span)
                return True
            except (Unsupported, FrontendError):
                model.input_shape = None
        name = model.name or model.var or "Sequential"
        self.program.model_stub(model.span, name, f"{name}: a Sequential model whose input shape is never given "
                                      "statically (no keras.Input, input_shape= or build()); give it one "
                                      "to translate it", self._line(model.span))
        return False
