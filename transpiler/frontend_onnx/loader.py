"""Read an ONNX model file: shapes inferred, constant subgraphs folded.

What a layer converter needs from the file is the graph's real computation on the model's
inputs; everything else is a constant. Initializers (whether or not they are also listed as
graph inputs, as opset-9 exporters do), ``Constant`` nodes, and every node all of whose inputs
are constants (``ConstantOfShape`` making a weight from its shape, ``Unsqueeze`` of a bias,
shape arithmetic) are evaluated once with the ``onnx.reference`` evaluator; a ``Shape`` of a
tensor whose shape is static becomes a constant too (its batch size is the file's). Shape
inference runs on the folded graph, so each remaining tensor's static shape is known.

This module imports ``onnx`` (the reader of ``.onnx`` files only; the rest of the translation
path never does).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

#: ops whose output differs between runs: never folded
_NONDETERMINISTIC = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                     "Bernoulli"}


class OnnxReadError(Exception):
    """The file is not a model this reader can read (not ONNX, no graph, a broken graph)."""


@dataclass
class ONode:
    """One node of the folded graph, with its attributes as Python values."""

    op_type: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict
    domain: str = ""
    index: int = 0


@dataclass
class OGraph:
    """The folded graph: its real inputs (name, static shape, numpy dtype), outputs, the
    nodes left to convert, the constants and every tensor's static shape (None sizes unknown)."""

    path: str
    name: str
    opset: int
    inputs: list[tuple[str, tuple, str]]
    outputs: list[str]
    nodes: list[ONode]
    consts: dict[str, np.ndarray]
    shapes: dict[str, tuple | None] = field(default_factory=dict)
    doc: str = ""
    producer: str = ""
    folded: int = 0
    #: the graph outputs' element types (numpy names)
    output_types: list[str] = field(default_factory=list)

    @property
    def batch(self) -> int | None:
        """The batch size the file was exported with (its first input's first size)."""
        return self.inputs[0][1][0] if self.inputs and self.inputs[0][1] else None

    def consumers(self, name: str) -> list[ONode]:
        return [n for n in self.nodes if name in n.inputs]


def _dims(type_proto) -> tuple | None:
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in type_proto.tensor_type.shape.dim)


def _np_dtype(type_proto) -> str:
    """The numpy name of a tensor type ("sequence", "optional", ... for other types)."""
    from onnx import helper

    kind = type_proto.WhichOneof("value")
    if kind != "tensor_type":
        return str(kind).replace("_type", "")
    try:
        return str(np.dtype(helper.tensor_dtype_to_np_dtype(type_proto.tensor_type.elem_type)))
    except (KeyError, TypeError):
        return f"ONNX type {type_proto.tensor_type.elem_type}"


def load(path: str) -> OGraph:
    """The folded graph of the model file at ``path``."""
    import onnx
    from onnx import helper, numpy_helper

    try:
        model = onnx.load(path)
    except Exception as exc:  # a protobuf decode error: not an ONNX file
        raise OnnxReadError(f"{path}: not an ONNX model ({type(exc).__name__}: {exc})") from None
    if not model.HasField("graph") or not model.graph.node:
        raise OnnxReadError(f"{path}: the file holds no graph")
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise OnnxReadError(f"{path}: no default-domain opset import")
    g = model.graph
    consts: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # a graph shape inference cannot read: shapes come from the IR's own rules
        inferred = model
    shapes = _shape_map(inferred.graph)
    inputs = [(i.name, _dims(i.type) or (), _np_dtype(i.type))
              for i in g.input if i.name not in consts]
    nodes: list[ONode] = []
    folded = 0
    batch_derived: set[str] = set()
    for index, proto in enumerate(g.node):
        attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        node = ONode(proto.op_type, proto.name, list(proto.input), list(proto.output), attrs, proto.domain, index)
        value = _fold(node, proto, consts, shapes, opset, batch_derived)
        if value is not None:
            consts.update(zip(node.outputs, value))
            if any(np.any(np.asarray(v) == BATCH) for v in value if np.asarray(v).dtype.kind in "iu"):
                batch_derived.update(node.outputs)
            folded += 1
            continue
        nodes.append(node)
    out = OGraph(path, g.name or os.path.splitext(os.path.basename(path))[0], opset, inputs,
                 [o.name for o in g.output], nodes, consts, doc=model.doc_string or g.doc_string,
                 producer=" ".join(p for p in (model.producer_name, model.producer_version) if p), folded=folded)
    out.shapes = _shapes_after_folding(model, out) or shapes
    out.output_types = [_np_dtype(o.type) for o in g.output]
    return out


def _shape_map(graph) -> dict[str, tuple | None]:
    shapes: dict[str, tuple | None] = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        shapes[vi.name] = _dims(vi.type)
    return shapes


#: the run-time batch size where a folded ``Shape`` needs a number (never a real size: it is a
#: marker that only index and concatenation ops carry to a ``Reshape``)
BATCH = 1_000_003
#: ops that move the batch marker around without computing with it
_BATCH_SAFE = {"Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast", "Identity", "Reshape"}


def _fold(node: ONode, proto, consts: dict, shapes: dict, opset: int, batch_derived: set) -> list | None:
    """The values of ``node``'s outputs when they are constants, else None."""
    from onnx import numpy_helper

    if node.domain not in ("", "ai.onnx") or node.op_type in _NONDETERMINISTIC:
        return None
    if node.op_type == "Constant":
        for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
            if key in node.attrs:
                v = node.attrs[key]
                return [numpy_helper.to_array(v) if key == "value" else
                        np.asarray(v, np.float32 if "float" in key else np.int64)]
        return None
    if node.op_type == "Shape" and node.inputs[0] not in consts:
        shape = shapes.get(node.inputs[0])
        if shape and shape[0] is None and all(s is not None for s in shape[1:]):
            shape = (BATCH, *shape[1:])  # a run-time batch size: a marker the Reshape converter reads
        if shape is None or any(s is None for s in shape):
            return None
        start, end = node.attrs.get("start", 0), node.attrs.get("end")
        return [np.asarray(shape[start:end], np.int64)]
    if not all(not i or i in consts for i in node.inputs):
        return None
    if any(i in batch_derived for i in node.inputs if i) and node.op_type not in _BATCH_SAFE:
        return None  # (arithmetic on the batch marker would make a wrong number)
    feeds = {i: consts[i] for i in node.inputs if i}
    try:
        return _evaluate(proto, feeds, opset)
    except Exception:  # an op the evaluator lacks: converted like any other node
        return None


def _evaluate(proto, feeds: dict, opset: int) -> list:
    """Run one node with ``onnx.reference`` at the model's opset (a one-node model: the
    evaluator picks the op's implementation from the model's opset import)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in feeds.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in proto.output if o]
    graph = helper.make_graph([proto], "fold", ins, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return list(ReferenceEvaluator(model).run(None, feeds))


def _shapes_after_folding(model, og: OGraph) -> dict[str, tuple | None] | None:
    """Shape inference again on the folded graph (constants as initializers), so tensors
    behind a folded ``Reshape`` shape or ``Unsqueeze`` axes get their static shapes."""
    import onnx
    from onnx import helper, numpy_helper

    g = model.graph
    used = {i for n in og.nodes for i in n.inputs}
    # small constants (shapes, axes) by value; weights by type and shape only (no copy)
    small = {k: v for k, v in og.consts.items() if k in used and np.size(v) <= 64}
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in small.items()]
    weights = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), np.shape(v))
               for k, v in og.consts.items() if k in used and k not in small]
    keep = {n.index for n in og.nodes}
    graph = helper.make_graph([p for i, p in enumerate(g.node) if i in keep], g.name or "g",
                              [i for i in g.input if i.name not in og.consts] + weights, list(g.output), inits)
    folded = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    try:
        inferred = onnx.shape_inference.infer_shapes(folded)
    except Exception:
        return None
    return _shape_map(inferred.graph)
