"""An IR graph (channels-first: the graph the PyTorch printer prints) → an ``onnx.ModelProto``.

Weights come as each node's own params (``{node name: {param: array}}``: the weights package
turns either framework's checkpoint, or the drawn initial values, into that form). Inputs whose
size is known only at run time get a ``dim_param``: the batch axis ``batch`` under
``dynamic_batch`` (else 1), another unknown size the expression it came from.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from transpiler.ir import sizes
from transpiler.ir.graph import Graph, Value
from transpiler.printers.onnx import attention, elementwise, layers, preprocessing, recurrent  # noqa: F401 (emitters)
from transpiler.printers.onnx.builder import Context, OnnxBuilder, Unsupported, emitter_for, opset as current_opset

_ELEM = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7, "bool": 9, "float16": 10, "float64": 11}


def unsupported_nodes(graph: Graph) -> list[tuple[Any, str]]:
    """``(node, reason)`` for every node the printer has no emission for (before trying)."""
    return [(n, f"{n.op} has no ONNX emission yet") for n in graph.nodes if emitter_for(n.op) is None]


def _ident(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", text) or "x"


def _dims(value: Value, batch: int | None, name: str) -> list:
    out: list = []
    for i, d in enumerate(value.shape or ()):
        if i == 0:
            out.append("batch" if batch is None else int(batch))
        elif isinstance(d, sizes.SymbolicSize) or d is None or sizes.carries_runtime(d):
            expr = getattr(d, "expr", None)
            out.append(_ident(sizes.expr_text(expr)) if expr is not None else f"{name}_dim{i}")
        else:
            out.append(int(d))
    return out


def _numbers_in(b: OnnxBuilder, node, names: list[str]) -> list[str]:
    if node.spec.numbers != "computes" or not node.outputs:
        return names
    want = node.outputs[0].dtype
    out = []
    for v, name in zip(node.inputs, names):
        if v is not None and v.dtype != want and (v.dtype == "bool" or want.startswith("float")):
            name = b.one("Cast", [name], f"{node.name}_cast", to=_ELEM.get(want, 1))
        out.append(name)
    return out


def _typed_out(b: OnnxBuilder, node, outs: list[str]) -> list[str]:
    if node.spec.numbers != "moves" or not node.inputs or node.inputs[0] is None:
        return outs
    have = node.inputs[0].dtype
    return [b.one("Cast", [o], f"{node.name}_cast", to=_ELEM.get(v.dtype, 1)) if v.dtype != have else o
            for v, o in zip(node.outputs, outs)]


def _own_params(node, params: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The node's params (``{node name: {param: array}}``, weights/canonical.py's form),
    every one the ops table gives it present."""
    own = params.get(node.name, {})
    for p in node.spec.active_params(node.attrs):
        if p.name not in own:
            raise Unsupported(f"{node.span or node.name}: no value for {node.name}.{p.name} "
                              f"(layer {node.source_name!r})")
    return {k: np.asarray(v, np.float32) if np.asarray(v).dtype.kind == "f" else np.asarray(v)
            for k, v in own.items()}


def export_graph(graph: Graph, params: dict[str, dict[str, np.ndarray]], *, dynamic_batch: bool = False,
                 doc: str = "", opset: int | None = None):
    """The ONNX model of ``graph`` with ``params`` (``{node name: {param: array}}``, each node's
    own params: ``weights.canonical.node_params``); raises Unsupported naming every node that
    has no emission."""
    from onnx import TensorProto, helper

    missing = unsupported_nodes(graph)
    if missing:
        raise Unsupported("; ".join(f"{n.span or n.name}: {why}" for n, why in missing))
    b = OnnxBuilder()
    names: dict[int, str] = {}
    batch = None if dynamic_batch else 1
    graph_inputs = []
    with sizes.quiet():
        for v in graph.inputs:
            name = b.fresh(_ident(v.var or v.name))
            names[id(v)] = name
            graph_inputs.append(helper.make_tensor_value_info(name, _ELEM.get(v.dtype, TensorProto.FLOAT),
                                                              _dims(v, batch, name)))
        for node in graph.nodes:
            ins = [names[id(v)] if v is not None else "" for v in node.inputs]
            ctx = Context(b, node, _numbers_in(b, node, ins), _own_params(node, params))
            try:
                outs = emitter_for(node.op)(ctx)
            except Unsupported as exc:
                raise Unsupported(f"{node.span or node.name}: {node.op}: {exc}") from None
            if len(outs) != len(node.outputs):
                raise Unsupported(f"{node.span or node.name}: {node.op}: {len(outs)} outputs for {len(node.outputs)}")
            for v, o in zip(node.outputs, _typed_out(b, node, outs)):
                names[id(v)] = o
        graph_outputs = []
        for i, v in enumerate(graph.outputs):
            src = names[id(v)]
            out = b.fresh(_ident(v.var or f"output_{i}") if len(graph.outputs) > 1 else "output")
            b.nodes.append(helper.make_node("Identity", [src], [out], name=b.fresh(f"{out}/Identity")))
            graph_outputs.append(helper.make_tensor_value_info(out, _ELEM.get(v.dtype, TensorProto.FLOAT),
                                                               _dims(v, batch, out)))
    g = helper.make_graph(b.nodes, _ident(graph.name), graph_inputs, graph_outputs, b.initializers)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset or current_opset())],
                              producer_name="transpiler",
                              doc_string=doc)
    model.ir_version = helper.find_min_ir_version_for(list(model.opset_import))
    return model
