"""keras.ops / tf.* functions real keras.io models use on top of keras_tensor_ops' table:
position ids (``ops.arange``, ``tf.range``) and ``stop_gradient``.

``ops.arange(0, n)`` is a tensor with no batch axis; an Embedding of it is a position
embedding that broadcasts over the batch when added to the token embeddings, and
``ops.expand_dims(positions, axis=0)`` gives it a leading axis of size 1 (not the batch axis).
Registered into the one table of ``keras_tensor_ops`` (imported at its end).
"""

from __future__ import annotations

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.tensor_ops import Call, dtype_name, tensor_function
from transpiler.ir.graph import Value


def _int(c: Call, name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise Unsupported(f"{c.key}(): {name}={value!r} must be an int known statically "
                          "(a length known only at run time is not supported yet)")
    return value


@tensor_function("ops.arange", signature="start; stop=None; step=None; dtype=None", ops=("arange",),
                 keras_op="Arange")
@tensor_function("tf.range", signature="start; stop=None; step=None; dtype=None",
                 ops=("arange",), aliases={"limit": "stop", "delta": "step"})
def recognize_arange(c: Call) -> Value:
    """``arange(n)`` / ``arange(start, stop, step)`` on static ints: int32 like Keras' (and TF's)."""
    start, stop, step = c.get("start"), c.get("stop"), c.get("step")
    if stop is None:
        start, stop = 0, start
    attrs = {"start": _int(c, "start", start), "stop": _int(c, "stop", stop),
             "step": 1 if step is None else _int(c, "step", step)}
    if attrs["step"] == 0:
        raise Unsupported(f"{c.key}(): step=0")
    dtype = c.static("dtype")
    attrs["dtype"] = "int32" if dtype is None else dtype_name(dtype, f"{c.key}()")
    return c.one("arange", [], attrs, "positions")


@tensor_function("ops.stop_gradient", signature="variable", ops=("stop_gradient",), keras_op="StopGradient")
@tensor_function("tf.stop_gradient", signature="variable", ops=("stop_gradient",), aliases={"input": "variable"})
def recognize_stop_gradient(c: Call) -> Value:
    return c.one("stop_gradient", [c.tensor("variable")])


@tensor_function("tf.identity", signature="input", ops=("identity",))
def recognize_identity(c: Call) -> Value:
    """``tf.identity(x)`` (keras.io's involution picks it as the no-op stride layer)."""
    return c.one("identity", [c.tensor("input")])
