"""PyTorch emitters: tensors real keras.io models make from nothing or pass through unchanged
(``arange`` position ids, ``stop_gradient``).

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

from transpiler.ir.graph import Node
from transpiler.printers.code import lit
from transpiler.printers.torch.ops import Emission, atom, emitter


@emitter("arange")
def emit_arange_torch(node: Node, m: str) -> Emission:
    """A non-persistent buffer (it follows ``.to(device)``, is no entry of the state_dict):
    ``torch.arange`` computed once in ``__init__``. Integer ids are int64, torch's index type
    (Keras' are int32: the same numbers)."""
    a = node.attrs
    args = [lit(a["stop"])] if a["start"] == 0 and a["step"] == 1 else [lit(a["start"]), lit(a["stop"])]
    if a["step"] != 1:
        args.append(lit(a["step"]))
    if not a["dtype"].startswith(("int", "uint")):
        args.append(f"dtype=torch.{a['dtype']}")
    return Emission(None, lambda ins: f"{m}_positions", inline_anywhere=True,
                    buffers=[("positions", None, f"torch.arange({', '.join(args)})")])


@emitter("arange_like")
def emit_arange_like_torch(node: Node, m: str) -> Emission:
    """``torch.arange`` up to the input's axis size, computed in ``forward`` (the length is
    known only when the program runs), on the input's device; int64, torch's index type
    (Keras' int32: the same numbers)."""
    a = node.attrs
    float_dtype = "" if a["dtype"].startswith(("int", "uint")) else f", dtype=torch.{a['dtype']}"

    def code(ins):
        stop = f"{atom(ins[0])}.shape[{a['axis']}]"
        args = stop if a["start"] == 0 and a["step"] == 1 else f"{a['start']}, {stop}"
        if a["step"] != 1:
            args += f", {a['step']}"
        return f"torch.arange({args}, device={atom(ins[0])}.device{float_dtype})"

    return Emission(None, code)


@emitter("tile")
def emit_tile_torch(node: Node, m: str) -> Emission:
    """``Tensor.repeat`` (numpy's tile), the batch axis once."""
    reps = ", ".join(lit(r) for r in node.attrs["repeats"])
    return Emission(None, lambda ins: f"{atom(ins[0])}.repeat(1, {reps})", unary=True)


@emitter("stop_gradient")
def emit_stop_gradient_torch(node: Node, m: str) -> Emission:
    return Emission(None, lambda ins: f"{atom(ins[0])}.detach()", unary=True)


@emitter("broadcast_to")
def emit_broadcast_to_torch(node: Node, m: str) -> Emission:
    sizes = ", ".join(lit(d) for d in node.attrs["shape"])
    return Emission(None, lambda ins: f"{atom(ins[0])}.expand({atom(ins[1])}.shape[0], {sizes})")


@emitter("slice_like")
def emit_slice_like_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    return Emission(None, lambda ins: f"{atom(ins[0])}.narrow({a['axis']}, 0, {atom(ins[1])}.shape[{a['like_axis']}])")


@emitter("fft2")
def emit_fft2_torch(node: Node, m: str) -> Emission:
    """torch.fft.fft2 of the complex tensor (complex64 from float32 parts, as Keras computes)."""
    def statements(ins, outs):
        spectrum = f"torch.fft.fft2(torch.complex({ins[0]}, {ins[1]}))"
        return [f"{outs[0]} = {spectrum}", f"{outs[1]} = {outs[0]}.imag", f"{outs[0]} = {outs[0]}.real"]

    return Emission(None, statements=statements)
