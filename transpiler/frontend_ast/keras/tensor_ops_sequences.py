"""keras.ops / tf.* functions real keras.io models use on top of keras_tensor_ops' table:
position ids (``ops.arange``, ``tf.range``), ``stop_gradient``, per-sample identity matrices
(``tf.eye`` with a batch size).

``ops.arange(0, n)`` is a tensor with no batch axis; an Embedding of it is a position
embedding that broadcasts over the batch when added to the token embeddings, and
``ops.expand_dims(positions, axis=0)`` gives it a leading axis of size 1 (not the batch axis).
Registered into the one table of ``keras_tensor_ops`` (imported at its end).
"""

from __future__ import annotations

from transpiler.frontend_ast.interp.values import BatchDim
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.tensor_ops import AxisDim, Call, batched, dtype_name, tensor_function, unbatched
from transpiler.ir.graph import Value


def _int(c: Call, name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise Unsupported(f"{c.key}(): {name}={value!r} must be an int known statically "
                          "(a length known only at run time is not supported yet)")
    return value


@tensor_function("ops.arange", signature="start; stop=None; step=None; dtype=None", ops=("arange", "arange_like"),
                 keras_op="Arange")
@tensor_function("tf.range", signature="start; stop=None; step=None; dtype=None",
                 ops=("arange", "arange_like"), aliases={"limit": "stop", "delta": "step"})
def recognize_arange(c: Call) -> Value:
    """``arange(n)`` / ``arange(start, stop, step)`` on static ints: int32 like Keras' (and TF's).
    A stop read from a tensor's shape when the program runs (``ops.shape(x)[-1]``, an
    ``AxisDim``) is an ``arange_like`` of that tensor: position ids as many as its axis has."""
    start, stop, step = c.get("start"), c.get("stop"), c.get("step")
    if stop is None:
        start, stop = 0, start
    dtype = c.static("dtype")
    dtype = "int32" if dtype is None else dtype_name(dtype, f"{c.key}()")
    if isinstance(stop, AxisDim):
        attrs = {"axis": stop.axis, "start": _int(c, "start", start),
                 "step": 1 if step is None else _int(c, "step", step), "dtype": dtype}
        if attrs["step"] <= 0:
            raise Unsupported(f"{c.key}(): step={attrs['step']} on a run-time length (positive steps only)")
        out = c.one("arange_like", [stop.value], attrs, "positions")
        unbatched(out)  # (its input gives its length only: no batch axis)
        return out
    attrs = {"start": _int(c, "start", start), "stop": _int(c, "stop", stop),
             "step": 1 if step is None else _int(c, "step", step), "dtype": dtype}
    if attrs["step"] == 0:
        raise Unsupported(f"{c.key}(): step=0")
    return c.one("arange", [], attrs, "positions")


@tensor_function("ops.stop_gradient", signature="variable", ops=("stop_gradient",), keras_op="StopGradient")
@tensor_function("tf.stop_gradient", signature="variable", ops=("stop_gradient",), aliases={"input": "variable"})
def recognize_stop_gradient(c: Call) -> Value:
    return c.one("stop_gradient", [c.tensor("variable")])


@tensor_function("tf.identity", signature="input", ops=("identity",))
def recognize_identity(c: Call) -> Value:
    """``tf.identity(x)`` (keras.io's involution picks it as the no-op stride layer)."""
    return c.one("identity", [c.tensor("input")])


@tensor_function("ops.slice", "tf.slice", signature="inputs; start_indices; shape", ops=("slice", "identity"),
                 keras_op="Slice", aliases={"input_": "inputs", "begin": "start_indices", "size": "shape"})
def recognize_slice(c: Call) -> Value:
    """``ops.slice(x, starts, sizes)`` with static ints (size -1: to the end). On a batched
    tensor the batch axis is kept whole (start 0, size -1 or the batch size)."""
    x = c.tensor("inputs")
    starts, sizes = c.get("start_indices"), c.get("shape")
    if not isinstance(starts, (list, tuple)) or not isinstance(sizes, (list, tuple)) or \
            len(starts) != len(x.shape) or len(sizes) != len(x.shape):
        raise Unsupported(f"{c.key}(): start_indices and shape must give one entry per axis")
    unbatched = not batched(x)
    axes, begins, ends = [], [], []
    for axis, (start, size, dim) in enumerate(zip(starts, sizes, x.shape)):
        if axis == 0 and not unbatched:
            if start != 0 or not (size == -1 or isinstance(size, BatchDim)):
                raise Unsupported(f"{c.key}(): the batch axis must be kept whole")
            continue
        start, size = _int(c, "start_indices", start), _int(c, "shape", size)
        if dim is None:
            raise Unsupported(f"{c.key}(): axis {axis} has no static size")
        stop = dim if size == -1 else start + size
        if not 0 <= start <= stop <= dim or size < -1:
            raise Unsupported(f"{c.key}(): {start}:{stop} is outside axis {axis} of size {dim}")
        if (start, stop) != (0, dim):
            axes.append(axis), begins.append(start), ends.append(stop)
    if not axes:
        return x  # the whole tensor (keras.io's PositionEmbedding trims nothing)
    return c.one("slice", [x], {"axes": tuple(axes), "starts": tuple(begins), "stops": tuple(ends),
                                "steps": (1,) * len(axes)})


@tensor_function("ops.broadcast_to", "tf.broadcast_to", signature="x; shape", ops=("broadcast_to", "identity"),
                 keras_op="BroadcastTo", aliases={"input": "x"})
def recognize_broadcast_to(c: Call) -> Value:
    """``ops.broadcast_to(pos, ops.shape(inputs))``: a shape starting with a batch size read
    from a tensor (``BatchDim``), static sizes after it."""
    x, shape = c.tensor("x"), c.get("shape")
    if not isinstance(shape, (list, tuple)) or not shape or not isinstance(shape[0], BatchDim) or \
            shape[0].value is None:
        raise Unsupported(f"{c.key}(): the shape must start with the batch size of a tensor (ops.shape(x)[0])")
    rest = tuple(_int(c, "shape", d) for d in shape[1:])
    if batched(x) and tuple(x.shape[1:]) == rest:
        return x
    return c.one("broadcast_to", [x, shape[0].value], {"shape": rest})


@tensor_function("ops.fft2", signature="x", ops=("fft2",), keras_op="FFT2")
def recognize_fft2(c: Call) -> tuple:
    """``ops.fft2((real, imag))`` → (real, imag) of the 2-D FFT over the last two axes
    (keras.io's FNet mixes tokens with its real part)."""
    parts = c.get("x")
    if not isinstance(parts, (list, tuple)) or len(parts) != 2 or not all(isinstance(p, Value) for p in parts):
        raise Unsupported(f"{c.key}(): x must be a pair (real, imag) of tensors of the model")
    if tuple(parts[0].shape) != tuple(parts[1].shape):
        raise Unsupported(f"{c.key}(): the real and imaginary parts differ in shape")
    return tuple(c.add("fft2", list(parts), {}, "fft", n_out=2))


@tensor_function("ops.tile", signature="x; repeats", ops=("tile", "identity", "broadcast_to"), keras_op="Tile")
@tensor_function("tf.tile", signature="x; repeats", ops=("tile", "identity", "broadcast_to"), aliases={"input": "x", "multiples": "repeats"})
def recognize_tile(c: Call) -> Value:
    """``ops.tile(x, [1, n, 1])`` on a batched tensor: one repeat per axis, 1 for the batch axis;
    a repeat may be a size computed when the program runs (``num_points = x.shape[1]``)."""
    x = c.tensor("x")
    reps = c.get("repeats")
    if not isinstance(reps, (list, tuple)) or len(reps) != len(x.shape):
        raise Unsupported(f"{c.key}(): repeats must give one int per axis of the rank-{len(x.shape)} tensor")
    if not batched(x) and isinstance(reps[0], BatchDim) and reps[0].value is not None and x.shape[0] == 1 \
            and all(r == 1 and not isinstance(r, bool) for r in reps[1:]):
        # (the causal mask idiom: a (1, n, n) mask repeated for every sample of the batch)
        # (an axis of a length known only at run time, ``ops.arange(ops.shape(x)[1])``: -1 keeps it)
        rest = tuple(-1 if d is None else _int(c, "the mask's shape", d) for d in x.shape[1:])
        out = c.one("broadcast_to", [x, reps[0].value], {"shape": rest}, "tile")
        if getattr(reps, "stmts", ()):  # (the statements computing the multiples went into this node)
            out.producer.from_keras.call_stmts = tuple(out.producer.from_keras.call_stmts) + tuple(reps.stmts)
        return out
    if not batched(x):
        raise Unsupported(f"{c.key}(): a tensor without the batch axis (a constant of the model) is not tiled yet")
    if reps[0] != 1 or isinstance(reps[0], bool):
        raise Unsupported(f"{c.key}(): repeats[0]={reps[0]!r} repeats the batch axis")
    rest = tuple(_int(c, "repeats", r) for r in reps[1:])
    if any(r < 1 for r in rest):
        raise Unsupported(f"{c.key}(): repeats must be >= 1, got {reps!r}")
    if all(r == 1 for r in rest):
        return c.one("identity", [x], {}, "tile")
    return c.one("tile", [x], {"repeats": rest}, "tile")


@tensor_function("tf.eye", signature="num_rows; num_columns=None; batch_shape=None; dtype='float32'", ops=("eye",))
def recognize_eye(c: Call) -> Value:
    """``tf.eye(3, batch_shape=[tf.shape(x)[0], 1])`` (keras.io's RandomColorAffine): an
    identity matrix per sample; without a batch size it would be a constant of the model."""
    rows, columns = c.static("num_rows"), c.static("num_columns")
    columns = rows if columns is None else columns
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (rows, columns)):
        raise Unsupported(f"{c.key}(): the numbers of rows and columns must be static ints")
    batch = c.get("batch_shape")
    if not isinstance(batch, (list, tuple)) or not batch or not isinstance(batch[0], BatchDim) or \
            batch[0].value is None:
        raise Unsupported(f"{c.key}(): batch_shape must start with the batch size (tf.shape(x)[0]), got {batch!r}; "
                          "an identity matrix of a static shape would be a constant of the model")
    rest = tuple(batch[1:])
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in rest):
        raise Unsupported(f"{c.key}(): the sizes after the batch size must be static, got {batch!r}")
    if len(rest) + 3 > 5:
        raise Unsupported(f"{c.key}(): tensors of rank {len(rest) + 3} (more than 5) are not supported")
    dtype = dtype_name(c.static("dtype"), f"{c.key}()")
    return c.one("eye", [batch[0].value], {"shape": rest, "rows": rows, "columns": columns, "dtype": dtype}, "eye")
