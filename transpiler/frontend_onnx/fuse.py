"""Layer recovery on the IR built from ONNX: a per-channel affine (a Mul/Add/Sub/Div of a
per-channel constant, read as a BatchNorm with mean 0, variance 1 and epsilon 0) is folded
into the layer before it when only it reads that layer's output: into a BatchNorm's gamma and
beta (Caffe2's BN + scale + bias), into a Conv's or Dense's kernel and bias, or into
another affine. What stays is one BatchNorm per normalisation, as a person would write it."""

from __future__ import annotations

import numpy as np

from transpiler.ir.graph import Graph, Node

_BIASED = {"conv1d", "conv2d", "conv3d", "depthwise_conv2d", "dense"}


def fuse_affine(graph: Graph) -> None:
    changed = True
    while changed:
        changed = False
        for node in list(graph.nodes):
            if node.from_onnx.affine and _fold(graph, node):
                changed = True
                break


def _fold(graph: Graph, affine: Node) -> bool:
    x = affine.inputs[0]
    prev = x.producer
    if prev is None or x in graph.outputs or len(graph.consumers(x)) != 1 or not prev.params:
        return False
    s, t = affine.params["gamma"], affine.params["beta"]
    if prev.op == "batch_norm":
        prev.params["gamma"] = prev.params["gamma"] * s
        prev.params["beta"] = prev.params["beta"] * s + t
        if prev.from_onnx.affine and not affine.from_onnx.affine:
            prev.from_onnx.affine = False
    elif prev.op in _BIASED:  # the output channel is the kernel's last axis (HWIO, IO; HWIM: I*M)
        kernel = prev.params["kernel"]
        prev.params["kernel"] = (kernel * s.reshape(kernel.shape[-2:] if prev.op == "depthwise_conv2d"
                                                    else s.shape)).astype(np.float32)
        bias = prev.params.get("bias")
        prev.params["bias"] = (bias * s if bias is not None else np.zeros_like(t)) + t
        prev.attrs["use_bias"] = True
    else:
        return False
    graph.replace_uses(affine.outputs[0], x)
    graph.nodes.remove(affine)
    return True
