"""PyTorch emitters: attention layers.

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

from transpiler.ir import sizes
from transpiler.ir.graph import Node
from transpiler.printers.code import call, lit
from transpiler.printers.torch.ops import Emission, StateEntry, atom, emitter, init_line
from transpiler.ir.transforms import Transform


# ---------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------
#: what Keras' masked softmax does with a fully masked row (every score pushed to a huge
#: negative number, so the row attends uniformly): an additive bias, never -inf (NaN)
_MASK_BIAS = "torch.finfo(torch.float32).min"


#: multi_head_attention roles holding PyTorch's own masks (ir/ops.py): nn.MultiheadAttention's
#: arguments of the same names
_TORCH_MASKS = ("attn_mask", "key_padding_mask")


def _roles(node: Node, ins: list[str]) -> dict[str, str]:
    """``{role: input expression}`` of an attention node (query, value, then the extras)."""
    return {"query": ins[0], "value": ins[1], **dict(zip(node.attrs["extra_inputs"], ins[2:]))}


def _several_axes(node: Node) -> bool:
    """A query of rank > 3: Keras attends over every axis but the batch's and the features'
    (the reader refuses masks there), the same as over those axes flattened into one."""
    return len(node.inputs[0].shape or ()) > 3


def _flattened(node: Node, r: dict[str, str]) -> dict[str, str]:
    if not _several_axes(node):
        return r
    return {role: f"{atom(x)}.flatten(1, -2)" if role in ("query", "value", "key") else x for role, x in r.items()}


def _unflattened(node: Node, text: str, query: str) -> str:
    return f"{atom(text)}.unflatten(1, {atom(query)}.shape[1:-1])" if _several_axes(node) else text


def _allowed_mask(node: Node, r: dict[str, str], heads_axis: bool) -> str | None:
    """The boolean 'may attend' mask (True = attend), broadcastable to the scores
    (N, [heads,] T, S), from the explicit attention mask, the Embedding masks and the
    causal mask; None when nothing is masked."""
    h = "None, " if heads_axis else ""
    terms = []
    if "attention_mask" in r:
        am = f"{atom(r['attention_mask'])}.bool()"
        terms.append(f"{am}.unsqueeze(1)" if heads_axis else am)
    if "query_mask" in r:
        terms.append(f"({atom(r['query_mask'])} != 0)[:, {h}:, None]")
    for role in ("value_mask", "key_mask"):
        if role in r:
            terms.append(f"({atom(r[role])} != 0)[:, {h}None, :]")
    if node.attrs["use_causal_mask"]:
        q, v = atom(r["query"]), atom(r["value"])
        terms.append(f"torch.ones({q}.shape[1], {v}.shape[1], dtype=torch.bool, device={q}.device).tril()")
    return " & ".join(terms) if terms else None


def _uses_nn_multihead(node: Node) -> bool:
    """nn.MultiheadAttention computes Keras' layer when the heads split the query's
    features, values have the keys' size, the output has the query's size and at most a
    causal mask applies (other masks can fully mask a row: Keras attends uniformly there,
    nn.MultiheadAttention gives NaN)."""
    a = node.attrs
    e = node.inputs[0].shape[-1]
    masks = set(a["extra_inputs"]) - {"key", *_TORCH_MASKS}
    return ((a["num_heads"] * a["key_dim"] == e or _per_head(a["key_dim"], e, a["num_heads"]))
            and (a["value_dim"] or a["key_dim"]) == a["key_dim"] and (a["output_dim"] or e) == e and not masks)


def _per_head(key_dim, e, heads) -> bool:
    """``key_dim`` is ``e // heads`` of sizes made up for a caller's (``config.n_embd //
    config.n_head``, ir/sizes ``is_placeholder``): the made-up numbers need not divide, the
    caller's do (torch's nn.MultiheadAttention refuses others)."""
    from transpiler.ir import sizes

    if not (sizes.is_placeholder(e) or sizes.is_placeholder(heads)):
        return False
    expr = sizes._expr_of(key_dim)
    return isinstance(expr, sizes.Op) and expr.op == "//" and \
        sizes.expr_text(expr.left) == sizes.expr_text(sizes._expr_of(e) or int(e)) and \
        sizes.expr_text(expr.right) == sizes.expr_text(sizes._expr_of(heads) or int(heads))


def _glorot_heads(m_weight: str, fan: int) -> str:
    """Keras' glorot_uniform on an einsum kernel: limit sqrt(6 / fan) with its own fans."""
    return f"nn.init.uniform_({m_weight}, -math.sqrt(6.0 / {lit(fan)}), math.sqrt(6.0 / {lit(fan)}))"


def _mha_kernel_init(node: Node, target: str, fan: int) -> str:
    chosen = node.from_keras.initializers.get("kernel_initializer", "glorot_uniform")
    if chosen in ("glorot_uniform", "GlorotUniform"):
        return _glorot_heads(target, fan)
    return init_line(node, "kernel_initializer", target, "glorot_uniform")


def _emit_nn_multihead(node: Node, m: str, q_in: int, k_in: int, v_in: int, fans: dict) -> Emission:
    """The attention as one ``nn.MultiheadAttention`` (its packed or separate projections)."""
    a = node.attrs
    n, bias = a["num_heads"], a["use_bias"]
    kwargs = {"batch_first": True}
    if a["dropout"]:
        kwargs["dropout"] = a["dropout"]
    if not bias:
        kwargs["bias"] = False
    if k_in != q_in:
        kwargs["kdim"] = k_in
    if v_in != q_in:
        kwargs["vdim"] = v_in
    module = call("nn.MultiheadAttention", lit(q_in), lit(n), **kwargs)
    packed = k_in == q_in and v_in == q_in
    if packed:
        state = [StateEntry("in_proj_weight", ("query_kernel", "key_kernel", "value_kernel"),
                            Transform.HEADS_KERNEL)]
        e = q_in
        init = [_mha_kernel_init(node, f"{m}.in_proj_weight[{lit(i * e)}:{lit((i + 1) * e)}]", fans[p])
                for i, p in enumerate(("query", "key", "value"))]
    else:
        state = [StateEntry(f"{p[0]}_proj_weight", f"{p}_kernel", Transform.HEADS_KERNEL)
                 for p in ("query", "key", "value")]
        init = [_mha_kernel_init(node, f"{m}.{p[0]}_proj_weight", fans[p]) for p in ("query", "key", "value")]
    if bias:
        state.append(StateEntry("in_proj_bias", ("query_bias", "key_bias", "value_bias"), Transform.FLATTEN))
        init.append(f"nn.init.zeros_({m}.in_proj_bias)")
    state.append(StateEntry("out_proj.weight", "output_kernel", Transform.HEADS_OUTPUT_KERNEL))
    init.append(_mha_kernel_init(node, f"{m}.out_proj.weight", fans["output"]))
    if bias:
        state.append(StateEntry("out_proj.bias", "output_bias", Transform.IDENTITY))
        init.append(f"nn.init.zeros_({m}.out_proj.bias)")

    def fn(ins):
        query = ins[0]
        r = _flattened(node, _roles(node, ins))
        key = r.get("key", r["value"])
        # (torch's own masks, from a PyTorch source: passed as they were)
        extra = "".join(f", {role}={r[role]}" for role in _TORCH_MASKS if role in r)
        if a["use_causal_mask"]:
            q, v = atom(r["query"]), atom(r["value"])
            # torch's boolean attn_mask marks the positions that may NOT be attended
            extra = (f", attn_mask=torch.ones({q}.shape[1], {v}.shape[1], dtype=torch.bool, "
                     f"device={q}.device).triu(1)")
        return _unflattened(node, f"{m}({r['query']}, {key}, {r['value']}{extra}, need_weights=False)[0]", query)

    return Emission(module, fn, state=state, init=init, imports={"import math"})


@emitter("multi_head_attention")
def emit_multi_head_attention_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    roles = a["extra_inputs"]
    n, j = a["num_heads"], a["key_dim"]
    lv = a["value_dim"] or j
    q_in = node.inputs[0].shape[-1]
    v_in = node.inputs[1].shape[-1]
    k_in = node.inputs[2 + roles.index("key")].shape[-1] if "key" in roles else v_in
    out = a["output_dim"] or q_in
    # Keras' glorot fans on the (features, heads, size) and (heads, size, out) kernels
    fans = {"query": q_in * (n + j), "key": k_in * (n + j), "value": v_in * (n + lv), "output": n * (lv + out)}
    bias = a["use_bias"]
    if _uses_nn_multihead(node):
        return _emit_nn_multihead(node, m, q_in, k_in, v_in, fans)
    if set(_TORCH_MASKS) & set(roles) and set(roles) - {"key", *_TORCH_MASKS}:
        raise NotImplementedError("PyTorch's attn_mask/key_padding_mask together with Keras masks")

    layers = {"query": (q_in, n * j), "key": (k_in, n * j), "value": (v_in, n * lv), "output": (n * lv, out)}
    parts = ", ".join(f"{p}={call('nn.Linear', lit(i), lit(o), **({} if bias else {'bias': False}))}"
                      for p, (i, o) in layers.items())
    module = f"nn.ModuleDict(dict({parts}))"
    state = []
    init = []
    for p in layers:
        state.append(StateEntry(f"{p}.weight", f"{p}_kernel",
                                Transform.HEADS_OUTPUT_KERNEL if p == "output" else Transform.HEADS_KERNEL))
        init.append(_mha_kernel_init(node, f"{m}.{p}.weight", fans[p]))
        if bias:
            state.append(StateEntry(f"{p}.bias", f"{p}_bias", Transform.IDENTITY if p == "output"
                                    else Transform.FLATTEN))
            init.append(f"nn.init.zeros_({m}.{p}.bias)")

    # (a head size the program computes when it runs, issue 18: the rest of the features, -1)
    jj, lvv = ("-1" if sizes.carries_runtime(x) else x for x in (j, lv))

    def statements(ins, outs):
        query = ins[0]
        r = _flattened(node, _roles(node, ins))
        o = outs[0]
        key = r.get("key", r["value"])
        lines = [f"{o}_q = {m}.query({r['query']}).unflatten(-1, ({n}, {jj})).transpose(1, 2)",
                 f"{o}_k = {m}.key({key}).unflatten(-1, ({n}, {jj})).transpose(1, 2)",
                 f"{o}_v = {m}.value({r['value']}).unflatten(-1, ({n}, {lvv})).transpose(1, 2)"]
        kwargs = ""
        only_causal = a["use_causal_mask"] and not (set(roles) - {"key"})
        allowed = None if only_causal else _allowed_mask(node, r, heads_axis=True)
        if set(_TORCH_MASKS) & set(roles):
            # nn.MultiheadAttention's masks, added to the scores (boolean: True = -inf)
            terms = []
            for role, shape in (("attn_mask", f"-1, {n}, *{atom(r.get('attn_mask', ''))}.shape[-2:]"),
                                ("key_padding_mask", None)):
                if role not in r:
                    continue
                mk = atom(r[role])
                bias = (f"(torch.zeros({mk}.shape, dtype={o}_q.dtype, device={mk}.device).masked_fill({mk}, "
                        f"float('-inf')) if {mk}.dtype == torch.bool else {mk}.to({o}_q.dtype))")
                if shape is None:
                    bias = f"{bias}[:, None, None, :]"
                else:
                    bias = f"({bias}.reshape({shape}) if {mk}.dim() == 3 else {bias})"
                terms.append(bias)
            lines.append(f"{o}_bias = {' + '.join(terms)}")
            kwargs = f", attn_mask={o}_bias"
        elif only_causal:
            kwargs = ", is_causal=True"
        elif allowed is not None:
            # a masked position gets a huge negative score (a fully masked row attends
            # uniformly, as in Keras) rather than -inf
            lines.append(f"{o}_bias = torch.where({allowed}, 0.0, {_MASK_BIAS})")
            kwargs = f", attn_mask={o}_bias"
        if a["dropout"]:
            kwargs += f", dropout_p={lit(a['dropout'])} if self.training else 0.0"
        lines += [f"{o} = F.scaled_dot_product_attention({o}_q, {o}_k, {o}_v{kwargs})",
                  f"{o} = {_unflattened(node, f'{m}.output({o}.transpose(1, 2).flatten(2))', query)}"]
        return lines

    return Emission(module, statements=statements, state=state, init=init, imports={"import math"})


@emitter("attention", "additive_attention")
def emit_attention_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    params = [p.name for p in node.spec.active_params(a)]
    dim = node.inputs[0].shape[-1]
    module = state = None
    init: list[str] = []
    imports: set[str] = set()
    if params:
        shape = {"scale": (dim,) if node.op == "additive_attention" else ()}
        made = {p: f"nn.Parameter(torch.ones({lit(shape.get(p, ()))}))" for p in params}
        module = f"nn.ParameterDict(dict({', '.join(f'{p}={v}' for p, v in made.items())}))"
        state = [StateEntry(p, p, Transform.IDENTITY) for p in sorted(params)]  # ParameterDict sorts a dict
        if node.op == "additive_attention":
            # Keras' glorot_uniform on a (dim,) weight: fan_in = fan_out = dim
            init = [f"nn.init.uniform_({m}.scale, -math.sqrt(3.0 / {dim}), math.sqrt(3.0 / {dim}))"]
            imports = {"import math"}

    def statements(ins, outs):
        r = _roles(node, ins)
        o = outs[0]
        q, k, v = atom(r["query"]), atom(r.get("key", r["value"])), r["value"]
        if node.op == "additive_attention":
            scale = f"{m}.scale * " if a["use_scale"] else ""
            scores = f"({scale}torch.tanh({q}.unsqueeze(-2) + {k}.unsqueeze(-3))).sum(-1)"
        elif a["score_mode"] == "concat":
            inner = f"{q}.unsqueeze(-2) + {k}.unsqueeze(-3)"
            if a["use_scale"]:
                inner = f"{m}.scale * ({inner})"
            scores = f"{m}.concat_score_weight * torch.tanh({inner}).sum(-1)"
        else:
            scores = f"{q} @ {k}.transpose(-2, -1)"
            if a["use_scale"]:
                scores = f"{scores} * {m}.scale"
        lines = [f"{o}_logits = {scores}"]
        terms = []
        if "value_mask" in r:
            terms.append(f"({atom(r['value_mask'])} != 0)[:, None, :]")
        if a["use_causal_mask"]:
            terms.append(f"torch.ones({o}_logits.shape[-2:], dtype=torch.bool, device={o}_logits.device).tril()")
        if terms:
            # Keras subtracts 1e9 from the scores of the positions that may not be attended
            lines.append(f"{o}_logits = {o}_logits - 1e9 * ~({' & '.join(terms)})")
        weights = f"{o}_logits.softmax(dim=-1)"
        if a["dropout"]:
            weights = f"F.dropout({weights}, {lit(a['dropout'])}, self.training)"
        lines.append(f"{o} = {weights} @ {atom(v)}")
        if "query_mask" in r:
            lines.append(f"{o} = {o}.masked_fill(({atom(r['query_mask'])} == 0).unsqueeze(-1), 0.0)")
        return lines

    return Emission(module, statements=statements, state=state or [], init=init, imports=imports,
                    parameter=False)


