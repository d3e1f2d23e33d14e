"""PyTorch emitters: activations.

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

from transpiler.ir.graph import Node
from transpiler.printers.code import call, lit
from transpiler.printers.torch.ops import Emission, Emitter, StateEntry, atom, emitter, init_line
from transpiler.ir.transforms import Transform


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


