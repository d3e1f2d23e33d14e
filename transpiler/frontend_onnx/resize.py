"""Nearest-neighbour Resize of any scale, coordinate transformation and rounding as a static
gather: each output position along a spatial axis reads one input position, and which one is
read off ONNX's own reference implementation (``onnx.reference``) run on a tensor holding the
flat index of every input position (separable: checked), and computed again from the
spec's formulas in exact rational arithmetic: ONNX's implementations round the source
coordinate in float32 and can part on a coordinate that lands exactly on a rounding boundary
(onnx.reference and onnxruntime do, for align_corners), so a map the two computations
disagree on is a stub. The model holds the map as the table's ``take`` with a tuple of
indices per resized axis."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from transpiler.frontend_onnx.loader import ONode, _evaluate
from transpiler.frontend_onnx.reader import Context, Unsupported


def _resize_proto(ctx: Context, node: ONode, spatial: tuple[int, ...], batch: int, check_roi: bool):
    """The Resize node to evaluate on an input ``X`` of shape ``(batch, 1, *spatial)``, and
    its constant inputs as feeds: scales must keep the batch and channel axes, sizes are
    given for that input; ``check_roi``: a roi must take the batch and channels whole."""
    from onnx import helper

    feeds, names = {}, ["X"]
    for i, name in enumerate(node.inputs[1:], start=1):
        if not name:
            names.append("")
            continue
        c = ctx.const(name)
        if c is None:
            raise Unsupported(f"input {i} ({name!r}) is computed at run time")
        c = np.asarray(c)
        if "axes" not in node.attrs:
            if i == 2 and c.size and (c.size < 2 or np.any(c[:2] != 1)):  # scales over N, C must be 1
                raise Unsupported(f"scales {tuple(c.tolist())} resize the batch or channel axis")
            if i == 3 and c.size:
                c = np.concatenate([[batch, 1], c[2:]]).astype(c.dtype)  # (this tensor's batch and channels)
            if i == 1 and c.size and check_roi:  # roi: (starts, ends) over every axis; batch, channels whole
                half = c.size // 2
                c = c.astype(np.float32).copy()
                if np.any(c[[0, 1]] != 0) or np.any(c[[half, half + 1]] != 1):
                    raise Unsupported("a roi over the batch or channel axis")
        feeds[f"in{i}"] = c
        names.append(f"in{i}")
    axes = node.attrs.get("axes")
    if axes is not None and any(int(a) % (len(spatial) + 2) < 2 for a in axes):
        raise Unsupported(f"axes {tuple(axes)} resize the batch or channel axis")
    return helper.make_node("Resize", names, ["Y"], **node.attrs), feeds


def nearest_index_maps(ctx: Context, node: ONode, spatial: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Per spatial axis, the input position each output position reads."""
    if int(np.prod(spatial)) >= 2 ** 24:
        raise Unsupported(f"a nearest resize of a {spatial} map (index map too large)")
    proto, feeds = _resize_proto(ctx, node, spatial, 1, check_roi=False)
    feeds["X"] = np.arange(int(np.prod(spatial)), dtype=np.float32).reshape((1, 1, *spatial))
    try:
        (y,) = _evaluate(proto, feeds, ctx.og.opset)
    except Exception as exc:  # noqa: BLE001 - the evaluator refuses what ONNX refuses
        raise Unsupported(f"ONNX's reference Resize failed: {type(exc).__name__}: {exc}") from None
    flat = np.asarray(y).reshape(y.shape[2:]).astype(np.int64)
    coords = np.unravel_index(flat, spatial)
    maps = []
    for i in range(len(spatial)):
        line = coords[i][tuple(slice(None) if j == i else 0 for j in range(len(spatial)))]
        maps.append(tuple(int(v) for v in line))
    grid = np.ravel_multi_index(np.ix_(*maps), spatial)
    if not np.array_equal(grid, flat):
        raise Unsupported("a nearest resize that is not separable per axis")
    scales = _exact_scales(ctx, node, spatial, tuple(flat.shape))
    for i, (size, out) in enumerate(zip(spatial, flat.shape)):
        exact = _exact_map(node, size, out, scales[i])
        if exact != maps[i]:
            raise Unsupported(f"ONNX's float32 source coordinates on spatial axis {i} round to other pixels than "
                              "exact arithmetic (a coordinate on a rounding boundary: implementations differ)")
    return maps


def _attr(node: ONode, key: str, default: str) -> str:
    v = node.attrs.get(key, default)
    return v.decode() if isinstance(v, bytes) else v


def _exact_scales(ctx: Context, node: ONode, spatial: tuple, out: tuple) -> list[Fraction]:
    """The scale the spec's coordinate formulas use on each spatial axis, exactly."""
    rank = len(spatial) + 2
    axes = [int(a) % rank for a in node.attrs.get("axes", range(rank))]
    scales = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if scales is not None and np.size(scales):
        given = dict(zip(axes, np.asarray(scales, np.float32).reshape(-1).tolist()))
        return [Fraction(given.get(a + 2, 1.0)) for a in range(len(spatial))]
    sizes = [int(v) for v in np.asarray(ctx.const(node.inputs[3])).reshape(-1)]
    ratios = {a: Fraction(s, ([1, 1] + list(spatial))[a]) for a, s in zip(axes, sizes)}
    policy = _attr(node, "keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":
        common = (min if policy == "not_larger" else max)(r for a, r in ratios.items() if a >= 2)
        ratios = {a: common for a in ratios}
    return [ratios.get(a + 2, Fraction(1)) for a in range(len(spatial))]


def _exact_map(node: ONode, size: int, out: int, scale: Fraction) -> tuple[int, ...]:
    transform = _attr(node, "coordinate_transformation_mode", "half_pixel")
    rounding = _attr(node, "nearest_mode", "round_prefer_floor")
    half = Fraction(1, 2)
    picked = []
    for d in range(out):
        if transform == "asymmetric":
            x = d / scale
        elif transform == "align_corners":
            x = Fraction(0) if out == 1 else Fraction(d * (size - 1), out - 1)
        elif transform == "pytorch_half_pixel":
            x = (d + half) / scale - half if out > 1 else Fraction(0)
        elif transform == "half_pixel":
            x = (d + half) / scale - half
        elif transform == "half_pixel_symmetric":
            adjustment = Fraction(out) / (scale * size)
            x = Fraction(size, 2) * (1 - adjustment) + (d + half) / scale - half
        else:
            raise Unsupported(f"nearest resize with coordinate_transformation_mode={transform!r}")
        if rounding == "floor":
            i = math.floor(x)
        elif rounding == "ceil":
            i = math.ceil(x)
        elif x - math.floor(x) == half:
            i = math.floor(x) if rounding == "round_prefer_floor" else math.ceil(x)
        else:
            i = math.floor(x + half)
        picked.append(min(max(i, 0), size - 1))
    return tuple(picked)


def resize_nearest_by_index(ctx: Context, node: ONode) -> None:
    """Resize (mode nearest) as one ``take`` per spatial axis whose map is not the identity."""
    x = ctx.value(node.inputs[0])
    if len(x.shape) < 3 or any(s is None for s in x.shape[1:]):
        raise Unsupported(f"a nearest resize of a {x.shape} tensor")
    spatial = tuple(x.shape[2:])
    maps = nearest_index_maps(ctx, node, spatial)
    steps = [(2 + i, m) for i, m in enumerate(maps) if m != tuple(range(spatial[i]))]
    if not steps:
        ctx.bind(node.outputs[0], x)
        return
    v = x
    for k, (axis, indices) in enumerate(steps):
        last = k == len(steps) - 1
        ir = ctx.add("take", [v], {"indices": indices, "axis": axis}, node, "resize",
                     outputs=None if last else [""])
        v = ir.outputs[0]


def interpolation_matrices(ctx: Context, node: ONode, spatial: tuple[int, ...]) -> list[np.ndarray]:
    """A linear or cubic Resize of a (H, W) map is y = A_h x A_w^T: the two matrices, read off
    ONNX's reference implementation run on every one-hot map (checked to factor, and to have
    no constant part)."""
    n = int(np.prod(spatial))
    if len(spatial) not in (1, 2) or n > 4096:
        raise Unsupported(f"a linear resize of a {spatial} map (only 1-D and 2-D maps of up to 4096 values)")
    basis = np.eye(n, dtype=np.float32).reshape((n, 1, *spatial))
    proto, feeds = _resize_proto(ctx, node, spatial, n, check_roi=True)
    feeds["X"] = basis
    try:
        (y,) = _evaluate(proto, feeds, ctx.og.opset)
        (zero,) = _evaluate(proto, dict(feeds, X=np.zeros_like(basis[:1])), ctx.og.opset)
    except Exception as exc:  # noqa: BLE001 - the evaluator refuses what ONNX refuses
        raise Unsupported(f"ONNX's reference Resize failed: {type(exc).__name__}: {exc}") from None
    if np.any(np.asarray(zero) != 0):
        raise Unsupported("a resize with a constant part (extrapolation_value outside the roi)")
    out = tuple(y.shape[2:])
    m = np.asarray(y, np.float64).reshape((*spatial, *out))  # m[h, w, h', w']
    if len(spatial) == 1:
        return [m.T]  # (out, in)
    h0, w0, h1, w1 = np.unravel_index(np.argmax(np.abs(m)), m.shape)
    a_w = m[h0, :, h1, :].T  # (W', W), up to a factor
    a_h = m[:, w0, :, w1].T / m[h0, w0, h1, w1]  # (H', H)
    if not np.allclose(np.einsum("ab,cd->bdac", a_h, a_w), m, rtol=1e-6, atol=1e-7):
        raise Unsupported("a resize that is not separable per axis")
    return [a_h, a_w]


def resize_by_matrices(ctx: Context, node: ONode) -> None:
    """Resize (linear, cubic; any coordinate transformation, antialias) as constant
    interpolation matrices: ``a_h @ x @ a_w.T`` on the spatial axes (frozen weights)."""
    x = ctx.value(node.inputs[0])
    if len(x.shape) not in (3, 4) or any(s is None for s in x.shape[1:]) or not x.dtype.startswith("float"):
        raise Unsupported(f"a linear resize of a {x.shape} {x.dtype} tensor")
    spatial = tuple(x.shape[2:])
    mats = interpolation_matrices(ctx, node, spatial)
    v = x
    steps = [(i, a) for i, a in enumerate(mats) if not (a.shape[0] == a.shape[1] and np.allclose(a, np.eye(len(a))))]
    if not steps:
        ctx.bind(node.outputs[0], x)
        return
    for k, (i, a) in enumerate(steps):
        last = k == len(steps) - 1
        last_axis = i == len(spatial) - 1
        weight = (a.T if last_axis else a).astype(np.float32)
        hint = "resize_" + ("hw"[i] if len(spatial) == 2 else "w")
        w = ctx.add("variable", [], {"shape": weight.shape, "trainable": False}, node, hint, outputs=[""],
                    params={"value": weight})
        operands = [v, w.outputs[0]] if last_axis else [w.outputs[0], v]
        layout = x.layout if x.layout and len(x.layout) == len(x.shape) else None
        v = ctx.add("matmul", operands, {}, node, "resize", outputs=None if last else [""],
                    out_layout=layout).outputs[0]
