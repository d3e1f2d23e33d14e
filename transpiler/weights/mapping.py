"""In-memory weight mapping: canonical params → the generated module's state_dict.

Driven by the ops table (which params a node holds, in which canonical layout), the
passes (``Node.param_transforms``, e.g. a Dense absorbing a Flatten) and the torch
emitters (each state_dict tensor, with its ``Transform``).
"""

from __future__ import annotations

from transpiler.ir.graph import Graph
from transpiler.printers import torch_ops
from transpiler.weights.transforms import Transform, apply, apply_param_transform


def torch_state_dict(graph: Graph, canonical: dict[str, dict[str, "object"]]) -> dict[str, "object"]:
    """Map canonical params (``{node source name: {param: array}}``) to the module's state_dict.

    Applies each node's pass-decided ``param_transforms`` first, then the emitter's
    per-tensor transform. Keys equal the generated module's ``state_dict()`` keys.
    """
    out: dict[str, object] = {}
    for node in graph.nodes:
        em = torch_ops.emit(node)
        if not em.state and not em.extra_params:
            continue
        source = node.source_name
        params = dict(canonical.get(source, {}))
        renames = node.meta.get("param_source", {})
        local = {own: params[src] for own, src in renames.items() if src in params} if renames else params
        for pname, steps in node.param_transforms.items():
            if pname in local:
                for step in steps:
                    local[pname] = apply_param_transform(step, local[pname])
        for entry in em.state:
            if entry.source not in local:
                raise KeyError(f"layer {source!r} ({node.op}) has no param {entry.source!r}")
            key = f"{node.name}.{entry.key}" if entry.key else node.name
            out[key] = apply(entry.transform, local[entry.source])
        for suffix, src, _size, _init in em.extra_params:
            out[f"{node.name}_{suffix}"] = apply(Transform.IDENTITY, local[src])
    return out
