"""The canonical shape of every param, read from the ops table's layout letters.

A param's layout (``"kernel: HWIO"``) names each axis with a letter; this module
resolves the letters against a node's attributes and input shape:

``D``/``H``/``W`` the kernel's spatial sizes (``kernel_size``); ``1`` a literal 1;
``I`` input channels per group; ``O`` output channels (``filters`` / ``units``, or
``I * M`` for a depthwise bias); ``M`` the depth multiplier; ``K`` the channels after a
depthwise step (``I * M``); ``C`` the size of each normalised axis; ``A`` the input's
non-batch shape with 1 on shared axes (PReLU); ``V``/``E`` vocabulary and embedding
size; ``S`` the ``shape`` attribute (a custom layer's weight); ``G`` gates x units (``GATES``); ``U`` units; ``B`` the two bias rows of a GRU
with ``reset_after``. Attention: ``Q``/``Y``/``Z`` the features of the query, key and
value inputs, ``N`` heads, ``J`` key_dim, ``L`` value_dim (key_dim when None), ``P`` the
output features (the query's when None). ``X`` the sizes of the kept axes of a
Normalization, in axis order.

The checkpoint readers check every tensor against these shapes before anything is
converted, so a mismatch names the layer and both shapes.
"""

from __future__ import annotations

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Node, Value
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first

#: gates per recurrent cell (Keras packs them along the last kernel axis): the table's fact
GATES = {name: spec.gates for name, spec in ops_table.all_ops().items() if spec.gates}


def source_shape(value: Value) -> tuple:
    """``value``'s shape in the source (channels-last) layout."""
    if value.layout and is_channels_first(value.layout):
        return Layout(value.layout, channels_last_of(value.layout)).shape(value.shape)
    return tuple(value.shape)


def source_axis(value: Value, axis: int) -> int:
    """An axis of ``value``'s current layout, counted in the source layout (non-negative)."""
    rank = len(value.shape)
    axis %= rank
    if value.layout and is_channels_first(value.layout):
        return Layout(value.layout, channels_last_of(value.layout)).axis(axis)
    return axis


def source_op(node: Node) -> tuple[str, dict]:
    """The op and attrs of the source layer (a node split by a pass records its original)."""
    return (node.split_from.op, node.split_from.attrs) if node.split_from else (node.op, node.attrs)


def param_names(node: Node) -> list[str]:
    """The source layer's params in the ops table's (= Keras') order."""
    op, attrs = source_op(node)
    return [p.name for p in ops_table.get(op).active_params(attrs)]


def expected_shapes(node: Node) -> dict[str, tuple[int, ...]]:
    """``{param: canonical shape}`` of the source layer ``node`` came from."""
    op, attrs = source_op(node)
    x = node.split_from.input if node.split_from else (node.inputs[0] if node.inputs else None)
    if ops_table.get(op).wraps:  # a wrapper holds its inner layer's params twice
        inner = attrs["layer"]
        shapes = _resolve(inner["op"], inner["attrs"], x)
        return {f"{d}.{k}": v for d in ("forward", "backward") for k, v in shapes.items()}
    return _resolve(op, attrs, x, node.inputs)


def _resolve(op: str, attrs: dict, x: Value, inputs: list[Value] | None = None) -> dict[str, tuple[int, ...]]:
    spec = ops_table.get(op)
    shape = source_shape(x) if x is not None else ()
    channels = shape[-1] if shape else None
    out: dict[str, tuple[int, ...]] = {}
    for p in spec.active_params(attrs):
        dims: list[int] = []
        spatial = iter(attrs.get("kernel_size") or ())
        for letter in p.layout:
            if letter in _ATTENTION_LETTERS:
                dims.append(_attention_letter(letter, attrs, inputs or [x]))
                continue
            dims.extend(_letter(letter, op, attrs, x, shape, channels, spatial, p.name))
        out[p.name] = tuple(d if isinstance(d, int) else int(d) for d in dims)  # (sizes keep their source)
    return out


_ATTENTION_LETTERS = "QYZNJLP"


def _attention_letter(letter: str, attrs: dict, inputs: list[Value]) -> int:
    """Sizes of a MultiHeadAttention's einsum kernels (inputs: query, value, extras)."""
    query, value = inputs[0], inputs[1] if len(inputs) > 1 else inputs[0]
    extra = dict(zip(attrs.get("extra_inputs") or (), inputs[2:]))
    key = extra.get("key", value)
    sizes = {"Q": query.shape[-1], "Y": key.shape[-1], "Z": value.shape[-1], "N": attrs["num_heads"],
             "J": attrs["key_dim"], "L": attrs.get("value_dim") or attrs["key_dim"],
             "P": attrs.get("output_dim") or query.shape[-1]}
    return sizes[letter]


def _letter(letter, op, attrs, x, shape, channels, spatial, pname) -> list[int]:
    groups = attrs.get("groups") or 1
    mult = attrs.get("depth_multiplier") or 1
    if letter == "1":
        return [1]
    if letter == "S":
        return list(attrs["shape"])
    if letter in "DHW":
        if pname == "pointwise_kernel":
            return [1]
        return [next(spatial)]
    if letter == "I":
        return [channels // groups]
    if letter == "M":
        return [mult]
    if letter == "K":
        return [channels * mult]
    if letter == "O":
        if "units" in attrs:
            return [attrs["units"]]
        if "filters" in attrs:
            return [attrs["filters"]]
        return [channels * mult]
    if letter == "C":
        axes = attrs["axis"]
        axes = axes if isinstance(axes, (tuple, list)) else (axes,)
        return [shape[source_axis(x, a)] for a in axes]
    if letter == "X":
        axes = sorted({source_axis(x, a) for a in attrs["axis"]})
        return [shape[a] for a in axes]
    if letter == "A":
        shared = {source_axis(x, a) for a in (attrs.get("shared_axes") or ())}
        return [1 if i in shared else s for i, s in enumerate(shape) if i > 0]
    if letter == "V":
        return [attrs["input_dim"]]
    if letter == "E":
        return [attrs["output_dim"]]
    if letter == "G":  # (a ConvLSTM's units are its filters)
        return [GATES[op] * attrs.get("units", attrs.get("filters"))]
    if letter == "U":
        return [attrs.get("units", attrs.get("filters"))]
    if letter == "B":
        return [2] if attrs.get("reset_after", True) else []
    raise ValueError(f"{op}.{pname}: unknown layout letter {letter!r}")
