"""Operator selection for PyTorch: rewrite nodes into forms torch has natively.

Runs after layout amendment (shapes are channels-first and known). Each rule is a
node-to-nodes macro expansion, registered per op:

* 'same' padding is made explicit from the input size (TF pads the extra row and
  column at the end): symmetric pads become the layer's ``padding=``; stride-1
  convolutions keep ``padding="same"``; otherwise a pad node goes before the layer
  (-inf for max pooling). Average pooling excludes the padding from the mean. Explicit
  uneven pads (a causal Conv1D) become a pad node too.
* transposed convolutions get torch's ``padding``/``output_padding`` from the
  shapes, or a crop node where TF crops asymmetrically.
* separable convolutions become a depthwise and a pointwise convolution.
* patch extraction ('same') gets explicit pads like a convolution (``F.unfold`` pads
  symmetrically only).
"""

from __future__ import annotations

import math
from typing import Callable

from transpiler.ir.graph import Graph, Node, SplitFrom
from transpiler.ir.modules import inherit
from transpiler.ir.registry import OpRegistry
from transpiler.ir.shapes import infer_node, spatial_axes

Rule = Callable[[Graph, Node], None]
_RULES = OpRegistry("torch selection rule")
rule = _RULES.register  # (decorator: ``@rule("conv2d")``; refuses duplicates and ops not in the table)


def same_pads(size: int, k: int, s: int, d: int = 1) -> tuple[int, int]:
    """TF's 'same' padding along one axis: (before, after), the extra at the end. At
    stride 1 it does not depend on the size (a free axis: ``Input(shape=(None, 8))``)."""
    if s == 1:
        total = (k - 1) * d
        return total // 2, total - total // 2
    out = math.ceil(size / s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def _window_pads(node: Node, kernel) -> tuple[tuple[int, int], ...]:
    x = node.inputs[0]
    axes = spatial_axes(x.layout)
    dilation = node.attrs.get("dilation") or (1,) * len(axes)
    return tuple(same_pads(x.shape[ax], k, s, d)
                 for ax, k, s, d in zip(axes, kernel, node.attrs["strides"], dilation))


def _insert_pad(graph: Graph, node: Node, pads, value: float) -> None:
    rank = len(pads)
    pad = graph.add_node(f"pad{rank}d", f"{node.name}_pad", [node.inputs[0]],
                         attrs={"pads": pads, "value": value}, before=node, span=node.span)
    pad.inserted = "padding"
    pad.outputs[0].var = node.inputs[0].var
    infer_node(pad)
    node.inputs = [pad.outputs[0], *node.inputs[1:]]


@rule("conv1d", "conv2d", "conv3d", "depthwise_conv2d")
def select_conv(graph: Graph, node: Node) -> None:
    padding = node.attrs["padding"]
    if not isinstance(padding, str) and any(b != a for b, a in padding):
        # explicit uneven pads (Conv1D padding="causal"): torch's padding= is symmetric
        _insert_pad(graph, node, padding, 0.0)
        node.attrs["padding"] = "valid"
        return
    if padding != "same":
        return
    pads = _window_pads(node, node.attrs["kernel_size"])
    if all(b == a for b, a in pads):
        node.attrs["padding"] = pads
    elif all(s == 1 for s in node.attrs["strides"]):
        return  # torch's padding="same" pads the extra at the end too
    else:
        _insert_pad(graph, node, pads, 0.0)
        node.attrs["padding"] = "valid"


@rule("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d")
def select_pool(graph: Graph, node: Node) -> None:
    padding = node.attrs["padding"]
    if not isinstance(padding, str) and any(b != a for b, a in padding) and node.spec.pooling == "max":
        # explicit uneven pads (an ONNX MaxPool): torch's padding= is symmetric
        _insert_pad(graph, node, padding, float("-inf"))
        node.attrs["padding"] = "valid"
        return
    if padding != "same":
        return
    x = node.inputs[0]
    # A window wider than an axis it covers in one step (one output) sees the whole axis
    # plus padding that never counts: pool over exactly the axis (torch refuses windows
    # larger than the padded input).
    node.attrs["pool_size"] = tuple(
        n if k > n and math.ceil(n / s) == 1 else k
        for n, k, s in zip((x.shape[ax] for ax in spatial_axes(x.layout)), node.attrs["pool_size"],
                           node.attrs["strides"]))
    kernel, strides = node.attrs["pool_size"], node.attrs["strides"]
    pads = _window_pads(node, kernel)
    if all(b == a for b, a in pads):
        node.attrs["padding"] = pads
        return
    if all(s > 1 or b == a for (b, a), s in zip(pads, strides)):
        # Pad `before` on both sides; ceil_mode adds the last, partial window, from
        # which torch leaves the padding out (max: -inf, average: not counted).
        node.attrs["padding"] = tuple((b, b) for b, _ in pads)
        node.attrs["ceil_mode"] = True
        return
    if node.spec.pooling == "max":
        _insert_pad(graph, node, pads, float("-inf"))
        node.attrs["padding"] = "valid"
        return
    # Average pooling, per axis: stride > 1 as above (pad `before` on both sides, ceil_mode
    # keeps the last window); stride 1 with an even window: pad `after` on both sides and
    # drop the extra leading output (ceil_mode changes nothing at stride 1). The padding is
    # never counted in the mean.
    ceil = [s > 1 and b != a for (b, a), s in zip(pads, strides)]
    node.attrs["padding"] = tuple((b, b) if c or b == a else (a, a) for (b, a), c in zip(pads, ceil))
    if any(ceil):
        node.attrs["ceil_mode"] = True
    _insert_crop(graph, node, tuple((0, 0) if c else (a - b, 0) for (b, a), c in zip(pads, ceil)))


@rule("conv_transpose1d", "conv_transpose2d")
def select_conv_transpose(graph: Graph, node: Node) -> None:
    x, y = node.inputs[0], node.outputs[0]
    a = node.attrs
    if not isinstance(a["padding"], str) and all(b == e for b, e in a["padding"]):
        return  # torch's own form already: crop `padding` from the start, `padding - output_padding` from the end
    pads, extra, crops = [], [], []
    for i, ax in enumerate(spatial_axes(x.layout)):
        n, k, s, d = x.shape[ax], a["kernel_size"][i], a["strides"][i], a["dilation"][i]
        uncropped = (n - 1) * s + (k - 1) * d + 1
        total = uncropped - y.shape[ax]
        if total < 0:
            pads.append(0)
            extra.append(-total)
            crops.append((0, 0))
        else:
            before = total // 2
            crops.append((before, total - before))
            pads.append(before)
            extra.append(0)
    node.attrs["output_padding"] = tuple(extra)
    # torch crops `padding` from both ends; TF crops the odd extra from the end only.
    node.attrs["padding"] = tuple((b, b) for b, _ in crops)
    if any(b != e for b, e in crops):
        _insert_crop(graph, node, tuple((0, e - b) for b, e in crops))


@rule("extract_patches")
def select_extract_patches(graph: Graph, node: Node) -> None:
    """F.unfold pads symmetrically: TF's 'same' becomes explicit pads, or a pad node first."""
    if node.attrs["padding"] != "same":
        return
    pads = _window_pads(node, node.attrs["kernel_size"])
    if all(b == a for b, a in pads):
        node.attrs["padding"] = pads
    else:
        _insert_pad(graph, node, pads, 0.0)
        node.attrs["padding"] = "valid"


def _insert_crop(graph: Graph, node: Node, crops) -> None:
    """Crop ``node``'s output by ``crops`` ((before, after) per spatial axis)."""
    y = node.outputs[0]
    after = graph.nodes.index(node) + 1
    crop = graph.add_node(f"crop{len(crops)}d", f"{node.name}_crop", [y], attrs={"cropping": crops},
                          before=graph.nodes[after] if after < len(graph.nodes) else None,
                          span=node.span)
    crop.inserted = "padding"
    infer_node(node)
    infer_node(crop)
    crop.outputs[0].var = y.var
    graph.replace_uses(y, crop.outputs[0], after=crop)


@rule("separable_conv2d")
def select_separable(graph: Graph, node: Node) -> None:
    a = node.attrs
    dw = graph.add_node("depthwise_conv2d", f"{node.name}_depthwise", [node.inputs[0]],
                        attrs={"kernel_size": a["kernel_size"], "strides": a["strides"],
                               "padding": a["padding"], "dilation": a["dilation"],
                               "depth_multiplier": a["depth_multiplier"], "use_bias": False},
                        before=node, span=node.span, source_name=node.source_name)
    dw.split_from = SplitFrom(node.op, dict(node.attrs), node.inputs[0], {"kernel": "depthwise_kernel"})
    dw.layer = node.layer
    dw.call_span = node.call_span
    dw.comments = node.comments
    inherit(dw, node, "depthwise")
    infer_node(dw)
    dw.outputs[0].var = node.inputs[0].var
    select_conv(graph, dw)
    pw = graph.add_node("conv2d", f"{node.name}_pointwise", [dw.outputs[0]],
                        attrs={"filters": a["filters"], "kernel_size": (1, 1), "use_bias": a["use_bias"]},
                        before=node, span=node.span, source_name=node.source_name)
    pw.split_from = SplitFrom(node.op, dict(node.attrs), node.inputs[0],
                              {"kernel": "pointwise_kernel", "bias": "bias"})
    pw.layer = node.layer
    pw.call_span = node.call_span
    pw.from_keras.initializers = node.from_keras.initializers
    inherit(pw, node, "pointwise")
    infer_node(pw)
    pw.outputs = node.outputs
    for v in pw.outputs:
        v.producer = pw
    graph.nodes.remove(node)


def select_torch_ops(graph: Graph) -> Graph:
    """Apply every torch selection rule once, in graph order."""
    for node in list(graph.nodes):
        fn = _RULES.get(node.op)
        if fn is not None and node in graph.nodes:
            fn(graph, node)
    for node in graph.nodes:
        infer_node(node)
    return graph
