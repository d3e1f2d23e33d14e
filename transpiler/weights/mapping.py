"""Weight mapping: canonical params ↔ the generated module's state_dict.

The plan (``Graph.weight_plan.torch_state``, ir/state_plan.py) lists, for every state_dict
key, where its tensor comes from and how it is transformed: the driver computes it once from
the torch emitters, after the passes (``Node.param_transforms``, e.g. a Dense absorbing a
Flatten). The in-memory mapping, the streaming checkpoint converter and the reverse direction
all read that one plan; this module applies an entry to arrays.
"""

from __future__ import annotations

from typing import Any

from transpiler.ir.graph import Graph, Node
from transpiler.ir.params import expected_shapes, param_names
from transpiler.ir.state_plan import PlanEntry, StatePlan
from transpiler.ir.transforms import Transform
from transpiler.lazy_import import lazy_module
from transpiler.weights.errors import CheckpointError
from transpiler.weights.transforms import (
    Lazy,
    apply_lazy,
    invert,
    invert_depthwise,
    invert_flatten,
    apply_param_transform,
    invert_param_transform,
    param_transform_lazy,
)

np = lazy_module("numpy")  # `--to keras` records the plan without numpy; it loads with a tensor


def gather(entry: PlanEntry, lookup) -> Lazy:
    """``entry``'s torch tensor from ``lookup(param) -> canonical array``."""
    if entry.constant is not None:
        return to_torch(entry, None)
    arrays = [lookup(p) for p in entry.parts]
    return to_torch(entry, arrays if entry.packed else arrays[0])


def torch_shape(entry: PlanEntry, canonical_shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """The torch tensor's shape given each part's canonical shape."""
    return gather(entry, lambda p: np.broadcast_to(np.zeros((), np.float32), canonical_shapes[p])).shape


def invert_parts(entry: PlanEntry, array: np.ndarray, canonical_shapes: dict[str, tuple[int, ...]]
                 ) -> dict[str, np.ndarray]:
    """A torch tensor of ``entry`` → ``{param: canonical array}`` (a packed one is split)."""
    if not entry.packed:
        return {entry.param: invert_entry(entry, array, canonical_shapes[entry.param])}
    a = np.asarray(array)
    out, start = {}, 0
    for p in entry.parts:
        rows = apply_lazy(entry.transform, Lazy(np.broadcast_to(np.zeros((), a.dtype),
                                                                canonical_shapes[p]))).shape[0]
        out[p] = invert(entry.transform, a[start:start + rows], canonical_shapes[p])
        start += rows
    return out


def to_torch(entry: PlanEntry, array: Any) -> Lazy:
    """The canonical ``array`` transformed into ``entry``'s torch layout (a lazy view)."""
    if entry.constant is not None:
        return Lazy(np.array(entry.constant, dtype=np.int64 if isinstance(entry.constant, int) else np.float32))
    if entry.packed:
        pieces = [apply_lazy(entry.transform, Lazy(np.asarray(a))).materialize() for a in array]
        return Lazy(np.concatenate(pieces, axis=0))
    x = Lazy(np.asarray(array))
    for step in entry.param_steps:
        x = param_transform_lazy(step, x)
    return apply_lazy(entry.transform, x)


def invert_entry(entry: PlanEntry, array: np.ndarray, canonical_shape: tuple[int, ...]) -> np.ndarray:
    """A torch tensor of ``entry`` → the canonical param (inverse of ``to_torch``)."""
    a = np.asarray(array)
    if entry.transform is Transform.DEPTHWISE_KERNEL:
        a = invert_depthwise(a, canonical_shape[-1])
    elif entry.transform is Transform.FLATTEN:
        a = invert_flatten(a, canonical_shape)
    elif entry.transform is Transform.GRU_BIAS_INPUT and len(canonical_shape) == 2:
        a = invert(entry.transform, a)[None]
    elif entry.transform is Transform.GRU_BIAS_RECURRENT and len(canonical_shape) == 2:
        a = invert(entry.transform, a)[None]
    else:
        a = invert(entry.transform, a, canonical_shape)
    for step in reversed(entry.param_steps):
        a = invert_param_transform(step, a)
    return a


def torch_plan(graph: Graph) -> StatePlan:
    """Every tensor of the generated module's ``state_dict()``, in its order (the plan the
    driver recorded on the graph)."""
    plan = graph.weight_plan.torch_state
    if plan is None:
        raise CheckpointError(f"{graph.name}: no state_dict plan was recorded for this model "
                              "(it was not translated to PyTorch)")
    return plan


def source_layers(graph: Graph) -> dict[str, Node]:
    """``{source layer name: its first node}`` for every layer that holds params."""
    out: dict[str, Node] = {}
    for node in graph.nodes:
        if node.source_name and node.source_name not in out and param_names(node):
            out[node.source_name] = node
    return out


def torch_state_dict(graph: Graph, canonical: dict[str, dict[str, Any]]) -> dict[str, np.ndarray]:
    """Map canonical params (``{layer name: {param: array}}``) to the module's state_dict.

    Keys equal the generated module's ``state_dict()`` keys, but for the params of a layer a
    Functional model calls on constants only (``LayerRef.constant_call``: Keras' model holds that
    call's result, not the layer's weights): the module keeps its own.
    """
    out: dict[str, np.ndarray] = {}
    for entry in torch_plan(graph):
        if entry.constant is not None:
            out[entry.key] = to_torch(entry, None).materialize()
            continue
        if entry.layer not in canonical and entry.node.layer is not None and entry.node.layer.constant_call:
            continue
        params = canonical.get(entry.layer, {})
        for part in entry.parts:
            if part not in params:
                raise KeyError(f"layer {entry.layer!r} ({entry.node.op}) has no param {part!r}")
        out[entry.key] = gather(entry, params.__getitem__).materialize()
    return out


def canonical_from_torch(graph: Graph, state: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """The inverse: a state_dict (numpy arrays) → ``{layer name: {param: array}}`` (``invert_plan``)."""
    return invert_plan(torch_plan(graph), state.__getitem__)


def _listed(keys: list[str]) -> str:
    return f"{', '.join(keys[:6])}{' ...' if len(keys) > 6 else ''}"


def check_plan_state(plan: StatePlan, state: dict[str, Any], path: str) -> None:
    """``state`` has the plan's keys (its constants, num_batches_tracked, optional) and shapes;
    a CheckpointError naming ``path`` says what is missing, extra or misshapen."""
    wanted = {e.key for e in plan if e.constant is None}
    optional = {e.key for e in plan if e.constant is not None}
    missing = sorted(wanted - set(state))
    extra = sorted(set(state) - wanted - optional)
    if missing:
        raise CheckpointError(f"{path}: missing {len(missing)} tensor(s) the model needs: {_listed(missing)}")
    if extra:
        raise CheckpointError(f"{path}: {len(extra)} tensor(s) the model does not have: {_listed(extra)}")
    for e in plan:
        if e.constant is not None:
            continue
        want = tuple(torch_shape(e, expected_shapes(e.node)))
        have = tuple(np.shape(state[e.key]))
        if have != want:
            raise CheckpointError(f"{path}: {e.key} (layer {e.layer!r}, {e.node.op}): shape {have}, "
                                  f"the model needs {want}")


def invert_plan(plan: StatePlan, array_of) -> dict[str, dict[str, np.ndarray]]:
    """A state_dict → ``{layer name: {param: canonical array}}``, inverting each plan entry
    (``array_of(key)``: the state's array under ``key``; a missing key raises KeyError).

    A torch tensor with no Keras counterpart (an LSTM's second bias) is folded into the
    canonical bias: the two biases are always summed, so the outputs are unchanged. A GRU's
    two bias rows (reset_after) come from torch's bias_ih and bias_hh."""
    out: dict[str, dict[str, np.ndarray]] = {}
    folded: list[tuple[PlanEntry, np.ndarray]] = []
    for entry in plan:
        if entry.constant is not None:
            continue
        array = array_of(entry.key)
        if entry.packed:
            out.setdefault(entry.layer, {}).update(invert_parts(entry, array, expected_shapes(entry.node)))
            continue
        shape = expected_shapes(entry.node)[entry.param]
        if entry.transform is Transform.ZEROS:
            folded.append((entry, np.asarray(array)))
            continue
        if entry.transform is Transform.GRU_BIAS_RECURRENT:
            if len(shape) == 2:  # reset_after: the recurrent bias row
                rows = out.setdefault(entry.layer, {}).setdefault(entry.param, np.zeros(shape, np.float32))
                rows[1] = invert_entry(entry, array, shape)[0]
            continue
        value = invert_entry(entry, array, shape)
        if entry.transform is Transform.GRU_BIAS_INPUT and len(shape) == 2:
            rows = out.setdefault(entry.layer, {}).setdefault(entry.param, np.zeros(shape, value.dtype))
            rows[0] = value[0]
            continue
        out.setdefault(entry.layer, {})[entry.param] = value
    for entry, extra in folded:
        params = out.setdefault(entry.layer, {})
        if entry.param in params:
            params[entry.param] = params[entry.param] + extra.reshape(params[entry.param].shape)
    return out


def keras_arrays(graph: Graph, params_of) -> dict[str, list[np.ndarray]]:
    """``{Keras layer name: [arrays in Keras' weight order]}`` for the generated Keras model
    (``model.get_layer(name).set_weights(arrays)``): each node's canonical params
    (``params_of(node)``: ``{param: array}``) through the passes' ``param_transforms``, as
    contiguous float32 arrays of their shape (a 0-d weight stays 0-d)."""
    out: dict[str, list[np.ndarray]] = {}
    for node in graph.nodes:
        names = param_names(node)
        if not names or node.name in out:
            continue
        params = params_of(node)
        arrays = []
        for p in names:
            a = params[p]
            for step in node.param_transforms.get(p, []):
                a = apply_param_transform(step, a)
            arrays.append(np.ascontiguousarray(a, dtype=np.float32).reshape(np.shape(a)))
        out[node.name] = arrays
    return out
