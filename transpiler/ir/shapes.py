"""Static shape and layout inference, one rule per op, no framework import.

Shapes are tuples in the value's own layout, ``None`` for the batch axis (and for
any size that cannot be known statically). Implicit ops find their channel and
spatial axes from the input's layout tag, so the same rule serves channels-last
and channels-first graphs.
"""

from __future__ import annotations

import math
from typing import Callable

from transpiler.ir import ops as ops_table
from transpiler.ir.registry import OpRegistry
from transpiler.ir.graph import Graph, IRError, Node
from transpiler.ir.layout import CHANNELS_FIRST, default_layout

#: a rule gives (shape, layout) per output, or (shape, layout, dtype) when it knows the dtype
ShapeRule = Callable[[Node, list[tuple], list[str]], list[tuple]]
_RULES = OpRegistry("shape rule")
rule = _RULES.register  # (decorator: ``@rule("dense")``)


def has_rule(op: str) -> bool:
    return op in _RULES


def infer_node(node: Node) -> None:
    """Set the shapes and layouts of ``node``'s outputs from its inputs."""
    shapes = [v.shape for v in node.inputs]
    layouts = [v.layout or default_layout(len(v.shape)) for v in node.inputs]
    if any(s is None for s in shapes):
        raise IRError(f"{node!r}: input shape unknown")
    if any("I" in p.layout for p in node.spec.params) and shapes[0]:
        shape, layout = shapes[0], layouts[0]
        # (a layer of the last axis, Dense, reads it in any layout: a sequence's length may be unknown)
        axis = len(shape) - 1 if node.spec.features_in_params or not (layout and "C" in layout and
                                                                      len(layout) == len(shape)) \
            else layout.index("C")
        if shape[axis] is None:  # (Keras cannot build its weights either: their shape needs it)
            raise IRError(f"{node!r}: the input's feature axis has no size ({shape}): the layer's weights "
                          "need it")
    results = _RULES[node.op](node, shapes, layouts)
    if len(results) != len(node.outputs):
        raise IRError(f"{node!r}: rule gave {len(results)} outputs for {len(node.outputs)}")
    for value, result in zip(node.outputs, results):
        # (a size 0 the inputs already have is data, an empty set: not a layer's arithmetic)
        empty_in = any(v.shape and 0 in v.shape for v in node.inputs)
        bad = [d for d in tuple(result[0])[1:] if isinstance(d, int) and not isinstance(d, bool)
               and (d < 0 or (d == 0 and not empty_in))]
        if bad:  # Dense(-4), a kernel larger than its input: both frameworks raise when the model is built
            raise IRError(f"{node!r}: gives an output of shape {tuple(result[0])}: sizes must be positive "
                          "(the source framework raises here too)")
        value.shape = tuple(result[0])
        value.layout = result[1]
        if len(result) > 2:  # a rule that knows the output's dtype says so
            value.dtype = result[2]


def infer_shapes(graph: Graph) -> Graph:
    """Re-derive every value's shape in topological order."""
    for node in graph.nodes:
        infer_node(node)
    return graph


# -- helpers ---------------------------------------------------------------------------
def spatial_axes(layout: str) -> list[int]:
    """Indices of the spatial axes (D, H, W) of a feature-map layout, in order."""
    return [i for i, a in enumerate(layout) if a in "DHW"]


def channel_axis(layout: str) -> int:
    return layout.index("C")


def conv_out_size(size: int | None, k: int, s: int, d: int, padding, ceil_mode: bool = False) -> int | None:
    """Output length of a convolution/pooling window along one axis.

    ``ceil_mode`` keeps a last partial window if it starts inside the input or the
    leading padding (torch's and ONNX's rule).
    """
    if size is None:
        return None
    eff = (k - 1) * d + 1
    if padding == "same":
        return (size + s - 1) // s  # ceil(size / s), in integers (a size keeps its provenance)
    before, after = (0, 0) if padding == "valid" else padding
    span = size + before + after - eff
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    if (out - 1) * s >= size + before:
        out -= 1
    return out


def _with(shape: tuple, layout: str, spatial: list, channels: int | None) -> tuple:
    out = list(shape)
    for axis, size in zip(spatial_axes(layout), spatial):
        out[axis] = size
    if channels is not None:
        out[channel_axis(layout)] = channels
    return tuple(out)


def _pads(padding, i: int):
    return padding if isinstance(padding, str) else padding[i]


# -- rules -----------------------------------------------------------------------------
@rule("dense")
def _dense(node, shapes, layouts):
    return [(shapes[0][:-1] + (node.attrs["units"],), layouts[0])]


@rule("conv1d", "conv2d", "conv3d", "depthwise_conv2d", "separable_conv2d",
      "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d")
def _window(node, shapes, layouts):
    a, shape, layout = node.attrs, shapes[0], layouts[0]
    axes = spatial_axes(layout)
    if len(axes) != node.spec.rank:
        raise IRError(f"{node!r}: a rank-{node.spec.rank} op got layout {layout} {shape}")
    kernel = a.get("kernel_size") or a["pool_size"]
    dilation = a.get("dilation") or (1,) * len(axes)
    sizes = [conv_out_size(shape[ax], k, s, d, _pads(a["padding"], i), a.get("ceil_mode", False))
             for i, (ax, k, s, d) in enumerate(zip(axes, kernel, a["strides"], dilation))]
    if "filters" in a:
        channels = a["filters"]
    elif "depth_multiplier" in a:
        channels = shape[channel_axis(layout)] * a["depth_multiplier"]
    else:
        channels = None
    return [(_with(shape, layout, sizes, channels), layout)]


@rule("conv_transpose1d", "conv_transpose2d")
def _conv_transpose(node, shapes, layouts):
    a, shape, layout = node.attrs, shapes[0], layouts[0]
    sizes = []
    for i, ax in enumerate(spatial_axes(layout)):
        n, k, s, d = shape[ax], a["kernel_size"][i], a["strides"][i], a["dilation"][i]
        op_ = None if a["output_padding"] is None else a["output_padding"][i]
        pad = a["padding"]
        if n is None:
            sizes.append(None)
        elif op_ is None and pad == "same":
            sizes.append(n * s)
        elif op_ is None and pad == "valid":
            sizes.append(n * s + max((k - 1) * d + 1 - s, 0))
        else:
            eff = (k - 1) * d + 1
            if pad == "same":
                sizes.append((n - 1) * s + eff - 2 * (eff // 2) + (op_ or 0))
            elif pad == "valid":
                sizes.append((n - 1) * s + (k - 1) * d + 1 + (op_ or 0))
            else:
                b, e = pad[i]
                sizes.append((n - 1) * s + (k - 1) * d + 1 - b - e + (op_ or 0))
    return [(_with(shape, layout, sizes, a["filters"]), layout)]


@rule("global_max_pool1d", "global_max_pool2d", "global_max_pool3d",
      "global_avg_pool1d", "global_avg_pool2d", "global_avg_pool3d")
def _global_pool(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    if node.attrs["keepdims"]:
        return [(_with(shape, layout, [1] * len(spatial_axes(layout)), None), layout)]
    return [((shape[0], shape[channel_axis(layout)]), "NC")]


@rule("pad1d", "pad2d", "pad3d")
def _pad(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    sizes = [None if shape[ax] is None else shape[ax] + b + e
             for ax, (b, e) in zip(spatial_axes(layout), node.attrs["pads"])]
    return [(_with(shape, layout, sizes, None), layout)]


@rule("crop1d", "crop2d", "crop3d")
def _crop(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    sizes = [None if shape[ax] is None else shape[ax] - b - e
             for ax, (b, e) in zip(spatial_axes(layout), node.attrs["cropping"])]
    return [(_with(shape, layout, sizes, None), layout)]


@rule("upsample1d", "upsample2d")
def _upsample(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    sizes = [None if shape[ax] is None else shape[ax] * f
             for ax, f in zip(spatial_axes(layout), node.attrs["size"])]
    return [(_with(shape, layout, sizes, None), layout)]


@rule("flatten")
def _flatten(node, shapes, layouts):
    rest = shapes[0][1:]
    total = None if any(s is None for s in rest) else math.prod(rest)
    return [((shapes[0][0], total), "NC")]


@rule("reshape")
def _reshape(node, shapes, layouts):
    target = list(node.attrs["shape"])
    rest = shapes[0][1:]
    if -1 in target:
        known = math.prod(t for t in target if t != -1)
        total = math.prod(rest)
        target[target.index(-1)] = total // known
    elif math.prod(target) != math.prod(rest):
        raise IRError(f"{node!r}: cannot reshape {shapes[0]} to {tuple(target)}")
    out = (shapes[0][0], *target)
    return [(out, node.out_layout or default_layout(len(out)))]


@rule("transpose")
def _transpose(node, shapes, layouts):
    perm = node.attrs["perm"]
    # Inserted layout transposes say which layout they produce; a user's Permute
    # yields a tensor that the source framework reads in its default layout again.
    out_layout = node.out_layout or default_layout(len(perm))
    return [(tuple(shapes[0][p] for p in perm), out_layout)]


@rule("repeat_vector")
def _repeat(node, shapes, layouts):
    return [((shapes[0][0], node.attrs["n"], shapes[0][1]), "NWC")]


def _same(node, shapes, layouts):
    return [(shapes[0], layouts[0])]


rule(*(name for name, spec in ops_table.all_ops().items() if spec.shape == "same"))(_same)


@rule("variable")
def _variable(node, shapes, layouts):
    shape = tuple(node.attrs["shape"])
    return [(shape, default_layout(len(shape)) if len(shape) <= 2 else None)]


@rule("opaque_layer")
def _opaque_layer(node, shapes, layouts):
    """What the frontend decided for an untranslated layer (compute_output_shape, or assumed)."""
    out = []
    for shape in node.attrs["output_shapes"]:
        try:
            out.append((tuple(shape), default_layout(len(shape))))
        except ValueError:  # (rank > 5: no layout tag)
            out.append((tuple(shape), None))
    return out


def broadcast(node: Node, shapes: list[tuple]) -> tuple:
    """numpy's broadcast of ``shapes`` (None: unknown, e.g. the batch axis)."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0]
        sizes = {d for d in dims if d not in (None, 1)}
        if len(sizes) > 1:
            raise IRError(f"{node!r}: cannot broadcast {shapes}")
        out.append(sizes.pop() if sizes else (None if None in dims else 1))
    return tuple(out)


@rule("add", "subtract", "multiply", "average", "maximum", "minimum")
def _merge(node, shapes, layouts):
    widest = max(range(len(shapes)), key=lambda i: len(shapes[i]))
    return [(broadcast(node, shapes), layouts[widest])]


@rule("concat")
def _concat(node, shapes, layouts):
    axis = node.attrs["axis"] % len(shapes[0])
    out = list(shapes[0])
    parts = [s[axis] for s in shapes]
    out[axis] = None if None in parts else sum(parts)
    return [(tuple(out), layouts[0])]


@rule("embedding")
def _embedding(node, shapes, layouts):
    out = shapes[0] + (node.attrs["output_dim"],)
    return [(out, default_layout(len(out)))]


@rule("index_lookup")
def _index_lookup(node, shapes, layouts):
    shape = shapes[0]
    mode = (node.attrs["config"] or {}).get("output_mode", "int")
    mode = {"binary": "multi_hot"}.get(mode, mode)
    if mode == "int":
        return [(shape, layouts[0], "int64")]
    depth = node.attrs["depth"]
    if mode == "one_hot":
        out = (*shape[:-1], depth) if len(shape) > 1 and shape[-1] == 1 else (*shape, depth)
    elif len(shape) == 2:  # multi_hot / count / tf_idf: one row of slots per sample
        out = (shape[0], depth)
    else:
        raise IRError(f"{node.op}: output_mode={mode!r} takes (batch, tokens) inputs, got {shape}")
    return [(out, default_layout(len(out)), "float32")]


@rule("simple_rnn", "lstm", "gru")
def _rnn(node, shapes, layouts):
    a = node.attrs
    if a.get("masked") and a.get("initial_state"):
        raise IRError(f"{node.op}: masked and initial_state together (Keras reads no mask then)")
    n_states = rnn_state_count(node.op) if a.get("initial_state") else 0
    want = 1 + bool(a.get("masked")) + n_states
    if len(shapes) != want:
        raise IRError(f"{node.op}: {len(shapes)} inputs, want {want} (x, then the mask ids if masked "
                      "or the initial states if initial_state)")
    for shape in shapes[1:1 + n_states]:
        if len(shape) != 2 or shape[1] != a["units"]:
            raise IRError(f"{node.op}: an initial state is (batch, {a['units']}), got {shape}")
    return _rnn_outputs(node.op, a, shapes[0], a["units"])


def rnn_state_count(op: str) -> int:
    """How many state tensors the recurrence carries: h and c for an LSTM, h otherwise."""
    return ops_table.get(op).states


def _rnn_outputs(op: str, a: dict, shape: tuple, width: int):
    n, t = shape[0], shape[1]
    main = ((n, t, width), "NWC") if a["return_sequences"] else ((n, width), "NC")
    outs = [main]
    if a["return_state"]:
        outs += [((n, a["units"]), "NC")] * ops_table.get(op).states
    return outs


@rule("conv_lstm2d")
def _conv_lstm(node, shapes, layouts):
    """A sequence of feature maps (time where a 3-D map has depth): the input convolution's
    output size per step; the time axis goes without ``return_sequences``."""
    a, shape, layout = node.attrs, shapes[0], layouts[0]
    axes = spatial_axes(layout)
    if len(shapes) != 1 or len(axes) != 3:
        raise IRError(f"{node!r}: one input, a sequence of feature maps (rank 5), got layout {layout} {shape}")
    sizes = [conv_out_size(shape[ax], k, s, d, a["padding"])
             for ax, k, s, d in zip(axes[1:], a["kernel_size"], a["strides"], a["dilation"])]
    seq = _with(shape, layout, [shape[axes[0]], *sizes], a["filters"])
    if a["return_sequences"]:
        return [(seq, layout)]
    step = layout.replace("D", "")
    return [(tuple(d for i, d in enumerate(seq) if i != axes[0]), step)]


@rule("bidirectional")
def _bidirectional(node, shapes, layouts):
    inner = node.attrs["layer"]
    units = inner["attrs"]["units"]
    mode = node.attrs["merge_mode"]
    width = 2 * units if mode == "concat" else units
    a = inner["attrs"]
    n, t = shapes[0][0], shapes[0][1]
    seq = ((n, t, width), "NWC") if a["return_sequences"] else ((n, width), "NC")
    if mode is None or mode == "none":
        one = ((n, t, units), "NWC") if a["return_sequences"] else ((n, units), "NC")
        outs = [one, one]
    else:
        outs = [seq]
    if a["return_state"]:
        outs += [((n, units), "NC")] * (2 * ops_table.get(inner["op"]).states)
    return outs


@rule("multi_head_attention")
def _multi_head_attention(node, shapes, layouts):
    query = shapes[0]
    width = node.attrs["output_dim"] or query[-1]
    return [(query[:-1] + (width,), layouts[0] if len(query) != 3 else "NWC")]


@rule("attention", "additive_attention")
def _attention(node, shapes, layouts):
    query, value = shapes[0], shapes[1]
    roles = node.attrs["extra_inputs"]
    key = shapes[2 + roles.index("key")] if "key" in roles else value
    if len(query) != 3 or query[-1] != key[-1] or key[1] != value[1]:
        raise IRError(f"{node!r}: query {query}, key {key} and value {value} do not fit "
                      "(queries and keys need the same features, keys and values the same steps)")
    return [(query[:-1] + (value[-1],), "NWC")]


def keras_centred_window(height: int, width: int, size) -> tuple[int, int, int, int]:
    """Keras' (smart_resize's) centred window of the target's aspect ratio: its start and
    size on each spatial axis, ``(h_start, w_start, crop_h, crop_w)``."""
    target_h, target_w = size
    crop_h = max(min(height, int(float(width * target_h) / target_w)), 1)
    crop_w = max(min(width, int(float(height * target_w) / target_h)), 1)
    return int(float(height - crop_h) / 2), int(float(width - crop_w) / 2), crop_h, crop_w


@rule("random_crop")
def _random_crop(node, shapes, layouts):
    if any(shapes[0][ax] is None for ax in spatial_axes(layouts[0])):
        raise IRError(f"{node!r}: RandomCrop of an image whose size is known only at run time is not "
                      "translated yet (the crop window depends on it)")
    return _resize(node, shapes, layouts)


@rule("resizing", "center_crop")
def _resize(node, shapes, layouts):
    return [(_with(shapes[0], layouts[0], list(node.attrs["size"]), None), layouts[0])]


# -- tensor math ---------------------------------------------------------------------
def layout_without(layout: str, removed: set[int]) -> str:
    """The layout left when the axes ``removed`` of a ``layout`` tensor are dropped: still
    channels-first when the channel axis survives at index 1 of a feature map."""
    kept = "".join(a for i, a in enumerate(layout) if i not in removed)
    if len(kept) in CHANNELS_FIRST and kept.find("C") == 1:
        return CHANNELS_FIRST[len(kept)]
    return default_layout(len(kept))


def _axes(node: Node, rank: int, name: str = "axis") -> set[int]:
    value = node.attrs[name]
    axes = {a % rank for a in ((value,) if isinstance(value, int) else value)}
    first = node.inputs[0].shape[0] if node.inputs and node.inputs[0].shape else None
    if 0 in axes and first is None:  # (a first axis of a known size is no batch: a graph without one)
        raise IRError(f"{node!r}: the batch axis cannot be {name}")
    return axes


def _dtype(node: Node, i: int = 0) -> str:
    return node.inputs[i].dtype if node.inputs else "float32"


@rule("constant")
def _constant(node, shapes, layouts):
    value = node.attrs["value"]
    dtype = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else "float32"
    return [((), "", dtype)]


@rule("divide", "power")
def _binary(node, shapes, layouts):
    widest = max(range(len(shapes)), key=lambda i: len(shapes[i]))
    return [(broadcast(node, shapes), layouts[widest], _dtype(node, widest))]


@rule("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")
def _compare(node, shapes, layouts):
    widest = max(range(len(shapes)), key=lambda i: len(shapes[i]))
    return [(broadcast(node, shapes), layouts[widest], "bool")]


@rule("where")
def _where(node, shapes, layouts):
    widest = max(range(len(shapes)), key=lambda i: len(shapes[i]))
    branch = 1 if len(shapes[1]) >= len(shapes[2]) else 2
    return [(broadcast(node, shapes), layouts[widest], _dtype(node, branch))]


@rule("training_select")
def _training_select(node, shapes, layouts):
    if shapes[0] != shapes[1]:
        raise IRError(f"{node!r}: the training branch gives {shapes[0]}, the inference branch {shapes[1]}")
    return [(shapes[0], layouts[0], _dtype(node, 0))]


@rule("matmul")
def _matmul(node, shapes, layouts):
    a, b = shapes
    if len(a) < 2 or len(b) < 2:
        raise IRError(f"{node!r}: matmul needs two matrices (or stacks of them), got {a} and {b}")
    if a[-1] is not None and b[-2] is not None and a[-1] != b[-2]:
        raise IRError(f"{node!r}: cannot multiply {a} by {b}")
    out = broadcast(node, [a[:-2], b[:-2]]) + (a[-2], b[-1]) if len(a) > 2 or len(b) > 2 else (a[-2], b[-1])
    # (a frontend may say the product is a feature map of its own layout: the ONNX Resize's
    # interpolation matrices applied to a channels-first map)
    return [(out, node.out_layout or default_layout(len(out)), _dtype(node))]


@rule("negative", "abs", "square", "sqrt", "rsqrt", "exp", "log", "clip")
def _elementwise(node, shapes, layouts):
    return [(shapes[0], layouts[0], _dtype(node))]


@rule("cast")
def _cast(node, shapes, layouts):
    return [(shapes[0], layouts[0], node.attrs["dtype"])]


@rule("squeeze")
def _squeeze(node, shapes, layouts):
    axes = _axes(node, len(shapes[0]))
    if any(shapes[0][a] not in (1, None) for a in axes):
        raise IRError(f"{node!r}: cannot squeeze axes {sorted(axes)} of {shapes[0]}")
    return _reduce(node, shapes, layouts)


@rule("reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin")
def _reduce(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    axes = _axes(node, len(shape))
    dtype = node.spec.dtype or _dtype(node)
    if node.attrs.get("keepdims"):
        return [(tuple(1 if i in axes else d for i, d in enumerate(shape)), layout, dtype)]
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return [(out, layout_without(layout, axes), dtype)]


@rule("take")
def _take(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    (axis,) = _axes(node, len(shape))
    indices = node.attrs["indices"]
    if isinstance(indices, int):
        return [(shape[:axis] + shape[axis + 1:], layout_without(layout, {axis}), _dtype(node))]
    return [(shape[:axis] + (len(indices),) + shape[axis + 1:], layout, _dtype(node))]


@rule("slice")
def _slice(node, shapes, layouts):
    shape, a = list(shapes[0]), node.attrs
    # (a tensor with no batch axis, ops.slice of a weight, may be sliced on its axis 0)
    axes = {x % len(shape) for x in a["axes"]} if shape and shape[0] is not None else _axes(node, len(shape), "axes")
    if len(axes) != len(a["axes"]):
        raise IRError(f"{node!r}: an axis sliced twice")
    for ax, start, stop, step in zip(a["axes"], a["starts"], a["stops"], a["steps"]):
        shape[ax % len(shape)] = len(range(start, stop, step))
    return [(tuple(shape), layouts[0], _dtype(node))]


@rule("split")
def _split(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    (axis,) = _axes(node, len(shape))
    sizes = node.attrs["sizes"]
    if shape[axis] is not None and sum(sizes) != shape[axis]:
        raise IRError(f"{node!r}: pieces {sizes} do not add up to axis {axis} of {shape}")
    return [(shape[:axis] + (n,) + shape[axis + 1:], layout, _dtype(node)) for n in sizes]


def _new_axis(node: Node, shape: tuple, size: int):
    rank = len(shape) + 1
    axis = node.attrs["axis"] % rank
    if axis == 0 and (not shape or shape[0] is None) and not node.attrs.get("unbatched"):
        # (a tensor with no batch axis has its size there, or says so: ``unbatched``)
        raise IRError(f"{node!r}: a new axis before the batch axis")
    out = shape[:axis] + (size,) + shape[axis:]
    return out, node.out_layout or default_layout(rank)


@rule("expand_dims")
def _expand_dims(node, shapes, layouts):
    out, layout = _new_axis(node, shapes[0], 1)
    return [(out, layout, _dtype(node))]


@rule("stack")
def _stack(node, shapes, layouts):
    if any(len(s) != len(shapes[0]) for s in shapes):
        raise IRError(f"{node!r}: cannot stack {shapes}")
    out, layout = _new_axis(node, broadcast(node, shapes), len(shapes))
    return [(out, layout, _dtype(node))]


@rule("random_normal", "random_uniform")
def _random(node, shapes, layouts):
    out = (shapes[0][0], *node.attrs["shape"])
    return [(out, node.out_layout or default_layout(len(out)), "float32")]


@rule("full_like")
def _full_like(node, shapes, layouts):
    return [(shapes[0], layouts[0], node.attrs["dtype"] or _dtype(node))]


@rule("full")
def _full(node, shapes, layouts):
    out = (shapes[0][0], *node.attrs["shape"])
    return [(out, node.out_layout or default_layout(len(out)), node.attrs["dtype"])]


@rule("eye")
def _eye(node, shapes, layouts):
    a = node.attrs
    out = (shapes[0][0], *a["shape"], a["rows"], a["columns"])
    return [(out, node.out_layout or default_layout(len(out)), a["dtype"])]


@rule("einsum")
def _einsum(node, shapes, layouts):
    terms, out_term = einsum_terms(node.attrs["equation"])
    if len(terms) != len(shapes):
        raise IRError(f"{node!r}: {len(terms)} operands in the equation, {len(shapes)} given")
    sizes: dict[str, int | None] = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            raise IRError(f"{node!r}: {term!r} does not match the shape {shape}")
        for letter, size in zip(term, shape):
            known = sizes.setdefault(letter, size)
            if known != size and 1 not in (known, size):
                raise IRError(f"{node!r}: {letter!r} is {known} and {size}")
            if known == 1:
                sizes[letter] = size
    out = tuple(sizes[letter] for letter in out_term)
    return [(out, default_layout(len(out)), _dtype(node))]


def einsum_problem(equation: str, shapes: list[tuple]) -> str:
    """Why ``equation`` over operands of ``shapes`` (None: the batch size) has no faithful
    ``einsum`` node, or "": the output explicit, no ellipsis, one letter per axis, and the
    batch axis the first axis of every batched operand and of the output (and nowhere else)."""
    text = equation.replace(" ", "")
    left, arrow, out = text.partition("->")
    if "." in text:
        return f"an ellipsis (...) in {equation!r} is not translated yet"
    if not arrow:
        return f"{equation!r} has no explicit output (->); write it out"
    terms = left.split(",")
    if len(terms) != len(shapes) or not all(t.isalpha() and len(set(t)) == len(t) for t in terms + [out]):
        return (f"{equation!r} does not match {len(shapes)} operand(s) (one letter per axis, no letter "
                "twice in a term)")
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            return f"{term!r} names {len(term)} axes of a rank-{len(shape)} operand"
    batched = [t for t, s in zip(terms, shapes) if s and s[0] is None]
    batch = batched[0][0] if batched else ""
    others = [t for t, s in zip(terms, shapes) if not (s and s[0] is None)]
    if not batch or any(t[0] != batch for t in batched) or not out.startswith(batch) or \
            any(batch in t for t in others) or any(batch in t[1:] for t in terms + [out]):
        return f"{equation!r} must keep the batch axis as the first axis of every batched operand and of the output"
    return ""


def einsum_terms(equation: str) -> tuple[list[str], str]:
    """``"bij,bjk->bik"`` → (["bij", "bjk"], "bik"); the output is explicit, no ellipsis."""
    left, arrow, right = equation.replace(" ", "").partition("->")
    if not arrow or "." in equation:
        raise IRError(f"einsum {equation!r}: an explicit output (->) and no ellipsis are required")
    return left.split(","), right


@rule("extract_patches")
def _extract_patches(node, shapes, layouts):
    a, shape, layout = node.attrs, shapes[0], layouts[0]
    sizes = [conv_out_size(shape[ax], k, s, d, _pads(a["padding"], i))
             for i, (ax, k, s, d) in enumerate(zip(spatial_axes(layout), a["kernel_size"], a["strides"],
                                                   a["dilation"]))]
    channels = shape[channel_axis(layout)] * math.prod(a["kernel_size"])
    return [(_with(shape, layout, sizes, channels), layout, _dtype(node))]


@rule("arange")
def _arange(node, shapes, layouts):
    a = node.attrs
    if a["step"] == 0:
        raise IRError(f"{node!r}: step 0")
    return [((len(range(a["start"], a["stop"], a["step"])),), default_layout(1), a["dtype"])]


@rule("arange_like")
def _arange_like(node, shapes, layouts):
    a = node.attrs
    like = shapes[0]
    if not 0 <= a["axis"] < len(like):
        raise IRError(f"{node!r}: axis {a['axis']} out of range for {like}")
    if a["step"] <= 0:
        raise IRError(f"{node!r}: step {a['step']} (positive steps only)")
    size = like[a["axis"]]
    n = None if size is None else len(range(a["start"], size, a["step"]))
    return [((n,), default_layout(1), a["dtype"])]


@rule("tile")
def _tile(node, shapes, layouts):
    shape, reps = shapes[0], node.attrs["repeats"]
    if len(reps) != len(shape) - 1 or any(r < 1 for r in reps):
        raise IRError(f"{node!r}: one repeat >= 1 per axis after the batch axis of {shape}, got {reps}")
    out = (shape[0], *(None if d is None else d * r for d, r in zip(shape[1:], reps)))
    return [(out, default_layout(len(out)), _dtype(node))]


@rule("broadcast_to")
def _broadcast_to(node, shapes, layouts):
    x = shapes[0]
    sizes = [x[len(x) - len(node.attrs["shape"]) + i] if s == -1 else s for i, s in enumerate(node.attrs["shape"])]
    out = (shapes[1][0], *sizes)
    broadcast(node, [x, out])  # (raises where numpy's rules do not hold)
    return [(out, default_layout(len(out)), _dtype(node))]


@rule("slice_like")
def _slice_like(node, shapes, layouts):
    a = node.attrs
    shape, like = list(shapes[0]), shapes[1]
    if not (0 <= a["axis"] < len(shape) and 0 <= a["like_axis"] < len(like)):
        raise IRError(f"{node!r}: axes out of range for {shapes}")
    size, have = like[a["like_axis"]], shape[a["axis"]]
    shape[a["axis"]] = size if size is None or have is None else min(size, have)
    return [(tuple(shape), default_layout(len(shape)), _dtype(node))]


@rule("fft2")
def _fft2(node, shapes, layouts):
    if len(shapes[0]) < 3 or tuple(shapes[0]) != tuple(shapes[1]):
        raise IRError(f"{node!r}: real and imaginary parts of one shape, two axes besides the batch axis, "
                      f"got {shapes}")
    layout = default_layout(len(shapes[0]))
    return [(shapes[0], layout, _dtype(node)), (shapes[0], layout, _dtype(node))]


@rule("pixel_shuffle")
def _pixel_shuffle(node, shapes, layouts):
    shape, layout = shapes[0], layouts[0]
    r = node.attrs["factor"]
    channels = shape[channel_axis(layout)]
    if channels is not None and channels % (r * r) != 0:  # (a consistency check: != marks nothing)
        raise IRError(f"{node.name}: pixel shuffle by {r} needs channels divisible by {r * r}, got {channels}")
    sizes = [None if shape[ax] is None else shape[ax] * r for ax in spatial_axes(layout)]
    return [(_with(shape, layout, sizes, None if channels is None else channels // (r * r)), layout)]
