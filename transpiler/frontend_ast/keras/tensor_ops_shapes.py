"""keras.ops / tf.* shape and axis functions (shape, reshape, transpose, expand_dims, squeeze,
concat, stack, split, take / gather) and tensor subscripts (``x[:, 0]``, ``x[..., 1:3]``), in the
one table of ``keras_tensor_ops`` (imported at its end). Sizes after the batch axis are static."""

from __future__ import annotations

import math
from typing import Any

from transpiler.frontend_ast.interp.values import BatchDim
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.shape_values import AxisDim, ShapeVector, insert_unit_axes, shape_vector
from transpiler.frontend_ast.keras.tensor_ops import Builder, Call, _check_rank, batched, tensor_function
from transpiler.ir.graph import Value

# ---------------------------------------------------------------------------------
# Shapes and axes
# ---------------------------------------------------------------------------------
@tensor_function("ops.shape", "tf.shape", signature="x; out_type=None", ops=(), keras_op=None,
                 aliases={"input": "x"})
def recognize_shape(c: Call) -> tuple:
    """The static shape; the batch size is a ``BatchDim`` and any other size known only at
    run time (a sequence of any length) an ``AxisDim`` naming the tensor and axis."""
    x = c.tensor("x")
    c.get("out_type")
    return (BatchDim(x), *(AxisDim(x, i) if d is None else d for i, d in enumerate(x.shape) if i))


def _is_batch(value: Any) -> bool:
    return value is None or value == -1 and not isinstance(value, bool) or isinstance(value, BatchDim)


@tensor_function("ops.reshape", "tf.reshape", signature="x; newshape", ops=("reshape", "flatten", "identity"),
                 keras_op="Reshape", aliases={"tensor": "x", "shape": "newshape"})
def recognize_reshape(c: Call) -> Value:
    x = c.tensor("x")
    shape = c.get("newshape")
    if not batched(x) and isinstance(shape, (list, tuple)):
        return insert_unit_axes(c, x, list(shape))
    if not isinstance(shape, (list, tuple)) or not shape or not _is_batch(shape[0]):
        raise Unsupported(f"{c.key}(): the new shape must start with the batch size "
                          f"(-1, None or tf.shape(x)[0]), got {shape!r}")
    rest = list(shape[1:])
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in rest):
        raise Unsupported(f"{c.key}(): sizes after the batch size must be known statically, got {shape!r}")
    if any(d is None for d in x.shape[1:]):
        raise Unsupported(f"{c.key}(): the input's sizes are not known statically")
    if shape[0] == -1 and -1 in rest or rest.count(-1) > 1:
        raise Unsupported(f"{c.key}(): two sizes left to infer in {shape!r}")
    known = math.prod(d for d in rest if d != -1)
    total = math.prod(x.shape[1:])
    if -1 in rest:
        if known == 0 or total % known:
            raise Unsupported(f"{c.key}(): cannot reshape {x.shape} to {shape!r}")
        rest[rest.index(-1)] = total // known
    elif known != total:
        raise Unsupported(f"{c.key}(): cannot reshape {x.shape} to {shape!r}")
    if tuple(rest) == tuple(x.shape[1:]):
        return c.one("identity", [x], {}, "reshape")
    if len(rest) == 1 and len(x.shape) > 2:
        return c.one("flatten", [x], {}, "flatten")
    return c.one("reshape", [x], {"shape": tuple(rest)})


@tensor_function("ops.transpose", "tf.transpose", signature="x; axes=None; conjugate=False", ops=("transpose",),
                 keras_op="Transpose", aliases={"a": "x", "perm": "axes"})
def recognize_transpose(c: Call) -> Value:
    x = c.tensor("x")
    rank = len(x.shape)
    axes = c.static("axes")
    if axes is None:
        raise Unsupported(f"{c.key}() without axes reverses every axis: the batch axis moves")
    if not isinstance(axes, (list, tuple)) or not all(isinstance(a, int) for a in axes):
        raise Unsupported(f"{c.key}(): axes={axes!r} must be static ints")
    perm = tuple(a % rank for a in axes)
    if sorted(perm) != list(range(rank)) or perm[0] != 0:
        raise Unsupported(f"{c.key}(): axes={tuple(axes)} must keep the batch axis first")
    c.static("conjugate")
    return c.one("transpose", [x], {"perm": perm})


@tensor_function("ops.expand_dims", "tf.expand_dims", signature="x; axis", ops=("expand_dims",),
                 keras_op="ExpandDims", aliases={"input": "x"})
def recognize_expand_dims(c: Call) -> Value:
    size = c.get("x")
    if isinstance(size, (BatchDim, AxisDim)) and c.static("axis") in (0, -1):
        return ShapeVector.made((size,), c)  # (a size as a rank-1 tensor: the causal mask's tile multiples)
    x = c.tensor("x")
    _check_rank(c, len(x.shape) + 1)
    return c.one("expand_dims", [x], {"axis": c.axis("axis", len(x.shape), new_axis=True, batch=batched(x))})


@tensor_function("ops.squeeze", "tf.squeeze", signature="x; axis=None", ops=("squeeze", "identity"),
                 keras_op="Squeeze", aliases={"input": "x"})
def recognize_squeeze(c: Call) -> Value:
    x = c.tensor("x")
    if c.get("axis") is None:
        # every static size-1 axis; the batch axis is left alone (TF would drop it for a batch of one)
        axes = tuple(i for i, d in enumerate(x.shape) if i > 0 and d == 1)
        if not axes:
            return c.one("identity", [x], {}, "squeeze")
    else:
        axes = c.axes("axis", len(x.shape))
    if any(x.shape[a] != 1 for a in axes):
        raise Unsupported(f"{c.key}(): axis {axes} of a {x.shape} tensor is not of size 1")
    return c.one("squeeze", [x], {"axis": axes})


def _tensors(c: Call, name: str) -> list[Value]:
    values = c.get(name)
    if not isinstance(values, (list, tuple)) or not values or not all(isinstance(v, Value) for v in values):
        raise Unsupported(f"{c.key}(): {name} must be a list of tensors of the model")
    return list(values)


@tensor_function("ops.concatenate", signature="xs; axis=0", ops=("concat",), keras_op="Concatenate")
@tensor_function("tf.concat", signature="xs; axis", ops=("concat",), aliases={"values": "xs"})
def recognize_concat(c: Call) -> Value:
    parts = c.get("xs")
    if isinstance(parts, (list, tuple)) and parts and any(isinstance(p, ShapeVector) for p in parts):
        vectors = [shape_vector(p) for p in parts]
        if all(v is not None for v in vectors) and c.static("axis") in (0, -1):
            return ShapeVector.made([item for v in vectors for item in v], c, *vectors)
    xs = _tensors(c, "xs")
    if "axis" not in c.bound and c.key == "tf.concat":
        raise Unsupported("tf.concat(): axis is required")
    return c.one("concat", xs, {"axis": c.axis("axis", len(xs[0].shape))})


@tensor_function("ops.stack", "tf.stack", signature="xs; axis=0", ops=("stack",), keras_op="Stack",
                 aliases={"x": "xs", "values": "xs"})
def recognize_stack(c: Call) -> Value:
    xs = _tensors(c, "xs")
    rank = len(xs[0].shape)
    _check_rank(c, rank + 1)
    return c.one("stack", xs, {"axis": c.axis("axis", rank, new_axis=True)})


@tensor_function("ops.split", signature="x; indices_or_sections; axis=0", ops=("split",), keras_op="Split")
@tensor_function("tf.split", signature="x; indices_or_sections; axis=0; num=None", ops=("split",),
                 aliases={"value": "x", "num_or_size_splits": "indices_or_sections"})
def recognize_split(c: Call) -> list[Value]:
    x = c.tensor("x")
    axis = c.axis("axis", len(x.shape))
    size = x.shape[axis]
    spec = c.static("indices_or_sections")
    if c.key == "tf.split":
        c.static("num")
    if isinstance(spec, int) and not isinstance(spec, bool):
        if spec <= 0 or size % spec != 0:  # (a check: not a truth test that would specialise the size)
            raise Unsupported(f"{c.key}(): {size} does not split into {spec} equal pieces")
        sizes = (size // spec,) * spec
    elif isinstance(spec, (list, tuple)) and all(isinstance(s, int) for s in spec):
        if c.key == "ops.split":  # numpy style: the indices where pieces start
            bounds = [0, *spec, size]
            sizes = tuple(b - a for a, b in zip(bounds, bounds[1:]))
        else:  # TensorFlow style: the sizes, one of them possibly -1
            sizes = list(spec)
            if sizes.count(-1) == 1:
                sizes[sizes.index(-1)] = size - (sum(sizes) + 1)
            sizes = tuple(sizes)
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise Unsupported(f"{c.key}(): pieces {spec!r} do not fit axis {axis} of size {size}")
    else:
        raise Unsupported(f"{c.key}(): indices_or_sections={spec!r} must be static ints")
    return c.add("split", [x], {"sizes": sizes, "axis": axis}, "split", n_out=len(sizes))


@tensor_function("ops.take", signature="x; indices; axis=None", ops=("take",), keras_op="Take")
@tensor_function("tf.gather", signature="x; indices; validate_indices=None; axis=None; batch_dims=0",
                 ops=("take",), aliases={"params": "x"})
def recognize_take(c: Call) -> Value:
    x = c.tensor("x")
    if c.get("axis") is None:
        raise Unsupported(f"{c.key}() without an axis reads the batch axis" if c.key == "tf.gather"
                          else f"{c.key}() without an axis reads the flattened tensor")
    axis = c.axis("axis", len(x.shape))
    if c.key == "tf.gather":
        c.get("validate_indices")
        if c.static("batch_dims") != 0:
            raise Unsupported(f"{c.key}(): batch_dims is not supported")
    indices = c.get("indices")
    if isinstance(indices, Value):
        raise Unsupported(f"{c.key}(): indices from a tensor are not supported (static indices only)")
    size = x.shape[axis]
    items = (indices,) if isinstance(indices, int) else tuple(indices) if isinstance(indices, (list, tuple)) else None
    if items is None or not all(isinstance(i, int) and not isinstance(i, bool) and -size <= i < size for i in items):
        raise Unsupported(f"{c.key}(): indices={indices!r} must be static ints in range")
    items = tuple(i % size for i in items)  # TF refuses negative indices; Keras wraps them
    return c.one("take", [x], {"indices": items[0] if isinstance(indices, int) else items, "axis": axis})



@tensor_function("ops.unstack", signature="x; num=None; axis=0", ops=("take",), keras_op="Unstack")
def recognize_unstack(c: Call) -> list[Value]:
    """``ops.unstack(x, axis=1)``: the list of ``x[:, i]`` over a static axis after the batch
    axis, one ``take`` each (the axis goes)."""
    x = c.tensor("x")
    axis = c.axis("axis", len(x.shape), batch=batched(x))
    size = x.shape[axis]
    if size is None:
        raise Unsupported(f"{c.key}(): axis {axis} has a size known only at run time")
    num = c.static("num")
    if num is not None and num != size:
        raise Unsupported(f"{c.key}(): num={num!r} is not the axis' size {size}")
    return [c.one("take", [x], {"indices": i, "axis": axis}, "unstack") for i in range(size)]

def subscript(builder: Builder, x: Value, key: Any, what: str) -> Value:
    """``x[:, 0]``, ``x[..., 1:3]``, ``x[:, ::2, None]``: a ``slice`` of the static ranges, a
    ``take`` per int index (the axis goes), an ``expand_dims`` per None. The batch axis stays
    whole; negative steps and tensor indices are refused."""
    rank = len(x.shape)
    items = list(key) if isinstance(key, tuple) else [key]
    if items.count(Ellipsis) > 1:
        raise Unsupported(f"{what}: two ellipses")
    real = sum(1 for k in items if k is not None and k is not Ellipsis)
    if real > rank:
        raise Unsupported(f"{what}: more indices than axes")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (rank - real)
    else:
        items += [slice(None)] * (rank - real)
    axes, starts, stops, steps, ints, news = [], [], [], [], [], []
    axis = out = 0
    for k in items:
        if k is None:
            news.append(out)
            out += 1
            continue
        size = x.shape[axis]
        if axis == 0 and size is None:  # (a first axis of a known size is no batch: a weight, a buffer)
            if k != slice(None):
                raise Unsupported(f"{what}: indexing the batch axis")
            out += 1
        elif size is None and k != slice(None):  # (a sequence of any length)
            raise Unsupported(f"{what}: indexing axis {axis}, whose size is known only when the program runs")
        elif isinstance(k, int) and not isinstance(k, bool):
            if not -size <= k < size:
                raise Unsupported(f"{what}: index {k} is out of range for size {size}")
            ints.append((axis, k % size))
        elif k == slice(None):  # (the whole axis, also of a size known only at run time)
            out += 1
        elif isinstance(k, slice):
            if not all(v is None or isinstance(v, int) and not isinstance(v, bool) for v in (k.start, k.stop, k.step)):
                raise Unsupported(f"{what}: slice bounds must be known statically")
            start, stop, step = k.indices(size)
            if step <= 0:
                raise Unsupported(f"{what}: a negative step (reversal) is not supported")
            if len(range(start, stop, step)) == 0:
                raise Unsupported(f"{what}: an empty slice")
            if (start, stop, step) != (0, size, 1):
                axes.append(axis)
                starts.append(start)
                stops.append(min(stop, size))
                steps.append(step)
            out += 1
        else:
            raise Unsupported(f"{what}: only static ints, slices, ... and None index a tensor")
        axis += 1
    if out > 5:
        raise Unsupported(f"{what}: tensors of rank {out} (more than 5) are not supported")
    y = x
    if axes:
        y = builder.add("slice", [y], {"axes": tuple(axes), "starts": tuple(starts), "stops": tuple(stops),
                                        "steps": tuple(steps)}, "slice")[0]
    for ax, index in sorted(ints, reverse=True):  # the later axes first: the earlier keep their place
        y = builder.add("take", [y], {"indices": index, "axis": ax}, "take")[0]
    for pos in news:
        y = builder.add("expand_dims", [y], {"axis": pos}, "expand_dims")[0]
    return y
