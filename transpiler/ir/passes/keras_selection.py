"""Passes for the Keras target: channels-first graphs (from PyTorch) to channels-last,
then Keras forms of what Keras spells differently.

``amend_layout_channels_last`` is layout amendment by propagation in the other
direction (tflite2onnx's scheme, as ``layout_amendment`` does for torch):

* implicit ops (conv, pooling, padding) get channels-last inputs: a graph input read by
  one becomes channels-last (the data is permuted once where it enters), otherwise a
  transpose is inserted where a channels-first value arrives;
* transparent ops keep what arrives (the inputs of a merge are aligned);
* attribute ops keep the layout and have their axes rewritten (``dim=1`` of a
  channels-first map is axis 3, i.e. -1, once channels-last);
* terminate ops need the layout the value had in the source program; a transpose
  back is inserted, except for a Flatten read only by Dense layers (the Dense kernel's
  rows are permuted: ``param_transforms``) and a Dense → Reshape into a feature map read
  by an implicit op (the Dense's columns are permuted and the reshape produces
  channels-last directly): no runtime transposes where a weight permutation does it.

``select_keras_ops`` then turns explicit torch paddings into Keras forms (``"same"``
when it is the same computation, else ``ZeroPadding`` before a ``"valid"`` layer;
a transposed convolution's padding becomes a ``Cropping`` after it) and records what
Keras cannot express as ``graph.meta["unsupported"]`` (the printer stubs the model).
"""

from __future__ import annotations

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.layout import (
    CHANNELS_LAST,
    Layout,
    channels_last_of,
    is_channels_first,
    is_channels_last,
)
from transpiler.ir.passes.shape_inference import conv_out_size, infer_node, spatial_axes

#: ops whose output is never negative (a max pool's −inf padding equals zero padding there)
_NON_NEGATIVE = {"relu", "sigmoid", "softmax", "softplus"}


def _feeds_implicit(graph: Graph, value: Value) -> bool:
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


def _dense_readers_only(graph: Graph, value: Value) -> bool:
    frontier = [value]
    while frontier:
        v = frontier.pop()
        if any(o is v for o in graph.outputs):
            return False
        readers = graph.consumers(v)
        if not readers:
            return False
        for node in readers:
            if node.op == "dense" and node.inputs[0] is v:
                continue
            if node.spec.layout == ops_table.TRANSPARENT and len(node.inputs) == 1 and node.op != "rescaling":
                frontier.extend(node.outputs)
                continue
            return False
    return True


def _one_axis(value: Value) -> bool:
    """At most one non-batch axis longer than 1: every layout orders the numbers alike."""
    return value.shape is not None and len(value.shape) > 2 and \
        sum(1 for d in value.shape[1:] if d != 1) <= 1


def _step(built: str, current: str, built_shape: tuple) -> tuple:
    """The ``param_transforms`` step turning source (``built``) order into ``current`` order."""
    perm = Layout(built, current).perm
    return (tuple(built_shape[1:]), tuple(p - 1 for p in perm[1:]))


class _ChannelsLast:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.built: dict[int, str | None] = {id(v): v.layout for v in graph.values()}
        self.built_shape: dict[int, tuple] = {id(v): v.shape for v in graph.values()}
        self.converted: dict[tuple[int, str], Value] = {}
        self.flat: dict[int, tuple] = {}
        self.transposes = 0

    def convert(self, value: Value, layout: str, before: Node) -> Value:
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
            node = self.graph.add_node("transpose", name, [value], attrs={"perm": perm}, before=before,
                                       span=before.span)
            node.meta["out_layout"] = layout
            node.meta["inserted"] = "layout"
            infer_node(node)
            node.outputs[0].var = value.var
            self.built[id(node.outputs[0])] = layout
            self.converted[key] = node.outputs[0]
            self.transposes += 1
        return self.converted[key]

    def source(self, value: Value) -> str | None:
        return self.built.get(id(value), value.layout)

    def run(self) -> Graph:
        graph = self.graph
        for value in graph.inputs:
            if is_channels_first(value.layout) and _feeds_implicit(graph, value):
                lay = Layout(value.layout, channels_last_of(value.layout))
                value.shape = lay.shape(value.shape)
                value.layout = lay.target
        graph.meta["input_layouts"] = [v.layout for v in graph.inputs]
        for node in list(graph.nodes):
            self.visit(node)
        graph.meta["layout_transposes"] = self.transposes
        # a feature map the model returns stays channels-last (Keras' convention); the
        # layout torch returned it in is recorded for whoever compares the two
        graph.meta["output_layouts"] = [self.source(v) for v in graph.outputs]
        graph.meta["target_output_layouts"] = [v.layout for v in graph.outputs]
        graph.meta["layout_transposes"] = self.transposes
        return graph

    def visit(self, node: Node) -> None:
        cls = node.spec.layout
        originals = list(node.inputs)
        if cls == ops_table.IMPLICIT:
            node.inputs = [self.convert(v, channels_last_of(v.layout), node) if is_channels_first(v.layout) else v
                           for v in node.inputs]
        elif cls in (ops_table.TRANSPARENT, ops_table.ATTRIBUTE):
            self.align(node)
            if cls == ops_table.ATTRIBUTE:
                self.rewrite_axes(node, originals[0])
        else:
            self.terminate(node)
        infer_node(node)
        if cls == ops_table.TRANSPARENT and len(node.inputs) == 1 and id(node.inputs[0]) in self.flat:
            self.flat[id(node.outputs[0])] = self.flat[id(node.inputs[0])]

    def align(self, node: Node) -> None:
        ranked = [v for v in node.inputs if v.rank == node.inputs[0].rank]
        if len(ranked) < 2:
            return
        # a value without a layout (a module's own parameter, e.g. a (1, T, C) position
        # embedding added to a sequence) broadcasts as it is: the frontend refuses one
        # meeting a channels-first feature map, whose axes would move
        layouts = [v.layout for v in ranked if v.layout is not None]
        if not layouts:
            return
        # a (N, C, 1, 1) gate is cheap to move; the feature map it scales decides
        layouts = [v.layout for v in ranked if v.layout is not None and not _one_axis(v)] or layouts
        target = max(sorted(set(layouts)), key=layouts.count)
        node.inputs = [self.convert(v, target, node) if v.rank == node.inputs[0].rank and v.layout is not None
                       else v for v in node.inputs]

    def rewrite_axes(self, node: Node, original: Value) -> None:
        x = node.inputs[0]
        built = self.source(original)
        if not built or x.layout == built:
            return
        lay = Layout(built, x.layout)
        for name in node.spec.axis_attrs:
            value = node.attrs[name]
            if value is None:
                continue
            if isinstance(value, tuple):
                node.attrs[name] = tuple(lay.axis(a) for a in value)
            else:
                node.attrs[name] = lay.axis(value)

    def terminate(self, node: Node) -> None:
        graph = self.graph
        if node.op in ("flatten", "reshape") and _one_axis(node.inputs[0]):
            return  # (N, C, 1, 1) and (N, 1, 1, C) hold their numbers in the same order
        if node.op == "flatten":
            x = node.inputs[0]
            src = self.source(x)
            if src and x.layout != src and len(x.shape) > 2 and _dense_readers_only(graph, node.outputs[0]):
                self.flat[id(node.outputs[0])] = _step(src, x.layout, self.built_shape[id(x)]
                                                       if id(x) in self.built_shape else
                                                       Layout(x.layout, src).shape(x.shape))
                node.meta["flat_order"] = self.flat[id(node.outputs[0])]
                return
        if node.op == "reshape" and self.absorb_reshape(node):
            return
        new_inputs = []
        for v in node.inputs:
            if id(v) in self.flat and node.op == "dense":
                node.param_transforms.setdefault("kernel", []).append(("permute_rows", self.flat[id(v)]))
                new_inputs.append(v)
                continue
            src = self.source(v)
            new_inputs.append(self.convert(v, src, node) if src and v.layout != src and len(src) == len(v.layout)
                              else v)
        node.inputs = new_inputs

    def absorb_reshape(self, node: Node) -> bool:
        """Dense → Reshape to a channels-first map read by an implicit op: permute the
        Dense's columns (and bias) so the reshape yields channels-last directly."""
        graph = self.graph
        x, y = node.inputs[0], node.outputs[0]
        target_src = node.meta.get("out_layout")
        if len(x.shape) != 2 or not is_channels_first(target_src) or not _feeds_implicit(graph, y):
            return False
        src_shape = (None, *node.attrs["shape"])
        if sum(1 for d in src_shape[1:] if d != 1) <= 1:
            # (N, F) → (N, C, 1, 1) or (N, 1, H, W): the channels-last reshape holds the same order
            target = channels_last_of(target_src)
            node.attrs["shape"] = Layout(target_src, target).shape(src_shape)[1:]
            node.meta["out_layout"] = target
            return True
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
        if any(len(graph.consumers(val)) != 1 or val in graph.outputs for val in values):
            return False
        if any(n.name == dense.name for n in graph.nodes if n is not dense):
            return False
        target = channels_last_of(target_src)
        src_shape = (None, *node.attrs["shape"])
        step = _step(target_src, target, src_shape)
        dense.param_transforms.setdefault("kernel", []).append(("permute_cols", step))
        if dense.attrs["use_bias"]:
            dense.param_transforms.setdefault("bias", []).append(("permute_rows", step))
        node.attrs["shape"] = Layout(target_src, target).shape(src_shape)[1:]
        node.meta["out_layout"] = target
        return True


def amend_layout_channels_last(graph: Graph) -> Graph:
    """Convert a channels-first ``graph`` to channels-last, in place; returns it."""
    return _ChannelsLast(graph).run()


# ---------------------------------------------------------------------------------
# Keras forms
# ---------------------------------------------------------------------------------
def _unsupported(graph: Graph, node: Node, message: str) -> None:
    graph.meta.setdefault("unsupported", []).append((node.span, f"{node.name} ({node.op}): {message}"))


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


def select_keras_ops(graph: Graph) -> Graph:
    """Explicit paddings to Keras forms; what Keras cannot express is recorded."""
    for node in list(graph.nodes):
        a = node.attrs
        op = node.op
        if op in ("conv1d", "conv2d", "conv3d", "depthwise_conv2d") and not isinstance(a["padding"], str):
            pads = a["padding"]
            k, d, s = a["kernel_size"], a["dilation"], a["strides"]
            same = tuple(pads) == _tf_same_pads(node.inputs[0], k, s, d)
            if same:
                a["padding"] = "same"
            else:
                _insert_pad(graph, node, pads)
                a["padding"] = "valid"
        elif op in ("conv_transpose1d", "conv_transpose2d") and not isinstance(a["padding"], str):
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
        elif op.startswith(("max_pool", "avg_pool")):
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
                if op.startswith("max_pool") and prod is not None and prod.op in _NON_NEGATIVE and \
                        (prod.op != "relu" or prod.attrs["negative_slope"] == 0.0):
                    # the input is never negative: zero padding is the same as torch's −inf padding
                    _insert_pad(graph, node, a["padding"])
                    a["padding"] = "valid"
                else:
                    _unsupported(graph, node, f"explicit padding {a['padding']} (torch pads with "
                                              f"{'-inf' if op.startswith('max') else 'zeros not counted'}) "
                                              "has no Keras pooling equivalent")
        elif op.startswith("pad") and a["value"] != 0.0:
            _unsupported(graph, node, f"constant padding with value {a['value']} (Keras pads with zeros)")
        elif op == "upsample2d" and a["interpolation"] == "bilinear":
            pass
        elif op == "batch_norm":
            rank = len(node.inputs[0].shape)
            if a["axis"] % rank == rank - 1:
                a["axis"] = -1
        infer_node(node)
    for node in graph.nodes:
        infer_node(node)
    return graph


def record_source_plan(graph: Graph) -> Graph:
    """Keep the source module's state_dict plan (keys, canonical params, transforms) as the
    graph is while still channels-first: the torch → Keras checkpoint conversion reads it."""
    from transpiler.weights.torch_source import source_plan

    graph.meta["torch_source_plan"] = source_plan(graph)
    return graph


KERAS_PIPELINE = (
    ("record_source_plan", record_source_plan),
    ("layout_amendment_channels_last", amend_layout_channels_last),
    ("keras_selection", select_keras_ops),
)

__all__ = ["KERAS_PIPELINE", "amend_layout_channels_last", "select_keras_ops", "CHANNELS_LAST", "is_channels_last"]
