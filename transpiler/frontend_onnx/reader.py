"""The ONNX reader: a folded ONNX graph (loader.py) → an ``ir.Program`` with one model.

The graph is built the way the PyTorch reader builds one (ONNX is channels-first, as torch
is): feature maps tagged ``NCHW``, axes counted in that layout, params converted once into the
ops table's canonical layouts (``ir/params.py``) and kept on the nodes (``Node.params``).
Each ONNX op type has one converter (``converters.py``, a registry); an op without one, or a
use of an op a converter cannot express, makes the model a marked stub and is reported,
never dropped. Layer names come from the ONNX names (the weight's name for a layer holding
one, else the node's name), made into unique Python identifiers.
"""

from __future__ import annotations

import keyword
import os
import re
from typing import Callable

import numpy as np

from transpiler.frontend_onnx.loader import OGraph, ONode, load
from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph, IRError, ModelOrigin, Node, Span, Value
from transpiler.ir.layout import CHANNELS_FIRST
from transpiler.ir.shapes import infer_node
from transpiler.ir.program import ModelDef, Program
from transpiler.ir.reader_facts import OnnxNodeFacts


class Unsupported(Exception):
    """A node this reader cannot express in the ops table (the model becomes a stub)."""


class BatchAxis(Unsupported):
    """A node computes over the first axis (or the inputs' first sizes differ): the graph's
    first axis is not a batch; the reader reads it again without one (``plain``)."""


class _Blocked(Exception):
    """A node reads the output of a node that was not converted (that one is reported)."""


Converter = Callable[["Context", ONode], None]
_CONVERTERS: dict[str, Converter] = {}
_IR_OPS: dict[str, tuple[str, ...]] = {}


def converter(*op_types: str, ops: tuple[str, ...] | dict[str, tuple[str, ...]] = ()
              ) -> Callable[[Converter], Converter]:
    """Register the converter of ONNX ``op_types`` (one converter per op type); ``ops`` names
    the ops-table entries it makes (per op type when a dict), for the support table."""
    def deco(fn: Converter) -> Converter:
        for t in op_types:
            if t in _CONVERTERS:
                raise ValueError(f"converter for {t} registered twice")
            _CONVERTERS[t] = fn
            _IR_OPS[t] = tuple(ops.get(t, ()) if isinstance(ops, dict) else ops)
        return fn
    return deco


def registered_ops() -> dict[str, tuple[str, ...]]:
    """``{ONNX op type: the ops-table entries its converter makes}``."""
    from transpiler.frontend_onnx import converters  # noqa: F401  (registers)

    return dict(sorted(_IR_OPS.items()))


#: attribute names of nn.Module / keras.Model a layer may not take
_RESERVED = {"forward", "training", "train", "eval", "modules", "parameters", "children", "apply", "cuda",
             "cpu", "to", "type", "float", "double", "half", "state_dict", "buffers", "zero_grad", "layers",
             "reset_parameters", "register_buffer", "add_module", "extra_repr", "inputs", "outputs",
             "self", "nn", "torch", "F", "keras", "layers", "ops", "model", "build_model", "input", "name",
             "weights", "dtype", "call", "build", "summary", "compile", "fit", "predict"}
#: weight-name endings that name the parameter, not the layer
_PARAM_SUFFIX = re.compile(r"([._/](weight|bias|kernel|w|b|W|B|s|scale|gamma|beta|rm|riv|mean|var)(_0)?|_0)$")


def identifier(text: str) -> str:
    """``text`` (an ONNX name) made into a Python identifier (lower case, ``_`` joined)."""
    s = re.sub(r"[^0-9a-zA-Z_]+", "_", text).strip("_")
    s = re.sub(r"__+", "_", s)
    if not s:
        return ""
    if s[0].isdigit():
        s = f"layer_{s}"
    if keyword.iskeyword(s) or s in _RESERVED:
        s = f"{s}_"
    return s


def _node_stem(name: str, op_type: str) -> str:
    """A torch exporter's ``/layer1/layer1.0/conv1/Conv`` → ``layer1.0.conv1``; a bare
    numbered name (``n14``, ``Conv_3``, ``node_7``) says nothing: empty."""
    parts = [p for p in name.strip("/").split("/") if p]
    if len(parts) > 1 and re.fullmatch(rf"{re.escape(op_type)}(_\d+)?", parts[-1]):
        parts = parts[:-1]
    path = ""
    for p in parts:
        path = p if not path or p.startswith(path + ".") else f"{path}.{p}"
    if re.fullmatch(r"(n|node|[A-Z][A-Za-z]*)_?\d*", path) or not path:
        return ""
    return path


def _weight_stem(name: str) -> str:
    if not name or name.startswith("onnx::") or re.fullmatch(r"[\d_]+", name):
        return ""
    stem = name
    for _ in range(2):
        stem = _PARAM_SUFFIX.sub("", stem)
    stem = re.sub(r"^(gpu_\d+|cpu)/", "", stem)
    return stem


class Context:
    """What converters build with: the IR graph, the ONNX tensor → IR value map, the
    constants, and the node names taken so far."""

    def __init__(self, og: OGraph, program: Program, plain: bool = False):
        self.og = og
        #: the graph has no batch axis: every axis of every value is a plain, static axis
        #: (ONNX's own node tests: rank-0/1 inputs, reductions/concats/transposes over axis 0)
        self.plain = plain
        self.program = program
        self.graph = Graph(name=_class_name(og))
        self.values: dict[str, Value] = {}
        self.taken: set[str] = set()
        self.skip: set[int] = set()  # ONNX nodes a pattern already converted
        self.failed: set[str] = set()  # outputs of nodes that were not converted
        #: ONNX tensors that are an IR value in another axis order (a recurrent layer's
        #: time-major input and outputs): name → (form, value); ``views.py`` resolves them
        self.views: dict[str, tuple[str, Value]] = {}
        self.node: ONode | None = None

    # -- reading --------------------------------------------------------------------------
    def is_const(self, name: str) -> bool:
        return name in self.og.consts

    def const(self, name: str) -> np.ndarray | None:
        return self.og.consts.get(name) if name else None

    def value(self, name: str) -> Value:
        if name in self.values:
            return self.values[name]
        if name in self.og.consts:
            raise Unsupported(f"the constant {name!r} is used as a tensor operand "
                              f"(shape {tuple(np.shape(self.og.consts[name]))})")
        if name in self.failed:
            raise _Blocked(name)
        if name in self.views:
            raise Unsupported(f"{name!r} ({self.views[name][0]}) is read other than by the Squeeze/Transpose "
                              "that gives a batch-first tensor back")
        raise Unsupported(f"input {name!r} is not produced by any converted node")

    def attr(self, node: ONode, key: str, default=None):
        v = node.attrs.get(key, default)
        return v.decode() if isinstance(v, bytes) else v

    def onnx_shape(self, name: str) -> tuple | None:
        return self.og.shapes.get(name)

    def consumers(self, name: str) -> list[ONode]:
        return self.og.consumers(name)

    def single_consumer(self, name: str) -> ONode | None:
        """The one node reading ``name`` when nothing else (and no graph output) does."""
        users = self.consumers(name)
        if len(users) == 1 and name not in self.og.outputs and users[0].inputs.count(name) == 1:
            return users[0]
        return None

    # -- building -------------------------------------------------------------------------
    def name_for(self, node: ONode, hint: str, weight: str = "", exact: str | None = None) -> str:
        """A fresh identifier: ``exact``, else the weight's name, the node's, or ``hint``."""
        base = exact or identifier(_node_stem(node.name, node.op_type)) or identifier(_weight_stem(weight)) or hint
        base = base.lower() if base.isupper() else base
        name, i = base, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name

    def add(self, op: str, inputs: list[Value], attrs: dict, node: ONode, hint: str, *,
            params: dict | None = None, weight: str = "", outputs: list[str] | None = None,
            out_layout: str | None = None, frozen: bool = False, affine: bool = False, n_out: int = 1, name: str | None = None) -> Node:
        """A node of ``op`` named after ``node``; its outputs bound to ``outputs`` (by default
        the ONNX node's first outputs)."""
        if self.plain and ops_table.get(op).layout == ops_table.IMPLICIT and any(v.layout is None for v in inputs):
            # (a feature-map op reads its channel axis off the layout tag, which a graph without
            # a batch axis does not have: never a guess)
            raise Unsupported(f"{op} in a graph without a batch axis (its channel axis is unknown)")
        name = self.name_for(node, hint, weight, exact=name)
        try:
            ir = self.graph.add_node(op, name, inputs, n_out, attrs=attrs, span=self._span(node))
        except TypeError as exc:
            raise Unsupported(f"{op}: {exc}") from None
        ir.out_layout = out_layout
        ir.from_onnx = OnnxNodeFacts(node.name or f"#{node.index} {node.op_type}", affine=affine, frozen=frozen)
        if params:
            ir.params = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}  # (views: no copy)
            ir.source_name = name
            ir.from_onnx.weights_given = True
        try:
            infer_node(ir)
        except (IRError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
            self.graph.nodes.remove(ir)
            raise Unsupported(f"{op}: {exc}") from None
        bound = list(zip(node.outputs[:n_out] if outputs is None else outputs, ir.outputs))
        for onnx_name, v in bound:
            want = self.og.shapes.get(onnx_name) if onnx_name else None
            first = 0 if self.plain else 1
            if want is not None and v.shape is not None and (len(want) == len(v.shape) or self.plain) and (
                    len(want) != len(v.shape) or any(w is not None and h is not None and w != h
                                                     for w, h in zip(want[first:], v.shape[first:]))):
                # the ops table's rule and ONNX's disagree: never a silently different model
                self.graph.nodes.remove(ir)
                raise Unsupported(f"{op} would give shape {tuple(v.shape)}, ONNX's is {tuple(want)}")
        for onnx_name, v in bound:
            if onnx_name:
                self.values[onnx_name] = v
        return ir

    def scalar(self, value: float, node: ONode) -> Value:
        """A Python number as an operand (the ops table's ``constant``)."""
        v = float(value)
        ir = self.graph.add_node("constant", self.name_for(node, "const"), [],
                                 attrs={"value": int(v) if v.is_integer() and abs(v) < 2 ** 31 else v})
        infer_node(ir)
        return ir.outputs[0]

    def bind(self, onnx_name: str, value: Value) -> None:
        self.values[onnx_name] = value

    def _span(self, node: ONode) -> Span:
        return Span(self.og.path, node.index + 1)


#: input types both targets compute with
_INPUT_DTYPES = {"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
                 "uint32", "uint64", "bool"}


def _class_name(og: OGraph) -> str:
    stem = os.path.splitext(os.path.basename(og.path))[0]
    words = [w for w in re.split(r"[^0-9a-zA-Z]+", stem) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "OnnxModel"
    return f"Model{name}" if name[0].isdigit() else name


def _input_layout(rank: int, dtype: str) -> str | None:
    if rank <= 2:
        return "NC"[:rank]
    if dtype.startswith(("int", "uint")):
        return None
    return CHANNELS_FIRST.get(rank)


def read_onnx(path: str) -> Program:
    """Read the ONNX model at ``path`` into a Program with one model, ``build_model``: its
    first axis read as the batch, or, where a node computes over that axis or the inputs'
    first sizes differ, a graph without a batch axis (``no_batch``: every size static)."""
    from transpiler.frontend_onnx import converters  # noqa: F401  (registers the converters)

    og = load(path)
    program, batch_blocked = _read(path, og, plain=False)
    if batch_blocked:
        plain, _ = _read(path, og, plain=True)
        if not plain.models[0].graph.unsupported or not program.models[0].graph.unsupported or \
                len(plain.models[0].graph.unsupported) <= len(program.models[0].graph.unsupported):
            return plain
    return program


def _plain_input_problem(shape) -> str:
    if shape is None:
        return "has no shape in the file"
    if any(s is None for s in shape):
        return "has sizes only known at run time"
    return ""


# long: the input checks, the converter loop and the stub report are one pass over the graph
def _read(path: str, og: OGraph, plain: bool) -> tuple[Program, bool]:
    from transpiler.frontend_onnx.fuse import fuse_affine

    program = Program(path=path, source="", framework="onnx")
    ctx = Context(og, program, plain=plain)
    graph = ctx.graph
    problems: list[tuple[ONode, str]] = []
    batch_blocked = False
    batches = {shape[0] for _, shape, _ in og.inputs if shape}
    if not plain and (len(batches) > 1 or len({len(shape) > 0 for _, shape, _ in og.inputs}) > 1):
        # the first axis of every input is read as the batch: inputs broadcast against each other
        # with other first sizes ((3, 4, 5) * (5,)) are not batches of the same examples
        batch_blocked = True
        problems.append((ONode("input", og.inputs[0][0], [], [og.inputs[0][0]], {}),
                         f"the inputs' first sizes differ ({', '.join(f'{n} {tuple(s)}' for n, s, _ in og.inputs)}): "
                         "they are not one batch axis"))
    for name, shape, dtype in og.inputs:
        if dtype not in _INPUT_DTYPES:
            problems.append((ONode("input", name, [], [name], {}), f"input {name!r} has type {dtype}, which "
                             f"the generated code does not take ({', '.join(sorted(_INPUT_DTYPES))})"))
        if plain:
            why = _plain_input_problem(shape)
        else:
            why = ("has no batch axis (a scalar or no shape in the file)" if not shape else
                   "has sizes only known at run time besides the batch" if any(s is None for s in shape[1:]) else
                   "has an axis of size 0" if 0 in shape else "")
            # (a scalar, or an axis of size 0 a batch-first model cannot hold: read without a batch axis)
            batch_blocked = batch_blocked or (shape is not None and (len(shape) == 0 or 0 in shape))
        if why:
            problems.append((ONode("input", name, [], [name], {}), f"input {name!r} {why} (shape {shape})"))
            continue
        full = tuple(shape) if plain else (None, *shape[1:])
        v = graph.new_value("input", shape=full, dtype=dtype,
                            layout=None if plain else _input_layout(len(full), dtype))
        v.var = identifier(name) or "x"
        graph.inputs.append(v)
        ctx.bind(name, v)
    for node in og.nodes:
        if node.index in ctx.skip:
            continue
        ctx.node = node
        fn = _CONVERTERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if fn is None:
            where = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
            problems.append((node, f"ONNX op {where}{node.op_type} has no converter (not in the ops table)"))
            ctx.failed.update(node.outputs)
            continue
        try:
            fn(ctx, node)
        except Unsupported as exc:
            batch_blocked = batch_blocked or isinstance(exc, BatchAxis)
            problems.append((node, f"ONNX {node.op_type}: {exc}"))
            ctx.failed.update(node.outputs)
        except _Blocked:
            ctx.failed.update(node.outputs)
    graph.outputs = [ctx.values[o] for o in og.outputs if o in ctx.values]
    graph.origin = ModelOrigin(label="ONNX model", input_shapes=[tuple(v.shape) for v in graph.inputs],
                               weights_given=True, producer=og.producer, opset=og.opset,
                               output_types=[t for o, t in zip(og.outputs, og.output_types) if o in ctx.values])
    if plain:
        graph.origin.no_batch = True
    md = ModelDef(graph, graph.name, builder="build_model")
    program.models.append(md)
    missing = [o for o in og.outputs if o not in ctx.values]
    # (a recurrent output left in ONNX's axis order, a view no Squeeze/Transpose resolved: the
    # graph gives it out as it is, which a reading without a batch axis can)
    batch_blocked = batch_blocked or any(o in ctx.views for o in missing)
    if problems or missing:
        for node, message in problems:
            program.stub(ctx._span(node), f"node {node.name or node.outputs[0]!r}: {message}")
        if missing and not problems:
            program.stub(None, f"graph outputs {missing} are not computed by the converted nodes")
        graph.unsupported = [(ctx._span(n), f"node {n.name or n.outputs[0]!r}: {m}") for n, m in problems] or \
            [(None, f"graph outputs {missing} are not computed")]
        return program, batch_blocked
    graph.drop_unread()
    if not plain:
        _relabel_sequences(graph)
    fuse_affine(graph)
    graph.lint()
    return program, batch_blocked


def _relabel_sequences(graph: Graph) -> None:
    """A rank-3+ value no convolution or pooling reads is not a feature map: ``(N, T, F)``
    fed to an RNN or a Dense has its features last (the tag changes, not the data)."""
    from transpiler.ir.layout import CHANNELS_LAST, is_channels_first
    from transpiler.ir.layout import TORCH_TO_KERAS, feeds_implicit

    candidates = list(graph.inputs) + [n.outputs[0] for n in graph.nodes if n.op in ("reshape", "transpose")]
    changed = False
    for v in candidates:
        if is_channels_first(v.layout) and not feeds_implicit(graph, v, TORCH_TO_KERAS):
            v.layout = CHANNELS_LAST[len(v.shape)]
            if v.producer is not None:
                v.producer.out_layout = v.layout
            changed = True
    if changed:
        for node in graph.nodes:
            infer_node(node)
