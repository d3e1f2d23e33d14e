"""PyTorch emitters: regularisation (dropout) and normalisation layers; preprocessing layers
(normalization, random augmentation, resizing, cropping).

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

import math

from transpiler.ir import sizes
from transpiler.ir.statistics import keras_stat
from transpiler.ir.graph import Node
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.ir.shapes import keras_centred_window, spatial_axes
from transpiler.printers.code import call, comment_text, lit
from transpiler.printers.torch import ops_augment
from transpiler.printers.torch.ops import Emission, StateEntry, atom, emitter
from transpiler.ir.transforms import Transform


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


def _plain_float(value) -> float:
    """A scale's number, without specialising the sizes a :class:`sizes.Scalar` comes from."""
    return float.__float__(value) if isinstance(value, float) else float(value)


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
        # (the numbers choose the form; a scale or offset of sizes prints as their code)
        number, shift = _plain_float(scale), _plain_float(offset)
        inverse = 1.0 / number if number else 0.0
        if sizes.divisor(scale) is not None:
            expr = f"{expr} / {lit(sizes.divisor(scale))}"  # the user wrote x / filters ** 0.5
        elif number != 1.0 and inverse == round(inverse) and abs(inverse) > 1 and not isinstance(scale, sizes.Scalar):
            expr = f"{expr} / {lit(float(round(inverse)))}"  # the user wrote 1 / 255
        elif number != 1.0:
            expr = f"{expr} * {lit(sizes.as_float(scale))}"
        if shift:
            expr = f"{expr} + {lit(sizes.as_float(offset))}" if shift > 0 else \
                f"{expr} - {lit(sizes.as_float(offset) * -1.0)}"
        return expr if expr != atom(ins[0]) else ins[0]

    return Emission(None, fn, unary=True)


# ---------------------------------------------------------------------------------
# More normalisation and preprocessing
# ---------------------------------------------------------------------------------
@emitter("rms_norm")
def emit_rms_norm_torch(node: Node, m: str) -> Emission:
    pre, post, shape = _normalized_axes(node)
    module = call("nn.RMSNorm", lit(shape[0] if len(shape) == 1 else shape), eps=node.attrs["epsilon"])
    return Emission(module, lambda ins: post(f"{m}({pre(ins[0])})"),
                    state=[StateEntry("weight", "gamma", Transform.IDENTITY)])


@emitter("unit_normalize")
def emit_unit_normalize_torch(node: Node, m: str) -> Emission:
    """Keras' x * min(rsqrt(sum(x ** 2)), 1 / 1e-12) is x / max(||x||, 1e-12): F.normalize."""
    rank = len(node.inputs[0].shape)
    axes = sorted({ax % rank for ax in node.attrs["axis"]})
    dim = (-1 if axes[0] == rank - 1 else axes[0]) if len(axes) == 1 else tuple(axes)
    return Emission(None, lambda ins: f"F.normalize({ins[0]}, dim={lit(dim)}, eps=1e-12)", unary=True)


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

    buffers, setup = [], []
    if a["mean"] is None:
        stat = tuple(src_shape[d] for d in kept)
        key = node.layer.adapt_key if node.layer is not None else None
        if key is not None:  # adapt() computes them at run time (runtime/torch/preprocessing.py)
            setup = [f"adapted_state(self, {lit(m.split('.', 1)[1])}, {lit(key)})"]
        buffers = [("mean", "mean", f"torch.zeros({lit(stat)})"), ("variance", "variance", f"torch.ones({lit(stat)})"),
                   ("count", "count", "torch.zeros((), dtype=torch.int64)")]
        mean, var = shaped(f"{m}_mean"), shaped(f"{m}_variance")
    else:
        def constant(values) -> str:
            import numpy as np  # (only for statistics the source gives: numpy costs a cold run)

            arr = np.broadcast_to(keras_stat(np.asarray(values, np.float32), src_view, kept), src_view)
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

    return Emission(None, fn, buffers=buffers, setup=setup, unary=True)


@emitter("random_augmentation")
def emit_random_augmentation_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    kind, config = a["kind"], a["config"] or {}
    x = node.inputs[0]
    h_axis, w_axis = spatial_axes(x.layout)[-2:] if len(x.shape) == 4 else (None, None)

    def statements(ins, outs):
        o, xe = outs[0], ins[0]
        lines = [] if o == xe else [f"{o} = {xe}"]
        affine = ops_augment.affine_statements(kind, config, o, not is_channels_first(x.layout)) \
            if h_axis is not None else None
        if affine is not None:  # RandomRotation, RandomZoom, RandomTranslation
            return lines + affine
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
                f"    {o}_factor = {lit(1.0 - lower)} + {lit(upper + lower)} * torch.rand({o}.shape[0], 1, 1, 1, "
                f"device={o}.device)",  # (Keras' minval + (maxval - minval) * uniform)
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




@emitter("random_crop")
def emit_random_crop_torch(node: Node, m: str) -> Emission:
    """Keras 3's RandomCrop. Training: where the image is larger on both spatial axes, one
    random window per batch (Keras draws one offset for the whole batch); otherwise the
    target-sized slice at the centred offsets, resized (bilinear, half-pixel) where it comes
    out smaller. Inference: the centred window of the target's aspect ratio resized to the
    target (smart_resize, as Keras documents it)."""
    x = node.inputs[0]
    h_ax, w_ax = spatial_axes(x.layout)[-2:]
    height, width = int(x.shape[h_ax]), int(x.shape[w_ax])
    target_h, target_w = (int(s) for s in node.attrs["size"])

    def window(xe: str, h0, w0, h: int, w: int) -> str:
        slices = [":"] * len(x.shape)
        for ax, start, n, full in ((h_ax, h0, h, height), (w_ax, w0, w, width)):
            if isinstance(start, str):
                slices[ax] = f"{start}:{start} + {n}"
            elif not (start == 0 and start + n >= full):
                slices[ax] = f"{start or ''}:{start + n}"
        while slices and slices[-1] == ":":
            slices.pop()
        return f"{atom(xe)}[{', '.join(slices)}]" if slices else xe

    def resized(text: str, got: tuple[int, int]) -> str:
        if got == (target_h, target_w):
            return text
        return f'F.interpolate({text}, size={lit((target_h, target_w))}, mode="bilinear", align_corners=False)'

    def statements(ins, outs):
        o, xe = outs[0], ins[0]
        hs, ws, ch, cw = keras_centred_window(height, width, (target_h, target_w))
        infer = resized(window(xe, hs, ws, ch, cw), (ch, cw))
        if height > target_h and width > target_w:
            train = [f"{o}_top = int(torch.randint(0, {height - target_h + 1}, ()))",
                     f"{o}_left = int(torch.randint(0, {width - target_w + 1}, ()))",
                     f"{o} = {window(xe, f'{o}_top', f'{o}_left', target_h, target_w)}"]
        else:  # (Keras slices the target's size from the centred offsets, then resizes)
            got = (min(target_h, height - hs), min(target_w, width - ws))
            train = [f"{o} = {resized(window(xe, hs, ws, target_h, target_w), got)}"]
        if train == [f"{o} = {infer}"]:
            return [f"{o} = {infer}"] if infer != xe else ([] if o == xe else [f"{o} = {xe}"])
        return ([f"# RandomCrop({target_h}, {target_w}): a random window in training; at inference the centred",
                 "# window resized, as Keras documents it (Keras 3 itself returns the image uncropped there)",
                 "if self.training:"] + [f"    {line}" for line in train]
                + ["else:", f"    {o} = {infer}"])

    return Emission(None, statements=statements)
