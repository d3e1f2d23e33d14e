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
from transpiler.ir.initializers import Initializer
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.ir.params import expected_shapes
from transpiler.ir.passes.shape_inference import channel_axis, spatial_axes
from transpiler.printers.code import call, comment_text, lit, size_arg
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
    #: buffers registered on the model itself: (suffix, canonical param, initial value)
    buffers: list[tuple[str, str, str]] = field(default_factory=list)
    #: a Python infix operator over its inputs (``a * b``): a single-use operand computed just
    #: before may be written into it (the emitter parenthesises by precedence)
    infix: bool = False
    #: ``train if self.training else infer``: the forward writer prints an ``if self.training:``
    #: block with each input's own statements inside its branch
    mode_select: bool = False


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
    "uniform": "nn.init.uniform_({t}, -0.05, 0.05)",  # Keras' RandomUniform() defaults
}


def init_line(node: Node, key: str, tensor: str, default: str) -> str:
    """The init statement for ``tensor`` from the user's ``key`` initializer or ``default``."""
    chosen = node.meta.get("initializers", {}).get(key, default)
    drawn = _drawn(chosen, tensor)
    if drawn is not None:
        return drawn
    name = chosen.snake_name() if _named(chosen) else chosen if isinstance(chosen, str) else None
    if name is not None:
        name = {"GlorotUniform": "glorot_uniform", "HeUniform": "he_uniform", "Zeros": "zeros",
                "Ones": "ones", "Orthogonal": "orthogonal", "LecunUniform": "lecun_uniform",
                "RandomUniform": "uniform",
                "zero": "zeros", "one": "ones"}.get(name, name)
    if name not in _INIT:
        scaled = _variance_scaling_line(node, key, tensor, name)
        if scaled is not None:
            return scaled
        node.meta.setdefault("init_warnings", []).append(f"{key}={chosen!r} not reproduced; "
                                                         f"{default} used")
        name = default
    return _INIT[name].format(t=tensor)


#: the canonical param each ``*_initializer`` argument initialises
_INITIALIZED_PARAM = {"kernel_initializer": "kernel", "recurrent_initializer": "recurrent_kernel",
                      "embeddings_initializer": "embeddings"}


def _variance_scaling_line(node: Node, key: str, tensor: str, name) -> str | None:
    """``he_normal``, ``glorot_normal``, ``lecun_normal`` (and the uniform ones): Keras'
    variance scaling with the fans of the Keras weight (torch's fans differ for some
    layouts); None when the weight's shape is not known here."""
    if name not in _VARIANCE_SCALING:
        return None
    try:
        shape = expected_shapes(node).get(_INITIALIZED_PARAM.get(key, ""))
    except (KeyError, ValueError, TypeError, IndexError):  # shapes not resolvable: the warning path
        shape = None
    if not shape:
        return None
    scale, mode, dist = _VARIANCE_SCALING[name]
    fan_in, fan_out = _keras_fans(shape)
    fan = (fan_in + fan_out) / 2 if mode == "avg" else fan_in
    if dist == "uniform":
        limit = math.sqrt(3.0 * scale / fan)
        return f"nn.init.uniform_({tensor}, {lit(-limit)}, {lit(limit)})"
    std = math.sqrt(scale / fan) / 0.87962566103423978  # Keras' normal truncated at 2 std, rescaled
    return f"nn.init.trunc_normal_({tensor}, 0.0, {lit(std)}, {lit(-2 * std)}, {lit(2 * std)})"


def _named(chosen) -> bool:
    """An initializer object without arguments (but a seed): the same as its string alias."""
    return isinstance(chosen, Initializer) and not set(chosen.params) - {"seed"}


def _drawn(chosen, tensor: str) -> str | None:
    """The init statement for an initializer object with its own arguments
    (``RandomNormal(stddev=0.02)``); None for other initializers."""
    dist = chosen.distribution() if isinstance(chosen, Initializer) else None
    if dist is None:
        return None
    if dist[0] == "normal":
        return f"nn.init.normal_({tensor}, {lit(dist[1])}, {lit(dist[2])})"
    if dist[0] == "uniform":
        return f"nn.init.uniform_({tensor}, {lit(dist[1])}, {lit(dist[2])})"
    if dist[0] == "truncated_normal":  # Keras cuts at two standard deviations
        mean, std = dist[1], dist[2]
        return f"nn.init.trunc_normal_({tensor}, {lit(mean)}, {lit(std)}, {lit(mean - 2 * std)}, {lit(mean + 2 * std)})"
    return f"nn.init.constant_({tensor}, {lit(dist[1])})"


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
    setup = [f"{m}.requires_grad_(False)  # fixed weights, not trained"] if node.meta.get("frozen") else []
    return Emission(module, lambda ins: f"{m}({ins[0]})", state=state, init=init, setup=setup)


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
    if node.attrs.get("masked"):
        # Keras' mean over the unmasked steps only (token id != 0)
        channel = channel_axis(node.inputs[0].layout)

        def masked_mean(ins, outs):
            kept = f"{outs[0]}_keep"
            return [f"{kept} = ({atom(ins[1])} != 0).unsqueeze({channel})  # Keras' mask: padded steps left out",
                    f"{outs[0]} = {atom(ins[0])}.masked_fill(~{kept}, 0.0).sum(dim={dim}{keep}) / "
                    f"{kept}.sum(dim={dim}{keep})"]

        return Emission(None, statements=masked_mean)
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
    dims = ", ".join(lit(d) for d in shape)

    def fn(ins):
        x = atom(ins[0])
        first = f"{x}.shape[0]" if any(d == -1 for d in shape) else "-1"
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
    dims = ", ".join(lit(d) for d in shape) or "()"  # a scalar weight: torch.empty(()), not torch.empty()
    module = f"nn.Parameter(torch.empty({dims}){frozen})"
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
    drawn = _drawn(chosen, m)
    if drawn is not None:
        return [drawn], set()
    name = chosen.name if _named(chosen) else chosen if isinstance(chosen, str) else None
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
    return _channel_norm_emission(node, m, module, state, axis)


def _channel_norm_emission(node: Node, m: str, module: str, stats: list[StateEntry], axis: int) -> Emission:
    """A norm module reading channels on dim 1 (BatchNorm, GroupNorm) applied to the
    feature axis ``axis``. torch's affine is both terms or none: with Keras' center xor
    scale the kept term is a parameter of its own, applied after the module."""
    center, scale = node.attrs["center"], node.attrs["scale"]
    channels = node.inputs[0].shape[axis]
    state = list(stats)
    if center and scale:
        state = [StateEntry("weight", "gamma", Transform.IDENTITY), StateEntry("bias", "beta", Transform.IDENTITY)] + state
    pre, post = _moved_to_dim1(node, axis)
    view = ", ".join("-1" if i == 1 else "1" for i in range(len(node.inputs[0].shape)))

    def fn(ins):
        expr = f"{m}({pre(ins[0])})"
        if scale and not center:
            expr = f"{expr} * {m}_gamma.view({view})"
        if center and not scale:
            expr = f"{expr} + {m}_beta.view({view})"
        return post(expr)

    em = Emission(module, fn, state=state)
    if center != scale:
        em.extra_params.append(("gamma", "gamma", channels, "ones") if scale else ("beta", "beta", channels, "zeros"))
    return em


def _normalized_axes(node: Node):
    """How a last-axes module (nn.LayerNorm, nn.RMSNorm) reads ``axis`` of the input:
    (pre, post, shape): moves before and after, and the normalized shape, whose axes are in
    the source (Keras) order so the params keep their canonical layout."""
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
    return pre, post, shape


@emitter("layer_norm")
def emit_layer_norm_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    pre, post, shape = _normalized_axes(node)
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
            return expr  # (a reader that needs parentheses asks atom())

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
        return expr if expr != atom(ins[0]) else ins[0]

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
emitter("hard_silu")(_fn("F.hardswish({x})"))
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
    if shared == set(range(1, rank)):  # one slope for every element: nn.PReLU's default
        module = call("nn.PReLU")
        state = [StateEntry("weight", "alpha", Transform.FLATTEN)]
        return Emission(module, lambda ins: f"{m}({ins[0]})", state=state, init=init)
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
#: Python's binding strength of the operators the emitters write (higher binds tighter)
_PRECEDENCE = {ast.Pow: 7, ast.USub: 6, ast.Mult: 5, ast.Div: 5, ast.FloorDiv: 5, ast.Mod: 5, ast.MatMult: 5,
               ast.Add: 4, ast.Sub: 4}
_SYMBOLS = {"**": ast.Pow, "*": ast.Mult, "/": ast.Div, "@": ast.MatMult, "+": ast.Add, "-": ast.Sub}
_COMPARISONS = (">", ">=", "<", "<=", "==", "!=")


def _strength(expr: str) -> int:
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return 0
    if isinstance(tree, ast.BinOp):
        return _PRECEDENCE.get(type(tree.op), 0)
    if isinstance(tree, ast.UnaryOp):
        return _PRECEDENCE[ast.USub]
    if isinstance(tree, ast.Compare):
        return 3
    if isinstance(tree, (ast.BoolOp, ast.IfExp, ast.Lambda)):
        return 1
    return 9


def operand(expr: str, op: str, right: bool) -> str:
    """``expr`` as the left or right operand of the infix ``op``: parenthesised when it binds
    looser (``(a + b) * c``), or as tightly on the side Python would group differently
    (``a - (b - c)``, ``a * (b * c)``: floating point is not associative, ``(a ** b) ** c``)."""
    theirs = _strength(expr)
    if op in _COMPARISONS:  # a comparison operand that compares would chain: (a > b) > c
        return f"({expr})" if theirs <= 3 else expr
    mine = _PRECEDENCE[_SYMBOLS[op]]
    if theirs < mine or (theirs == mine and right != (op == "**")):  # the source's grouping, exactly
        return f"({expr})"
    return expr


def _infix(op: str) -> Emitter:
    def emit_merge_torch(node: Node, m: str) -> Emission:
        return Emission(None, lambda ins: f" {op} ".join(operand(x, op, i > 0) for i, x in enumerate(ins)),
                        infix=op in ("+", "-", "*", "/", "**"))  # (a matmul keeps its operands named)

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
    if len(node.inputs) == 2 and any(_is_constant(v) for v in node.inputs):
        # torch.maximum takes tensors only: a number operand is a bound of clamp
        side = "min" if node.op == "maximum" else "max"
        k = 0 if _is_constant(node.inputs[1]) else 1
        return Emission(None, lambda ins: f"{atom(ins[k])}.clamp({side}={ins[1 - k]})")

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
    # --keras-exact-updates: the lookup also records its gradient per token occurrence
    cls = "KerasEmbedding" if node.meta.get("occurrence_slices") else "nn.Embedding"
    module = call(cls, lit(a["input_dim"]), lit(a["output_dim"]))
    cast = not node.inputs[0].dtype.startswith(("int", "uint"))
    init = [init_line(node, "embeddings_initializer", f"{m}.weight", "uniform")]
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
            lines.append(f"nn.init.ones_({m}.bias_ih_l0{suffix}[{lit(u)}:{lit(2 * u)}])  # Keras unit_forget_bias")
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


def _torch_initial_state(node: Node, ins) -> str | None:
    """The torch form of an RNN node's ``initial_state`` inputs (None without them): Keras'
    states are (N, units), torch's (num_layers * directions, N, units), here one layer."""
    if not node.attrs.get("initial_state"):
        return None
    states = [f"{atom(s)}.unsqueeze(0)" for s in ins[1:]]
    return f"({states[0]}, {states[1]})" if len(states) == 2 else states[0]


def _masked_rnn_statements(node: Node, m: str):
    """Keras' masked recurrence: a step whose token id is 0 leaves the state unchanged and
    repeats the previous output. One module call per step (exact for any mask; torch's
    pack_padded_sequence would only cover padding at the end)."""
    a = node.attrs
    lstm = node.op == "lstm"

    def statements(ins, outs):
        o = outs[0]
        x, ids, lines = ins[0], ins[1], []
        if not x.isidentifier():
            lines.append(f"{o}_in = {x}")
            x = f"{o}_in"
        state, new, t = f"{o}_state", f"{o}_new", f"{o}_t"
        zeros = f"{x}.new_zeros(1, {x}.shape[0], {a['units']})"
        lines += [f"{o}_keep = {atom(ids)} != 0  # Keras' mask: padded steps are skipped",
                  f"{state} = ({zeros}, {zeros})" if lstm else f"{state} = {zeros}"]
        if a["return_sequences"]:
            lines.append(f"{o}_steps = []")
        steps = f"range({x}.shape[1])"
        lines.append(f"for {t} in {'reversed(' + steps + ')' if a['go_backwards'] else steps}:")
        lines.append(f"    _, {new} = {m}({x}[:, {t} : {t} + 1], {state})")
        kept = f"{o}_keep[:, {t}].view(1, -1, 1)"
        if lstm:
            lines.append(f"    {state} = tuple(torch.where({kept}, n, s) for n, s in zip({new}, {state}))")
        else:
            lines.append(f"    {state} = torch.where({kept}, {new}, {state})")
        h = f"{state}[0][0]" if lstm else f"{state}[0]"
        if a["return_sequences"]:
            lines += [f"    {o}_steps.append({h})", f"{o} = torch.stack({o}_steps, dim=1)"]
        else:
            lines.append(f"{o} = {h}")
        if a["return_state"]:
            lines.append(f"{outs[1]} = {h}")
            if lstm:
                lines.append(f"{outs[2]} = {state}[1][0]")
        return lines

    return statements


@emitter("simple_rnn", "lstm", "gru")
def emit_rnn_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    module = _rnn_module(node.op, a, node.inputs[0].shape[-1], False)
    state = _rnn_state(node.op, "", "", a["use_bias"])
    init = _rnn_init(node.op, a, m, "", node)
    setup = _frozen_second_bias(node.op, a, m, [""])
    lstm = node.op == "lstm"
    if a.get("masked"):
        return Emission(module, statements=_masked_rnn_statements(node, m), state=state, init=init, setup=setup)

    def statements(ins, outs):
        x = ins[0]
        if a["go_backwards"]:
            # Keras runs over the reversed sequence and returns outputs in that order.
            x = f"{x}.flip(1)"
        seq = outs[0] if a["return_sequences"] else f"{outs[0]}_seq"
        h = outs[1] if a["return_state"] else "_"
        start = _torch_initial_state(node, ins)
        args = x if start is None else f"{x}, {start}"
        if lstm:
            c = outs[2] if a["return_state"] else "_"
            lines = [f"{seq}, ({h}, {c}) = {m}({args})"]
        else:
            lines = [f"{seq}, {h} = {m}({args})"]
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


# ---------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------
#: what Keras' masked softmax does with a fully masked row (every score pushed to a huge
#: negative number, so the row attends uniformly): an additive bias, never -inf (NaN)
_MASK_BIAS = "torch.finfo(torch.float32).min"


def _roles(node: Node, ins: list[str]) -> dict[str, str]:
    """``{role: input expression}`` of an attention node (query, value, then the extras)."""
    return {"query": ins[0], "value": ins[1], **dict(zip(node.attrs["extra_inputs"], ins[2:]))}


def _allowed_mask(node: Node, r: dict[str, str], heads_axis: bool) -> str | None:
    """The boolean 'may attend' mask (True = attend), broadcastable to the scores
    (N, [heads,] T, S), from the explicit attention mask, the Embedding masks and the
    causal mask; None when nothing is masked."""
    h = "None, " if heads_axis else ""
    terms = []
    if "attention_mask" in r:
        am = f"{atom(r['attention_mask'])}.bool()"
        terms.append(f"{am}.unsqueeze(1)" if heads_axis else am)
    if "query_mask" in r:
        terms.append(f"({atom(r['query_mask'])} != 0)[:, {h}:, None]")
    for role in ("value_mask", "key_mask"):
        if role in r:
            terms.append(f"({atom(r[role])} != 0)[:, {h}None, :]")
    if node.attrs["use_causal_mask"]:
        q, v = atom(r["query"]), atom(r["value"])
        terms.append(f"torch.ones({q}.shape[1], {v}.shape[1], dtype=torch.bool, device={q}.device).tril()")
    return " & ".join(terms) if terms else None


def _uses_nn_multihead(node: Node) -> bool:
    """nn.MultiheadAttention computes Keras' layer when the heads split the query's
    features, values have the keys' size, the output has the query's size and at most a
    causal mask applies (other masks can fully mask a row: Keras attends uniformly there,
    nn.MultiheadAttention gives NaN)."""
    a = node.attrs
    e = node.inputs[0].shape[-1]
    masks = set(a["extra_inputs"]) - {"key"}
    return (a["num_heads"] * a["key_dim"] == e and (a["value_dim"] or a["key_dim"]) == a["key_dim"]
            and (a["output_dim"] or e) == e and not masks)


def _glorot_heads(m_weight: str, fan: int) -> str:
    """Keras' glorot_uniform on an einsum kernel: limit sqrt(6 / fan) with its own fans."""
    return f"nn.init.uniform_({m_weight}, -math.sqrt(6.0 / {lit(fan)}), math.sqrt(6.0 / {lit(fan)}))"


def _mha_kernel_init(node: Node, target: str, fan: int) -> str:
    chosen = node.meta.get("initializers", {}).get("kernel_initializer", "glorot_uniform")
    if chosen in ("glorot_uniform", "GlorotUniform"):
        return _glorot_heads(target, fan)
    return init_line(node, "kernel_initializer", target, "glorot_uniform")


@emitter("multi_head_attention")
def emit_multi_head_attention_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    roles = a["extra_inputs"]
    n, j = a["num_heads"], a["key_dim"]
    lv = a["value_dim"] or j
    q_in = node.inputs[0].shape[-1]
    v_in = node.inputs[1].shape[-1]
    k_in = node.inputs[2 + roles.index("key")].shape[-1] if "key" in roles else v_in
    out = a["output_dim"] or q_in
    # Keras' glorot fans on the (features, heads, size) and (heads, size, out) kernels
    fans = {"query": q_in * (n + j), "key": k_in * (n + j), "value": v_in * (n + lv), "output": n * (lv + out)}
    bias = a["use_bias"]
    if _uses_nn_multihead(node):
        kwargs = {"batch_first": True}
        if a["dropout"]:
            kwargs["dropout"] = a["dropout"]
        if not bias:
            kwargs["bias"] = False
        if k_in != q_in:
            kwargs["kdim"] = k_in
        if v_in != q_in:
            kwargs["vdim"] = v_in
        module = call("nn.MultiheadAttention", lit(q_in), lit(n), **kwargs)
        packed = k_in == q_in and v_in == q_in
        if packed:
            state = [StateEntry("in_proj_weight", ("query_kernel", "key_kernel", "value_kernel"),
                                Transform.HEADS_KERNEL)]
            e = q_in
            init = [_mha_kernel_init(node, f"{m}.in_proj_weight[{lit(i * e)}:{lit((i + 1) * e)}]", fans[p])
                    for i, p in enumerate(("query", "key", "value"))]
        else:
            state = [StateEntry(f"{p[0]}_proj_weight", f"{p}_kernel", Transform.HEADS_KERNEL)
                     for p in ("query", "key", "value")]
            init = [_mha_kernel_init(node, f"{m}.{p[0]}_proj_weight", fans[p]) for p in ("query", "key", "value")]
        if bias:
            state.append(StateEntry("in_proj_bias", ("query_bias", "key_bias", "value_bias"), Transform.FLATTEN))
            init.append(f"nn.init.zeros_({m}.in_proj_bias)")
        state.append(StateEntry("out_proj.weight", "output_kernel", Transform.HEADS_OUTPUT_KERNEL))
        init.append(_mha_kernel_init(node, f"{m}.out_proj.weight", fans["output"]))
        if bias:
            state.append(StateEntry("out_proj.bias", "output_bias", Transform.IDENTITY))
            init.append(f"nn.init.zeros_({m}.out_proj.bias)")

        def fn(ins):
            r = _roles(node, ins)
            key = r.get("key", r["value"])
            extra = ""
            if a["use_causal_mask"]:
                q, v = atom(r["query"]), atom(r["value"])
                # torch's boolean attn_mask marks the positions that may NOT be attended
                extra = (f", attn_mask=torch.ones({q}.shape[1], {v}.shape[1], dtype=torch.bool, "
                         f"device={q}.device).triu(1)")
            return f"{m}({r['query']}, {key}, {r['value']}{extra}, need_weights=False)[0]"

        return Emission(module, fn, state=state, init=init, imports={"import math"})

    layers = {"query": (q_in, n * j), "key": (k_in, n * j), "value": (v_in, n * lv), "output": (n * lv, out)}
    parts = ", ".join(f"{p}={call('nn.Linear', lit(i), lit(o), **({} if bias else {'bias': False}))}"
                      for p, (i, o) in layers.items())
    module = f"nn.ModuleDict(dict({parts}))"
    state = []
    init = []
    for p in layers:
        state.append(StateEntry(f"{p}.weight", f"{p}_kernel",
                                Transform.HEADS_OUTPUT_KERNEL if p == "output" else Transform.HEADS_KERNEL))
        init.append(_mha_kernel_init(node, f"{m}.{p}.weight", fans[p]))
        if bias:
            state.append(StateEntry(f"{p}.bias", f"{p}_bias", Transform.IDENTITY if p == "output"
                                    else Transform.FLATTEN))
            init.append(f"nn.init.zeros_({m}.{p}.bias)")

    def statements(ins, outs):
        r = _roles(node, ins)
        o = outs[0]
        key = r.get("key", r["value"])
        lines = [f"{o}_q = {m}.query({r['query']}).unflatten(-1, ({n}, {j})).transpose(1, 2)",
                 f"{o}_k = {m}.key({key}).unflatten(-1, ({n}, {j})).transpose(1, 2)",
                 f"{o}_v = {m}.value({r['value']}).unflatten(-1, ({n}, {lv})).transpose(1, 2)"]
        kwargs = ""
        only_causal = a["use_causal_mask"] and not (set(roles) - {"key"})
        allowed = None if only_causal else _allowed_mask(node, r, heads_axis=True)
        if only_causal:
            kwargs = ", is_causal=True"
        elif allowed is not None:
            # a masked position gets a huge negative score (a fully masked row attends
            # uniformly, as in Keras) rather than -inf
            lines.append(f"{o}_bias = torch.where({allowed}, 0.0, {_MASK_BIAS})")
            kwargs = f", attn_mask={o}_bias"
        if a["dropout"]:
            kwargs += f", dropout_p={lit(a['dropout'])} if self.training else 0.0"
        lines += [f"{o} = F.scaled_dot_product_attention({o}_q, {o}_k, {o}_v{kwargs})",
                  f"{o} = {m}.output({o}.transpose(1, 2).flatten(2))"]
        return lines

    return Emission(module, statements=statements, state=state, init=init, imports={"import math"})


@emitter("attention", "additive_attention")
def emit_attention_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    params = [p.name for p in node.spec.active_params(a)]
    dim = node.inputs[0].shape[-1]
    module = state = None
    init: list[str] = []
    imports: set[str] = set()
    if params:
        shape = {"scale": (dim,) if node.op == "additive_attention" else ()}
        made = {p: f"nn.Parameter(torch.ones({lit(shape.get(p, ()))}))" for p in params}
        module = f"nn.ParameterDict(dict({', '.join(f'{p}={v}' for p, v in made.items())}))"
        state = [StateEntry(p, p, Transform.IDENTITY) for p in sorted(params)]  # ParameterDict sorts a dict
        if node.op == "additive_attention":
            # Keras' glorot_uniform on a (dim,) weight: fan_in = fan_out = dim
            init = [f"nn.init.uniform_({m}.scale, -math.sqrt(3.0 / {dim}), math.sqrt(3.0 / {dim}))"]
            imports = {"import math"}

    def statements(ins, outs):
        r = _roles(node, ins)
        o = outs[0]
        q, k, v = atom(r["query"]), atom(r.get("key", r["value"])), r["value"]
        if node.op == "additive_attention":
            scale = f"{m}.scale * " if a["use_scale"] else ""
            scores = f"({scale}torch.tanh({q}.unsqueeze(-2) + {k}.unsqueeze(-3))).sum(-1)"
        elif a["score_mode"] == "concat":
            inner = f"{q}.unsqueeze(-2) + {k}.unsqueeze(-3)"
            if a["use_scale"]:
                inner = f"{m}.scale * ({inner})"
            scores = f"{m}.concat_score_weight * torch.tanh({inner}).sum(-1)"
        else:
            scores = f"{q} @ {k}.transpose(-2, -1)"
            if a["use_scale"]:
                scores = f"{scores} * {m}.scale"
        lines = [f"{o}_logits = {scores}"]
        terms = []
        if "value_mask" in r:
            terms.append(f"({atom(r['value_mask'])} != 0)[:, None, :]")
        if a["use_causal_mask"]:
            terms.append(f"torch.ones({o}_logits.shape[-2:], dtype=torch.bool, device={o}_logits.device).tril()")
        if terms:
            # Keras subtracts 1e9 from the scores of the positions that may not be attended
            lines.append(f"{o}_logits = {o}_logits - 1e9 * ~({' & '.join(terms)})")
        weights = f"{o}_logits.softmax(dim=-1)"
        if a["dropout"]:
            weights = f"F.dropout({weights}, {lit(a['dropout'])}, self.training)"
        lines.append(f"{o} = {weights} @ {atom(v)}")
        if "query_mask" in r:
            lines.append(f"{o} = {o}.masked_fill(({atom(r['query_mask'])} == 0).unsqueeze(-1), 0.0)")
        return lines

    return Emission(module, statements=statements, state=state or [], init=init, imports=imports,
                    parameter=False)


# ---------------------------------------------------------------------------------
# More normalisation and preprocessing
# ---------------------------------------------------------------------------------
@emitter("rms_norm")
def emit_rms_norm_torch(node: Node, m: str) -> Emission:
    pre, post, shape = _normalized_axes(node)
    module = call("nn.RMSNorm", lit(shape[0] if len(shape) == 1 else shape), eps=node.attrs["epsilon"])
    return Emission(module, lambda ins: post(f"{m}({pre(ins[0])})"),
                    state=[StateEntry("weight", "gamma", Transform.IDENTITY)])


@emitter("group_norm")
def emit_group_norm_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    x = node.inputs[0]
    axis = a["axis"] % len(x.shape)
    channels = x.shape[axis]
    groups = channels if a["groups"] == -1 else a["groups"]
    center, scale = a["center"], a["scale"]
    kwargs = {"eps": a["epsilon"]}
    if not (center and scale):
        kwargs["affine"] = False
    module = call("nn.GroupNorm", lit(groups), lit(channels), **kwargs)
    return _channel_norm_emission(node, m, module, [], axis)


@emitter("normalization")
def emit_normalization_torch(node: Node, m: str) -> Emission:
    import numpy as np

    a = node.attrs
    x = node.inputs[0]
    rank = len(x.shape)
    to_source = Layout(x.layout, channels_last_of(x.layout)) if is_channels_first(x.layout) else None
    src_shape = to_source.shape(x.shape) if to_source else tuple(x.shape)
    kept = sorted({to_source.axis(ax % rank) if to_source else ax % rank for ax in a["axis"]})
    src_view = tuple(src_shape[d] if d in kept else 1 for d in range(rank))
    back = Layout(channels_last_of(x.layout), x.layout).perm if to_source else None
    view = tuple(src_view[p] for p in back) if back else src_view
    # the kept axes in the same relative order in both layouts: a view suffices
    in_order = back is None or [p for p in back if p in kept] == kept

    def shaped(t: str) -> str:
        if in_order:
            return f"{t}.view{lit(tuple(view))}" if any(v != 1 for v in view) else t
        return f"{t}.view{lit(src_view)}.permute{lit(tuple(back))}"

    buffers = []
    if a["mean"] is None:
        stat = tuple(src_shape[d] for d in kept)
        buffers = [("mean", "mean", f"torch.zeros({lit(stat)})"), ("variance", "variance", f"torch.ones({lit(stat)})"),
                   ("count", "count", "torch.zeros((), dtype=torch.int64)")]
        mean, var = shaped(f"{m}_mean"), shaped(f"{m}_variance")
    else:
        def constant(values) -> str:
            arr = np.broadcast_to(_keras_stat(np.asarray(values, np.float32), src_view, kept), src_view)
            if back:
                arr = arr.transpose(back)
            flat = [float(str(v)) for v in np.asarray(arr, np.float32).reshape(-1)]
            text = f"{{x}}.new_tensor({lit(flat if len(flat) > 1 else flat[0])})"
            return f"{text}.view{lit(tuple(arr.shape))}" if len(flat) > 1 else text

        mean, var = constant(a["mean"]), constant(a["variance"])

    def fn(ins):
        xe = atom(ins[0])
        mu, v = mean.format(x=xe), var.format(x=xe)
        std = f"{atom(v)}.sqrt().clamp_min(1e-07)"  # Keras: max(sqrt(variance), epsilon)
        if a["invert"]:
            return f"({mu} + {xe} * {std})"
        return f"({xe} - {mu}) / {std}"

    return Emission(None, fn, buffers=buffers, unary=True)


def _keras_stat(values, src_view: tuple, kept: list):
    """A given mean/variance aligned to the kept axes from the right, as Keras does."""
    if values.ndim == 0:
        return values
    shape = [1] * len(src_view)
    for i in range(1, values.ndim + 1):
        shape[kept[-i]] = values.shape[-i]
    return values.reshape(shape)




@emitter("random_augmentation")
def emit_random_augmentation_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    kind, config = a["kind"], a["config"] or {}
    x = node.inputs[0]
    h_axis, w_axis = spatial_axes(x.layout)[-2:] if len(x.shape) == 4 else (None, None)

    def statements(ins, outs):
        o, xe = outs[0], ins[0]
        lines = [] if o == xe else [f"{o} = {xe}"]
        if kind == "RandomFlip" and h_axis is not None:
            mode = config.get("mode", "horizontal_and_vertical")
            dims = {"horizontal": (w_axis,), "vertical": (h_axis,), "horizontal_and_vertical": (h_axis, w_axis)}[mode]
            flip = f"{o}.flip({dims[0]})" if len(dims) == 1 else f"{o}.flip({lit(dims)})"
            return lines + [
                f"# RandomFlip({mode!r}) in training: each image flipped with probability 0.5, as in Keras",
                "if self.training:",
                f"    {o} = torch.where(torch.rand({o}.shape[0], 1, 1, 1, device={o}.device) <= 0.5, {flip}, {o})"]
        if kind == "RandomContrast" and h_axis is not None:
            factor = config["factor"]
            if isinstance(factor, (list, tuple)):
                lower, upper = sorted(float(f) for f in factor)
            else:
                lower, upper = max(-abs(float(factor)), 0.0), abs(float(factor))  # Keras' bounds (0, 1)
            low, high = config.get("value_range", (0, 255))
            return lines + [
                f"# RandomContrast in training: one factor per image in [{1.0 - lower}, {1.0 + upper}], as in Keras",
                "if self.training:",
                f"    {o}_mean = {o}.mean(dim=({h_axis}, {w_axis}), keepdim=True)",
                f"    {o}_factor = torch.empty({o}.shape[0], 1, 1, 1, device={o}.device).uniform_("
                f"{lit(1.0 - lower)}, {lit(1.0 + upper)})",
                f"    {o} = (({o} - {o}_mean) * {o}_factor + {o}_mean).clamp({lit(float(low))}, {lit(float(high))})"]
        if kind == "GaussianNoise":
            return lines + [f"# GaussianNoise in training: zero-mean normal noise, stddev {config['stddev']}",
                            "if self.training:",
                            f"    {o} = {o} + torch.randn_like({o}) * {lit(float(config['stddev']))}"]
        if kind == "GaussianDropout" and 0 < float(config["rate"]) < 1:
            std = math.sqrt(float(config["rate"]) / (1.0 - float(config["rate"])))
            return lines + [f"# GaussianDropout in training: times normal noise of mean 1, stddev "
                            f"sqrt(rate / (1 - rate))",
                            "if self.training:",
                            f"    {o} = {o} * (1.0 + torch.randn_like({o}) * {lit(std)})"]
        if kind == "GaussianDropout":
            return lines + [f"# GaussianDropout(rate={config['rate']!r}): the identity, as in Keras"]
        shown = ", ".join(f"{k}={v!r}" for k, v in config.items())
        return lines + [comment_text(f"# {kind}({shown}):"),
                        "# the identity here; its training-time augmentation has no faithful torch form",
                        "# (without torchvision): augment in the data pipeline instead"]

    return Emission(None, statements=statements)


@emitter("resizing")
def emit_resizing_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    # TF resizes with half-pixel centres: torch's align_corners=False; TF's nearest rounds
    # (x + 0.5) * scale down, which is torch's "nearest-exact" ("nearest" is off by half a
    # pixel); TF's bicubic with antialias is torch's bicubic with antialias (a = -0.5)
    mode = {"bilinear": "bilinear", "nearest": "nearest-exact", "bicubic": "bicubic"}[a["interpolation"]]
    extra = "" if mode == "nearest-exact" else ", align_corners=False"
    if a["antialias"] and mode != "nearest-exact":
        extra += ", antialias=True"
    return Emission(None, lambda ins: f'F.interpolate({ins[0]}, size={lit(tuple(a["size"]))}, mode="{mode}"{extra})',
                    unary=True)


@emitter("center_crop")
def emit_center_crop_torch(node: Node, m: str) -> Emission:
    x = node.inputs[0]
    slices = [":"] * len(x.shape)
    for ax, size in zip(spatial_axes(x.layout), node.attrs["size"]):
        start = (x.shape[ax] - size) // 2
        slices[ax] = f"{start or ''}:{start + size}"
    while slices and slices[-1] == ":":
        slices.pop()
    return Emission(None, lambda ins: f"{atom(ins[0])}[{', '.join(slices)}]", unary=True)


# Tensor math (keras.ops / tf.* / Python operators)
# ---------------------------------------------------------------------------------
def _is_constant(value) -> bool:
    return value.producer is not None and value.producer.op == "constant"


@emitter("constant")
def emit_constant_torch(node: Node, m: str) -> Emission:
    value = node.attrs["value"]
    text = lit(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        text = f"({text})"  # `(-2.0) ** x`, not `-(2.0 ** x)`
    return Emission(None, lambda ins: text, inline_anywhere=True)


emitter("divide")(_infix("/"))
emitter("power")(_infix("**"))
emitter("matmul")(_infix("@"))
for _op, _sym in (("greater", ">"), ("greater_equal", ">="), ("less", "<"), ("less_equal", "<="),
                  ("equal", "=="), ("not_equal", "!=")):
    emitter(_op)(_infix(_sym))


@emitter("negative")
def emit_negative_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"-{atom(ins[0])}", unary=True)


for _op in ("abs", "square", "sqrt", "rsqrt", "exp", "log"):
    emitter(_op)(_fn(f"torch.{_op}({{x}})"))


@emitter("clip")
def emit_clip_torch(node: Node, m: str) -> Emission:
    lo, hi = node.attrs["min"], node.attrs["max"]
    if lo is None and hi is None:
        return Emission(None, lambda ins: ins[0], unary=True)
    if lo is not None and hi is not None:
        args = f"{lit(lo)}, {lit(hi)}"
    else:
        args = f"min={lit(lo)}" if lo is not None else f"max={lit(hi)}"
    return Emission(None, lambda ins: f"{atom(ins[0])}.clamp({args})", unary=True)


@emitter("where")
def emit_where_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"torch.where({', '.join(ins)})")


@emitter("training_select")
def emit_training_select_torch(node: Node, m: str) -> Emission:
    # forward writers print an ``if self.training:`` block (torch_printer._ForwardWriter._select)
    return Emission(None, lambda ins: f"{ins[0]} if self.training else {ins[1]}", mode_select=True)


#: IR dtypes → torch tensor methods (or torch dtypes for .to())
_TORCH_CASTS = {"float32": ".float()", "float64": ".double()", "float16": ".half()", "int32": ".int()",
                "int64": ".long()", "bool": ".bool()"}


@emitter("cast")
def emit_cast_torch(node: Node, m: str) -> Emission:
    dtype = node.attrs["dtype"]
    method = _TORCH_CASTS.get(dtype, f".to(torch.{dtype})")
    return Emission(None, lambda ins: f"{atom(ins[0])}{method}", unary=True)


def _dims(node: Node, axes) -> str:
    """``dim=`` for torch: one int, or a tuple; the last axis as -1."""
    rank = len(node.inputs[0].shape)
    dims = tuple(-1 if a % rank == rank - 1 and len(axes) == 1 else a % rank for a in axes)
    return lit(dims[0] if len(dims) == 1 else dims)


_REDUCTIONS = {"reduce_mean": "mean", "reduce_sum": "sum", "reduce_max": "amax", "reduce_min": "amin",
               "argmax": "argmax", "argmin": "argmin"}


@emitter("reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin")
def emit_reduce_torch(node: Node, m: str) -> Emission:
    axis = node.attrs["axis"]
    dim = _dims(node, axis if isinstance(axis, tuple) else (axis,))
    keep = ", keepdim=True" if node.attrs["keepdims"] else ""
    method = _REDUCTIONS[node.op]
    return Emission(None, lambda ins: f"{atom(ins[0])}.{method}(dim={dim}{keep})", unary=True)


def new_axis_dim(node: Node) -> int:
    """The output position of a new axis (``axis``), the last one as -1."""
    rank = len(node.outputs[0].shape)
    axis = node.attrs["axis"] % rank
    return -1 if axis == rank - 1 else axis


@emitter("expand_dims")
def emit_expand_dims_torch(node: Node, m: str) -> Emission:
    dim = new_axis_dim(node)
    return Emission(None, lambda ins: f"{atom(ins[0])}.unsqueeze({dim})", unary=True)


@emitter("squeeze")
def emit_squeeze_torch(node: Node, m: str) -> Emission:
    dim = _dims(node, node.attrs["axis"])
    return Emission(None, lambda ins: f"{atom(ins[0])}.squeeze({dim})", unary=True)


@emitter("stack")
def emit_stack_torch(node: Node, m: str) -> Emission:
    dim = new_axis_dim(node)
    return Emission(None, lambda ins: f"torch.stack([{', '.join(ins)}], dim={dim})")


@emitter("split")
def emit_split_torch(node: Node, m: str) -> Emission:
    sizes = node.attrs["sizes"]
    dim = _dims(node, (node.attrs["axis"],))
    pieces = lit(sizes[0]) if len(set(sizes)) == 1 else lit(list(sizes))
    return Emission(None, statements=lambda ins, outs: [
        f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {atom(ins[0])}.split({pieces}, dim={dim})"])


@emitter("take")
def emit_take_torch(node: Node, m: str) -> Emission:
    rank = len(node.inputs[0].shape)
    axis = node.attrs["axis"] % rank
    indices = node.attrs["indices"]
    key = lit(indices) if isinstance(indices, int) else lit(list(indices))
    index = ", ".join([":"] * axis + [key]) if axis < rank - 1 or rank == 2 else f"..., {key}"
    return Emission(None, lambda ins: f"{atom(ins[0])}[{index}]", unary=True)


@emitter("random_normal", "random_uniform")
def emit_random_torch(node: Node, m: str) -> Emission:
    like, out = node.inputs[0], node.outputs[0]
    a = node.attrs
    normal = node.op == "random_normal"
    if tuple(out.shape) == tuple(like.shape) and out.layout == like.layout:
        draw = "torch.randn_like({x})" if normal else "torch.rand_like({x})"
    else:
        sizes = ", ".join(str(d) for d in a["shape"])
        draw = ("torch.randn" if normal else "torch.rand") + f"({{x}}.shape[0], {sizes}, device={{x}}.device)"
    scale, shift = (a["stddev"], a["mean"]) if normal else (a["maxval"] - a["minval"], a["minval"])

    def fn(ins):
        expr = draw.format(x=atom(ins[0]))
        if scale != 1.0:
            expr = f"{expr} * {lit(scale)}"
        if shift:
            expr = f"{expr} + {lit(shift)}" if shift > 0 else f"{expr} - {lit(-shift)}"
        return expr

    return Emission(None, fn)


@emitter("full_like")
def emit_full_like_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    dtype = f", dtype=torch.{a['dtype']}" if a["dtype"] else ""
    if a["value"] in (0.0, 1.0):
        fn = "torch.zeros_like" if a["value"] == 0.0 else "torch.ones_like"
        return Emission(None, lambda ins: f"{fn}({ins[0]}{dtype})", unary=True)
    return Emission(None, lambda ins: f"torch.full_like({ins[0]}, {lit(a['value'])}{dtype})", unary=True)


@emitter("full")
def emit_full_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    sizes = "".join(f", {lit(d)}" for d in a["shape"])
    tail = f"dtype=torch.{a['dtype']}, device={{x}}.device"
    if a["value"] in (0.0, 1.0):
        fn = "torch.zeros" if a["value"] == 0.0 else "torch.ones"
        form = f"{fn}({{x}}.shape[0]{sizes}, {tail})"
    else:
        form = f"torch.full(({{x}}.shape[0]{sizes or ','}), {lit(a['value'])}, {tail})"
    return Emission(None, lambda ins: form.format(x=atom(ins[0])))


@emitter("einsum")
def emit_einsum_torch(node: Node, m: str) -> Emission:
    # the operands arrive in the source (Keras) layout: the same equation holds
    equation = node.attrs["equation"].replace(" ", "")
    return Emission(None, lambda ins: f"torch.einsum({lit(equation)}, {', '.join(ins)})")


@emitter("extract_patches")
def emit_extract_patches_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    x, y = node.inputs[0], node.outputs[0]
    kh, kw = a["kernel_size"]
    channels = x.shape[1]
    out_h, out_w = (y.shape[ax] for ax in spatial_axes(y.layout))
    kwargs = ""
    if any(d != 1 for d in a["dilation"]):
        kwargs += f", dilation={lit(size_arg(a['dilation']))}"
    pads = (0, 0) if a["padding"] == "valid" else tuple(b for b, _ in a["padding"])
    if any(pads):
        kwargs += f", padding={lit(size_arg(pads))}"
    kwargs += f", stride={lit(size_arg(a['strides']))}"
    # unfold orders each window (C, kh, kw); Keras' patches are (kh, kw, C)
    return Emission(None, lambda ins: (
        f"F.unfold({ins[0]}, {lit(size_arg((kh, kw)))}{kwargs})"
        f".unflatten(1, ({channels}, {kh * kw})).transpose(1, 2).flatten(1, 2).unflatten(2, ({out_h}, {out_w}))"),
        unary=True)


def slice_text(start: int, stop: int, step: int, size: int | None) -> str:
    """``start:stop:step`` with the defaults left out (``1:``, ``::2``, ``:3``)."""
    text = f"{start or ''}:{'' if stop == size else stop}"
    return text + (f":{step}" if step != 1 else "")


def subscript_text(node: Node) -> str:
    """The index of a ``slice`` node for the input's current layout: ``:, 1:3``, ``..., ::2``."""
    x, a = node.inputs[0], node.attrs
    rank = len(x.shape)
    parts = [":"] * rank
    for ax, start, stop, step in zip(a["axes"], a["starts"], a["stops"], a["steps"]):
        parts[ax % rank] = slice_text(start, stop, step, x.shape[ax % rank])
    while parts and parts[-1] == ":":
        parts.pop()
    first = next(i for i, p in enumerate(parts) if p != ":")
    if first > 1 and first == len(parts) - 1 and first == rank - 1:  # only the tensor's last axis
        return f"..., {parts[-1]}"
    return ", ".join(parts)


@emitter("slice")
def emit_slice_torch(node: Node, m: str) -> Emission:
    index = subscript_text(node)
    return Emission(None, lambda ins: f"{atom(ins[0])}[{index}]", unary=True)
