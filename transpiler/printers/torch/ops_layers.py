"""PyTorch emitters: dense and convolutions; pooling, padding, cropping, resampling; shape ops and a
model's own weights.

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

from transpiler.ir.graph import Node
from transpiler.ir.shapes import channel_axis, spatial_axes
from transpiler.printers.code import call, lit, size_arg
from transpiler.printers.torch import print_notes
from transpiler.printers.torch.ops import (
    Emission, StateEntry, _VARIANCE_SCALING, _bias_inits, _channels, _drawn, _keras_fans, _named,
    _torch_padding, atom, emitter, init_line)
from transpiler.ir.transforms import Transform


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
    setup = [f"{m}.requires_grad_(False)  # fixed weights, not trained"] if node.from_onnx.frozen else []
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
    chosen = node.from_keras.initializers.get(key, "glorot_uniform")
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


@emitter("pixel_shuffle")
def emit_pixel_shuffle_torch(node: Node, m: str) -> Emission:
    return Emission(call("nn.PixelShuffle", lit(node.attrs["factor"])), lambda ins: f"{m}({ins[0]})")


@emitter("pad1d", "pad2d", "pad3d")
def emit_pad_torch(node: Node, m: str) -> Emission:
    rank = node.spec.rank
    pads = _torch_pads(node.attrs["pads"])
    value = node.attrs["value"]
    if node.inserted or node.from_keras.tensor_op:
        # padding the translation added (TF's asymmetric 'same'), or a function's
        # (tf.image.pad_to_bounding_box, ops.pad in a layer's call(): no attribute holds a module): F.pad
        mode = node.attrs.get("mode", "constant")
        extra = f", mode={lit(mode)}" if mode != "constant" else "" if value == 0.0 else f", value={lit(value)}"
        return Emission(None, lambda ins: f"F.pad({ins[0]}, {lit(pads)}{extra})", unary=True,
                        inline_anywhere=True)
    if node.attrs.get("mode", "constant") == "reflect":
        module = call(f"nn.ReflectionPad{rank}d", lit(pads))
    elif value == 0.0:
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
        # (-1 for the kept first axis is ambiguous beside another -1 or a size 0: no elements)
        first = f"{x}.shape[0]" if any(d in (-1, 0) for d in shape) else "-1"
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



def variable_init(node: Node, m: str, shape: tuple) -> tuple[list[str], set[str]]:
    """Init statements reproducing a Keras initializer (by name) on a weight of ``shape``."""
    chosen = node.from_keras.initializers.get("initializer") or "glorot_uniform"
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
        print_notes.notes(node).init_warnings.append(f"initializer={chosen!r} not reproduced; "
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


