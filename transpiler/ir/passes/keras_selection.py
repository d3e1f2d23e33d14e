"""Keras forms of what Keras spells differently, after the layout pass (``layout_pass``)
made the graph channels-last.

``select_keras_ops`` turns explicit torch paddings into Keras forms (``"same"``
when it is the same computation, else ``ZeroPadding`` before a ``"valid"`` layer;
a transposed convolution's padding becomes a ``Cropping`` after it) and records what
Keras cannot express as ``graph.unsupported`` (the printer stubs the model).
One ``@rule`` per op, as ``torch_selection``; rules read the table's facts. The pipeline
(``KERAS_PIPELINE``) is in ``ir/passes/__init__.py``.
"""

from __future__ import annotations

from typing import Callable

from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.registry import OpRegistry
from transpiler.ir.shapes import conv_out_size, infer_node, spatial_axes


# ---------------------------------------------------------------------------------
# Keras forms
# ---------------------------------------------------------------------------------
def _unsupported(graph: Graph, node: Node, message: str) -> None:
    graph.unsupported.append((node.span, f"{node.name} ({node.op}): {message}"))


def _insert_pad(graph: Graph, node: Node, pads) -> None:
    rank = len(pads)
    name = f"{node.name}_pad"
    taken = {n.name for n in graph.nodes}
    while name in taken:
        name += "_"
    pad = graph.add_node(f"pad{rank}d", name, [node.inputs[0]], attrs={"pads": pads}, before=node, span=node.span)
    infer_node(pad)
    node.inputs = [pad.outputs[0]]


def _tf_same_pads(x: Value, kernel, strides, dilation) -> tuple | None:
    """The ((before, after), ...) TensorFlow's 'same' pads with (extra at the end)."""
    pads = []
    for ax, k, s, d in zip(spatial_axes(x.layout), kernel, strides, dilation):
        n = x.shape[ax]
        if n is None:
            return None
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


Rule = Callable[[Graph, Node], None]
_RULES = OpRegistry("keras selection rule")
rule = _RULES.register  # (decorator: ``@rule("conv2d")``; refuses duplicates and ops not in the table)


@rule("conv1d", "conv2d", "conv3d", "depthwise_conv2d")
def select_conv(graph: Graph, node: Node) -> None:
    """Explicit pads: TF's 'same' when they are the same, else a ZeroPadding first."""
    a = node.attrs
    if isinstance(a["padding"], str):
        return
    pads = a["padding"]
    k, d, s = a["kernel_size"], a["dilation"], a["strides"]
    if tuple(pads) == _tf_same_pads(node.inputs[0], k, s, d):
        a["padding"] = "same"
    else:
        _insert_pad(graph, node, pads)
        a["padding"] = "valid"


@rule("conv_transpose1d", "conv_transpose2d")
def select_conv_transpose(graph: Graph, node: Node) -> None:
    """torch's padding crops the output: 'valid' and a Cropping after the layer."""
    a = node.attrs
    if isinstance(a["padding"], str):
        return
    pads = a["padding"]
    k, s = a["kernel_size"], a["strides"]
    opad = a["output_padding"] or (0,) * len(k)
    a["padding"] = "valid"
    a["output_padding"] = None if all(o == 0 and kk >= ss for o, kk, ss in zip(opad, k, s)) else opad
    infer_node(node)
    if any(b or e for b, e in pads):
        rank = len(k)
        crop = graph.add_node(f"crop{rank}d", f"{node.name}_crop", [node.outputs[0]],
                              attrs={"cropping": pads}, span=node.span)
        graph.nodes.remove(crop)
        graph.nodes.insert(graph.nodes.index(node) + 1, crop)
        infer_node(crop)
        graph.replace_uses(node.outputs[0], crop.outputs[0], after=crop)


@rule("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d")
def select_pool(graph: Graph, node: Node) -> None:
    """ceil_mode and explicit pads to Keras' 'valid'/'same' where the windows are the same."""
    a = node.attrs
    is_max = node.spec.pooling == "max"
    if a["ceil_mode"]:
        x = node.inputs[0]
        axes = spatial_axes(x.layout)
        pads = a["padding"]
        same = all(conv_out_size(x.shape[ax], kk, ss, 1, pads if isinstance(pads, str) else pads[i], True)
                   == conv_out_size(x.shape[ax], kk, ss, 1, pads if isinstance(pads, str) else pads[i])
                   for i, (ax, kk, ss) in enumerate(zip(axes, a["pool_size"], a["strides"])))
        tf = _tf_same_pads(x, a["pool_size"], a["strides"], (1,) * len(a["strides"]))
        ceil_is_same = pads == "valid" and tf is not None and all(b == 0 for b, _ in tf) and all(
            conv_out_size(x.shape[ax], kk, ss, 1, "valid", True) == -(-x.shape[ax] // ss)
            for ax, kk, ss in zip(axes, a["pool_size"], a["strides"]))
        if same:
            a["ceil_mode"] = False
        elif ceil_is_same:
            # the partial last window is TensorFlow's 'same' (pads at the end only, left
            # out of a mean, −inf for a max)
            a["ceil_mode"] = False
            a["padding"] = "same"
        else:
            _unsupported(graph, node, "ceil_mode=True keeps a partial window Keras pooling drops")
    if not isinstance(a["padding"], str) and not a["ceil_mode"] and tuple(a["padding"]) == \
            _tf_same_pads(node.inputs[0], a["pool_size"], a["strides"], (1,) * len(a["strides"])):
        # the same windows: Keras' 'same' pads max with −inf and leaves pads out of a mean
        a["padding"] = "same"
    if not isinstance(a["padding"], str):
        prod = node.inputs[0].producer
        if is_max and prod is not None and prod.spec.holds(prod.spec.non_negative, prod.attrs):
            # the input is never negative: zero padding is the same as torch's −inf padding
            _insert_pad(graph, node, a["padding"])
            a["padding"] = "valid"
        else:
            _unsupported(graph, node, f"explicit padding {a['padding']} (torch pads with "
                                      f"{'-inf' if is_max else 'zeros not counted'}) "
                                      "has no Keras pooling equivalent")


@rule("pad1d", "pad2d", "pad3d")
def select_pad(graph: Graph, node: Node) -> None:
    value = node.attrs["value"]
    if value != 0.0:
        _unsupported(graph, node, f"constant padding with value {value} (Keras pads with zeros)")


@rule("batch_norm")
def select_batch_norm(graph: Graph, node: Node) -> None:
    """The last axis is spelled -1 (Keras' default)."""
    rank = len(node.inputs[0].shape)
    if node.attrs["axis"] % rank == rank - 1:
        node.attrs["axis"] = -1


def select_keras_ops(graph: Graph) -> Graph:
    """Explicit paddings to Keras forms; what Keras cannot express is recorded."""
    for node in list(graph.nodes):
        fn = _RULES.get(node.op)
        if fn is not None:
            fn(graph, node)
        infer_node(node)
    for node in graph.nodes:
        infer_node(node)
    return graph


__all__ = ["select_keras_ops"]
