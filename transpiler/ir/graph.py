"""The framework-neutral graph IR: values, nodes, graphs.

Few node kinds, the operator is data (``Node.op`` names an entry of the ops table),
every node keeps the source span it came from, and ``Graph.lint()`` checks the
invariants that every pass must preserve (torch.fx's design, re-derived).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:  # the translation path never needs numpy itself
    import numpy as np

from transpiler.ir import ops as ops_table
from transpiler.ir.reader_facts import (GraphLayouts, KerasModelFacts, KerasNodeFacts, OnnxNodeFacts,
                                       TorchModelFacts, TorchNodeFacts)
from transpiler.ir.state_plan import WeightPlan


class IRError(Exception):
    """An invariant of the IR does not hold."""


@dataclass(frozen=True)
class Span:
    """Where in the user's source something came from (1-based lines and columns)."""

    file: str
    line: int
    col: int = 1
    end_line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(eq=False)
class LayerRef:
    """The source layer (a Keras layer, a torch module) a node is a call of: one object per
    layer, shared by the nodes of all its calls (compare with ``is``), with the facts about
    it that printers, passes, weights and reports read (``Node.layer``)."""

    span: Span | None = None
    #: the source class (``Conv2D``, ``nn.Linear``); None for a layer the reader made itself
    cls_name: str | None = None
    #: the layer's name in the source framework (Keras' ``name``)
    keras_name: str | None = None
    #: the attribute of the user class instance holding it
    attr: str | None = None
    #: adapt() ran on it: the key of its state at run time (frontend_ast/keras/data_utils.py)
    adapt_key: str | None = None
    #: made with ``trainable=False``: its weights are never trained (``requires_grad_(False)``)
    frozen: bool = False
    #: a Functional model's call of it on constants only (a position embedding of ``ops.arange``):
    #: Keras runs it once while building the model, so its weights are not among the model's
    #: (frozen too; no Keras weight maps onto its module's)
    constant_call: bool = False


@dataclass(eq=False)
class SplitFrom:
    """The source layer a node is one part of, when a pass split it (torch_selection: a
    SeparableConv2D into a depthwise and a pointwise convolution): the layer's op and attrs
    (whose params the checkpoint holds), the input its param shapes derive from, and the
    source layer's name of each param this part holds (``{"kernel": "depthwise_kernel"}``)."""

    op: str
    attrs: dict[str, Any]
    input: "Value | None"
    params: dict[str, str]


@dataclass(eq=False)
class Value:
    """A tensor flowing between nodes.

    ``shape`` is in the value's current ``layout`` (``None`` for the batch axis or
    unknown sizes). ``var`` is the user's variable name for it, when there was one.
    ``flat_order`` is set on a flattened tensor whose elements are in channels-first
    order although the source flattened channels-last: ``(source_shape, perm)``.
    """

    name: str
    shape: tuple | None = None
    dtype: str = "float32"
    layout: str | None = None
    var: str | None = None
    producer: "Node | None" = field(default=None, repr=False)
    flat_order: tuple | None = None
    #: the variable it was first assigned to in each module scope's code (id of the scope,
    #: None for the model's own), when that differs from where it was made
    scope_vars: dict = field(default_factory=dict, repr=False)

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


@dataclass(eq=False)
class Node:
    """One operation: a canonical ``op`` with typed ``attrs`` and ``params``.

    ``name`` is the Python attribute the printed module holds it under (nodes of a
    layer that is called several times share it); ``source_name`` is the layer's
    name in the source framework, used to match checkpoint tensors.
    ``param_transforms`` holds extra canonical-layout transforms that passes decided
    (e.g. a Dense absorbing a Flatten's channel order), applied to every checkpoint.
    """

    op: str
    name: str
    inputs: list[Value]
    outputs: list[Value]
    attrs: dict[str, Any] = field(default_factory=dict)
    params: dict[str, np.ndarray | None] = field(default_factory=dict)
    span: Span | None = None
    source_name: str | None = None
    comments: list[str] = field(default_factory=list)
    param_transforms: dict[str, list] = field(default_factory=dict)
    #: the source layer this node is a call of (None: a tensor operation, not a layer)
    layer: LayerRef | None = field(default=None, repr=False)
    #: the source layer a pass split into this node and others (None: not split)
    split_from: SplitFrom | None = field(default=None, repr=False)
    #: what the torch reader recorded about the module it was read from (state_dict keys, inits)
    from_torch: TorchNodeFacts = field(default_factory=TorchNodeFacts, repr=False)
    #: what the Keras reader recorded about where it was made (statements, module scopes, initializers)
    from_keras: KerasNodeFacts = field(default_factory=KerasNodeFacts, repr=False)
    #: the span of the whole call that made it (the layer call; ``span`` may be the layer's construction)
    call_span: Span | None = field(default=None, repr=False)
    #: what the ONNX reader recorded about the ONNX node it was read from
    from_onnx: OnnxNodeFacts = field(default_factory=OnnxNodeFacts, repr=False)
    #: a reshape's or transpose's output layout, where the reader or a pass knows it (None: the
    #: default layout of its rank)
    out_layout: str | None = field(default=None, repr=False)
    #: why a pass inserted it ("layout": a transpose of the layout pass, "padding": a pad split
    #: off a convolution); None: it is the source program's
    inserted: str | None = field(default=None, repr=False)
    #: a row lookup that records its per-occurrence slices (``--exact`` with a Keras optimizer
    #: reading them, passes/training_analyses.py ``mark_occurrence_slices``)
    occurrence_slices: bool = field(default=False, repr=False)

    @property
    def spec(self) -> "ops_table.OpSpec":
        return ops_table.get(self.op)

    def __repr__(self) -> str:
        ins = ", ".join(v.name for v in self.inputs)
        outs = ", ".join(v.name for v in self.outputs)
        return f"<{outs} = {self.op}[{self.name}]({ins})>"


@dataclass
class ModelOrigin:
    """Where a model graph was read from, as its printers and the weights mapping need it
    (typed metadata, issue 17 item 6: once the ``source_label``, ``source_input_shapes``,
    ``weights_given``, ``onnx_*`` keys of ``Graph.meta``)."""

    #: what the printed class's docstring calls the source ("ONNX model"); None: a Keras model
    label: str | None = None
    #: the inputs' shapes as the source framework lays them out (channels-first in torch and
    #: ONNX), before the layout pass moved them; None where the reader does not record them
    input_shapes: list[tuple] | None = None
    #: the model file holds the weights: they are loaded, not drawn by initializers
    weights_given: bool = False
    #: an ONNX model's producer, opset and output dtypes (before any widening of its inputs)
    producer: str | None = None
    opset: int | None = None
    output_types: list[str] | None = None
    #: an ONNX graph without a batch axis (its inputs are printed as they are)
    no_batch: bool = False


@dataclass(eq=False)
class Graph:
    """A model: inputs, outputs and nodes in a topological order."""

    name: str
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    span: Span | None = None
    #: where the model was read from (the source framework's input shapes, a model file's facts)
    origin: ModelOrigin = field(default_factory=ModelOrigin)
    #: ``(span, message)`` of what the target cannot express (an ONNX node not read, an op the Keras
    #: selection pass refuses): the printer stubs the whole model
    unsupported: list[tuple[Span | None, str]] = field(default_factory=list)
    #: the layouts the layout pass gave its inputs and outputs (ir/passes/layout_pass.py)
    layouts: GraphLayouts = field(default_factory=GraphLayouts)
    #: what the Keras reader found about the model (for the torch printers)
    from_keras: KerasModelFacts = field(default_factory=KerasModelFacts)
    #: what the torch reader found about the model (for the Keras printers and the weights)
    from_torch: TorchModelFacts = field(default_factory=TorchModelFacts)
    #: how checkpoint tensors map to the layers (ir/state_plan.py), computed by the driver
    weight_plan: WeightPlan = field(default_factory=WeightPlan, repr=False)
    #: its ``forward`` takes ``return_logits`` with no final activation to skip: the training
    #: loop the program's models share asks each one for logits (passes/training_analyses.py)
    logits_parameter: bool = False
    #: output index → the final activation (``"softmax"``) the loss absorbs: ``forward`` returns
    #: logits there (passes/training_analyses.py ``analyse_logits``)
    logits_outputs: dict[int, str] = field(default_factory=dict)
    #: ``(key, Structure)``: the module tree ir/modules.py decided, and what it was decided for
    structure_cache: tuple | None = field(default=None, repr=False)
    _counter: int = field(default=0, repr=False)

    # -- construction -------------------------------------------------------------
    def new_value(self, hint: str = "v", **kwargs: Any) -> Value:
        """A fresh value with a graph-unique ``name``."""
        self._counter += 1
        return Value(name=f"{hint}.{self._counter}", **kwargs)

    def add_node(
        self,
        op: str,
        name: str,
        inputs: list[Value],
        n_outputs: int = 1,
        *,
        attrs: dict[str, Any] | None = None,
        span: Span | None = None,
        before: Node | None = None,
        **kwargs: Any,
    ) -> Node:
        """Create a node with fresh outputs; appended, or inserted before ``before``."""
        spec = ops_table.get(op)
        node = Node(
            op=op,
            name=name,
            inputs=list(inputs),
            outputs=[],
            attrs=spec.complete_attrs(attrs or {}),
            span=span,
            **kwargs,
        )
        for _ in range(n_outputs):
            value = self.new_value(name)
            value.producer = node
            node.outputs.append(value)
        if before is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(self.nodes.index(before), node)
            # (a node a pass splits off another stays where that one was: a pad split off a
            # convolution belongs to the same call of a block, printers/keras/subclass.py)
            node.from_torch.block_call = before.from_torch.block_call
        return node

    # -- queries ------------------------------------------------------------------
    def consumers(self, value: Value) -> list[Node]:
        """Nodes that read ``value``, in graph order."""
        return [n for n in self.nodes if any(v is value for v in n.inputs)]

    def values(self) -> Iterator[Value]:
        seen: set[int] = set()
        for v in self.inputs:
            seen.add(id(v))
            yield v
        for n in self.nodes:
            for v in n.outputs:
                if id(v) not in seen:
                    seen.add(id(v))
                    yield v

    def replace_uses(self, old: Value, new: Value, *, after: Node | None = None) -> None:
        """Make every reader of ``old`` (those after ``after``, if given) read ``new``."""
        start = 0 if after is None else self.nodes.index(after) + 1
        for node in self.nodes[start:]:
            node.inputs = [new if v is old else v for v in node.inputs]
        self.outputs = [new if v is old else v for v in self.outputs]

    def drop_unread(self) -> None:
        """Drop the nodes no graph output depends on (a layer built but unused, a Dropout's
        mask output, a folded branch)."""
        live = {id(v) for v in self.outputs}
        keep = []
        for node in reversed(self.nodes):
            if any(id(v) in live for v in node.outputs):
                keep.append(node)
                live.update(id(v) for v in node.inputs)
        self.nodes = list(reversed(keep))

    # -- invariants ---------------------------------------------------------------
    def lint(self) -> None:
        """Check the invariants every pass must preserve; raise IRError if one fails.

        Every op is in the ops table with all its attrs; inputs are defined before use;
        each value has exactly one producer; shapes, when known, match the layout rank;
        nodes sharing a module name agree on op and attrs.
        """
        defined: set[int] = {id(v) for v in self.inputs}
        by_name: dict[str, Node] = {}
        for node in self.nodes:
            try:
                spec = ops_table.get(node.op)
            except KeyError as exc:
                raise IRError(f"{node!r}: unknown op {node.op!r}") from exc
            missing = set(spec.attrs) - set(node.attrs)
            if missing:
                raise IRError(f"{node!r}: missing attrs {sorted(missing)}")
            unknown = set(node.attrs) - set(spec.attrs)
            if unknown:
                raise IRError(f"{node!r}: attrs not in the ops table {sorted(unknown)}")
            if not spec.variadic and len(node.inputs) != len(spec.inputs):
                raise IRError(f"{node!r}: {len(node.inputs)} inputs, the table says {len(spec.inputs)}")
            for v in node.inputs:
                if id(v) not in defined:
                    raise IRError(f"{node!r}: input {v.name} used before it is defined")
            for v in node.outputs:
                if id(v) in defined:
                    raise IRError(f"{node!r}: output {v.name} defined twice")
                if v.producer is not node:
                    raise IRError(f"{node!r}: output {v.name} has the wrong producer")
                defined.add(id(v))
            for v in list(node.inputs) + list(node.outputs):
                if v.shape is not None and v.layout is not None and len(v.layout) != len(v.shape):
                    raise IRError(f"{node!r}: {v.name} has shape {v.shape} but layout {v.layout}")
            twin = by_name.get(node.name)
            if twin is not None and (twin.op != node.op or _layer_attrs(twin) != _layer_attrs(node)):
                raise IRError(f"{node!r}: shares the name {node.name!r} with a different layer")
            by_name.setdefault(node.name, node)
        for v in self.outputs:
            if id(v) not in defined:
                raise IRError(f"graph output {v.name} is never defined")


#: attributes that say something about one call of a layer, not the layer: a shared layer's
#: calls may differ in them (a shared RNN called on a masked sequence and on an unmasked one)
PER_CALL_ATTRS = frozenset({"masked", "initial_state"})  # (arguments of the call, not the layer)


def _layer_attrs(node: Node) -> dict:
    return {k: v for k, v in node.attrs.items() if k not in PER_CALL_ATTRS}
