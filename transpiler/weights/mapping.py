"""Weight mapping: canonical params ↔ the generated module's state_dict.

Driven by the ops table (which params a node holds, in which canonical layout), the
passes (``Node.param_transforms``, e.g. a Dense absorbing a Flatten) and the torch
emitters (each state_dict tensor, with its ``Transform``). ``torch_plan`` lists, for
every state_dict key, where its tensor comes from and how it is transformed; the
in-memory mapping, the streaming checkpoint converter and the reverse direction all
read that one plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.ir import sizes
from transpiler.ir.graph import Graph, Node
from transpiler.ir.modules import ModuleInfo, build_structure
from transpiler.ir.params import expected_shapes, param_names
from transpiler.lazy_import import lazy_module
from transpiler.printers.torch import ops as torch_ops
from transpiler.ir.transforms import Transform
from transpiler.weights.transforms import (
    Lazy,
    apply_lazy,
    invert,
    invert_depthwise,
    invert_flatten,
    invert_param_transform,
    param_transform_lazy,
)

np = lazy_module("numpy")  # `--to keras` records the plan without numpy; it loads with a tensor


@dataclass
class PlanEntry:
    """One state_dict tensor: ``key`` ← source layer ``layer``'s canonical ``param``.

    A packed tensor (nn.MultiheadAttention's ``in_proj_weight``) has a tuple of params:
    each is transformed and the results are stacked along axis 0.
    """

    key: str
    layer: str
    param: str | tuple[str, ...]
    node: Node
    param_steps: list = field(default_factory=list)
    transform: Transform = Transform.IDENTITY
    #: a torch buffer with no source counterpart holds this value (``param`` is None)
    constant: int | float | None = None

    @property
    def packed(self) -> bool:
        return isinstance(self.param, tuple)

    @property
    def parts(self) -> tuple[str, ...]:
        """The canonical params this tensor is made of (one unless packed)."""
        return self.param if isinstance(self.param, tuple) else (self.param,)

    def gather(self, lookup) -> Lazy:
        """This key's torch tensor from ``lookup(param) -> canonical array``."""
        if self.constant is not None:
            return self.lazy(None)
        arrays = [lookup(p) for p in self.parts]
        return self.lazy(arrays if self.packed else arrays[0])

    def torch_shape(self, canonical_shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
        """The torch tensor's shape given each part's canonical shape."""
        return self.gather(lambda p: np.broadcast_to(np.zeros((), np.float32), canonical_shapes[p])).shape

    def invert_parts(self, array: np.ndarray, canonical_shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
        """A torch tensor of this key → ``{param: canonical array}`` (a packed one is split)."""
        if not self.packed:
            return {self.param: self.invert(array, canonical_shapes[self.param])}
        a = np.asarray(array)
        out, start = {}, 0
        for p in self.parts:
            rows = apply_lazy(self.transform, Lazy(np.broadcast_to(np.zeros((), a.dtype),
                                                                   canonical_shapes[p]))).shape[0]
            out[p] = invert(self.transform, a[start:start + rows], canonical_shapes[p])
            start += rows
        return out

    def lazy(self, array: Any) -> Lazy:
        """The canonical ``array`` transformed into this key's torch layout (a lazy view)."""
        if self.constant is not None:
            return Lazy(np.array(self.constant, dtype=np.int64 if isinstance(self.constant, int) else np.float32))
        if self.packed:
            pieces = [apply_lazy(self.transform, Lazy(np.asarray(a))).materialize() for a in array]
            return Lazy(np.concatenate(pieces, axis=0))
        x = Lazy(np.asarray(array))
        for step in self.param_steps:
            x = param_transform_lazy(step, x)
        return apply_lazy(self.transform, x)

    def invert(self, array: np.ndarray, canonical_shape: tuple[int, ...]) -> np.ndarray:
        """A torch tensor of this key → the canonical param (inverse of ``lazy``)."""
        a = np.asarray(array)
        if self.transform is Transform.DEPTHWISE_KERNEL:
            a = invert_depthwise(a, canonical_shape[-1])
        elif self.transform is Transform.FLATTEN:
            a = invert_flatten(a, canonical_shape)
        elif self.transform is Transform.GRU_BIAS_INPUT and len(canonical_shape) == 2:
            a = invert(self.transform, a)[None]
        elif self.transform is Transform.GRU_BIAS_RECURRENT and len(canonical_shape) == 2:
            a = invert(self.transform, a)[None]
        else:
            a = invert(self.transform, a, canonical_shape)
        for step in reversed(self.param_steps):
            a = invert_param_transform(step, a)
        return a


def torch_plan(graph: Graph) -> list[PlanEntry]:
    """Every tensor of the generated module's ``state_dict()``, in its order: a module's
    own ``nn.Parameter`` attributes first, then its buffers, then each submodule's tensors,
    recursively (the modules of a structured model: ``blocks.0.expand.weight``)."""
    st = build_structure(graph)
    seen: set[str] = set()

    def entries(node: Node, path: str, own_prefix: str, own: list, buffers: list, subs: list) -> None:
        with sizes.quiet():  # (the plan reads the emitted code's keys; it places no code: nothing is specialised)
            em = torch_ops.emit(node)
        renames = node.meta.get("param_source", {})
        for entry in em.state:
            key = f"{path}.{entry.key}" if entry.key else path
            src = renames.get(entry.source, entry.source) if renames else entry.source
            if key not in seen:
                (own if em.parameter else subs).append(PlanEntry(
                    key, node.source_name, src, node, list(node.param_transforms.get(entry.source, [])),
                    entry.transform, entry.constant))
                seen.add(key)
        for suffix, src, _size, _init in em.extra_params:
            key = f"{own_prefix}{path.rsplit('.', 1)[-1]}_{suffix}"
            if key not in seen:
                own.append(PlanEntry(key, node.source_name, renames.get(src, src) if renames else src, node))
                seen.add(key)
        for suffix, src, _value in em.buffers:
            key = f"{own_prefix}{path.rsplit('.', 1)[-1]}_{suffix}"
            if src is not None and key not in seen:  # (None: a non-persistent constant, no state_dict entry)
                buffers.append(PlanEntry(key, node.source_name, src, node))
                seen.add(key)

    if not st.nested:
        own: list[PlanEntry] = []
        buffers: list[PlanEntry] = []
        subs: list[PlanEntry] = []
        for node in graph.nodes:
            entries(node, node.name, "", own, buffers, subs)
        return own + buffers + subs

    def walk(info: ModuleInfo) -> list[PlanEntry]:
        own: list[PlanEntry] = []
        buffers: list[PlanEntry] = []
        subs: list[PlanEntry] = []
        prefix = f"{info.path}." if info.path else ""
        for m in info.members:
            for item in m.items if m.items is not None else [m]:
                if item.node is not None:
                    entries(item.node, st.path(item.node), prefix, own, buffers, subs)
                else:
                    subs += walk(item.scope)
        return own + buffers + subs

    return walk(st.root)


def source_layers(graph: Graph) -> dict[str, Node]:
    """``{source layer name: its first node}`` for every layer that holds params."""
    out: dict[str, Node] = {}
    for node in graph.nodes:
        if node.source_name and node.source_name not in out and param_names(node):
            out[node.source_name] = node
    return out


def torch_state_dict(graph: Graph, canonical: dict[str, dict[str, Any]]) -> dict[str, np.ndarray]:
    """Map canonical params (``{layer name: {param: array}}``) to the module's state_dict.

    Keys equal the generated module's ``state_dict()`` keys.
    """
    out: dict[str, np.ndarray] = {}
    for entry in torch_plan(graph):
        if entry.constant is not None:
            out[entry.key] = entry.lazy(None).materialize()
            continue
        params = canonical.get(entry.layer, {})
        for part in entry.parts:
            if part not in params:
                raise KeyError(f"layer {entry.layer!r} ({entry.node.op}) has no param {part!r}")
        out[entry.key] = entry.gather(params.__getitem__).materialize()
    return out


def canonical_from_torch(graph: Graph, state: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """The inverse: a state_dict (numpy arrays) → ``{layer name: {param: array}}``.

    A torch tensor with no Keras counterpart (an LSTM's second bias) is folded into the
    canonical bias: the two biases are always summed, so the outputs are unchanged.
    """
    out: dict[str, dict[str, np.ndarray]] = {}
    folded: list[tuple[PlanEntry, np.ndarray]] = []
    for entry in torch_plan(graph):
        if entry.constant is not None:
            continue
        if entry.key not in state:
            raise KeyError(entry.key)
        if entry.packed:
            out.setdefault(entry.layer, {}).update(entry.invert_parts(state[entry.key], expected_shapes(entry.node)))
            continue
        shape = expected_shapes(entry.node)[entry.param]
        if entry.transform is Transform.ZEROS:
            folded.append((entry, np.asarray(state[entry.key])))
            continue
        if entry.transform is Transform.GRU_BIAS_RECURRENT:
            if len(shape) == 2:  # reset_after: the recurrent bias row
                rows = out.setdefault(entry.layer, {}).setdefault(entry.param, np.zeros(shape, np.float32))
                rows[1] = entry.invert(state[entry.key], shape)[0]
            continue
        value = entry.invert(state[entry.key], shape)
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
