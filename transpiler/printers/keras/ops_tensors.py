"""Keras emitters for tensors made from nothing or passed through unchanged (``arange``
position ids, ``stop_gradient``): ``keras.ops`` calls. Registered in the emitter table of
:mod:`transpiler.printers.keras.ops` by decorator (that module imports this one)."""

from __future__ import annotations

from transpiler.ir.graph import Node
from transpiler.printers.keras.ops import KerasEmission, emitter, lit, ops_call


@emitter("arange")
def emit_arange_keras(node: Node) -> KerasEmission:
    a = node.attrs
    args = [lit(a["stop"])] if a["start"] == 0 and a["step"] == 1 else [lit(a["start"]), lit(a["stop"])]
    if a["step"] != 1:
        args.append(lit(a["step"]))
    if a["dtype"] != "int32":
        args.append(f'dtype="{a["dtype"]}"')
    return KerasEmission(call=lambda ins: f"keras.ops.arange({', '.join(args)})")


@emitter("arange_like")
def emit_arange_like_keras(node: Node) -> KerasEmission:
    a = node.attrs
    step = "" if a["step"] == 1 else f", {a['step']}"
    dtype = "" if a["dtype"] == "int32" else f', dtype="{a["dtype"]}"'

    def code(ins):
        stop = f"keras.ops.shape({ins[0]})[{a['axis']}]"
        start = "" if a["start"] == 0 and not step else f"{a['start']}, "
        return f"keras.ops.arange({start}{stop}{step}{dtype})"

    return KerasEmission(call=code)


@emitter("tile")
def emit_tile_keras(node: Node) -> KerasEmission:
    reps = ", ".join(lit(r) for r in node.attrs["repeats"])
    return KerasEmission(call=lambda ins: f"keras.ops.tile({ins[0]}, [1, {reps}])")


@emitter("stop_gradient")
def emit_stop_gradient_keras(node: Node) -> KerasEmission:
    return ops_call("stop_gradient")


@emitter("broadcast_to")
def emit_broadcast_to_keras(node: Node) -> KerasEmission:
    shape = node.attrs["shape"]

    def call(ins):  # (-1: x's own size on that axis, read when the program runs)
        sizes = ", ".join(f"keras.ops.shape({ins[0]})[{i - len(shape)}]" if d == -1 else lit(d)
                          for i, d in enumerate(shape))
        return f"keras.ops.broadcast_to({ins[0]}, (keras.ops.shape({ins[1]})[0], {sizes}))"

    return KerasEmission(call=call)



@emitter("slice_like")
def emit_slice_like_keras(node: Node) -> KerasEmission:
    a = node.attrs
    lead = ":, " * a["axis"]
    return KerasEmission(call=lambda ins: f"{ins[0]}[{lead}: keras.ops.shape({ins[1]})[{a['like_axis']}]]")
