"""A custom Keras layer whose ``call()`` the reader cannot translate, as ONE opaque node.

Without this, one unreadable layer (a ``tf.*`` function with no torch form, a size known
only when the program runs) made the whole model it sits in a stub, and every training
statement on that model with it. Instead, each call of such a layer becomes an
``opaque_layer`` node: the printers write a marked stub module for the class (its
``forward`` raises ``NotImplementedError`` with the reason) and call it where the layer
was called, so the model around it, its other layers and its training are translated.

The node needs the shape of what the layer returns: from the layer's own
``compute_output_shape`` when it has one (run on the interpreter), else assumed to be its
first input's shape, which the report says.
"""

from __future__ import annotations

import re
from typing import Any

from transpiler.frontend_ast.interp.values import Unsupported
from transpiler.frontend_ast.keras.layers import LayerSpec
from transpiler.frontend_ast.keras.support import _tensors_in
from transpiler.frontend_ast.keras.values import FrontendError, LayerObj, UserObj
from transpiler.ir import ops as ops_table, sizes
from transpiler.ir.graph import Span

_SIMPLE = (int, float, str, bool, type(None))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _static_config(bound: dict) -> dict:
    """The constructor arguments a printed stub can take as they are (numbers, strings,
    tuples of them): the sizes the user's torch implementation will need."""
    out = {}
    for key, value in (bound or {}).items():
        if isinstance(value, bool) or isinstance(value, _SIMPLE):
            out[key] = value
        elif isinstance(value, (tuple, list)) and all(isinstance(v, _SIMPLE) for v in value):
            out[key] = tuple(value)
    return out


def _shape_list(value: Any) -> list[tuple] | None:
    """compute_output_shape's result as a list of shapes (None when it is not one)."""
    def one(v):
        if isinstance(v, (tuple, list)) and all(d is None or isinstance(d, int) and not isinstance(d, bool)
                                                for d in v) and len(v) >= 1:
            return (None, *tuple(v)[1:])
        return None

    single = one(value)
    if single is not None:
        return [single]
    if isinstance(value, (tuple, list)) and value and all(one(v) is not None for v in value):
        return [one(v) for v in value]
    return None


def _returned_count(fn: Any) -> int:
    """How many tensors call() returns: the length of its returned tuple when every return
    statement returns one of the same length, else 1."""
    import libcst as cst

    from transpiler.cst_fast import nodes_of

    counts = {len(r.value.elements) if isinstance(r.value, (cst.Tuple, cst.List)) else 1
              for r in nodes_of(fn, cst.Return) if r.value is not None} if fn is not None else set()
    return counts.pop() if len(counts) == 1 else 1


def _layers_of(obj: UserObj) -> list[LayerObj]:
    """The Keras layers the object holds as attributes (in lists too)."""
    out = []
    for value in obj.attrs.values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, LayerObj):
                out.append(item)
    return out


class KerasOpaqueLayers:
    """Mixin of the Keras reader: untranslatable custom layers as opaque nodes."""

    def _drop_nodes_from(self, mark: int) -> None:
        """Forget the nodes a failed call() made (they lead nowhere: its result is opaque)."""
        dropped = self.scratch.nodes[mark:]
        del self.scratch.nodes[mark:]
        for node in dropped:
            layer = node.from_keras.layer
            if layer is not None and node in layer.nodes:
                layer.nodes.remove(node)

    def _opaque_output_shapes(self, obj: UserObj, inputs: list) -> tuple[list[tuple], str]:
        """(shapes, where they come from): the layer's compute_output_shape; else, for token ids
        (integers) into a layer made of Embeddings of one output_dim, the ids' shape plus that
        axis; else the first input's shape (as many as call() returns). Raises Unsupported when
        none fits (an integer input the layer turns into something else)."""
        fn = obj.cls.method("compute_output_shape")
        shapes = [tuple(t.value.shape) for t in inputs]
        if fn is not None:
            try:
                result = self._run_method(obj, fn, [shapes[0] if len(shapes) == 1 else shapes], {})
            except (Unsupported, FrontendError):
                result = None
            found = _shape_list(result)
            if found is not None:
                return found, "compute_output_shape"
        n_out = _returned_count(obj.cls.method("call"))
        dtype = str(inputs[0].value.dtype or "float32")
        if len(shapes[0]) < 2:  # (a batch of numbers: what the layer makes of them is anyone's guess)
            raise Unsupported("its output shape is unknown (no compute_output_shape)")
        if "int" in dtype:
            dims = {layer.spec.attrs.get("output_dim") for layer in _layers_of(obj) if layer.spec.op == "embedding"}
            if len(dims) != 1 or n_out != 1:
                raise Unsupported("its output shape is unknown (no compute_output_shape)")
            return [(*shapes[0], dims.pop())], "assumed: its Embedding's output_dim as the last axis"
        return [shapes[0]] * n_out, "assumed: the input's"

    def _opaque_call(self, obj: UserObj, args, kwargs, span: Span, exc: Any):
        """One call of an untranslatable custom layer: an ``opaque_layer`` node on its tensors."""
        name = obj.cls.node.name.value
        inputs = _tensors_in(list(args) + list(kwargs.values()))
        obj.attrs["__opaque__"] = exc
        layer = obj.attrs.get("__opaque_layer__")
        if layer is None:
            try:
                shapes, shape_from = self._opaque_output_shapes(obj, inputs)
            except Unsupported as why:
                del obj.attrs["__opaque__"]
                raise FrontendError(f"{name}: {exc}; {why}", span) if isinstance(exc, FrontendError) else \
                    Unsupported(f"{exc}; {name}: {why}") from None
            reason = str(exc)
            attrs = ops_table.get("opaque_layer").complete_attrs({
                "class_name": name, "reason": reason, "output_shapes": shapes, "shape_from": shape_from,
                "config": _static_config(obj.scope.args if obj.scope is not None else {})})
            layer = LayerObj(spec=LayerSpec("opaque_layer", attrs), cls_name=name, keras_name=obj.keras_name,
                             span=span, explicit_name=None, hint=obj.attr or _snake(name), owner=obj.owner,
                             attr=obj.attr or None, made_in=obj.scope.parent if obj.scope is not None else None)
            self.seq += 1
            layer.seq = self.seq
            obj.attrs["__opaque_layer__"] = layer
        out = self._call_layer(layer, [inputs if len(inputs) > 1 else inputs[0]], {}, span)
        layer.nodes[-1].from_keras.definition = self._span(obj.cls.node)  # (where the report points)
        return out

    def _report_opaque(self, graph) -> None:
        """ONE stub per untranslated custom layer class of a model that is translated (a model
        that fails anyway is reported as a whole)."""
        for node in graph.nodes:
            if node.op != "opaque_layer":
                continue
            a = node.attrs
            where = node.from_keras.definition or node.span
            # (a run-time size reads as its code: the message must not use its stand-in number)
            shapes = ", ".join(sizes.number_text(tuple(s)) for s in a["output_shapes"])
            self.program.stub(where, f"{a['class_name']}.call() is not translated: {a['reason']}; a stub module "
                                     f"{a['class_name']} stands in for it (its forward raises NotImplementedError) "
                                     f"and the model around it is translated (output shape {shapes}: "
                                     f"{a['shape_from'].replace('assumed: ', 'assumed, ')})", self._line(where))
