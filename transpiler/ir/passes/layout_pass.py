"""The layout pass: feature maps from the source framework's layout to the target's.

One pass for both directions, parametrised by a ``Direction`` (Keras → PyTorch turns
channels-last into channels-first, PyTorch → Keras the reverse). It reads only facts of
the ops table (``ir/ops.py``), never an op's name. Walk the nodes in order with each
value's current layout (tflite2onnx's scheme); the *source layout* of a value is the tag
it had before the pass (how the source program holds it):

* implicit ops get their inputs in the target layout (a transpose only where a
  source-layout map arrives, e.g. after an Embedding); an ``any_layout`` op (global
  pooling) keeps what arrives when the target's emitters read the tag;
* transparent ops keep whatever layout arrives (inputs of a merge are aligned; a
  lower-rank operand broadcasts over the trailing axes, which mean the same only in the
  source layout);
* attribute ops keep the layout and have their ``axis_attrs`` rewritten (a shared layer
  reads every call's input in its first call's layouts);
* terminate ops need the source layout; a transpose back is inserted, except where a
  permutation of params or attributes does the same at no run-time cost:

  - an ``element_order`` op (Flatten, Reshape) of a tensor with at most one axis longer
    than 1 reads the same numbers in any layout;
  - a Flatten read only by ``features_in_params`` ops (Dense, through single-input
    transparent ops without ``per_channel_attrs``) stays in target order and the Dense
    kernel's input rows are permuted (``param_transforms``);
  - a Dense → Reshape into a feature map an implicit op reads permutes the Dense's
    output columns so the reshape yields the target layout directly;
  - a ``relayout`` rule keeps a target-layout input where the op's attributes can say
    the same thing (a reshape that keeps the channel axis, a new spatial axis, noise
    shaped like a feature map).

Tensor math from the user's code (``node.from_keras.tensor_op``) gets a comment wherever its axes
were rewritten or its input permuted back, so a reader of the output sees which choice
was made. Graph inputs that feed implicit ops take the target layout: the data is
permuted once at the loading boundary, not inside the model.

Then chains of transposes merge (a user's permute next to a layout transpose becomes one
permute) and identities vanish (``fold_transposes``). The pass records, the same way in
both directions, ``graph.layouts`` (ir/reader_facts.py GraphLayouts): ``inputs`` (the layout each
input enters in), ``outputs`` (the layout the source program returns each output in) and
``target_outputs`` (the layout the converted graph returns it in).
``layout_step(direction)`` is the pipeline step; the pipelines of both targets
(``ir/passes/__init__.py``) hold it once each, and no other pass changes layouts
(``tests/test_layout_pass.py``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.layout import (
    CHANNELS_FIRST,
    CHANNELS_LAST,
    Direction,
    Layout,
    feeds_implicit,
    needs_target,
    read_in_source_layout,
)
from transpiler.ir.shapes import infer_node


def family(layout: str | None) -> str:
    """"channels-last" / "channels-first" for a feature-map layout, else the layout."""
    if layout in CHANNELS_LAST.values():
        return "channels-last"
    if layout in CHANNELS_FIRST.values():
        return "channels-first"
    return layout or "no layout"


# ---------------------------------------------------------------------------------
# Graph questions the pass asks (facts of the table only)
# ---------------------------------------------------------------------------------
def shared(graph: Graph, node: Node) -> bool:
    """A layer called more than once: one module, one set of attributes and params."""
    return any(n.name == node.name for n in graph.nodes if n is not node)


def passes_order(node: Node) -> bool:
    """A single-input element-wise op: a permutation of its input's last axis passes through
    (not with per-channel attributes, whose values follow that axis)."""
    spec = node.spec
    return spec.layout == ops_table.TRANSPARENT and len(node.inputs) == 1 and not spec.per_channel_attrs


def one_axis(value: Value) -> bool:
    """At most one non-batch axis longer than 1: every layout orders the numbers alike."""
    return value.shape is not None and len(value.shape) > 2 and \
        sum(1 for d in value.shape[1:] if d != 1) <= 1


def order_step(built: str, current: str, built_shape: tuple) -> tuple:
    """The ``param_transforms`` step turning ``built``-order elements into ``current`` order."""
    perm = Layout(built, current).perm
    return (tuple(built_shape[1:]), tuple(p - 1 for p in perm[1:]))


def permute_params(node: Node, letter: str, step: tuple) -> None:
    """Permute the axis ``letter`` (``I`` input features, ``O`` output features) of each of
    ``node``'s params that has it: rows when it is the param's first axis, else columns."""
    for param in node.spec.active_params(node.attrs):
        if letter in param.layout:
            kind = ("permute_rows", "permute_cols")[param.layout.index(letter)]
            node.param_transforms.setdefault(param.name, []).append((kind, step))


def flatten_absorbable(graph: Graph, flat: Value) -> bool:
    """A flattened value can stay in target order if only ``features_in_params`` ops read it
    (as their input, not shared: a shared Dense cannot permute its rows for one caller),
    possibly through ``passes_order`` ops, and it is no graph output."""
    frontier = [flat]
    while frontier:
        v = frontier.pop()
        if any(o is v for o in graph.outputs):
            return False
        for node in graph.consumers(v):
            if node.spec.features_in_params and node.inputs[0] is v and not shared(graph, node):
                continue
            if passes_order(node):
                frontier.extend(node.outputs)
                continue
            return False
    return True


def _normal(value, rank: int):
    """Axes as non-negative ints (one axis as an int), for comments."""
    if isinstance(value, tuple):
        return value[0] % rank if len(value) == 1 else tuple(a % rank for a in value)
    return value % rank


# ---------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------
class LayoutPass:
    """Converts one graph in place (``run``)."""

    def __init__(self, graph: Graph, direction: Direction):
        self.graph = graph
        self.direction = direction
        #: the source layout of every value: its tag before the pass
        self.built: dict[int, str | None] = {id(v): v.layout for v in graph.values()}
        self.converted: dict[tuple[int, str], Value] = {}
        self.transposes = 0
        #: input layouts of the first call of each attribute-op layer (a shared layer's
        #: later calls get the same ones: its axis attributes and params are one)
        self.shared_layouts: dict[str, list[str]] = {}

    def source(self, value: Value) -> str | None:
        """The layout ``value`` has in the source program."""
        return self.built.get(id(value), value.layout)

    def is_source_map(self, layout: str | None) -> bool:
        return layout is not None and layout in self.direction.source.values()

    def is_target_map(self, layout: str | None) -> bool:
        return layout is not None and layout in self.direction.target.values()

    def convert(self, value: Value, layout: str, before: Node) -> Value:
        """``value`` in ``layout``, inserting (or reusing) one transpose node."""
        if value.layout == layout:
            return value
        key = (id(value), layout)
        if key not in self.converted:
            perm = Layout(value.layout, layout).perm
            base = value.var or (value.producer.name if value.producer else "x")
            name = f"{base}_to_{layout.lower()}"
            taken = {n.name for n in self.graph.nodes}
            while name in taken:
                name += "_"
            node = self.graph.add_node("transpose", name, [value], attrs={"perm": perm},
                                       before=before, span=before.span)
            node.out_layout = layout
            node.inserted = "layout"
            infer_node(node)
            node.outputs[0].var = value.var
            self.built[id(node.outputs[0])] = self.source(value)  # the same tensor
            self.converted[key] = node.outputs[0]
            self.transposes += 1
        return self.converted[key]

    def run(self) -> Graph:
        graph, target = self.graph, self.direction.target
        for value in graph.inputs:
            if self.is_source_map(value.layout) and feeds_implicit(graph, value, self.direction):
                lay = Layout(value.layout, target[len(value.layout)])
                value.shape = lay.shape(value.shape)
                value.layout = lay.target
        graph.layouts.inputs = [v.layout for v in graph.inputs]
        for node in list(graph.nodes):
            self.visit(node)
        graph.layouts.transposes = self.transposes
        # a feature map the model returns stays in the target layout (the target's
        # convention); the layout the source returned it in is recorded for whoever
        # compares the two or hands the output to source-layout code
        graph.layouts.outputs = [self.source(v) for v in graph.outputs]
        graph.layouts.target_outputs = [v.layout for v in graph.outputs]
        _constants_next_to_readers(graph)
        return graph

    def visit(self, node: Node) -> None:
        spec = node.spec
        cls = spec.layout
        if cls == ops_table.IMPLICIT and needs_target(node, self.direction):
            target = self.direction.target
            node.inputs = [self.convert(v, target[len(v.layout)], node) if self.is_source_map(v.layout) else v
                           for v in node.inputs]
        elif cls == ops_table.IMPLICIT:
            pass  # e.g. global pooling: a mean over the spatial axes of whichever layout arrives
        elif cls in (ops_table.TRANSPARENT, ops_table.ATTRIBUTE):
            self.align(node)
            if cls == ops_table.ATTRIBUTE:
                self.share_layouts(node)
                self.rewrite_axes(node)
        else:
            self.terminate(node)
        infer_node(node)
        if cls == ops_table.TRANSPARENT and len(node.inputs) == 1 and node.inputs[0].flat_order:
            node.outputs[0].flat_order = node.inputs[0].flat_order

    def align(self, node: Node) -> None:
        """Inputs of equal rank must agree; prefer the layout most inputs already have (a
        (N, C, 1, 1) gate is cheap to move: the feature map it scales decides). Inputs of
        different ranks broadcast over their trailing axes, which mean the same only in
        the source layout (``x * self.gamma`` with a per-channel weight). A value without
        a layout (a module's own parameter) broadcasts as it is."""
        if not node.inputs:
            return
        top = max(v.rank for v in node.inputs)
        # a scalar-like operand (a number, a (1, 1) weight) broadcasts the same in any layout
        if not all(all(d == 1 for d in v.shape) for v in node.inputs if v.rank < top):
            new = []
            for v in node.inputs:
                source = self.source(v)
                if v.layout and source and v.layout != source:
                    v = self.convert(v, source, node)
                    v.producer.comments.append(f"# {family(source)} here: a lower-rank operand broadcasts "
                                               "over the last axes, as in the source")
                new.append(v)
            node.inputs = new
        ranked = [v for v in node.inputs if v.rank == top and v.layout is not None]
        if len(ranked) < 2:
            return
        layouts = [v.layout for v in ranked if not one_axis(v)] or [v.layout for v in ranked]
        target = max(sorted(set(layouts)), key=layouts.count)
        node.inputs = [self.convert(v, target, node) if v.rank == top and v.layout is not None else v
                       for v in node.inputs]

    def share_layouts(self, node: Node) -> None:
        """A layer called again (shared weights) reads its inputs in its first call's layouts;
        one called on tensors of different ranks reads every input in the source layout (its
        axis attributes mean the same for each call only there)."""
        calls = [n for n in self.graph.nodes if n.name == node.name]
        if len({tuple(v.rank for v in n.inputs) for n in calls}) > 1:
            node.inputs = [self.convert(v, self.source(v), node)
                           if v.layout and self.source(v) and v.layout != self.source(v) else v
                           for v in node.inputs]
            return
        first = self.shared_layouts.setdefault(node.name, [v.layout for v in node.inputs])
        if len(first) == len(node.inputs):
            node.inputs = [self.convert(v, lay, node) if lay and v.layout != lay and v.rank == len(lay) else v
                           for v, lay in zip(node.inputs, first)]

    def rewrite_axes(self, node: Node) -> None:
        x = node.inputs[0]
        source = self.source(x)
        if not source or not x.layout or x.layout == source:
            return
        lay = Layout(source, x.layout)
        for name in node.spec.axis_attrs:
            value = node.attrs[name]
            if value is None:
                continue
            if isinstance(value, tuple):
                node.attrs[name] = tuple(lay.axis(a) for a in value)
            else:
                node.attrs[name] = lay.axis(value)
            before, after = _normal(value, len(x.shape)), _normal(node.attrs[name], len(x.shape))
            if node.from_keras.tensor_op and before != after:
                node.comments.append(f"# layout: {name}={before} of the {self.direction.source_name} code "
                                     f"({family(source)}) is dim {after} of this {family(x.layout)} tensor")

    def terminate(self, node: Node) -> None:
        graph, spec = self.graph, node.spec
        rule = _RELAYOUT.get(node.op)
        # a layer called more than once is one module: its calls keep the same attributes
        if rule is not None and not shared(graph, node) and rule(self, node):
            return
        if spec.element_order and node.inputs and one_axis(node.inputs[0]):
            return  # (N, C, 1, 1) and (N, 1, 1, C) hold their numbers in the same order
        if spec.element_order and self.absorb_flatten(node):
            return
        new_inputs = []
        for v in node.inputs:
            if v.flat_order is not None and spec.features_in_params:
                permute_params(node, "I", v.flat_order)
                new_inputs.append(v)
                continue
            source = self.source(v)
            if source and v.layout and v.layout != source:
                fresh = (id(v), source) not in self.converted
                v2 = self.convert(v, source, node)
                if fresh and node.from_keras.tensor_op:
                    v2.producer.comments.append(
                        f"# layout: {node.from_keras.tensor_op} needs the {self.direction.source_name} "
                        f"({family(source)}) axis order: permuted back from {v.layout} to {source} here")
                v = v2
            new_inputs.append(v)
        node.inputs = new_inputs

    def absorb_flatten(self, node: Node) -> bool:
        """A flatten (a reshape to (N, F)) of a target-layout map read only by Dense layers
        stays in target order: the readers' kernel rows are permuted instead."""
        x, y = node.inputs[0], node.outputs[0]
        source = self.source(x)
        if len(y.shape) != 2 or len(x.shape) <= 2 or not source or not x.layout or x.layout == source \
                or not flatten_absorbable(self.graph, y):
            return False
        y.flat_order = order_step(source, x.layout, Layout(x.layout, source).shape(x.shape))
        return True

    def absorb_reshape(self, node: Node) -> bool:
        """Dense → Reshape to a feature map an implicit op reads: permute the Dense's output
        columns (and bias) so the reshape yields the target layout directly (the mirror of
        Flatten → Dense). A map with at most one axis longer than 1 needs no permutation."""
        graph = self.graph
        x, y = node.inputs[0], node.outputs[0]
        built = self.source(y)
        if len(x.shape) != 2 or not self.is_source_map(built) or \
                not feeds_implicit(graph, y, self.direction):
            return False
        target = self.direction.target[len(built)]
        src_shape = (None, *node.attrs["shape"])
        if sum(1 for d in src_shape[1:] if d != 1) > 1:
            chain, v = [], x
            while v.producer is not None and not v.producer.spec.features_in_params:
                prod = v.producer
                if not passes_order(prod):
                    return False
                chain.append(prod)
                v = prod.inputs[0]
            dense = v.producer
            if dense is None or len(dense.inputs[0].shape) != 2:
                return False
            values = [dense.outputs[0]] + [n.outputs[0] for n in chain]
            if any(len(graph.consumers(val)) != 1 or val in graph.outputs for val in values):
                return False
            if shared(graph, dense):
                return False  # a shared Dense cannot change its column order for one caller
            permute_params(dense, "O", order_step(built, target, src_shape))
        node.attrs["shape"] = Layout(built, target).shape(src_shape)[1:]
        node.out_layout = target
        return True


# ---------------------------------------------------------------------------------
# relayout rules: a terminate op that can keep a target-layout input
# ---------------------------------------------------------------------------------
Relayout = Callable[[LayoutPass, Node], bool]
_RELAYOUT: dict[str, Relayout] = {}


def relayout(*ops: str) -> Callable[[Relayout], Relayout]:
    """Register the rule saying how terminate ``ops`` may keep target-layout inputs: it
    rewrites the node's attributes and returns True, or returns False (the input is
    permuted back to the source layout)."""

    def deco(fn: Relayout) -> Relayout:
        for name in ops:
            if ops_table.get(name).layout != ops_table.TERMINATE or name in _RELAYOUT:
                raise ValueError(f"relayout rule for {name}: not a terminate op, or registered twice")
            _RELAYOUT[name] = fn
        return fn

    return deco


def _note(node: Node, text: str) -> None:
    if node.from_keras.tensor_op:
        node.comments.append(f"# layout: {text}")


@relayout("reshape")
def relayout_reshape(lp: LayoutPass, node: Node) -> bool:
    """Dense → Reshape absorbs the permutation into the Dense; a reshape that keeps the
    channel axis (merging or splitting spatial axes only) keeps the data in the target
    layout: (N, H, W, C) → (N, H*W, C) is (N, C, H, W) → (N, C, H*W)."""
    if lp.absorb_reshape(node):
        return True
    x, d = node.inputs[0], lp.direction
    if not lp.is_target_map(x.layout) or not lp.is_source_map(lp.source(x)) or \
            any(n is None for n in x.shape[1:]) or read_in_source_layout(lp.graph, node.outputs[0]):
        return False  # (permuting before the reshape or after it: one permute either way)
    target = list(node.attrs["shape"])
    if -1 in target:
        known = 1
        for n in target:
            known *= n if n != -1 else 1
        total = 1
        for n in x.shape[1:]:
            total *= n
        target[target.index(-1)] = total // known
    rank = len(target) + 1
    if rank not in d.source:
        return False
    built, wanted = d.source[rank], d.target[rank]
    # (the source program must hold the result as a feature map too: its later readers
    # take the source layout from that tag)
    if lp.source(node.outputs[0]) != built or target[built.index("C") - 1] != x.shape[x.layout.index("C")]:
        return False
    node.attrs["shape"] = Layout(built, wanted).shape((None, *target))[1:]
    node.out_layout = wanted
    _note(node, f"reshape keeps the channel axis: target {tuple(target)} ({family(built)}) is "
                f"{node.attrs['shape']} here, {family(wanted)}")
    return True


@relayout("expand_dims", "stack")
def relayout_new_axis(lp: LayoutPass, node: Node) -> bool:
    """A new axis among the spatial axes of target-layout inputs moves with the spatial axes."""
    x, d = node.inputs[0], lp.direction
    if not all(lp.is_target_map(v.layout) and v.layout == x.layout and lp.is_source_map(lp.source(v))
               for v in node.inputs):
        return False
    rank = len(x.shape) + 1
    axis = node.attrs["axis"] % rank
    if rank not in d.source or d.source[rank][axis] not in "DHW" or \
            lp.source(node.outputs[0]) != d.source[rank]:
        return False
    built, wanted = d.source[rank], d.target[rank]
    node.attrs["axis"] = Layout(built, wanted).axis(axis)
    node.out_layout = wanted
    _note(node, f"axis={axis} of the {d.source_name} code ({family(built)}) is dim {node.attrs['axis']} "
                f"here, {family(wanted)}")
    return True


@relayout("random_normal", "random_uniform", "full")
def relayout_random(lp: LayoutPass, node: Node) -> bool:
    """Noise (or a filled tensor) reads only the batch size of its input: shaped like a
    target-layout input, it is made in that layout (the same distribution, the same values)."""
    like = node.inputs[0]
    shape = (like.shape[0], *node.attrs["shape"])
    source = lp.source(like)
    if lp.is_target_map(like.layout) and source and len(shape) == len(like.shape) and \
            lp.source(node.outputs[0]) == source:
        if Layout(like.layout, source).shape(like.shape)[1:] == shape[1:]:
            # (its own sizes, permuted: equal numbers are not the same size, ``ones((b, 6, 5, 4))``
            # beside a map of ``filters`` channels)
            node.attrs["shape"] = tuple(Layout(source, like.layout).shape(shape)[1:])
            node.out_layout = like.layout
    return True


def _constants_next_to_readers(graph: Graph) -> None:
    """A literal operand sits right before its reader (a layout transpose may have come
    between), so the printer writes it inline: ``2.0 - x``."""
    for node in [n for n in graph.nodes if n.spec.literal]:
        readers = graph.consumers(node.outputs[0])
        if len(readers) == 1:
            graph.nodes.remove(node)
            graph.nodes.insert(graph.nodes.index(readers[0]), node)


def convert_layout(graph: Graph, direction: Direction) -> LayoutPass:
    """Run the layout pass over ``graph`` in place; returns the finished pass (its
    ``source`` says the layout each value had in the source program)."""
    lp = LayoutPass(graph, direction)
    lp.run()
    return lp


@dataclass(frozen=True)
class LayoutStep:
    """The layout pass as a pipeline step (``Graph -> Graph``) for one direction."""

    direction: Direction

    def __call__(self, graph: Graph) -> Graph:
        convert_layout(graph, self.direction)
        return graph


def layout_step(direction: Direction) -> LayoutStep:
    """The pipeline step converting graphs from ``direction.source`` to ``direction.target``."""
    return LayoutStep(direction)


# ---------------------------------------------------------------------------------
# Transpose folding (after the layout pass, both directions)
# ---------------------------------------------------------------------------------
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
                if node.inserted is None:
                    node.inserted = src.inserted
                graph.nodes.remove(src)
                changed = True
            if _perm(node) == tuple(range(len(_perm(node)))) and node in graph.nodes:
                if node.inputs[0].layout != node.outputs[0].layout:
                    # a user's Permute undone by a layout transpose: no data moves, but the
                    # readers see the value in the output's layout (its spatial axes, ...):
                    # the node stays, a no-op that carries the layout
                    continue
                layouts = graph.layouts.target_outputs or [v.layout for v in graph.outputs]
                for i, v in enumerate(graph.outputs):
                    if v is node.outputs[0]:
                        # same data, but the target returns it in this layout
                        layouts[i] = v.layout
                graph.layouts.target_outputs = layouts
                graph.replace_uses(node.outputs[0], node.inputs[0], after=node)
                graph.nodes.remove(node)
                changed = True
        for node in graph.nodes:
            infer_node(node)
    graph.layouts.transposes = sum(
        1 for n in graph.nodes if _perm(n) is not None and n.inserted == "layout"
        and _perm(n) != tuple(range(len(_perm(n)))))
    return graph
