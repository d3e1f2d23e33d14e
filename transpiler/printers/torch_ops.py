"""PyTorch emitters: one per op family, registered by decorator.

An emitter turns an IR node (after the torch passes: channels-first, explicit
padding) into an ``Emission``: the ``nn`` module built in ``__init__`` (if any), the
code ``forward`` runs, the state_dict entries with the transform from each canonical
param, and the statements that reproduce Keras' default initializers.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Callable

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Node
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.ir.passes.shape_inference import channel_axis, spatial_axes
from transpiler.printers.code import Code, call, lit, size_arg
from transpiler.weights.transforms import Transform


@dataclass(frozen=True)
class StateEntry:
    """One torch state_dict tensor: ``key`` under the module, from canonical ``source``.

    ``source`` is None for a torch buffer with no source counterpart; it holds
    ``constant`` (BatchNorm's ``num_batches_tracked``).
    """

    key: str
    source: str | None
    transform: Transform
    constant: int | float | None = None


@dataclass
class Emission:
    """What one node becomes in the generated module.

    ``call(ins)`` gives the output expression from the input expressions; ``statements
    (ins, outs)`` is used instead for nodes with several outputs. ``unary`` marks a
    one-input function that may wrap an inlined expression (``F.relu(self.conv(x))``).
    ``parameter`` is set when the attribute is a bare ``nn.Parameter``.
    """

    module: str | None = None
    call: Callable[[list[str]], str] | None = None
    statements: Callable[[list[str], list[str]], list[str]] | None = None
    state: list[StateEntry] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    unary: bool = False
    inline_anywhere: bool = False
    parameter: bool = False
    imports: set[str] = field(default_factory=set)
    #: extra bare parameters next to the module: (suffix, canonical param, size, init)
    extra_params: list[tuple[str, str, int, str]] = field(default_factory=list)
    #: statements for ``__init__`` right after the module is built
    setup: list[str] = field(default_factory=list)


Emitter = Callable[[Node, str], Emission]
_EMITTERS: dict[str, Emitter] = {}


def emitter(*ops: str) -> Callable[[Emitter], Emitter]:
    """Register a torch emitter for ``ops`` (refuses duplicates and unknown ops)."""

    def deco(fn: Emitter) -> Emitter:
        for name in ops:
            ops_table.get(name)
            if name in _EMITTERS:
                raise ValueError(f"torch emitter for {name} registered twice")
            _EMITTERS[name] = fn
        return fn

    return deco


def has_emitter(op: str) -> bool:
    return op in _EMITTERS


def emit(node: Node) -> Emission:
    """The emission for ``node``; ``self.<name>`` refers to its module."""
    return _EMITTERS[node.op](node, f"self.{node.name}")


def emit_as(node: Node, ref: str) -> Emission:
    """The emission for ``node`` whose module the code reaches as ``ref`` (``self.blocks[0]``)."""
    return _EMITTERS[node.op](node, ref)


def state_entries(node: Node) -> list[StateEntry]:
    return emit(node).state


# ---------------------------------------------------------------------------------
# Initializers: Keras' defaults (or the user's) reproduced with torch.nn.init.
# ---------------------------------------------------------------------------------
_INIT = {
    "glorot_uniform": "nn.init.xavier_uniform_({t})",
    "he_uniform": 'nn.init.kaiming_uniform_({t}, nonlinearity="relu")',
    "lecun_uniform": 'nn.init.kaiming_uniform_({t}, nonlinearity="linear")',
    "zeros": "nn.init.zeros_({t})",
    "ones": "nn.init.ones_({t})",
    "orthogonal": "nn.init.orthogonal_({t})",
}


def init_line(node: Node, key: str, tensor: str, default: str) -> str:
    """The init statement for ``tensor`` from the user's ``key`` initializer or ``default``."""
    chosen = node.meta.get("initializers", {}).get(key, default)
    name = chosen if isinstance(chosen, str) else None
    if name is not None:
        name = {"GlorotUniform": "glorot_uniform", "HeUniform": "he_uniform", "Zeros": "zeros",
                "Ones": "ones", "Orthogonal": "orthogonal", "LecunUniform": "lecun_uniform",
                "zero": "zeros", "one": "ones"}.get(name, name)
    if name not in _INIT:
        node.meta.setdefault("init_warnings", []).append(f"{key}={chosen!r} not reproduced; "
                                                         f"{default} used")
        name = default
    return _INIT[name].format(t=tensor)


def _bias_inits(node: Node, m: str) -> list[str]:
    return [init_line(node, "bias_initializer", f"{m}.bias", "zeros")] if node.attrs.get("use_bias") else []


def atom(expr: str) -> str:
    """``expr`` safe to put in front of ``.method()``, ``[...]`` or an operator.

    An input expression may be an inlined binary expression (``a + b``); postfix
    syntax on it would bind to ``b`` only.
    """
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return f"({expr})"
    if isinstance(tree, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant)):
        return expr
    return f"({expr})"


def _channels(node: Node) -> int:
    x = node.inputs[0]
    return x.shape[channel_axis(x.layout)]


def _torch_padding(padding) -> dict:
    if padding == "valid":
        return {}
    if padding == "same":
        return {"padding": "same"}
    pads = tuple(b for b, _ in padding)
    return {"padding": size_arg(pads)} if any(pads) else {}


# ---------------------------------------------------------------------------------
# Dense and convolutions
# ---------------------------------------------------------------------------------
@emitter("dense")
def emit_dense_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    kwargs = {} if a["use_bias"] else {"bias": False}
    module = call("nn.Linear", lit(node.inputs[0].shape[-1]), lit(a["units"]), **kwargs)
    return _kernel_emission(node, m, module, Transform.TRANSPOSE)


@emitter("conv1d", "conv2d", "conv3d")
def emit_conv_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    rank = node.spec.rank
    module = call(f"nn.Conv{rank}d", lit(_channels(node)), lit(a["filters"]),
                  kernel_size=size_arg(a["kernel_size"]), **_window_kwargs(a, groups=a["groups"]))
    return _kernel_emission(node, m, module, Transform.CONV_KERNEL)


def _window_kwargs(a: dict, groups: int = 1, output_padding=None) -> dict:
    """The torch keyword arguments of a convolution that differ from torch's defaults."""
    kwargs = {}
    if any(s != 1 for s in a["strides"]):
        kwargs["stride"] = size_arg(a["strides"])
    kwargs.update(_torch_padding(a["padding"]))
    if output_padding is not None and any(output_padding):
        kwargs["output_padding"] = size_arg(output_padding)
    if any(d != 1 for d in a["dilation"]):
        kwargs["dilation"] = size_arg(a["dilation"])
    if groups != 1:
        kwargs["groups"] = groups
    if not a["use_bias"]:
        kwargs["bias"] = False
    return kwargs


def _kernel_emission(node: Node, m: str, module: str, transform: Transform) -> Emission:
    """A module with a (kernel, bias) pair initialised like Keras (glorot, zeros)."""
    state = [StateEntry("weight", "kernel", transform)]
    if node.attrs["use_bias"]:
        state.append(StateEntry("bias", "bias", Transform.IDENTITY))
    init = [init_line(node, "kernel_initializer", f"{m}.weight", "glorot_uniform"), *_bias_inits(node, m)]
    return Emission(module, lambda ins: f"{m}({ins[0]})", state=state, init=init)


@emitter("depthwise_conv2d")
def emit_depthwise_conv2d_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    cin = _channels(node)
    mult = a["depth_multiplier"]
    module = call("nn.Conv2d", lit(cin), lit(cin * mult), kernel_size=size_arg(a["kernel_size"]),
                  **_window_kwargs(a, groups=cin))
    state = [StateEntry("weight", "kernel", Transform.DEPTHWISE_KERNEL)]
    if a["use_bias"]:
        state.append(StateEntry("bias", "bias", Transform.IDENTITY))
    kh, kw = a["kernel_size"]
    key = "depthwise_initializer"
    chosen = node.meta.get("initializers", {}).get(key, "glorot_uniform")
    if chosen in ("glorot_uniform", "GlorotUniform") and mult == 1:
        # Keras' glorot fans on the (kh, kw, in, 1) kernel sum to torch's on (in, 1, kh, kw)
        init, imports = [f"nn.init.xavier_uniform_({m}.weight)"], set()
    elif chosen in ("glorot_uniform", "GlorotUniform"):
        # Keras' glorot fans on the (kh, kw, in, mult) kernel, not torch's on (in*mult, 1, kh, kw).
        bound = f"math.sqrt(6.0 / ({(cin + mult) * kh * kw}))"
        init = [f"nn.init.uniform_({m}.weight, -{bound}, {bound})"]
        imports = {"import math"}
    else:
        init, imports = [init_line(node, key, f"{m}.weight", "glorot_uniform")], set()
    return Emission(module, lambda ins: f"{m}({ins[0]})", state=state,
                    init=init + _bias_inits(node, m), imports=imports)


@emitter("conv_transpose1d", "conv_transpose2d")
def emit_conv_transpose_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    rank = node.spec.rank
    module = call(f"nn.ConvTranspose{rank}d", lit(_channels(node)), lit(a["filters"]),
                  kernel_size=size_arg(a["kernel_size"]),
                  **_window_kwargs(a, output_padding=a["output_padding"]))
    return _kernel_emission(node, m, module, Transform.CONV_TRANSPOSE_KERNEL)


# ---------------------------------------------------------------------------------
# Pooling, padding, cropping, resampling
# ---------------------------------------------------------------------------------
@emitter("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d")
def emit_pool_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    rank = node.spec.rank
    kind = "Max" if node.op.startswith("max") else "Avg"
    kwargs = {}
    if a["strides"] != a["pool_size"]:
        kwargs["stride"] = size_arg(a["strides"])
    kwargs.update(_torch_padding(a["padding"]))
    if a["ceil_mode"]:
        kwargs["ceil_mode"] = True
    x = node.inputs[0]
    if kind == "Avg" and rank == 3 and "padding" in kwargs and any(
            k > x.shape[ax] for k, ax in zip(a["pool_size"], spatial_axes(x.layout))):
        # torch's avg_pool3d refuses a window larger than the unpadded input: pad
        # explicitly and divide by the same pooling of ones (the padding never counts)
        pads = _torch_pads(a["padding"])
        ones = (1, 1) + tuple(x.shape[ax] for ax in spatial_axes(x.layout))
        extra = "".join(f", {k}={lit(v)}" for k, v in kwargs.items() if k != "padding")

        def pooled(t: str) -> str:
            return f"F.avg_pool3d(F.pad({t}, {lit(pads)}), {lit(size_arg(a['pool_size']))}{extra})"

        return Emission(None, lambda ins: f"{pooled(ins[0])} / {pooled(f'{atom(ins[0])}.new_ones({lit(ones)})')}")
    if kind == "Avg" and "padding" in kwargs:
        kwargs["count_include_pad"] = False
    module = call(f"nn.{kind}Pool{rank}d", lit(size_arg(a["pool_size"])), **kwargs)
    return Emission(module, lambda ins: f"{m}({ins[0]})")


@emitter("global_avg_pool1d", "global_avg_pool2d", "global_avg_pool3d",
         "global_max_pool1d", "global_max_pool2d", "global_max_pool3d")
def emit_global_pool_torch(node: Node, m: str) -> Emission:
    dims = tuple(spatial_axes(node.inputs[0].layout))
    fn = "mean" if "avg" in node.op else "amax"
    dim = dims[0] if len(dims) == 1 else dims
    keep = ", keepdim=True" if node.attrs["keepdims"] else ""
    return Emission(None, lambda ins: f"{atom(ins[0])}.{fn}(dim={lit(dim)}{keep})", unary=True)


def _torch_pads(pairs) -> tuple:
    """((b0, a0), (b1, a1)) per spatial axis → torch's (b_last, a_last, ..., b0, a0)."""
    out: list[int] = []
    for b, a in reversed(pairs):
        out += [b, a]
    return tuple(out)


@emitter("pad1d", "pad2d", "pad3d")
def emit_pad_torch(node: Node, m: str) -> Emission:
    rank = node.spec.rank
    pads = _torch_pads(node.attrs["pads"])
    value = node.attrs["value"]
    if node.meta.get("inserted"):
        # padding the translation added (TF's asymmetric 'same'): inline F.pad
        extra = "" if value == 0.0 else f", value={lit(value)}"
        return Emission(None, lambda ins: f"F.pad({ins[0]}, {lit(pads)}{extra})", unary=True,
                        inline_anywhere=True)
    if value == 0.0:
        module = call(f"nn.ZeroPad{rank}d", lit(pads))
    else:
        module = call(f"nn.ConstantPad{rank}d", lit(pads), lit(value))
    return Emission(module, lambda ins: f"{m}({ins[0]})")


@emitter("crop1d", "crop2d", "crop3d")
def emit_crop_torch(node: Node, m: str) -> Emission:
    x = node.inputs[0]
    axes = spatial_axes(x.layout)
    slices = [":"] * len(x.layout)
    for ax, (b, e) in zip(axes, node.attrs["cropping"]):
        slices[ax] = f"{b or ''}:{-e if e else ''}"
    while slices and slices[-1] == ":":
        slices.pop()
    if not slices:  # nothing cropped (Cropping2D(0)): the input itself, not `x[]`
        return Emission(None, lambda ins: ins[0], unary=True)
    return Emission(None, lambda ins: f"{atom(ins[0])}[{', '.join(slices)}]", unary=True)


@emitter("upsample1d", "upsample2d")
def emit_upsample_torch(node: Node, m: str) -> Emission:
    mode = node.attrs["interpolation"]
    kwargs = {"scale_factor": size_arg(node.attrs["size"]), "mode": mode}
    if mode == "bilinear":
        kwargs["align_corners"] = False  # Keras/TF resize uses half-pixel centres
    return Emission(call("nn.Upsample", **kwargs), lambda ins: f"{m}({ins[0]})")


# ---------------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------------
@emitter("flatten")
def emit_flatten_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"{atom(ins[0])}.flatten(1)", unary=True)


@emitter("reshape")
def emit_reshape_torch(node: Node, m: str) -> Emission:
    shape = node.attrs["shape"]
    dims = ", ".join(str(d) for d in shape)

    def fn(ins):
        x = atom(ins[0])
        first = f"{x}.shape[0]" if -1 in shape else "-1"
        return f"{x}.reshape({first}, {dims})"

    return Emission(None, fn, unary=True)


@emitter("transpose")
def emit_transpose_torch(node: Node, m: str) -> Emission:
    perm = node.attrs["perm"]
    if perm == tuple(range(len(perm))):  # kept only for its layout (fold_transposes)
        return Emission(None, lambda ins: ins[0], unary=True)
    dims = ", ".join(str(p) for p in perm)
    return Emission(None, lambda ins: f"{atom(ins[0])}.permute({dims})", unary=True)


@emitter("repeat_vector")
def emit_repeat_vector_torch(node: Node, m: str) -> Emission:
    n = node.attrs["n"]
    return Emission(None, lambda ins: f"{atom(ins[0])}.unsqueeze(1).repeat(1, {n}, 1)", unary=True)


@emitter("identity")
def emit_identity_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: ins[0], unary=True)


@emitter("variable")
def emit_variable_torch(node: Node, m: str) -> Emission:
    """``self.add_weight(shape=...)`` → an ``nn.Parameter`` of the module (frozen when the
    Keras weight is not trainable), initialised like Keras' initializer."""
    shape = tuple(node.attrs["shape"])
    frozen = "" if node.attrs["trainable"] else ", requires_grad=False"
    module = f"nn.Parameter(torch.empty({', '.join(str(d) for d in shape)}){frozen})"
    init, imports = variable_init(node, m, shape)
    return Emission(module, lambda ins: m, state=[StateEntry("", "value", Transform.IDENTITY)],
                    init=init, parameter=True, inline_anywhere=True, imports=imports)


def _keras_fans(shape: tuple) -> tuple[int, int]:
    """Keras' ``compute_fans``: (fan_in, fan_out) of a weight of ``shape``."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2]) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


#: Keras' variance-scaling initializers: (scale, fan mode, distribution)
_VARIANCE_SCALING = {"glorot_uniform": (1.0, "avg", "uniform"), "glorot_normal": (1.0, "avg", "normal"),
                     "he_uniform": (2.0, "in", "uniform"), "he_normal": (2.0, "in", "normal"),
                     "lecun_uniform": (1.0, "in", "uniform"), "lecun_normal": (1.0, "in", "normal")}


def variable_init(node: Node, m: str, shape: tuple) -> tuple[list[str], set[str]]:
    """Init statements reproducing a Keras initializer (by name) on a weight of ``shape``."""
    chosen = node.meta.get("initializers", {}).get("initializer") or "glorot_uniform"
    name = chosen if isinstance(chosen, str) else None
    if name is not None:
        name = "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))
        name = {"zero": "zeros", "one": "ones"}.get(name, name)
    if name == "zeros" or name == "ones":
        return [f"nn.init.{name}_({m})"], set()
    if name == "random_normal":
        return [f"nn.init.normal_({m}, 0.0, 0.05)"], set()
    if name == "random_uniform":
        return [f"nn.init.uniform_({m}, -0.05, 0.05)"], set()
    if name == "truncated_normal":
        return [f"nn.init.trunc_normal_({m}, 0.0, 0.05, -0.1, 0.1)"], set()
    if name not in _VARIANCE_SCALING:
        node.meta.setdefault("init_warnings", []).append(f"initializer={chosen!r} not reproduced; "
                                                         "glorot_uniform used")
        name = "glorot_uniform"
    scale, mode, dist = _VARIANCE_SCALING[name]
    fan_in, fan_out = _keras_fans(shape)
    fan = (fan_in + fan_out) / 2 if mode == "avg" else fan_in
    if dist == "uniform":
        limit = f"math.sqrt({3.0 * scale} / {lit(float(fan))})"
        return [f"nn.init.uniform_({m}, -{limit}, {limit})"], {"import math"}
    # Keras draws from a normal truncated at two standard deviations, rescaled
    std = f"math.sqrt({scale} / {lit(float(fan))}) / 0.87962566103423978"
    return [f"std = {std}", f"nn.init.trunc_normal_({m}, 0.0, std, -2 * std, 2 * std)"], {"import math"}


# ---------------------------------------------------------------------------------
# Regularisation and normalisation
# ---------------------------------------------------------------------------------
@emitter("dropout")
def emit_dropout_torch(node: Node, m: str) -> Emission:
    return Emission(call("nn.Dropout", lit(node.attrs["rate"])), lambda ins: f"{m}({ins[0]})")


@emitter("spatial_dropout")
def emit_spatial_dropout_torch(node: Node, m: str) -> Emission:
    rank = len(node.inputs[0].layout) - 2
    return Emission(call(f"nn.Dropout{rank}d", lit(node.attrs["rate"])), lambda ins: f"{m}({ins[0]})")


def _moved_to_dim1(node: Node, axis: int):
    """Wrap a channel-dim-1 module call for a tensor whose feature axis is ``axis``."""
    rank = len(node.inputs[0].shape)
    if axis in (1,) or rank == 2:
        return lambda expr: expr, lambda expr: expr
    return (lambda expr: f"{atom(expr)}.movedim({axis}, 1)", lambda expr: f"{atom(expr)}.movedim(1, {axis})")


@emitter("batch_norm")
def emit_batch_norm_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    x = node.inputs[0]
    rank = len(x.shape)
    axis = a["axis"] % rank
    channels = x.shape[axis]
    dims = {2: 1, 3: 1, 4: 2, 5: 3}[rank]
    kwargs = {"eps": a["epsilon"], "momentum": round(1.0 - a["momentum"], 10)}
    center, scale = a["center"], a["scale"]
    if not (center and scale):
        kwargs["affine"] = False
    module = call(f"nn.BatchNorm{dims}d", lit(channels), **kwargs)
    state = [StateEntry("running_mean", "moving_mean", Transform.IDENTITY),
             StateEntry("running_var", "moving_variance", Transform.IDENTITY),
             StateEntry("num_batches_tracked", None, Transform.IDENTITY, constant=0)]
    if center and scale:
        state = [StateEntry("weight", "gamma", Transform.IDENTITY),
                 StateEntry("bias", "beta", Transform.IDENTITY)] + state
    pre, post = _moved_to_dim1(node, axis)
    view = [1] * rank
    view[1] = -1
    view_text = ", ".join(str(v) for v in view)

    def fn(ins):
        expr = f"{m}({pre(ins[0])})"
        if scale and not center:
            expr = f"{expr} * {m}_gamma.view({view_text})"
        if center and not scale:
            expr = f"{expr} + {m}_beta.view({view_text})"
        return post(expr)

    em = Emission(module, fn, state=state)
    if center != scale:
        # torch's affine is both terms or none: the kept one is a parameter of its own.
        em.extra_params.append(("gamma", "gamma", channels, "ones") if scale else ("beta", "beta", channels, "zeros"))
    return em


@emitter("layer_norm")
def emit_layer_norm_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    x = node.inputs[0]
    rank = len(x.shape)
    axes = sorted(ax % rank for ax in a["axis"])

    def trailing(ax):
        return ax == list(range(rank - len(ax), rank))

    def moved(src: int, dst: int):
        return lambda e: f"{atom(e)}.movedim({src}, {dst})"

    pre = post = (lambda e: e)
    shape = tuple(x.shape[ax] for ax in axes)
    if len(axes) == 1:
        if not trailing(axes):
            pre, post = moved(axes[0], -1), moved(-1, axes[0])
    else:
        # gamma/beta have the normalised axes' sizes in the source (Keras) axis order.
        to_source = Layout(x.layout, channels_last_of(x.layout)) if is_channels_first(x.layout) else None
        in_source_order = to_source is None or all(
            to_source.axis(p) < to_source.axis(q) for p, q in zip(axes, axes[1:]))
        if not (trailing(axes) and in_source_order):
            src_axes = sorted(to_source.axis(ax) for ax in axes) if to_source is not None else axes
            if to_source is None or not trailing(src_axes):
                # move the normalised axes last, in the source order, and back
                order = sorted(axes, key=to_source.axis) if to_source is not None else axes
                perm = [ax for ax in range(rank) if ax not in axes] + order
                dims = ", ".join(str(p) for p in perm)
                back = ", ".join(str(perm.index(i)) for i in range(rank))
                pre = lambda e: f"{atom(e)}.permute({dims})"  # noqa: E731
                post = lambda e: f"{atom(e)}.permute({back})"  # noqa: E731
                shape = tuple(x.shape[ax] for ax in order)
            else:
                # normalise in the source layout: channels last again, then back
                pre, post = moved(1, -1), moved(-1, 1)
                src_shape = to_source.shape(x.shape)
                shape = tuple(src_shape[ax] for ax in src_axes)
    kwargs = {"eps": a["epsilon"]}
    if not a["scale"]:
        kwargs["elementwise_affine"] = False
    elif not a["center"]:
        kwargs["bias"] = False
    module = call("nn.LayerNorm", lit(shape[0] if len(shape) == 1 else shape), **kwargs)
    state = []
    if a["scale"]:
        state.append(StateEntry("weight", "gamma", Transform.IDENTITY))
        if a["center"]:
            state.append(StateEntry("bias", "beta", Transform.IDENTITY))
    em = Emission(module, lambda ins: post(f"{m}({pre(ins[0])})"), state=state)
    if not a["scale"] and a["center"]:
        em.extra_params.append(("beta", "beta", shape[0] if len(shape) == 1 else shape, "zeros"))
        em.call = lambda ins: post(f"{m}({pre(ins[0])}) + {m}_beta")
    return em


@emitter("rescaling")
def emit_rescaling_torch(node: Node, m: str) -> Emission:
    scale, offset = node.attrs["scale"], node.attrs["offset"]
    x = node.inputs[0]
    channels_first = is_channels_first(x.layout)

    def const(value) -> str:
        """A per-channel list as a tensor on the input's device, broadcast over the channel axis."""
        values = [float(v) for v in value]
        text = f"{{x}}.new_tensor({lit(values)})"
        if channels_first:
            view = ["1"] * len(x.shape)
            view[1] = "-1"
            text += f".view({', '.join(view)})"
        return text

    if isinstance(scale, (list, tuple)) or isinstance(offset, (list, tuple)):
        def per_channel(ins):
            xe = atom(ins[0])
            if isinstance(scale, (list, tuple)):
                expr = f"{xe} * {const(scale).format(x=xe)}"
            else:
                expr = xe if scale == 1.0 else f"{xe} * {lit(float(scale))}"
            if isinstance(offset, (list, tuple)):
                expr = f"{expr} + {const(offset).format(x=xe)}"
            elif offset:
                expr = f"{expr} + {lit(float(offset))}"
            return f"({expr})"

        return Emission(None, per_channel, unary=True)

    def fn(ins):
        expr = atom(ins[0])
        inverse = 1.0 / scale if scale else 0.0
        if scale != 1.0 and inverse == round(inverse) and abs(inverse) > 1:
            expr = f"{expr} / {lit(float(round(inverse)))}"  # the user wrote 1 / 255
        elif scale != 1.0:
            expr = f"{expr} * {lit(float(scale))}"
        if offset:
            expr = f"{expr} + {lit(float(offset))}" if offset > 0 else f"{expr} - {lit(float(-offset))}"
        return f"({expr})" if expr != atom(ins[0]) else ins[0]

    return Emission(None, fn, unary=True)


# ---------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------
def _fn(template: str) -> Emitter:
    def emit_activation_torch(node: Node, m: str) -> Emission:
        return Emission(None, lambda ins: template.format(x=ins[0], **node.attrs), unary=True)

    return emit_activation_torch


emitter("sigmoid")(_fn("torch.sigmoid({x})"))
emitter("hard_sigmoid")(_fn("F.hardsigmoid({x})"))
emitter("tanh")(_fn("torch.tanh({x})"))
emitter("selu")(_fn("F.selu({x})"))
emitter("silu")(_fn("F.silu({x})"))
emitter("softplus")(_fn("F.softplus({x})"))
emitter("softsign")(_fn("F.softsign({x})"))


@emitter("relu")
def emit_relu_torch(node: Node, m: str) -> Emission:
    mx, slope, thr = node.attrs["max_value"], node.attrs["negative_slope"], node.attrs["threshold"]
    if thr == 0.0 and slope == 0.0:
        if mx is None:
            return Emission(None, lambda ins: f"F.relu({ins[0]})", unary=True)
        if mx == 6.0:
            return Emission(None, lambda ins: f"F.relu6({ins[0]})", unary=True)
        return Emission(None, lambda ins: f"{atom(ins[0])}.clamp(0.0, {lit(mx)})", unary=True)
    if thr == 0.0 and mx is None:
        return Emission(None, lambda ins: f"F.leaky_relu({ins[0]}, {lit(slope)})", unary=True)

    def general(ins):
        x = atom(ins[0])
        expr = f"torch.where({x} > {lit(thr)}, {x}, {lit(slope)} * ({x} - {lit(thr)}))"
        return expr if mx is None else f"{expr}.clamp(max={lit(mx)})"

    return Emission(None, general, unary=True)


@emitter("gelu")
def emit_gelu_torch(node: Node, m: str) -> Emission:
    if node.attrs["approximate"]:
        return Emission(None, lambda ins: f'F.gelu({ins[0]}, approximate="tanh")', unary=True)
    return Emission(None, lambda ins: f"F.gelu({ins[0]})", unary=True)


@emitter("elu")
def emit_elu_torch(node: Node, m: str) -> Emission:
    alpha = node.attrs["alpha"]
    if alpha == 1.0:
        return Emission(None, lambda ins: f"F.elu({ins[0]})", unary=True)
    return Emission(None, lambda ins: f"F.elu({ins[0]}, alpha={lit(alpha)})", unary=True)


@emitter("leaky_relu")
def emit_leaky_relu_torch(node: Node, m: str) -> Emission:
    slope = node.attrs["negative_slope"]
    return Emission(None, lambda ins: f"F.leaky_relu({ins[0]}, negative_slope={lit(slope)})", unary=True)


@emitter("softmax", "log_softmax")
def emit_softmax_torch(node: Node, m: str) -> Emission:
    rank = len(node.inputs[0].shape)
    axis = node.attrs["axis"]
    dim = -1 if axis % rank == rank - 1 else axis % rank
    fn = "F.softmax" if node.op == "softmax" else "F.log_softmax"
    return Emission(None, lambda ins: f"{fn}({ins[0]}, dim={dim})", unary=True)


@emitter("prelu")
def emit_prelu_torch(node: Node, m: str) -> Emission:
    x = node.inputs[0]
    rank = len(x.shape)
    shared = {ax % rank for ax in (node.attrs["shared_axes"] or ())}
    channel = 1
    init = [init_line(node, "alpha_initializer", f"{m}.weight", "zeros")]
    if rank == 2 or shared == set(range(2, rank)):
        module = call("nn.PReLU", num_parameters=x.shape[channel])
        # Keras' alpha keeps the shared axes as 1s, e.g. (1, 1, C); nn.PReLU's weight is (C,).
        state = [StateEntry("weight", "alpha", Transform.FLATTEN)]
        return Emission(module, lambda ins: f"{m}({ins[0]})", state=state, init=init)
    shape = tuple(1 if ax in shared else x.shape[ax] for ax in range(1, rank))
    module = f"nn.Parameter(torch.zeros{lit(shape)})"
    transform = Transform.CHANNELS_FIRST if x.layout and x.layout[1] == "C" else Transform.IDENTITY
    return Emission(module, lambda ins: f"F.relu({ins[0]}) - {m} * F.relu(-{atom(ins[0])})",
                    state=[StateEntry("", "alpha", transform)], parameter=True,
                    init=[init_line(node, "alpha_initializer", m, "zeros")])


# ---------------------------------------------------------------------------------
# Merges
# ---------------------------------------------------------------------------------
def _infix(op: str) -> Emitter:
    def emit_merge_torch(node: Node, m: str) -> Emission:
        return Emission(None, lambda ins: f" {op} ".join(ins))

    return emit_merge_torch


emitter("add")(_infix("+"))
emitter("subtract")(_infix("-"))
emitter("multiply")(_infix("*"))


@emitter("average")
def emit_average_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"({' + '.join(ins)}) / {len(ins)}")


@emitter("maximum", "minimum")
def emit_extremum_torch(node: Node, m: str) -> Emission:
    fn = "torch.maximum" if node.op == "maximum" else "torch.minimum"

    def nest(ins):
        expr = ins[0]
        for other in ins[1:]:
            expr = f"{fn}({expr}, {other})"
        return expr

    return Emission(None, nest)


@emitter("concat")
def emit_concat_torch(node: Node, m: str) -> Emission:
    dim = node.attrs["axis"] % len(node.inputs[0].shape)
    return Emission(None, lambda ins: f"torch.cat([{', '.join(ins)}], dim={dim})")


# ---------------------------------------------------------------------------------
# Embedding and recurrent layers
# ---------------------------------------------------------------------------------
@emitter("embedding")
def emit_embedding_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    module = call("nn.Embedding", lit(a["input_dim"]), lit(a["output_dim"]))
    cast = not node.inputs[0].dtype.startswith(("int", "uint"))
    chosen = node.meta.get("initializers", {}).get("embeddings_initializer", "uniform")
    if chosen in ("uniform", "RandomUniform"):
        init = [f"nn.init.uniform_({m}.weight, -0.05, 0.05)"]
    else:
        init = [init_line(node, "embeddings_initializer", f"{m}.weight", "zeros")]
    return Emission(module, lambda ins: f"{m}({ins[0]}.long())" if cast else f"{m}({ins[0]})",
                    state=[StateEntry("weight", "embeddings", Transform.IDENTITY)], init=init)


_RNN_CLASS = {"lstm": "nn.LSTM", "gru": "nn.GRU", "simple_rnn": "nn.RNN"}


def _rnn_state(op: str, prefix: str, suffix: str, use_bias: bool) -> list[StateEntry]:
    if op == "gru":
        entries = [StateEntry(f"weight_ih_l0{suffix}", f"{prefix}kernel", Transform.GRU_KERNEL),
                   StateEntry(f"weight_hh_l0{suffix}", f"{prefix}recurrent_kernel", Transform.GRU_KERNEL)]
        if use_bias:
            entries += [StateEntry(f"bias_ih_l0{suffix}", f"{prefix}bias", Transform.GRU_BIAS_INPUT),
                        StateEntry(f"bias_hh_l0{suffix}", f"{prefix}bias", Transform.GRU_BIAS_RECURRENT)]
        return entries
    entries = [StateEntry(f"weight_ih_l0{suffix}", f"{prefix}kernel", Transform.TRANSPOSE),
               StateEntry(f"weight_hh_l0{suffix}", f"{prefix}recurrent_kernel", Transform.TRANSPOSE)]
    if use_bias:
        # torch adds two biases; Keras has one: the second is zero.
        entries += [StateEntry(f"bias_ih_l0{suffix}", f"{prefix}bias", Transform.IDENTITY),
                    StateEntry(f"bias_hh_l0{suffix}", f"{prefix}bias", Transform.ZEROS)]
    return entries


def _rnn_init(op: str, a: dict, m: str, suffix: str, node: Node) -> list[str]:
    lines = [init_line(node, "kernel_initializer", f"{m}.weight_ih_l0{suffix}", "glorot_uniform"),
             init_line(node, "recurrent_initializer", f"{m}.weight_hh_l0{suffix}", "orthogonal")]
    if a["use_bias"]:
        lines += [f"nn.init.zeros_({m}.bias_ih_l0{suffix})", f"nn.init.zeros_({m}.bias_hh_l0{suffix})"]
        if op == "lstm" and a.get("unit_forget_bias"):
            u = a["units"]
            lines.append(f"nn.init.ones_({m}.bias_ih_l0{suffix}[{u}:{2 * u}])  # Keras unit_forget_bias")
    return lines


def _rnn_module(op: str, a: dict, in_features: int, bidirectional: bool) -> str:
    kwargs = {"batch_first": True}
    if not a["use_bias"]:
        kwargs["bias"] = False
    if bidirectional:
        kwargs["bidirectional"] = True
    return call(_RNN_CLASS[op], lit(in_features), lit(a["units"]), **kwargs)


def _frozen_second_bias(op: str, a: dict, m: str, suffixes: list[str]) -> list[str]:
    """Keras' LSTM/SimpleRNN have one bias; torch's second (bias_hh) must stay zero, or
    training would move the effective bias twice as fast."""
    if op == "gru" or not a["use_bias"]:
        return []
    return ["# Keras has one bias: torch's second (bias_hh) stays zero"] + [
        f"{m}.bias_hh_l0{s}.requires_grad_(False)" for s in suffixes]


@emitter("simple_rnn", "lstm", "gru")
def emit_rnn_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    module = _rnn_module(node.op, a, node.inputs[0].shape[-1], False)
    state = _rnn_state(node.op, "", "", a["use_bias"])
    init = _rnn_init(node.op, a, m, "", node)
    setup = _frozen_second_bias(node.op, a, m, [""])
    lstm = node.op == "lstm"

    def statements(ins, outs):
        x = ins[0]
        if a["go_backwards"]:
            # Keras runs over the reversed sequence and returns outputs in that order.
            x = f"{x}.flip(1)"
        seq = outs[0] if a["return_sequences"] else f"{outs[0]}_seq"
        h = outs[1] if a["return_state"] else "_"
        if lstm:
            c = outs[2] if a["return_state"] else "_"
            lines = [f"{seq}, ({h}, {c}) = {m}({x})"]
        else:
            lines = [f"{seq}, {h} = {m}({x})"]
        if a["return_state"]:
            lines.append(f"{h} = {h}[0]")
            if lstm:
                lines.append(f"{c} = {c}[0]")
        if not a["return_sequences"]:
            lines.append(f"{outs[0]} = {seq}[:, -1]")
        return lines

    return Emission(module, statements=statements, state=state, init=init, setup=setup)


@emitter("bidirectional")
def emit_bidirectional_torch(node: Node, m: str) -> Emission:
    inner = node.attrs["layer"]
    op, a = inner["op"], inner["attrs"]
    if a["go_backwards"]:
        raise NotImplementedError("Bidirectional over a go_backwards layer")
    u = a["units"]
    mode = node.attrs["merge_mode"]
    module = _rnn_module(op, a, node.inputs[0].shape[-1], True)
    state = _rnn_state(op, "forward.", "", a["use_bias"]) + _rnn_state(op, "backward.", "_reverse", a["use_bias"])
    init = _rnn_init(op, a, m, "", node) + _rnn_init(op, a, m, "_reverse", node)
    setup = _frozen_second_bias(op, a, m, ["", "_reverse"])
    lstm = op == "lstm"
    merge = {"concat": "torch.cat([{f}, {b}], dim=-1)", "sum": "{f} + {b}", "mul": "{f} * {b}",
             "ave": "({f} + {b}) / 2"}

    def statements(ins, outs):
        x = ins[0]
        # merge_mode=None assigns outs[0] before reading the second half: keep the sequence apart.
        seq = outs[0] if a["return_sequences"] and mode != "none" else f"{outs[0]}_seq"
        hname = f"{outs[0]}_h"
        cname = f"{outs[0]}_c"
        lines = [f"{seq}, ({hname}, {cname}) = {m}({x})" if lstm else f"{seq}, {hname} = {m}({x})"]
        if a["return_sequences"]:
            fwd, bwd = f"{seq}[..., :{u}]", f"{seq}[..., {u}:]"
        else:
            # The backward direction's last step is its state after reading the whole
            # (reversed) sequence: torch's h_n[1].
            fwd, bwd = f"{hname}[0]", f"{hname}[1]"
        n_main = 2 if mode == "none" else 1
        if mode == "none":
            lines += [f"{outs[0]} = {fwd}", f"{outs[1]} = {bwd}"]
        elif mode != "concat" or not a["return_sequences"]:
            lines.append(f"{outs[0]} = {merge[mode].format(f=fwd, b=bwd)}")
        if a["return_state"]:
            states = outs[n_main:]
            if lstm:
                lines += [f"{states[0]} = {hname}[0]", f"{states[1]} = {cname}[0]",
                          f"{states[2]} = {hname}[1]", f"{states[3]} = {cname}[1]"]
            else:
                lines += [f"{states[0]} = {hname}[0]", f"{states[1]} = {hname}[1]"]
        return lines

    return Emission(module, statements=statements, state=state, init=init, setup=setup)
