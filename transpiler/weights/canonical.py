"""Canonical params (``{source layer: {param: array}}``) from a checkpoint of either framework,
and each node's own params with the passes' transforms applied (what a printer that writes
weights itself, the ONNX printer, needs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from transpiler.ir.graph import Graph
from transpiler.ir.params import param_names
from transpiler.weights.transforms import apply_param_transform


def keras_canonical(graph: Graph, ckpt_path: str) -> tuple[dict[str, dict[str, np.ndarray]], list[str]]:
    """A Keras checkpoint (.keras, .h5, .weights.h5) read for ``graph``: its canonical params
    and the matching's warnings. Raises CheckpointError as the converters do."""
    from transpiler.weights.convert import check_layer, match_layers
    from transpiler.weights.keras_files import KerasCheckpoint
    from transpiler.weights.mapping import source_layers

    with KerasCheckpoint(ckpt_path) as ck:
        matched, warnings = match_layers(graph, ck.layers | ck.variables, ckpt_path)
        layers = source_layers(graph)
        out = {name: {p: np.asarray(ck.read(ds)) for p, ds in check_layer(layers[name], layer, ckpt_path).items()}
               for name, layer in matched.items()}
    return out, list(warnings)


def torch_canonical(graph: Graph, ckpt_path: str) -> dict[str, dict[str, np.ndarray]]:
    """The user's own PyTorch checkpoint (a state_dict in .pt/.pth/.safetensors) for a graph the
    torch frontend read (its source plan recorded)."""
    from transpiler.weights.torch_files import read_torch_state
    from transpiler.weights.torch_source import canonical_from_source, check_state

    state = read_torch_state(ckpt_path)
    check_state(graph, state, ckpt_path)
    return canonical_from_source(graph, state)


def node_params(graph: Graph, canonical: dict[str, dict[str, Any]]) -> dict[str, dict[str, np.ndarray]]:
    """``{node name: {own param: array}}``: each node's params under its own names (a node a pass
    split from a source layer reads its part, ``param_source``), the transforms passes decided
    (``Node.param_transforms``) applied. A layer the canonical params lack is left out (the
    printer says which node has no weights)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for node in graph.nodes:
        layer = canonical.get(node.source_name or node.name)
        if layer is None:
            continue
        renames = node.split_from.params if node.split_from else {}
        own: dict[str, np.ndarray] = {}
        for p in node.spec.active_params(node.attrs):
            src = renames.get(p.name, p.name)
            if src not in layer:
                continue
            array = np.asarray(layer[src])
            for step in node.param_transforms.get(p.name, []):
                array = apply_param_transform(step, array)
            own[p.name] = array
        if own or not param_names(node):
            out[node.name] = own
    return out
