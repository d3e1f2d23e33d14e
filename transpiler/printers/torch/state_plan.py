"""The state_dict a PyTorch module has, from the torch emitters (each tensor with its
``Transform`` from a canonical param): the plan the driver stores on ``Graph.weight_plan``
(ir/state_plan.py), which the checkpoint converters and the training reader read.

- ``torch_state_plan``: the *generated* module (a model read from Keras, after the torch
  passes), keys as the printed module names them.
- ``source_state_plan``: the user's *source* module (a model read from PyTorch, while the graph
  is still channels-first), keys rewritten to the user's module paths (``features.0.weight``,
  ``lstm.weight_ih_l1_reverse``).
"""

from __future__ import annotations

import dataclasses
import re

from transpiler.ir import sizes
from transpiler.ir.graph import Graph, Node
from transpiler.ir.modules import ModuleInfo, build_structure
from transpiler.ir.params import param_names
from transpiler.ir.state_plan import PlanEntry, StatePlan
from transpiler.printers.torch import ops as torch_ops
from transpiler.printers.torch.given_models import holds_given


def torch_state_plan(graph: Graph) -> StatePlan:
    """Every tensor of the generated module's ``state_dict()``, in its order: a module's
    own ``nn.Parameter`` attributes first, then its buffers, then each submodule's tensors,
    recursively (the modules of a structured model: ``blocks.0.expand.weight``)."""
    st = build_structure(graph)
    seen: set[str] = set()

    def entries(node: Node, path: str, own_prefix: str, own: list, buffers: list, subs: list) -> None:
        with sizes.quiet():  # (the plan reads the emitted code's keys; it places no code: nothing is specialised)
            em = torch_ops.emit(node)
        renames = node.split_from.params if node.split_from else {}
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
        return StatePlan(own + buffers + subs)

    def walk(info: ModuleInfo) -> list[PlanEntry]:
        own: list[PlanEntry] = []
        buffers: list[PlanEntry] = []
        subs: list[PlanEntry] = []
        prefix = f"{info.path}." if info.path else ""
        for m in info.members:
            for item in m.items if m.items is not None else [m]:
                if item.node is not None:
                    entries(item.node, st.path(item.node), prefix, own, buffers, subs)
                elif holds_given(info, item.scope):
                    subs += held_entries(item.scope)
                else:
                    subs += walk(item.scope)
        return own + buffers + subs

    def held_entries(child: ModuleInfo) -> list[PlanEntry]:
        """The tensors of a model of the program the module holds (its own instance, printed
        as that model's class: printers/torch/given_models.py): that model's own plan, under
        the attribute holding it (Keras shares the layers, so the layer names are the same)."""
        given = child.scope.given_model.graph
        plan = given.weight_plan.torch_state or torch_state_plan(given)
        return [dataclasses.replace(e, key=f"{child.path}.{e.key}") for e in plan]

    return StatePlan(walk(st.root))


def _source_key(node: Node, emitted: str) -> str:
    """The user's state_dict key for the emitter's key ``emitted`` of ``node`` (a module's
    own parameter is its whole key; F.linear's Dense names its parameters' keys)."""
    keys = node.from_torch.keys
    if keys and emitted in keys:
        return keys[emitted]
    layer = node.from_torch.layer_index
    if layer is not None:
        emitted = re.sub(r"_l0(_reverse)?$", lambda m: f"_l{layer}{m.group(1) or ''}", emitted)
    path = node.from_torch.path or ""
    return f"{path}.{emitted}" if path and emitted else path or emitted


def source_state_plan(graph: Graph) -> StatePlan:
    """Every tensor of the source module's ``state_dict()`` with its canonical param (an
    ``error`` when some layer has no torch form a checkpoint could hold)."""
    plan = StatePlan()
    seen: set[str] = set()
    for node in graph.nodes:
        if not param_names(node):
            continue
        with sizes.quiet():  # (only its state entries are read)
            em = torch_ops.emit(node)
        for entry in em.state:
            key = _source_key(node, entry.key)
            if key in seen:
                continue
            seen.add(key)
            plan.entries.append(PlanEntry(key, node.name, entry.source, node, [], entry.transform, entry.constant))
        if em.extra_params and plan.error is None:
            plan.error = f"{node.name}: a {node.op} without both affine terms has no torch source form"
    return plan
