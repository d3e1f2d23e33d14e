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
  columns so the reshape produces channels-first directly.

``fold_transposes`` then merges chains of transposes (a user's Permute between two
layout transposes becomes one permute) and drops identities.

Graph inputs that feed implicit ops become channels-first: the data is permuted
once at the loading boundary, not inside ``forward``.
"""

from __future__ import annotations

from collections import Counter

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


def _feeds_implicit(graph: Graph, value: Value) -> bool:
    """True when the first non-transparent reader of ``value`` is an implicit op."""
    frontier, seen = [value], set()
    while frontier:
        v = frontier.pop()
        for node in graph.consumers(v):
            if id(node) in seen:
                continue
            seen.add(id(node))
            cls = node.spec.layout
            if cls == ops_table.IMPLICIT:
                return True
            if cls in (ops_table.TRANSPARENT, ops_table.ATTRIBUTE):
                frontier.extend(node.outputs)
    return False


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
        return graph

    def visit(self, node: Node) -> None:
        cls = node.spec.layout
        if cls == ops_table.IMPLICIT:
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
        if len({v.rank for v in node.inputs}) > 1:
            top = max(v.rank for v in node.inputs)
            if all(all(d == 1 for d in v.shape) for v in node.inputs if v.rank < top):
                return  # a scalar-like operand broadcasts the same in any layout
            new = []
            for v in node.inputs:
                if v.layout and v.layout != _source_layout(v):
                    v = self.convert(v, _source_layout(v), node)
                    v.producer.comments.append("# channels-last here: a lower-rank operand broadcasts "
                                               "over the last axes, as in the source")
                new.append(v)
            node.inputs = new
            return
        ranked = [v for v in node.inputs if v.rank == node.inputs[0].rank]
        if len(ranked) < 2:
            return
        layouts = [v.layout for v in ranked]
        target = max(sorted(set(layouts)), key=layouts.count)
        node.inputs = [self.convert(v, target, node) if v.rank == node.inputs[0].rank else v
                       for v in node.inputs]

    def share_layouts(self, node: Node) -> None:
        """A layer called again (shared weights) reads its inputs in its first call's layouts."""
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

    def terminate(self, node: Node) -> None:
        if node.op == "reshape" and self.absorb_reshape(node):
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
            new_inputs.append(self.convert(v, source, node) if v.layout != source else v)
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
