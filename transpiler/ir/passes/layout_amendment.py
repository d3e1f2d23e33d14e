"""Layout amendment by propagation: channels-last graphs to channels-first.

Walk the nodes in order with each value's current layout (tflite2onnx's scheme):

* implicit ops get channels-first inputs (a transpose only where an input arrives
  channels-last, e.g. after an Embedding) and produce channels-first outputs;
* transparent ops keep whatever layout arrives (inputs of a merge are aligned);
* attribute ops keep the layout and have their axis attributes rewritten;
* terminate ops need the source layout; a transpose back is inserted, except for a
  Flatten whose consumers are Dense layers (through element-wise ops): there the
  Dense kernel's rows are permuted instead (``param_transforms``), at zero run-time
  cost; and likewise a Dense → Reshape into a feature map permutes the Dense's
  columns so the reshape produces channels-first directly. A terminate op may have a
  ``relayout`` rule that keeps a channels-first input where its attributes can say the
  same thing (a reshape that keeps the channel axis last, ``expand_dims`` of a spatial
  axis, noise shaped like a channels-first tensor).

Tensor math from the user's code (``keras.ops``/``tf.*``/operators, ``meta["tensor_op"]``)
gets a comment wherever its axes were rewritten or its input permuted back to
channels-last, so a reader of the output sees which choice was made.

``fold_transposes`` then merges chains of transposes (a user's Permute between two
layout transposes becomes one permute) and drops identities.

Graph inputs that feed implicit ops become channels-first: the data is permuted
once at the loading boundary, not inside ``forward``.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.layout import (
    CHANNELS_FIRST,
    Layout,
    channels_first_of,
    default_layout,
    is_channels_first,
    is_channels_last,
)
from transpiler.ir.passes.shape_inference import infer_node


def _source_layout(value: Value) -> str:
    return default_layout(len(value.shape))


def _layout_readers(graph: Graph, value: Value):
    """The implicit and terminate ops that read ``value``, through transparent and attribute ops."""
    frontier, seen = [value], set()
    while frontier:
        v = frontier.pop()
        for node in graph.consumers(v):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.spec.layout in (ops_table.TRANSPARENT, ops_table.ATTRIBUTE):
                frontier.extend(node.outputs)
            else:
                yield node


def _feeds_implicit(graph: Graph, value: Value) -> bool:
    """True when the first non-transparent reader of ``value`` is an implicit op."""
    return any(node.spec.layout == ops_table.IMPLICIT and not node.spec.any_layout
               for node in _layout_readers(graph, value))


def _flatten_absorbable(graph: Graph, flat: Value) -> bool:
    """A flatten output can stay in channels-first order if only Dense layers read it,
    possibly through unary element-wise ops, and it is no graph output."""
    frontier = [flat]
    while frontier:
        v = frontier.pop()
        if any(o is v for o in graph.outputs):
            return False
        for node in graph.consumers(v):
            if node.op == "dense" and node.inputs[0] is v and not any(
                    n.name == node.name for n in graph.nodes if n is not node):
                continue  # (a shared Dense cannot permute its rows for one caller)
            if node.spec.layout == ops_table.TRANSPARENT and len(node.inputs) == 1 and node.op != "rescaling":
                frontier.extend(node.outputs)
                continue
            return False
    return True


class _Amender:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.converted: dict[tuple[int, str], Value] = {}
        self.transposes = 0
        #: input layouts of the first call of each attribute-op layer (a shared layer's
        #: later calls get the same ones: its axis attributes and params are one)
        self.shared_layouts: dict[str, list[str]] = {}

    def convert(self, value: Value, layout: str, before: Node) -> Value:
        """``value`` in ``layout``, inserting (or reusing) one transpose node."""
        if value.layout == layout:
            return value
        key = (id(value), layout)
        if key not in self.converted:
            perm = Layout(value.layout, layout).perm
            base = value.var or (value.producer.name if value.producer else "x")
            node = self.graph.add_node("transpose", f"{base}_to_{layout.lower()}", [value],
                                       attrs={"perm": perm}, before=before, span=before.span)
            node.meta["out_layout"] = layout
            node.meta["inserted"] = "layout"
            infer_node(node)
            node.outputs[0].var = value.var
            self.converted[key] = node.outputs[0]
            self.transposes += 1
        return self.converted[key]

    def run(self) -> Graph:
        graph = self.graph
        for value in graph.inputs:
            if is_channels_last(value.layout) and _feeds_implicit(graph, value):
                lay = Layout(value.layout, channels_first_of(value.layout))
                value.shape = lay.shape(value.shape)
                value.layout = lay.target
        graph.meta["input_layouts"] = [v.layout for v in graph.inputs]
        for node in list(graph.nodes):
            self.visit(node)
        graph.meta["layout_transposes"] = self.transposes
        _constants_next_to_readers(graph)
        return graph

    def visit(self, node: Node) -> None:
        cls = node.spec.layout
        if cls == ops_table.IMPLICIT and node.spec.any_layout:
            pass  # e.g. global pooling: a mean over the spatial axes of whichever layout arrives
        elif cls == ops_table.IMPLICIT:
            node.inputs = [self.convert(v, channels_first_of(v.layout), node)
                           if is_channels_last(v.layout) else v for v in node.inputs]
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
        """Inputs of equal rank must agree; prefer the layout most inputs already have.
        Inputs of different ranks broadcast over their trailing axes, which mean the same
        only in the source layout (``x * self.gamma`` with a per-channel weight)."""
        if not node.inputs:
            return
        top = max(v.rank for v in node.inputs)
        # a scalar-like operand (a number, a (1, 1) weight) broadcasts the same in any layout
        if not all(all(d == 1 for d in v.shape) for v in node.inputs if v.rank < top):
            new = []
            for v in node.inputs:
                if v.layout and v.layout != _source_layout(v):
                    v = self.convert(v, _source_layout(v), node)
                    v.producer.comments.append("# channels-last here: a lower-rank operand broadcasts "
                                               "over the last axes, as in the source")
                new.append(v)
            node.inputs = new
        ranked = [v for v in node.inputs if v.rank == top]
        if len(ranked) < 2:
            return
        layouts = [v.layout for v in ranked]
        target = max(sorted(set(layouts)), key=layouts.count)
        node.inputs = [self.convert(v, target, node) if v.rank == top else v for v in node.inputs]

    def share_layouts(self, node: Node) -> None:
        """A layer called again (shared weights) reads its inputs in its first call's layouts;
        one called on tensors of different ranks reads every input in the source layout (its
        axis attributes mean the same for each call only there)."""
        calls = [n for n in self.graph.nodes if n.name == node.name]
        if len({tuple(v.rank for v in n.inputs) for n in calls}) > 1:
            node.inputs = [self.convert(v, _source_layout(v), node) if v.layout and v.layout != _source_layout(v) else v
                           for v in node.inputs]
            return
        first = self.shared_layouts.setdefault(node.name, [v.layout for v in node.inputs])
        if len(first) == len(node.inputs):
            node.inputs = [self.convert(v, lay, node) if v.layout != lay and v.rank == len(lay) else v
                           for v, lay in zip(node.inputs, first)]

    def rewrite_axes(self, node: Node) -> None:
        x = node.inputs[0]
        source = _source_layout(x)
        if x.layout == source:
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
            if node.meta.get("tensor_op") and before != after:
                node.comments.append(f"# layout: {name}={before} of the Keras code (channels-last) is "
                                     f"dim {after} of this channels-first tensor")

    def terminate(self, node: Node) -> None:
        rule = _RELAYOUT.get(node.op)
        shared = any(n.name == node.name for n in self.graph.nodes if n is not node)
        # a layer called more than once is one module: its calls keep the same attributes
        if rule is not None and not shared and rule(self, node):
            return
        if node.op == "flatten" and is_channels_first(node.inputs[0].layout):
            x = node.inputs[0]
            if _flatten_absorbable(self.graph, node.outputs[0]):
                source = _source_layout(x)
                lay = Layout(source, x.layout)
                src_shape = tuple(x.shape[i] for i in Layout(x.layout, source).perm)
                node.outputs[0].flat_order = (src_shape[1:], tuple(p - 1 for p in lay.perm[1:]))
                node.meta["flat_order"] = node.outputs[0].flat_order
                return
        new_inputs = []
        for v in node.inputs:
            if v.flat_order is not None and node.op == "dense":
                node.param_transforms.setdefault("kernel", []).append(("permute_rows", v.flat_order))
                new_inputs.append(v)
                continue
            source = _source_layout(v)
            if v.layout != source:
                fresh = (id(v), source) not in self.converted
                v2 = self.convert(v, source, node)
                if fresh and node.meta.get("tensor_op"):
                    v2.producer.comments.append(
                        f"# layout: {node.meta['tensor_op']} needs the Keras (channels-last) axis order: "
                        f"permuted back from {v.layout} to {source} here")
                v = v2
            new_inputs.append(v)
        node.inputs = new_inputs


    def absorb_reshape(self, node: Node) -> bool:
        """Dense → Reshape to a feature map: permute the Dense's output columns so the
        reshape yields channels-first directly (the mirror of Flatten → Dense)."""
        x, y = node.inputs[0], node.outputs[0]
        if len(x.shape) != 2 or len(y.shape) not in CHANNELS_FIRST or not _feeds_implicit(self.graph, y):
            return False
        chain, v = [], x
        while v.producer is not None and v.producer.op != "dense":
            prod = v.producer
            if prod.spec.layout != ops_table.TRANSPARENT or len(prod.inputs) != 1 or prod.op == "rescaling":
                return False
            chain.append(prod)
            v = prod.inputs[0]
        dense = v.producer
        if dense is None or len(dense.inputs[0].shape) != 2:
            return False
        values = [dense.outputs[0]] + [n.outputs[0] for n in chain]
        if any(len(self.graph.consumers(val)) != 1 or val in self.graph.outputs for val in values):
            return False
        if any(n.name == dense.name for n in self.graph.nodes if n is not dense):
            return False  # a shared Dense cannot change its column order for one caller
        source = default_layout(len(y.shape))
        target = channels_first_of(source)
        lay = Layout(source, target)
        src_shape = tuple(node.attrs["shape"])
        step = (src_shape, tuple(p - 1 for p in lay.perm[1:]))
        dense.param_transforms.setdefault("kernel", []).append(("permute_cols", step))
        if dense.attrs["use_bias"]:
            dense.param_transforms.setdefault("bias", []).append(("permute_rows", step))
        node.attrs["shape"] = lay.shape((None, *src_shape))[1:]
        node.meta["out_layout"] = target
        return True


def _normal(value, rank: int):
    """Axes as non-negative ints (one axis as an int), for comments."""
    if isinstance(value, tuple):
        return value[0] % rank if len(value) == 1 else tuple(a % rank for a in value)
    return value % rank


def _read_in_source_layout(graph: Graph, value: Value) -> bool:
    """True when a terminate op reads ``value`` (through transparent/attribute ops)."""
    return any(node.spec.layout == ops_table.TERMINATE for node in _layout_readers(graph, value))


# ---------------------------------------------------------------------------------
# relayout rules: a terminate op that can keep a channels-first input
# ---------------------------------------------------------------------------------
Relayout = Callable[[_Amender, Node], bool]
_RELAYOUT: dict[str, Relayout] = {}


def relayout(*ops: str) -> Callable[[Relayout], Relayout]:
    """Register the rule saying how terminate ``ops`` may keep channels-first inputs: it
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
    if node.meta.get("tensor_op"):
        node.comments.append(f"# layout: {text}")


@relayout("reshape")
def relayout_reshape(am: _Amender, node: Node) -> bool:
    """Dense → Reshape absorbs the permutation into the Dense; a reshape that keeps the
    channel axis last (merging or splitting spatial axes only) keeps the data channels-first:
    (N, H, W, C) → (N, H*W, C) is (N, C, H, W) → (N, C, H*W)."""
    if am.absorb_reshape(node):
        return True
    x = node.inputs[0]
    if not is_channels_first(x.layout) or any(d is None for d in x.shape[1:]) or \
            _read_in_source_layout(am.graph, node.outputs[0]):
        return False  # (permuting before the reshape or after it: one permute either way)
    target = list(node.attrs["shape"])
    if -1 in target:
        known = 1
        for d in target:
            known *= d if d != -1 else 1
        total = 1
        for d in x.shape[1:]:
            total *= d
        target[target.index(-1)] = total // known
    channels = x.shape[1]
    if len(target) + 1 not in CHANNELS_FIRST or target[-1] != channels:
        return False
    node.attrs["shape"] = (channels, *target[:-1])
    node.meta["out_layout"] = CHANNELS_FIRST[len(target) + 1]
    _note(node, f"reshape keeps the channel axis: target {tuple(target)} (channels-last) is "
                f"{node.attrs['shape']} here, channels-first")
    return True


@relayout("expand_dims", "stack")
def relayout_new_axis(am: _Amender, node: Node) -> bool:
    """A new axis among the spatial axes of channels-first inputs is one further right."""
    x = node.inputs[0]
    if not all(is_channels_first(v.layout) and v.layout == x.layout for v in node.inputs):
        return False
    rank = len(x.shape) + 1
    axis = node.attrs["axis"] % rank
    if rank not in CHANNELS_FIRST or not 1 <= axis <= rank - 2:  # (before the channel axis)
        return False
    node.attrs["axis"] = axis + 1
    node.meta["out_layout"] = CHANNELS_FIRST[rank]
    _note(node, f"axis={axis} of the Keras code (channels-last) is dim {axis + 1} here, channels-first")
    return True


@relayout("random_normal", "random_uniform", "full")
def relayout_random(am: _Amender, node: Node) -> bool:
    """Noise (or a filled tensor) reads only the batch size of its input: shaped like a
    channels-first input, it is made channels-first (the same distribution, the same values)."""
    like = node.inputs[0]
    shape = (like.shape[0], *node.attrs["shape"])
    if is_channels_first(like.layout) and len(shape) == len(like.shape):
        source = _source_layout(like)
        if Layout(like.layout, source).shape(like.shape)[1:] == shape[1:]:
            node.attrs["shape"] = tuple(like.shape[1:])
            node.meta["out_layout"] = like.layout
    return True


def _constants_next_to_readers(graph: Graph) -> None:
    """A constant operand sits right before its reader (a layout transpose may have come
    between), so the printer writes it inline: ``2.0 - x``."""
    for node in [n for n in graph.nodes if n.op == "constant"]:
        readers = graph.consumers(node.outputs[0])
        if len(readers) == 1:
            graph.nodes.remove(node)
            graph.nodes.insert(graph.nodes.index(readers[0]), node)


def amend_layout(graph: Graph) -> Graph:
    """Convert ``graph`` to channels-first, in place; returns it."""
    return _Amender(graph).run()


def fold_transposes(graph: Graph) -> Graph:
    """Merge a transpose into the transpose that reads it; drop identity transposes."""
    changed = True
    while changed:
        changed = False
        names = Counter(n.name for n in graph.nodes)
        for node in list(graph.nodes):
            if node.op != "transpose":
                continue
            src = node.inputs[0].producer
            # (a shared Permute layer keeps its perm: its other calls read other layouts)
            if src is not None and src.op == "transpose" and len(graph.consumers(src.outputs[0])) == 1 \
                    and src.outputs[0] not in graph.outputs and names[node.name] == 1:
                first, second = src.attrs["perm"], node.attrs["perm"]
                node.attrs["perm"] = tuple(first[i] for i in second)
                node.inputs = [src.inputs[0]]
                node.comments[:0] = src.comments
                node.meta.setdefault("inserted", src.meta.get("inserted"))
                graph.nodes.remove(src)
                changed = True
            if node.attrs["perm"] == tuple(range(len(node.attrs["perm"]))) and node in graph.nodes:
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
        1 for n in graph.nodes if n.op == "transpose" and n.meta.get("inserted") == "layout"
        and n.attrs["perm"] != tuple(range(len(n.attrs["perm"]))))
    return graph
