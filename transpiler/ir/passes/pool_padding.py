"""Average pooling whose explicit padding is left out of the mean, for a target whose pooling
cannot pad that way (Keras pads only as TensorFlow's 'same' does): the mean over the real
values of each window is the zero-padded window mean divided by the zero-padded window mean of
ones, both plain ``avg_pool`` over a ``pad``.

    y = avg_pool(pad(x)) / avg_pool(pad(ones_like(x)))

Runs before layout amendment; only pools whose padding is explicit, not TF's 'same' pads and
without ceil_mode are rewritten (those the Keras selection maps directly are left alone).
"""

from __future__ import annotations

from transpiler.ir.graph import Graph, Node
from transpiler.ir.shapes import infer_node, spatial_axes
from transpiler.ir.passes.torch_selection import same_pads


def _tf_same(node: Node) -> bool:
    x = node.inputs[0]
    a = node.attrs
    pads = tuple(same_pads(x.shape[ax], k, s) for ax, k, s in zip(spatial_axes(x.layout), a["pool_size"], a["strides"]))
    return tuple(a["padding"]) == pads


def decompose_uncounted_pool_padding(graph: Graph) -> Graph:
    """For Keras: every such pooling Keras' 'same' is not."""
    return _decompose(graph, lambda node: not _tf_same(node))


def _windowed(node: Node, kind: str) -> bool:
    """A ``kind`` ("max"/"avg") pooling over windows (the table's ``pooling`` fact; global
    pools have no window)."""
    return node.spec.pooling == kind and "pool_size" in node.attrs


def decompose_wide_pool_padding(graph: Graph) -> Graph:
    """For PyTorch, whose pooling pads symmetrically and refuses padding wider than half the
    window: those only (max pooling gets a -inf pad node instead)."""
    def wide(node: Node) -> bool:
        return any(max(p) > k // 2 or p[0] != p[1] for p, k in zip(node.attrs["padding"], node.attrs["pool_size"]))

    for node in graph.nodes:
        if _windowed(node, "max") and not isinstance(node.attrs["padding"], str) and wide(node):
            from transpiler.ir.passes.torch_selection import _insert_pad

            _insert_pad(graph, node, node.attrs["padding"], float("-inf"))
            node.attrs["padding"] = "valid"
    return _decompose(graph, wide)


def _decompose(graph: Graph, wanted) -> Graph:
    for node in list(graph.nodes):
        a = node.attrs
        if not _windowed(node, "avg") or isinstance(a["padding"], str) or a["ceil_mode"] or not wanted(node):
            continue
        rank = node.spec.rank
        pads, x = a["padding"], node.inputs[0]
        ones = graph.add_node("full_like", f"{node.name}_ones", [x], attrs={"value": 1.0}, before=node, span=node.span)
        infer_node(ones)
        padded = []
        for src, hint in ((x, "pad"), (ones.outputs[0], "ones_pad")):
            p = graph.add_node(f"pad{rank}d", f"{node.name}_{hint}", [src], attrs={"pads": pads}, before=node,
                               span=node.span)
            infer_node(p)
            padded.append(p.outputs[0])
        count = graph.add_node(node.op, f"{node.name}_count", [padded[1]],
                               attrs={**a, "padding": "valid"}, before=node, span=node.span)
        infer_node(count)
        node.inputs = [padded[0]]
        a["padding"] = "valid"
        infer_node(node)
        out = node.outputs[0]
        div = graph.add_node("divide", f"{node.name}_mean", [out, count.outputs[0]], span=node.span)
        graph.nodes.remove(div)
        graph.nodes.insert(graph.nodes.index(node) + 1, div)
        infer_node(div)
        graph.replace_uses(out, div.outputs[0], after=div)
    return graph
