"""PyTorch emitters: embedding and recurrent layers.

Registered in the emitter table of :mod:`transpiler.printers.torch.ops` by decorator
(that module imports this one).
"""

from __future__ import annotations

import re

from transpiler.ir.graph import Node
from transpiler.printers.code import Code, call, lit, size_arg
from transpiler.printers.torch.ops import Emission, StateEntry, atom, emitter, init_line
from transpiler.ir.transforms import Transform


# ---------------------------------------------------------------------------------
# Embedding and recurrent layers
# ---------------------------------------------------------------------------------
@emitter("embedding")
def emit_embedding_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    # --exact: the lookup also records its gradient per token occurrence
    cls = "KerasEmbedding" if node.occurrence_slices else "nn.Embedding"
    module = call(cls, lit(a["input_dim"]), lit(a["output_dim"]))
    cast = not node.inputs[0].dtype.startswith(("int", "uint"))
    init = [init_line(node, "embeddings_initializer", f"{m}.weight", "uniform")]
    return Emission(module, lambda ins: f"{m}({ins[0]}.long())" if cast else f"{m}({ins[0]})",
                    state=[StateEntry("weight", "embeddings", Transform.IDENTITY)], init=init)


_RNN_CLASS = {"lstm": "nn.LSTM", "gru": "nn.GRU", "simple_rnn": "nn.RNN"}


def _rnn_state(op: str, prefix: str, suffix: str, use_bias: bool) -> list[StateEntry]:
    # torch adds two biases; Keras has one: the second is zero (a GRU's, reset_after, splits in two)
    kernel, bias_ih, bias_hh = ((Transform.GRU_KERNEL, Transform.GRU_BIAS_INPUT, Transform.GRU_BIAS_RECURRENT)
                                if op == "gru" else (Transform.TRANSPOSE, Transform.IDENTITY, Transform.ZEROS))
    entries = [StateEntry(f"weight_ih_l0{suffix}", f"{prefix}kernel", kernel),
               StateEntry(f"weight_hh_l0{suffix}", f"{prefix}recurrent_kernel", kernel)]
    if use_bias:
        entries += [StateEntry(f"bias_ih_l0{suffix}", f"{prefix}bias", bias_ih),
                    StateEntry(f"bias_hh_l0{suffix}", f"{prefix}bias", bias_hh)]
    return entries


def _rnn_init(op: str, a: dict, m: str, suffix: str, node: Node) -> list[str]:
    lines = [init_line(node, "kernel_initializer", f"{m}.weight_ih_l0{suffix}", "glorot_uniform"),
             init_line(node, "recurrent_initializer", f"{m}.weight_hh_l0{suffix}", "orthogonal")]
    if a["use_bias"]:
        lines += [f"nn.init.zeros_({m}.bias_ih_l0{suffix})", f"nn.init.zeros_({m}.bias_hh_l0{suffix})"]
        if op == "lstm" and a.get("unit_forget_bias"):
            u = a["units"]
            lines.append(f"nn.init.ones_({m}.bias_ih_l0{suffix}[{lit(u)}:{lit(2 * u)}])  # Keras unit_forget_bias")
    return lines


#: Keras' activation of a recurrent layer → the torch function the runtime's ActivationLSTM
#: is given (``activation="tanh"`` is nn.LSTM's own)
RNN_ACTIVATIONS = {"relu": "torch.relu", "sigmoid": "torch.sigmoid", "elu": "F.elu", "selu": "F.selu",
                   "gelu": "F.gelu", "silu": "F.silu", "swish": "F.silu", "softplus": "F.softplus",
                   "softsign": "F.softsign", "linear": "nn.Identity()"}
#: where ActivationLSTM lives (copied into the output by printers/torch/script.py)
RUNTIME = "torch.recurrent"
_HELPERS = ("ActivationLSTM", "ConvLSTM2D")


def helpers_used(text: str) -> list[str]:
    """The runtime classes of this module generated code calls."""
    return [name for name in _HELPERS if re.search(rf"\b{name}\(", text)]


def _rnn_module(op: str, a: dict, in_features: int, bidirectional: bool) -> str:
    kwargs = {"batch_first": True}
    if not a["use_bias"]:
        kwargs["bias"] = False
    if bidirectional:
        kwargs["bidirectional"] = True
    act = a.get("activation", "tanh")
    if op == "lstm" and act != "tanh":  # (Keras' arithmetic, stepped in Python: runtime/torch/recurrent.py)
        if bidirectional or act not in RNN_ACTIVATIONS:
            raise NotImplementedError(f"LSTM(activation={act!r})" + (" in Bidirectional" if bidirectional else ""))
        return call("ActivationLSTM", lit(in_features), lit(a["units"]), RNN_ACTIVATIONS[act], **kwargs)
    return call(_RNN_CLASS[op], lit(in_features), lit(a["units"]), **kwargs)


def _frozen_second_bias(op: str, a: dict, m: str, suffixes: list[str]) -> list[str]:
    """Keras' LSTM/SimpleRNN have one bias; torch's second (bias_hh) must stay zero, or
    training would move the effective bias twice as fast."""
    if op == "gru" or not a["use_bias"]:
        return []
    return ["# Keras has one bias: torch's second (bias_hh) stays zero"] + [
        f"{m}.bias_hh_l0{s}.requires_grad_(False)" for s in suffixes]


def _torch_initial_state(node: Node, ins) -> str | None:
    """The torch form of an RNN node's ``initial_state`` inputs (None without them): Keras'
    states are (N, units), torch's (num_layers * directions, N, units), here one layer."""
    if not node.attrs.get("initial_state"):
        return None
    states = [f"{atom(s)}.unsqueeze(0)" for s in ins[1:]]
    return f"({states[0]}, {states[1]})" if len(states) == 2 else states[0]


def _masked_rnn_statements(node: Node, m: str):
    """Keras' masked recurrence: a step whose token id is 0 leaves the state unchanged and
    repeats the previous output. One module call per step (exact for any mask; torch's
    pack_padded_sequence would only cover padding at the end)."""
    a = node.attrs
    lstm = node.op == "lstm"

    def statements(ins, outs):
        o = outs[0]
        lines, x = _input_dropout(a, ins[0], o)
        ids = ins[1]
        if not x.isidentifier():
            lines.append(f"{o}_in = {x}")
            x = f"{o}_in"
        state, new, t = f"{o}_state", f"{o}_new", f"{o}_t"
        zeros = f"{x}.new_zeros(1, {x}.shape[0], {a['units']})"
        lines += [f"{o}_keep = {atom(ids)} != 0  # Keras' mask: padded steps are skipped",
                  f"{state} = ({zeros}, {zeros})" if lstm else f"{state} = {zeros}"]
        if a["return_sequences"]:
            lines.append(f"{o}_steps = []")
        steps = f"range({x}.shape[1])"
        lines.append(f"for {t} in {'reversed(' + steps + ')' if a['go_backwards'] else steps}:")
        lines.append(f"    _, {new} = {m}({x}[:, {t} : {t} + 1], {state})")
        kept = f"{o}_keep[:, {t}].view(1, -1, 1)"
        if lstm:
            lines.append(f"    {state} = tuple(torch.where({kept}, n, s) for n, s in zip({new}, {state}))")
        else:
            lines.append(f"    {state} = torch.where({kept}, {new}, {state})")
        h = f"{state}[0][0]" if lstm else f"{state}[0]"
        if a["return_sequences"]:
            lines += [f"    {o}_steps.append({h})", f"{o} = torch.stack({o}_steps, dim=1)"]
        else:
            lines.append(f"{o} = {h}")
        if a["return_state"]:
            lines.append(f"{outs[1]} = {h}")
            if lstm:
                lines.append(f"{outs[2]} = {state}[1][0]")
        return lines

    return statements


def _input_dropout(a: dict, x: str, o: str) -> tuple[list[str], str]:
    """Keras' ``dropout=`` of a recurrent layer: in training one mask per sequence and input
    feature, the same at every step (F.dropout1d over (N, features, steps)), scaled by
    1 / (1 - rate). The statements and the name of the input the recurrence then reads."""
    rate = a.get("dropout") or 0.0
    if not 0.0 < rate < 1.0:
        return [], x
    return [f"# Keras' RNN dropout: one mask per sequence and input feature, the same at every step",
            f"{o}_in = F.dropout1d({atom(x)}.transpose(1, 2), {lit(rate)}, self.training).transpose(1, 2)"], f"{o}_in"


@emitter("simple_rnn", "lstm", "gru")
def emit_rnn_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    module = _rnn_module(node.op, a, node.inputs[0].shape[-1], False)
    state = _rnn_state(node.op, "", "", a["use_bias"])
    init = _rnn_init(node.op, a, m, "", node)
    setup = _frozen_second_bias(node.op, a, m, [""])
    lstm = node.op == "lstm"
    if a.get("masked"):
        return Emission(module, statements=_masked_rnn_statements(node, m), state=state, init=init, setup=setup)

    def statements(ins, outs):
        dropped, x = _input_dropout(a, ins[0], outs[0])
        if a["go_backwards"]:
            # Keras runs over the reversed sequence and returns outputs in that order.
            x = f"{x}.flip(1)"
        seq = outs[0] if a["return_sequences"] else f"{outs[0]}_seq"
        h = outs[1] if a["return_state"] else "_"
        start = _torch_initial_state(node, ins)
        args = x if start is None else f"{x}, {start}"
        if lstm:
            c = outs[2] if a["return_state"] else "_"
            lines = dropped + [f"{seq}, ({h}, {c}) = {m}({args})"]
        else:
            lines = dropped + [f"{seq}, {h} = {m}({args})"]
        if a["return_state"]:
            lines.append(f"{h} = {h}[0]")
            if lstm:
                lines.append(f"{c} = {c}[0]")
        if not a["return_sequences"]:
            lines.append(f"{outs[0]} = {seq}[:, -1]")
        return lines

    return Emission(module, statements=statements, state=state, init=init, setup=setup)


@emitter("bidirectional")
def emit_bidirectional_torch(node: Node, m: str) -> Emission:
    inner = node.attrs["layer"]
    op, a = inner["op"], inner["attrs"]
    if a["go_backwards"]:
        raise NotImplementedError("Bidirectional over a go_backwards layer")
    u = a["units"]
    mode = node.attrs["merge_mode"]
    module = _rnn_module(op, a, node.inputs[0].shape[-1], True)
    state = _rnn_state(op, "forward.", "", a["use_bias"]) + _rnn_state(op, "backward.", "_reverse", a["use_bias"])
    init = _rnn_init(op, a, m, "", node) + _rnn_init(op, a, m, "_reverse", node)
    setup = _frozen_second_bias(op, a, m, ["", "_reverse"])
    lstm = op == "lstm"
    merge = {"concat": "torch.cat([{f}, {b}], dim=-1)", "sum": "{f} + {b}", "mul": "{f} * {b}",
             "ave": "({f} + {b}) / 2"}

    def statements(ins, outs):
        dropped, x = _input_dropout(a, ins[0], outs[0])  # (one mask for both directions: see calls.py)
        # merge_mode=None assigns outs[0] before reading the second half: keep the sequence apart.
        seq = outs[0] if a["return_sequences"] and mode != "none" else f"{outs[0]}_seq"
        hname = f"{outs[0]}_h"
        cname = f"{outs[0]}_c"
        lines = dropped + [f"{seq}, ({hname}, {cname}) = {m}({x})" if lstm else f"{seq}, {hname} = {m}({x})"]
        if a["return_sequences"]:
            fwd, bwd = f"{seq}[..., :{u}]", f"{seq}[..., {u}:]"
        else:
            # The backward direction's last step is its state after reading the whole
            # (reversed) sequence: torch's h_n[1].
            fwd, bwd = f"{hname}[0]", f"{hname}[1]"
        n_main = 2 if mode == "none" else 1
        if mode == "none":
            lines += [f"{outs[0]} = {fwd}", f"{outs[1]} = {bwd}"]
        elif mode != "concat" or not a["return_sequences"]:
            lines.append(f"{outs[0]} = {merge[mode].format(f=fwd, b=bwd)}")
        if a["return_state"]:
            states = outs[n_main:]
            if lstm:
                lines += [f"{states[0]} = {hname}[0]", f"{states[1]} = {cname}[0]",
                          f"{states[2]} = {hname}[1]", f"{states[3]} = {cname}[1]"]
            else:
                lines += [f"{states[0]} = {hname}[0]", f"{states[1]} = {hname}[1]"]
        return lines

    return Emission(module, statements=statements, state=state, init=init, setup=setup)




@emitter("conv_lstm2d")
def emit_conv_lstm2d_torch(node: Node, m: str) -> Emission:
    """The runtime's ConvLSTM2D (runtime/torch/recurrent.py): torch has no convolutional LSTM.
    It reads (N, C, T, H, W), the layout the pass gives an implicit op of rank 5."""
    a = node.attrs
    x = node.inputs[0]
    in_channels = x.shape[x.layout.index("C")]
    kwargs = {}
    if any(s != 1 for s in a["strides"]):
        kwargs["stride"] = size_arg(a["strides"])
    if a["padding"] != "valid":
        kwargs["padding"] = a["padding"]
    if any(d != 1 for d in a["dilation"]):
        kwargs["dilation"] = size_arg(a["dilation"])
    if not a["use_bias"]:
        kwargs["bias"] = False
    if a["activation"] != "tanh":
        kwargs["activation"] = Code(RNN_ACTIVATIONS[a["activation"]])
    if a["return_sequences"]:
        kwargs["return_sequences"] = True
    if a["go_backwards"]:
        kwargs["go_backwards"] = True
    module = call("ConvLSTM2D", lit(in_channels), lit(a["filters"]), size_arg(a["kernel_size"]), **kwargs)
    state = [StateEntry("weight_ih", "kernel", Transform.CONV_KERNEL),
             StateEntry("weight_hh", "recurrent_kernel", Transform.CONV_KERNEL)]
    init = [init_line(node, "kernel_initializer", f"{m}.weight_ih", "glorot_uniform"),
            init_line(node, "recurrent_initializer", f"{m}.weight_hh", "orthogonal")]
    if a["use_bias"]:
        state.append(StateEntry("bias", "bias", Transform.IDENTITY))
        init.append(f"nn.init.zeros_({m}.bias)")
        if a["unit_forget_bias"]:
            f = a["filters"]
            init.append(f"nn.init.ones_({m}.bias[{lit(f)}:{lit(2 * f)}])  # Keras unit_forget_bias")
    return Emission(module, lambda ins: f"{m}({ins[0]})", state=state, init=init)
