"""Emitter of Keras' MultiHeadAttention: per-head projections (einsum kernels ``(features,
heads, size)``), softmax(q k^T / sqrt(key_dim)) with disallowed scores set to float32's minimum
(a fully masked row then attends uniformly, as in Keras), the heads joined by the output
projection. Masks: the causal mask and an explicit ``attention_mask``."""

from __future__ import annotations

import numpy as np

from transpiler.printers.onnx.builder import Context, Unsupported, emitter

_MIN = float(np.finfo(np.float32).min)


def _project(ctx: Context, x: str, kernel: np.ndarray, bias: np.ndarray | None, what: str) -> str:
    """``(N, T, F) @ (F, heads, size) + (heads, size)`` → ``(N, heads, T, size)``."""
    b = ctx.b
    f, heads, size = kernel.shape
    y = b.one("MatMul", [x, b.const(kernel.reshape(f, heads * size), f"{ctx.hint}.{what}_kernel")], ctx.hint)
    if bias is not None:
        y = b.one("Add", [y, b.const(bias.reshape(heads * size), f"{ctx.hint}.{what}_bias")], ctx.hint)
    y = b.one("Reshape", [y, b.ints([0, 0, heads, size], f"{ctx.hint}.{what}_heads")], ctx.hint)
    return b.one("Transpose", [y], ctx.hint, perm=[0, 2, 1, 3])


@emitter("multi_head_attention")
def multi_head_attention(ctx: Context) -> list:
    node, a, p, b = ctx.node, ctx.node.attrs, ctx.params, ctx.b
    roles = {"query": ctx.inputs[0], "value": ctx.inputs[1], **dict(zip(a["extra_inputs"], ctx.inputs[2:]))}
    unknown = set(roles) - {"query", "value", "key", "attention_mask"}
    if unknown:
        raise Unsupported(f"MultiHeadAttention with {', '.join(sorted(unknown))}")
    if len(node.outputs) != 1:
        raise Unsupported("MultiHeadAttention returning its scores")
    rank = len(ctx.in_shape())
    if rank > 3 and "attention_mask" in roles:
        raise Unsupported("MultiHeadAttention over several axes with an attention mask")
    if rank > 3 or a["use_causal_mask"] and rank != 3:
        # attention over every axis but the batch's and the features' (Keras' default
        # attention_axes): the same as over those axes flattened into one
        if a["use_causal_mask"]:
            raise Unsupported("a causal mask over several attention axes")
        features = {"query": node.inputs[0].shape[-1], "value": node.inputs[1].shape[-1]}
        if "key" in roles:
            features["key"] = node.inputs[2 + list(a["extra_inputs"]).index("key")].shape[-1]
        for role, size in features.items():
            roles[role] = b.one("Reshape", [roles[role], b.ints([0, -1, int(size)], f"{ctx.hint}.{role}_flat")],
                                ctx.hint)
    q = _project(ctx, roles["query"], p["query_kernel"], p.get("query_bias"), "query")
    k = _project(ctx, roles.get("key", roles["value"]), p["key_kernel"], p.get("key_bias"), "key")
    v = _project(ctx, roles["value"], p["value_kernel"], p.get("value_bias"), "value")
    key_dim = p["query_kernel"].shape[-1]
    q = b.one("Mul", [q, b.const(np.asarray(1.0 / np.sqrt(key_dim), np.float32), f"{ctx.hint}.scale")], ctx.hint)
    kt = b.one("Transpose", [k], ctx.hint, perm=[0, 1, 3, 2])
    scores = b.one("MatMul", [q, kt], ctx.hint)  # (N, heads, T, S)
    allowed = None
    if "attention_mask" in roles:
        m = b.one("Cast", [roles["attention_mask"]], ctx.hint, to=9)  # BOOL
        allowed = b.one("Unsqueeze", [m, b.ints([1], f"{ctx.hint}.mask_axes")], ctx.hint)
    if a["use_causal_mask"]:
        t = node.inputs[0].shape[1]
        s = node.inputs[1].shape[1]
        if t is None or s is None:
            raise Unsupported("a causal mask over a sequence length known only at run time")
        tri = np.tril(np.ones((int(t), int(s)), bool))
        causal = b.const(tri, f"{ctx.hint}.causal", np.bool_)
        allowed = causal if allowed is None else b.one("And", [allowed, causal], ctx.hint)
    if allowed is not None:
        scores = b.one("Where", [allowed, scores, b.const(np.asarray(_MIN, np.float32), f"{ctx.hint}.masked")],
                       ctx.hint)
    weights = b.one("Softmax", [scores], ctx.hint, axis=-1)
    y = b.one("MatMul", [weights, v], ctx.hint)  # (N, heads, T, size_v)
    y = b.one("Transpose", [y], ctx.hint, perm=[0, 2, 1, 3])
    ok = p["output_kernel"]  # (heads, size_v, P)
    heads, size_v, out = ok.shape
    y = b.one("Reshape", [y, b.ints([0, 0, heads * size_v], f"{ctx.hint}.joined")], ctx.hint)
    y = b.one("MatMul", [y, b.const(ok.reshape(heads * size_v, out), f"{ctx.hint}.output_kernel")], ctx.hint)
    if "output_bias" in p:
        y = b.one("Add", [y, b.const(p["output_bias"], f"{ctx.hint}.output_bias")], ctx.hint)
    if rank > 3:  # back to the query's axes
        axes = b.one("Shape", [ctx.inputs[0]], ctx.hint, start=0, end=-1)
        shape = b.one("Concat", [axes, b.ints([out], f"{ctx.hint}.features")], ctx.hint, axis=0)
        y = b.one("Reshape", [y, shape], ctx.hint)
    return [y]


@emitter("attention", "additive_attention")
def attention(ctx: Context) -> list:
    """Keras' Attention (Luong: ``q k^T``, times a scalar scale; or 'concat') and AdditiveAttention
    (Bahdanau: ``sum(scale * tanh(q + k))``); a causal mask subtracts 1e9 as Keras does."""
    node, a, p, b = ctx.node, ctx.node.attrs, ctx.params, ctx.b
    roles = {"query": ctx.inputs[0], "value": ctx.inputs[1], **dict(zip(a["extra_inputs"], ctx.inputs[2:]))}
    if set(roles) - {"query", "value", "key"}:
        raise Unsupported(f"{node.op} with masks ({', '.join(sorted(set(roles) - {'query', 'value', 'key'}))})")
    if len(node.outputs) != 1:
        raise Unsupported(f"{node.op} returning its scores")
    q, k, v = roles["query"], roles.get("key", roles["value"]), roles["value"]
    if node.op == "additive_attention" or a.get("score_mode") == "concat":
        qe = b.one("Unsqueeze", [q, b.ints([-2], f"{ctx.hint}.q_axes")], ctx.hint)
        ke = b.one("Unsqueeze", [k, b.ints([-3], f"{ctx.hint}.k_axes")], ctx.hint)
        inner = b.one("Add", [qe, ke], ctx.hint)
        if node.op == "additive_attention":
            t = b.one("Tanh", [inner], ctx.hint)
            if a["use_scale"]:
                t = b.one("Mul", [t, b.const(p["scale"], f"{ctx.hint}.scale")], ctx.hint)
            scores = b.one("ReduceSum", [t, b.ints([-1], f"{ctx.hint}.axes")], ctx.hint, keepdims=0)
        else:
            if a["use_scale"]:
                inner = b.one("Mul", [inner, b.const(p["scale"], f"{ctx.hint}.scale")], ctx.hint)
            t = b.one("ReduceSum", [b.one("Tanh", [inner], ctx.hint), b.ints([-1], f"{ctx.hint}.axes")], ctx.hint,
                      keepdims=0)
            scores = b.one("Mul", [t, b.const(p["concat_score_weight"], f"{ctx.hint}.concat_score_weight")], ctx.hint)
    else:
        kt = b.one("Transpose", [k], ctx.hint, perm=[0, 2, 1])
        scores = b.one("MatMul", [q, kt], ctx.hint)
        if a["use_scale"]:
            scores = b.one("Mul", [scores, b.const(p["scale"], f"{ctx.hint}.scale")], ctx.hint)
    if a["use_causal_mask"]:
        t_len, s_len = node.inputs[0].shape[1], node.inputs[1].shape[1]
        if t_len is None or s_len is None:
            raise Unsupported("a causal mask over a sequence length known only at run time")
        penalty = (1.0 - np.tril(np.ones((int(t_len), int(s_len)), np.float32))) * np.float32(1e9)
        scores = b.one("Sub", [scores, b.const(penalty, f"{ctx.hint}.causal")], ctx.hint)
    weights = b.one("Softmax", [scores], ctx.hint, axis=-1)
    return [b.one("MatMul", [weights, v], ctx.hint)]
