"""LSTM and GRU: ONNX's recurrent ops, their gate order, and the axis orders around them.

ONNX packs the gates as i, o, f, c (LSTM) and z, r, h (GRU) along the first axis of W and R,
with separate input and recurrent biases; the ops table's canonical layout is Keras' (i, f, c,
o; z, r, h; kernel (I, G), recurrent kernel (U, G)). The sequence is time-major unless
``layout=1``: ``torch.onnx`` wraps a ``batch_first`` LSTM in ``Transpose(1, 0, 2)`` and reads
``Y`` through ``Squeeze(1)`` + ``Transpose(1, 0, 2)`` and ``Y_h`` through ``Squeeze(0)``. Those
tensors are *views* here (an IR value in another axis order); the Squeeze/Transpose that turns
one back into a batch-first tensor resolves it, any other reader is reported.
"""

from __future__ import annotations

import numpy as np

from transpiler.frontend_onnx.loader import ONode
from transpiler.frontend_onnx.reader import BatchAxis, Context, Unsupported, converter
from transpiler.ir import ops as ops_table

#: ONNX gate blocks in the canonical (Keras) order
_ORDER = {"lstm": (0, 2, 3, 1), "gru": (0, 1, 2)}
_DEFAULT_ACTS = {"lstm": ["Sigmoid", "Tanh", "Tanh"], "gru": ["Sigmoid", "Tanh"]}


def _gates(w: np.ndarray, op: str) -> np.ndarray:
    """(G*H, X) in ONNX's gate order → (X, G*H) in the canonical order."""
    n = len(_ORDER[op])
    h = w.shape[0] // n
    return np.concatenate([w[i * h:(i + 1) * h] for i in _ORDER[op]], axis=0).T


def _bias(b: np.ndarray, op: str) -> np.ndarray:
    n = len(_ORDER[op])
    h = b.shape[0] // n
    return np.concatenate([b[i * h:(i + 1) * h] for i in _ORDER[op]])


@converter("LSTM", "GRU", ops={"LSTM": ("lstm", "bidirectional", "transpose", "expand_dims"),
                            "GRU": ("gru", "bidirectional", "transpose", "expand_dims")})
def recurrent(ctx: Context, node: ONode) -> None:
    op = node.op_type.lower()
    layout = int(node.attrs.get("layout", 0))
    direction = ctx.attr(node, "direction", "forward")
    acts = [a.decode() if isinstance(a, bytes) else a for a in node.attrs.get("activations", [])]
    if acts and [a.lower() for a in acts] != [a.lower() for a in _DEFAULT_ACTS[op]]:
        raise Unsupported(f"activations {acts}")
    if node.attrs.get("clip") is not None or node.attrs.get("input_forget"):
        raise Unsupported("clip / input_forget")
    if op == "gru" and not int(node.attrs.get("linear_before_reset", 0)):
        raise Unsupported("linear_before_reset=0 (only the reset-after form torch and Keras use)")
    x_name = node.inputs[0]
    if layout == 0 and ctx.plain and x_name not in ctx.views:
        # a graph without a batch axis (the sequence is a graph input): made batch-first here
        x = ctx.add("transpose", [ctx.value(x_name)], {"perm": (1, 0, 2)}, node, "batch_first",
                    outputs=[""]).outputs[0]
    elif layout == 0:
        view = ctx.views.get(x_name)
        if view is None or view[0] != "time-major sequence":
            raise BatchAxis("a time-major input that is not a batch-first tensor transposed (1, 0, 2)")
        x = view[1]
    else:
        x = ctx.value(x_name)
    ws, rs = _const(ctx, node, 1, "W"), _const(ctx, node, 2, "R")
    units = int(node.attrs.get("hidden_size", rs.shape[-1]))
    bs = ctx.const(node.inputs[3]) if len(node.inputs) > 3 and node.inputs[3] else None
    for i, what in ((4, "sequence_lens"), (5, "initial_h"), (6, "initial_c"), (7, "P")):
        if i < len(node.inputs) and node.inputs[i]:
            c = ctx.const(node.inputs[i])
            if what == "sequence_lens" and c is not None and np.all(c == x.shape[1]):
                continue
            if c is None or np.any(c != 0):
                raise Unsupported(f"{what} other than zeros / the full length")

    def params_of(d: int) -> dict:
        out = {"kernel": _gates(ws[d], op), "recurrent_kernel": _gates(rs[d], op)}
        if bs is not None:
            n_gates = len(_ORDER[op])
            wb, rb = bs[d, :n_gates * units], bs[d, n_gates * units:]
            out["bias"] = _bias(wb + rb, op) if op == "lstm" else np.stack([_bias(wb, op), _bias(rb, op)])
        return out

    y, y_h, y_c = (list(node.outputs) + ["", "", ""])[:3]
    used = {name: bool(name) and (bool(ctx.consumers(name)) or name in ctx.og.outputs) for name in (y, y_h, y_c)}
    if direction == "reverse" and used[y]:
        raise Unsupported("direction=reverse with the sequence output read")
    sequences = used[y]
    states = used[y_h] and sequences or used[y_c]
    attrs = {"units": units, "return_sequences": sequences, "return_state": states,
             "go_backwards": direction == "reverse", "use_bias": bs is not None}
    if direction == "bidirectional":
        if not sequences or states or layout:
            raise Unsupported("a bidirectional layer is read through its time-major sequence output only")
        inner = {"op": op, "attrs": ops_table.get(op).complete_attrs({**attrs, "go_backwards": False})}
        params = {f"{d}.{k}": v for i, d in enumerate(("forward", "backward")) for k, v in params_of(i).items()}
        ir = ctx.add("bidirectional", [x], {"merge_mode": "concat", "layer": inner}, node, op, params=params,
                     weight=node.inputs[1], outputs=[])
        ctx.views[y] = ("time-major bidirectional sequence", ir.outputs[0])
        return
    n_out = 1 + ((2 if op == "lstm" else 1) if states else 0)
    ir = ctx.add(op, [x], attrs, node, op, params=params_of(0), weight=node.inputs[1], outputs=[], n_out=n_out)
    outs = list(ir.outputs)
    if ctx.plain:
        _plain_outputs(ctx, node, layout, outs, sequences, states, (y, y_h, y_c))
        return
    if sequences:
        ctx.views[y] = ("sequence" if layout else "time-major sequence with directions", outs[0])
        states_out = outs[1:]
    else:
        states_out = outs[1:] if states else [outs[0]]
    for name, value in zip((y_h, y_c), states_out):
        if name:
            ctx.views[name] = (f"state with directions at axis {layout}", value)


def _plain_outputs(ctx: Context, node: ONode, layout: int, outs: list, sequences: bool, states: bool,
                   names: tuple) -> None:
    """A recurrent layer's outputs in ONNX's own axis orders (a graph without a batch axis):
    Y (T, 1, N, H) or, with layout=1, (N, T, 1, H); Y_h / Y_c (1, N, H) or (N, 1, H)."""
    y, y_h, y_c = names
    if sequences:
        seq = outs[0]
        if layout == 0:
            seq = ctx.add("transpose", [seq], {"perm": (1, 0, 2)}, node, "time_major", outputs=[""]).outputs[0]
        ctx.add("expand_dims", [seq], {"axis": 2 if layout else 1}, node, "y", outputs=[y])
        state_values = outs[1:]
    else:
        state_values = outs[1:] if states else [outs[0]]
    for name, value in zip((y_h, y_c), state_values):
        if name:
            ctx.add("expand_dims", [value], {"axis": 1 if layout else 0}, node, "state", outputs=[name])


def _const(ctx: Context, node: ONode, i: int, what: str) -> np.ndarray:
    c = ctx.const(node.inputs[i]) if i < len(node.inputs) else None
    if c is None:
        raise Unsupported(f"{what} computed at run time")
    return c


def view_transpose(ctx: Context, node: ONode, perm: tuple) -> bool:
    """Transposes around a recurrent layer; True when ``node`` was one."""
    name = node.inputs[0]
    view = ctx.views.get(name)
    if view is None:
        if perm == (1, 0, 2) and ctx.consumers(node.outputs[0]) and all(
                c.op_type in ("LSTM", "GRU") and int(c.attrs.get("layout", 0)) == 0 and c.inputs[0] == node.outputs[0]
                for c in ctx.consumers(node.outputs[0])):
            ctx.views[node.outputs[0]] = ("time-major sequence", ctx.value(name))
            return True
        return False
    if view[0] == "time-major sequence" and perm == (1, 0, 2):
        ctx.bind(node.outputs[0], view[1])
        return True
    if view[0] == "time-major bidirectional sequence" and perm == (0, 2, 1, 3):
        ctx.views[node.outputs[0]] = ("time-major sequence with directions last", view[1])
        return True
    raise Unsupported(f"a transpose {perm} of {name!r} ({view[0]})")


def view_squeeze(ctx: Context, node: ONode, axes) -> None:
    """Squeeze of a recurrent output's direction axis."""
    name = node.inputs[0]
    form, value = ctx.views[name]
    axes = tuple(axes or ())
    if form == "time-major sequence with directions" and axes == (1,):
        ctx.views[node.outputs[0]] = ("time-major sequence", value)
    elif form == "sequence" and axes == (2,):
        ctx.bind(node.outputs[0], value)
    elif form.startswith("state with directions at axis") and axes == (int(form[-1]),):
        ctx.bind(node.outputs[0], value)
    else:
        raise Unsupported(f"a squeeze {axes} of {name!r} ({form})")


def view_reshape(ctx: Context, node: ONode, target: tuple) -> None:
    """(T, N, 2, H) → (T, N, 2H): the two directions' features side by side (Keras' concat)."""
    from transpiler.frontend_onnx.loader import BATCH

    name = node.inputs[0]
    form, value = ctx.views[name]
    ok = form == "time-major sequence with directions last" and len(target) == 3 and target[2] in (-1, value.shape[2]) \
        and target[1] in (0, -1, BATCH) and target[0] in (0, value.shape[1])
    if not ok:
        raise Unsupported(f"a reshape {target} of {name!r} ({form})")
    ctx.views[node.outputs[0]] = ("time-major sequence", value)
