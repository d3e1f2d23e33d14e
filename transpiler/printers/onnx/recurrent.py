"""Emitters of the recurrent layers: ONNX ``LSTM``/``GRU``/``RNN`` with batch-first layout.

Canonical params are Keras': ``kernel (I, G*U)`` and ``recurrent_kernel (U, G*U)`` in Keras'
gate order (LSTM i, f, c, o; GRU z, r, h), ``bias (G*U,)`` or, for a GRU with
``reset_after``, ``(2, 3U)`` (input bias, recurrent bias). ONNX orders LSTM gates i, o, f, c and
GRU gates z, r, h; its ``linear_before_reset=1`` is Keras' ``reset_after=True``.
"""

from __future__ import annotations

import numpy as np

from transpiler.printers.onnx.builder import Context, Unsupported, emitter

_ACTIVATIONS = {"tanh": "Tanh", "sigmoid": "Sigmoid", "relu": "Relu"}
_KIND = {"lstm": ("LSTM", 4), "gru": ("GRU", 3), "simple_rnn": ("RNN", 1)}


def _reorder(a: np.ndarray, op: str, units: int) -> np.ndarray:
    """Gate blocks along axis 0, Keras' order → ONNX's."""
    if op != "lstm":
        return a
    i, f, c, o = (a[k * units:(k + 1) * units] for k in range(4))
    return np.concatenate([i, o, f, c], axis=0)


def _weights(ctx: Context, op: str, attrs: dict, p: dict, prefix: str = "") -> tuple:
    """ONNX ``W``, ``R``, ``B`` (one direction, leading axis 1) from canonical params."""
    units = int(attrs["units"])
    gates = _KIND[op][1]
    w = _reorder(np.asarray(p[prefix + "kernel"], np.float32).T, op, units)[None]
    r = _reorder(np.asarray(p[prefix + "recurrent_kernel"], np.float32).T, op, units)[None]
    bias = p.get(prefix + "bias")
    bias = np.zeros(gates * units, np.float32) if bias is None else np.asarray(bias, np.float32)
    if bias.ndim == 2:  # a GRU with reset_after: input and recurrent biases
        wb, rb = bias[0], bias[1]
    else:
        wb, rb = bias, np.zeros_like(bias)
    bb = np.concatenate([_reorder(wb, op, units), _reorder(rb, op, units)])[None]
    return w, r, bb


def _activations(op: str, attrs: dict) -> list[str]:
    acts = [attrs.get("recurrent_activation", "sigmoid"), attrs["activation"]] if op != "simple_rnn" \
        else [attrs["activation"]]
    if any(x not in _ACTIVATIONS for x in acts):
        raise Unsupported(f"{op} with activation {acts!r}")
    names = [_ACTIVATIONS[x] for x in acts]
    return [names[0], names[1], names[1]] if op == "lstm" else names


def _check(ctx: Context, op: str, attrs: dict) -> None:
    if attrs["masked"] or attrs["initial_state"] or len([x for x in ctx.inputs if x]) > 1:
        raise Unsupported(f"{op} with a mask or an initial state")


def _run(ctx: Context, op: str, attrs: dict, weights: list, direction: str | None) -> list[str]:
    """The ONNX recurrent node on the batch-first input (time-major inside: onnxruntime has
    no batch-first kernels): ``[Y (T, D, N, H), Y_h (D, N, H)(, Y_c)]``."""
    b = ctx.b
    extra: dict = {}
    if op == "gru":
        extra["linear_before_reset"] = int(bool(attrs["reset_after"]))
    w, r, bb = (np.concatenate(parts, axis=0) for parts in zip(*weights))
    x = b.one("Transpose", [ctx.inputs[0]], f"{ctx.hint}_time_major", perm=[1, 0, 2])
    inputs = [x, b.const(w, f"{ctx.hint}.W"), b.const(r, f"{ctx.hint}.R"), b.const(bb, f"{ctx.hint}.B")]
    acts = _activations(op, attrs) * len(weights)
    return b.add(_KIND[op][0], inputs, ctx.hint, 3 if op == "lstm" else 2, hidden_size=int(attrs["units"]),
                 activations=acts, direction=direction, **extra)


def _batch_first(ctx: Context, y: str) -> str:
    """``Y (T, D, N, H)`` → ``(N, T, D*H)``, spelled as torch.onnx spells it (Squeeze or
    Transpose + Reshape, then the (1, 0, 2) transpose), which readers of ONNX recognise."""
    b = ctx.b
    if ctx.node.op == "bidirectional":
        y = b.one("Transpose", [y], ctx.hint, perm=[0, 2, 1, 3])
        y = b.one("Reshape", [y, b.ints([0, 0, -1], f"{ctx.hint}.shape")], ctx.hint)
    else:
        y = b.one("Squeeze", [y, b.ints([1], f"{ctx.hint}.directions")], ctx.hint)
    return b.one("Transpose", [y], ctx.hint, perm=[1, 0, 2])


def _state(ctx: Context, s: str) -> str:
    """A state ``(D, N, H)`` of one direction → ``(N, H)``."""
    return ctx.b.one("Squeeze", [s, ctx.b.ints([0], f"{ctx.hint}.axes0")], ctx.hint)


def _reverse_time(ctx: Context, y: str) -> str:
    b = ctx.b
    return b.one("Slice", [y, b.ints([-1], f"{ctx.hint}.start"), b.ints([-(2**62)], f"{ctx.hint}.end"),
                           b.ints([1], f"{ctx.hint}.axis"), b.ints([-1], f"{ctx.hint}.step")], ctx.hint)


@emitter("lstm", "gru", "simple_rnn")
def recurrent(ctx: Context) -> list:
    node, a = ctx.node, ctx.node.attrs
    _check(ctx, node.op, a)
    outs = _run(ctx, node.op, a, [_weights(ctx, node.op, a, ctx.params)], "reverse" if a["go_backwards"] else None)
    y = _batch_first(ctx, outs[0])
    if a["go_backwards"]:  # Keras returns the sequence in the order it read it: reversed
        y = _reverse_time(ctx, y)
    states = [_state(ctx, s) for s in outs[1:]]
    first = y if a["return_sequences"] else states[0]
    result = [first] + (states if a["return_state"] else [])
    if len(result) != len(node.outputs):
        raise Unsupported(f"{node.op} with {len(node.outputs)} outputs")
    return result


_MERGE = {"sum": "Add", "mul": "Mul", "ave": "Mean"}


@emitter("bidirectional")
def bidirectional(ctx: Context) -> list:
    """Keras' Bidirectional: ONNX's ``direction="bidirectional"``, whose backward outputs are
    already aligned with the input's time steps (as Keras re-reverses them)."""
    node, b = ctx.node, ctx.b
    inner = node.attrs["layer"]
    op, attrs = inner["op"], inner["attrs"]
    mode = node.attrs["merge_mode"]
    if op not in _KIND or attrs.get("go_backwards"):
        raise Unsupported(f"Bidirectional({op}) with go_backwards")
    if mode != "concat" and mode not in _MERGE:
        raise Unsupported(f"Bidirectional merge_mode={mode!r}")
    _check(ctx, op, attrs)
    weights = [_weights(ctx, op, attrs, ctx.params, f"{d}.") for d in ("forward", "backward")]
    outs = _run(ctx, op, attrs, weights, "bidirectional")
    first = _bidirectional_output(ctx, outs, attrs, mode)
    if not attrs.get("return_state"):
        return [first]
    # Keras: [output, forward states..., backward states...], each state (N, H)
    per_direction = [b.add("Split", [s, b.ints([1, 1], f"{ctx.hint}.directions")], ctx.hint, 2, axis=0)
                     for s in outs[1:]]
    states = [_state(ctx, parts[d]) for d in (0, 1) for parts in per_direction]
    result = [first] + states
    if len(result) != len(node.outputs):
        raise Unsupported(f"Bidirectional({op}) with {len(node.outputs)} outputs")
    return result


def _bidirectional_output(ctx: Context, outs: list, attrs: dict, mode: str) -> str:
    b = ctx.b
    if attrs["return_sequences"]:
        if mode == "concat":
            return _batch_first(ctx, outs[0])
        y = b.one("Transpose", [outs[0]], ctx.hint, perm=[2, 0, 1, 3])  # (N, T, 2, H)
        halves = b.add("Split", [y, b.ints([1, 1], f"{ctx.hint}.halves")], ctx.hint, 2, axis=2)
        merged = b.one(_MERGE[mode], halves, ctx.hint)
        return b.one("Squeeze", [merged, b.ints([2], f"{ctx.hint}.axes2")], ctx.hint)
    h = b.one("Transpose", [outs[1]], ctx.hint, perm=[1, 0, 2])  # (N, 2, H)
    if mode == "concat":
        return b.one("Reshape", [h, b.ints([0, -1], f"{ctx.hint}.shape")], ctx.hint)
    halves = b.add("Split", [h, b.ints([1, 1], f"{ctx.hint}.halves")], ctx.hint, 2, axis=1)
    merged = b.one(_MERGE[mode], halves, ctx.hint)
    return b.one("Squeeze", [merged, b.ints([1], f"{ctx.hint}.axes1")], ctx.hint)
