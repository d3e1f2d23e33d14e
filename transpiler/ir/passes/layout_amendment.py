"""Keras → PyTorch layout passes: channels-last graphs to channels-first.

``amend_layout`` is the layout pass (``layout_pass``) in the Keras → PyTorch direction;
``fold_transposes`` then merges chains of transposes (a user's Permute between two
layout transposes becomes one permute) and drops identities.
"""

from __future__ import annotations

from collections import Counter

from transpiler.ir.graph import Graph, Node
from transpiler.ir.layout import KERAS_TO_TORCH
from transpiler.ir.passes.layout_pass import convert_layout
from transpiler.ir.shapes import infer_node


def amend_layout(graph: Graph) -> Graph:
    """Convert ``graph`` to channels-first, in place; returns it."""
    convert_layout(graph, KERAS_TO_TORCH)
    return graph


def _perm(node: Node) -> tuple | None:
    """The permutation of a pure permute op (the table's ``perm_attr``), else None."""
    return node.attrs[node.spec.perm_attr] if node.spec.perm_attr else None


def fold_transposes(graph: Graph) -> Graph:
    """Merge a transpose into the transpose that reads it; drop identity transposes."""
    changed = True
    while changed:
        changed = False
        names = Counter(n.name for n in graph.nodes)
        for node in list(graph.nodes):
            if _perm(node) is None:
                continue
            src = node.inputs[0].producer
            # (a shared Permute layer keeps its perm: its other calls read other layouts)
            if src is not None and _perm(src) is not None and len(graph.consumers(src.outputs[0])) == 1 \
                    and src.outputs[0] not in graph.outputs and names[node.name] == 1:
                first, second = _perm(src), _perm(node)
                node.attrs[node.spec.perm_attr] = tuple(first[i] for i in second)
                node.inputs = [src.inputs[0]]
                node.comments[:0] = src.comments
                node.meta.setdefault("inserted", src.meta.get("inserted"))
                graph.nodes.remove(src)
                changed = True
            if _perm(node) == tuple(range(len(_perm(node)))) and node in graph.nodes:
                if node.inputs[0].layout != node.outputs[0].layout:
                    # a user's Permute undone by a layout transpose: no data moves, but the
                    # readers see the value in the output's layout (its spatial axes, ...):
                    # the node stays, a no-op that carries the layout
                    continue
                layouts = graph.meta.get("output_layouts") or [v.layout for v in graph.outputs]
                for i, v in enumerate(graph.outputs):
                    if v is node.outputs[0]:
                        # same data, but the source framework reads it in this layout
                        layouts[i] = v.layout
                graph.meta["output_layouts"] = layouts
                graph.replace_uses(node.outputs[0], node.inputs[0], after=node)
                graph.nodes.remove(node)
                changed = True
        for node in graph.nodes:
            infer_node(node)
    graph.meta["layout_transposes"] = sum(
        1 for n in graph.nodes if _perm(n) is not None and n.meta.get("inserted") == "layout"
        and _perm(n) != tuple(range(len(_perm(n)))))
    return graph
