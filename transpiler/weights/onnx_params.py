"""Weights of a model read from an ONNX file: the canonical params the ONNX reader left on
the nodes (``Node.params``) → the generated PyTorch module's ``state_dict`` (safetensors) or
the generated Keras model's ``.weights.h5``.

Both run on the graph after the target's passes, so they read the same plan the printed code
was made from: the torch emitters' state_dict keys and transforms (``weights/mapping.py``), or
Keras' layer order and the layout pass's ``param_transforms`` (a Dense absorbing a Flatten's
channel order).
"""

from __future__ import annotations

import os

import numpy as np

from transpiler.ir.graph import Graph
from transpiler.ir.params import expected_shapes, param_names
from transpiler.weights.errors import CheckpointError


def canonical(graph: Graph) -> dict[str, dict[str, np.ndarray]]:
    """``{layer: {param: canonical array}}``, each array checked against the ops table's shape."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for node in graph.nodes:
        names = param_names(node)
        if not names or node.source_name in out:
            continue
        shapes = expected_shapes(node)
        params = {}
        for p in names:
            a = node.params.get(p)
            if a is None:
                raise CheckpointError(f"{node.name} ({node.op}): no value for {p}")
            if tuple(a.shape) != tuple(shapes[p]):
                raise CheckpointError(f"{node.name} ({node.op}) {p}: shape {a.shape}, the layer needs {shapes[p]}")
            params[p] = a
        out[node.source_name] = params
    return out


def torch_state(graph: Graph) -> dict[str, np.ndarray]:
    """The generated module's state_dict (the graph has had the torch passes)."""
    from transpiler.weights.mapping import torch_state_dict

    return torch_state_dict(graph, canonical(graph))


def keras_weights(graph: Graph) -> dict[str, list[np.ndarray]]:
    """``{Keras layer name: [arrays in Keras' weight order]}`` (after the Keras passes)."""
    from transpiler.weights.mapping import keras_arrays

    params = canonical(graph)
    return keras_arrays(graph, lambda node: params[node.source_name])


def write_torch(graph: Graph, path: str) -> int:
    """Write the state_dict as safetensors (``.pt``: torch.save'd) atomically; bytes written."""
    from transpiler.weights.safetensors_io import write_safetensors
    from transpiler.weights.torch_files import write_torch_pt

    state = torch_state(graph)
    if path.endswith(".pt"):
        write_torch_pt(path, state)
        return os.path.getsize(path)
    return write_safetensors(path, list(state.items()), {"format": "pt", "model": graph.name})


def write_keras(graph: Graph, path: str) -> int:
    """Write the Keras 3 ``.weights.h5`` ``build_model().load_weights(path)`` reads."""
    from transpiler.weights.convert import _keras_layers_out
    from transpiler.weights.keras_files import write_keras_weights

    layers, _ = _keras_layers_out(graph, keras_weights(graph), False)
    write_keras_weights(path, graph.name, layers)
    return os.path.getsize(path)
