"""``model.get_layer(name)``, ``layer.output`` / ``layer.input`` and ``model.input``: the tensors
a program takes from a built model to assemble another (keras.io's captcha_ocr
``keras.Model(model.get_layer(name="image").input, model.get_layer(name="dense2").output)``,
attention_mil_classification, end_to_end_mlm_with_bert, involution, simsiam).

The tensors are those the layer's first call made (Keras' ``layer.output`` is its first
inbound node's), so a ``keras.Model`` of them is the sub-graph of the built model; its layers
are the same objects (``_shared_model_warnings`` in frontend.py says what torch does with them).
"""

from __future__ import annotations

from dataclasses import dataclass

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.values import LayerObj, ModelHandle, ModelObj, TensorVal


@dataclass(eq=False)
class InputLayerRef:
    """``model.get_layer(name)`` of a model's ``keras.Input(name=...)``: its tensor is both its
    input and its output."""

    tensor: TensorVal


def _model_of(fe, obj):
    model = fe._handle_model(obj) if isinstance(obj, ModelHandle) else obj
    if not isinstance(model, ModelObj):
        raise Unsupported("get_layer() of a model the reader did not build")
    return model


def get_layer(fe, obj, args, kwargs, span):
    """``model.get_layer(name)`` / ``model.get_layer(index=i)``: the layer object (the same one
    the model's nodes hold), or the model's Input of that name."""
    model = _model_of(fe, obj)
    graph = fe._model_graph(model)
    name = kwargs.get("name", args[0] if args else None)
    index = kwargs.get("index", args[1] if len(args) > 1 else None)
    layers: list = []
    for node in graph.nodes:
        layer = node.from_keras.layer
        if isinstance(layer, LayerObj) and layer.cls_name and all(layer is not seen for seen in layers):
            layers.append(layer)
    if isinstance(name, str):
        for value in graph.inputs:
            if value.var == name:
                return InputLayerRef(TensorVal(value))
        found = [layer for layer in layers if layer.keras_name == name]
        if not found:
            raise Unsupported(f"get_layer({name!r}): no layer of that name in the model (a layer named by "
                              "Keras' counters, or inside a nested model, is not looked up yet)")
        return found[0]
    if isinstance(index, int) and not isinstance(index, bool):
        # (Keras' model.layers of a Functional model start with its InputLayers)
        inputs = [InputLayerRef(TensorVal(v)) for v in graph.inputs] if model.kind == "functional" else []
        everything = inputs + layers
        if -len(everything) <= index < len(everything):
            return everything[index]
    raise Unsupported("get_layer() with a name or index not known statically")


def layer_tensor(fe, layer, attr: str):
    """``layer.output`` / ``layer.input`` (``outputs``/``inputs`` are not Keras 3 layer
    attributes): the tensors of the layer's first call."""
    if isinstance(layer, InputLayerRef):
        return layer.tensor
    calls = layer.__dict__.get("calls") or []
    if not calls:
        raise Unsupported(f"{layer.cls_name}.{attr}: the layer is never called on a tensor")
    inputs, outputs = calls[0]
    picked = inputs if attr == "input" else outputs
    return picked[0] if isinstance(picked, list) and len(picked) == 1 else picked
