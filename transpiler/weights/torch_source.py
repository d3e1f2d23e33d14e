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

from typing import Any

from transpiler.ir.graph import Graph
from transpiler.ir.params import expected_shapes, param_names
from transpiler.ir.state_plan import PlanEntry, StatePlan
from transpiler.ir.transforms import Transform
from transpiler.lazy_import import lazy_module
from transpiler.weights.errors import CheckpointError
from transpiler.weights.mapping import invert_entry, invert_parts, torch_shape
from transpiler.weights.transforms import apply_param_transform

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
    plan = _plan(graph)
    wanted = {e.key for e in plan if e.constant is None}
    optional = {e.key for e in plan if e.constant is not None}
    missing = sorted(wanted - set(state))
    extra = sorted(set(state) - wanted - optional)
    if missing:
        raise CheckpointError(f"{path}: missing {len(missing)} tensor(s) the model needs: "
                              f"{', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}")
    if extra:
        raise CheckpointError(f"{path}: {len(extra)} tensor(s) the model does not have: "
                              f"{', '.join(extra[:6])}{' ...' if len(extra) > 6 else ''}")
    for e in plan:
        if e.constant is not None:
            continue
        want = torch_shape(e, expected_shapes(e.node))
        have = tuple(np.shape(state[e.key]))
        if have != tuple(want):
            raise CheckpointError(f"{path}: {e.key} ({e.node.op}): shape {have}, the model needs {tuple(want)}")


def canonical_from_source(graph: Graph, state: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """The user's state_dict → ``{layer name: {param: canonical array}}``.

    torch's second RNN bias (bias_hh) has no Keras counterpart and is folded into the
    bias (torch always adds the two)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    folded: list[tuple[PlanEntry, np.ndarray]] = []
    for entry in _plan(graph):
        if entry.constant is not None:
            continue
        array = np.asarray(state[entry.key], dtype=np.float32)
        if entry.packed:
            out.setdefault(entry.layer, {}).update(invert_parts(entry, array, expected_shapes(entry.node)))
            continue
        shape = expected_shapes(entry.node)[entry.param]
        if entry.transform is Transform.ZEROS:
            folded.append((entry, array))
            continue
        if entry.transform is Transform.GRU_BIAS_RECURRENT:
            if len(shape) == 2:
                rows = out.setdefault(entry.layer, {}).setdefault(entry.param, np.zeros(shape, np.float32))
                rows[1] = invert_entry(entry, array, shape)[0]
            continue
        value = invert_entry(entry, array, shape)
        if entry.transform is Transform.GRU_BIAS_INPUT and len(shape) == 2:
            rows = out.setdefault(entry.layer, {}).setdefault(entry.param, np.zeros(shape, np.float32))
            rows[0] = value[0]
            continue
        out.setdefault(entry.layer, {})[entry.param] = value
    for entry, extra in folded:
        params = out.setdefault(entry.layer, {})
        params[entry.param] = params[entry.param] + extra.reshape(params[entry.param].shape)
    return out


def keras_weights(graph: Graph, state: dict[str, Any]) -> dict[str, list[np.ndarray]]:
    """``{Keras layer name: [arrays in Keras' weight order]}`` for the generated model
    (``model.get_layer(name).set_weights(arrays)``)."""
    canonical = canonical_from_source(graph, state)
    out: dict[str, list[np.ndarray]] = {}
    for node in graph.nodes:
        names = param_names(node)
        if not names or node.name in out:
            continue
        arrays = []
        for p in names:
            a = canonical[node.name][p]
            for step in node.param_transforms.get(p, []):
                a = apply_param_transform(step, a)
            arrays.append(np.ascontiguousarray(a, dtype=np.float32).reshape(np.shape(a)))  # (0-d stays 0-d)
        out[node.name] = arrays
    return out


def keras_layer(model, graph: Graph, name: str):
    """The layer of the generated Keras ``model`` that holds the weights of ``graph``'s node
    ``name``: ``model.get_layer(name)``, or in a model built of its submodules (``composed``,
    frontend_ast/torch/parts) the part's layer (``model.encoder.dense_proj`` for the node
    ``encoder_dense_proj``)."""
    for attr, part in graph.meta.get("composed", {}).get("parts", ()):
        if name.startswith(attr + "_"):
            attributes = printed_attributes(part)
            local = name[len(attr) + 1:]
            if local in attributes:
                return getattr(getattr(model, attr), attributes[local])
    blocks = graph.meta.get("keras_blocks") or {}
    if name in blocks.get("nodes", ()):  # a layer of a block the subclass holds (``model.res1``)
        attr, inner = blocks["nodes"][name]
        return keras_layer(getattr(model, attr), blocks["graphs"][attr], inner)
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
