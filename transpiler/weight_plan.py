"""The drivers' step that stores each model's weight plan (ir/state_plan.py) on its graph.

The plan is what the printers decide about the tensors of the model they print (the torch
emitters' state_dict keys and transforms, the Keras layers' classes and attributes) and what
the source framework's classes are (the Keras layer registry of the frontend). Computing it
here, once, lets the checkpoint converters (``transpiler/weights``) and the training reader
read plain IR data instead of calling printers or frontends (tests/test_layering.py).
"""

from __future__ import annotations

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph
from transpiler.ir.params import source_op
from transpiler.ir.state_plan import KerasLayer


def record_torch_state(graph: Graph) -> Graph:
    """The generated PyTorch module's state_dict (a model read from Keras, after the torch
    passes)."""
    from transpiler.printers.torch.state_plan import torch_state_plan

    graph.weight_plan.torch_state = torch_state_plan(graph)
    return graph


def record_source_state(graph: Graph) -> Graph:
    """The user's PyTorch module's state_dict, as the graph is while still channels-first:
    the torch → Keras checkpoint conversion and the training reader (parameters by name)
    read it. The drivers run it before ``KERAS_PIPELINE``."""
    from transpiler.printers.torch.state_plan import source_state_plan

    graph.weight_plan.source_state = source_state_plan(graph)
    return graph


def _class_for(op: str) -> str | None:
    from transpiler.frontend_ast.keras import layers as keras_layers

    try:
        return keras_layers.keras_class_for(op)
    except KeyError:
        return None


def _wraps(op: str) -> bool:
    try:
        return ops_table.get(op).wraps
    except KeyError:
        return False


def record_keras_source_layers(graph: Graph) -> Graph:
    """A model read from Keras: the Keras class of each node's source layer (the one its
    checkpoint keys are made from) and of the layer a wrapper holds."""
    from transpiler.frontend_ast.keras import layers as keras_layers

    out: dict[str, KerasLayer] = {}
    for node in graph.nodes:
        if not node.source_name:
            continue
        op, attrs = source_op(node)
        layer = node.layer
        reg = keras_layers.lookup(layer.cls_name) if layer is not None and layer.cls_name else None
        wrapped = _class_for(attrs["layer"]["op"]) if _wraps(op) else None
        out[node.name] = KerasLayer(reg.canonical_class if reg is not None else _class_for(op), _class_for(op),
                                    wrapped)
    graph.weight_plan.keras_layers = out
    return graph


def record_keras_printed_layers(graph: Graph) -> Graph:
    """A model printed as Keras: the class the printer gives each node's layer (None for a
    ``keras.ops`` call), the attribute holding it and whether the model is a subclass."""
    from transpiler.printers.keras.ops import keras_class_of
    from transpiler.printers.keras.subclass import is_subclass, layer_attributes

    out: dict[str, KerasLayer] = {}
    for node in graph.nodes:
        wrapped = _class_for(node.attrs["layer"]["op"]) if node.op == "bidirectional" else None
        out.setdefault(node.name, KerasLayer(keras_class_of(node), None, wrapped))
    plan = graph.weight_plan
    plan.keras_layers = out
    plan.layer_attributes = layer_attributes(graph)
    plan.subclass = is_subclass(graph)
    for block in (plan.keras_blocks.graphs if plan.keras_blocks else {}).values():
        if block.weight_plan.layer_attributes is None:  # (a block's own layers: printers/keras/subclass)
            record_keras_printed_layers(block)
    return graph
