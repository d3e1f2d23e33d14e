"""Weights of a model that came *from* PyTorch: the user's state_dict → canonical params →
the generated Keras model's weights.

The plan (``Graph.weight_plan.source_state``, ir/state_plan.py) is the torch emitters' (each
state_dict tensor with its ``Transform`` from a canonical param), recorded by the driver while
the graph is still in torch's channels-first form, with keys rewritten to the user's module
paths (``features.0.weight``, ``lstm.weight_ih_l1_reverse``). Inverting it gives canonical
params; the passes' ``param_transforms`` (a Dense absorbing a channels-first Flatten) then map
them to the Keras model's layout. One plan serves the in-memory mapping, the checkpoint
converter, the training reader and the tests.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from transpiler.ir.graph import Graph
from transpiler.ir.state_plan import StatePlan
from transpiler.lazy_import import lazy_module
from transpiler.weights.errors import CheckpointError
from transpiler.weights.mapping import check_plan_state, invert_plan, keras_arrays

np = lazy_module("numpy")  # `--to keras` records the plan without numpy; it loads with a tensor


def _plan(graph: Graph) -> StatePlan:
    plan = graph.weight_plan.source_state
    if plan is None:
        raise CheckpointError(f"{graph.name}: the graph did not come from a PyTorch script")
    if plan.error:
        raise CheckpointError(plan.error)
    return plan


def check_state(graph: Graph, state: dict[str, Any], path: str) -> None:
    """Same keys (num_batches_tracked optional) and shapes as the source module."""
    check_plan_state(_plan(graph), state, path)


def canonical_from_source(graph: Graph, state: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """The user's state_dict → ``{layer name: {param: canonical array}}`` (float32).

    torch's second RNN bias (bias_hh) has no Keras counterpart and is folded into the
    bias (torch always adds the two)."""
    return invert_plan(_plan(graph), lambda key: np.asarray(state[key], dtype=np.float32))


def keras_weights(graph: Graph, state: dict[str, Any]) -> dict[str, list[np.ndarray]]:
    """``{Keras layer name: [arrays in Keras' weight order]}`` for the generated model
    (``keras_layer(model, graph, name).set_weights(arrays)``).

    A list of blocks the caller's count long (``KerasBlocks.lists``, printers/keras/subclass)
    was traced for a small made-up count: the items the state holds (``blocks.0.`` ..
    ``blocks.{n-1}.``, torch's names) are mapped, those the trace has by their nodes, the others
    (every item is the same class built alike) by the first item's plan under their own keys,
    named ``blocks.<i>.<the block's node>`` (``keras_layer`` reads ``model.blocks[i]``)."""
    lists = graph.weight_plan.keras_blocks.lists if graph.weight_plan.keras_blocks else {}
    if not lists:
        canonical = canonical_from_source(graph, state)
        return keras_arrays(graph, lambda node: canonical[node.name])

    def item(key: str) -> tuple[str, int] | None:
        parts = key.split(".")
        return (parts[0], int(parts[1])) if len(parts) > 2 and parts[0] in lists and parts[1].isdigit() else None

    def array(key: str):
        return np.asarray(state[key], dtype=np.float32)

    held = {i for i in map(item, state) if i is not None}
    plan = _plan(graph)
    entries = [e for e in plan if item(e.key) is None or item(e.key) in held]
    canonical = invert_plan(entries, array)
    out = keras_arrays(_Only(graph, canonical), lambda node: canonical[node.name])
    traced = {i for i in map(item, (e.key for e in plan)) if i is not None}
    blocks = graph.weight_plan.keras_blocks
    for container, index in sorted(held - traced):
        first = [e for e in plan if item(e.key) == (container, 0)]
        if not first:
            raise CheckpointError(f"{graph.name}: the state holds {container}.{index}, and the translation "
                                  f"traced no {container}.0 to map it by")
        prefix = f"{container}.0."
        renamed = [replace(e, key=f"{container}.{index}.{e.key[len(prefix):]}") for e in first]
        params = invert_plan(renamed, array)
        for name, arrays in keras_arrays(_Only(graph, params), lambda node: params[node.name]).items():
            out[f"{container}.{index}.{blocks.nodes[name][1]}"] = arrays
    return out


class _Only:
    """``graph`` seen through the nodes ``canonical`` has weights for (and those without any)."""

    def __init__(self, graph: Graph, canonical: dict):
        from transpiler.weights.mapping import param_names

        self.nodes = [n for n in graph.nodes if n.name in canonical or not param_names(n)]


def keras_layer(model, graph: Graph, name: str):
    """The layer of the generated Keras ``model`` that holds the weights of ``graph``'s node
    ``name``: ``model.get_layer(name)``, or in a model built of its submodules (``composed``,
    frontend_ast/torch/parts) the part's layer (``model.encoder.dense_proj`` for the node
    ``encoder_dense_proj``)."""
    for attr, part in graph.from_torch.composed.get("parts", ()):
        if name.startswith(attr + "_"):
            attributes = printed_attributes(part)
            local = name[len(attr) + 1:]
            if local in attributes:
                return getattr(getattr(model, attr), attributes[local])
    blocks = graph.weight_plan.keras_blocks
    container, _, rest = name.partition(".")
    if blocks is not None and container in blocks.lists:  # (``blocks.5.lin``: an item the trace did not hold)
        index, _, inner = rest.partition(".")
        return keras_layer(getattr(model, blocks.lists[container])[int(index)], blocks.graphs[f"{container}.0"], inner)
    if blocks is not None and name in blocks.nodes:  # a layer of a block the subclass holds (``model.res1``)
        attr, inner = blocks.nodes[name]
        container, _, index = attr.partition(".")
        if index:  # (an item of a list of blocks: ``blocks.0`` is ``model.blocks[0]``)
            held = getattr(model, blocks.lists.get(container, container))[int(index)]
            return keras_layer(held, blocks.graphs[attr], inner)
        return keras_layer(getattr(model, attr), blocks.graphs[attr], inner)
    if not hasattr(model, "get_layer"):  # a ``layers.Layer`` subclass (a block): its layers are attributes
        return getattr(model, printed_attributes(graph)[name])
    return model.get_layer(name)


def printed_attributes(graph: Graph) -> dict[str, str]:
    """Layer name → the attribute holding it in the Keras model printed for ``graph``."""
    attributes = graph.weight_plan.layer_attributes
    if attributes is None:
        raise CheckpointError(f"{graph.name}: no Keras layer plan was recorded for this model "
                              "(it was not printed as Keras)")
    return attributes
