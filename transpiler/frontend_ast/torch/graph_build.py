"""The torch model reader's IR construction: nodes added with shape inference, modules called
on tensors (layers, RNNs, attention), layouts of feature maps."""

from __future__ import annotations

import math
from typing import Any

from transpiler.frontend_ast.torch import lazy_inputs
from transpiler.frontend_ast.torch import merged_batch
from transpiler.frontend_ast.torch.module_edits import raise_refusal
from transpiler.frontend_ast.torch import modules as tm
from transpiler.frontend_ast.keras.frontend import FrontendError
from transpiler.frontend_ast.torch.modules import TorchLayer, Unsupported
from transpiler.frontend_ast.torch.tensor_calls import op_for_input
from transpiler.ir import ops as ops_table
from transpiler.ir import sizes
from transpiler.frontend_ast.interp import Unknown
from transpiler.ir.graph import IRError, Span, Value
from transpiler.ir.layout import CHANNELS_FIRST, is_channels_first
from transpiler.ir.shapes import infer_node
from transpiler.frontend_ast.torch.values import (
    Mod, LayerToken, Tensor, RNNStates, _Reversed, _StackedState, _zero_state)


class TorchGraphBuilding:
    """Mixin of TorchFrontend: IR construction."""

    # -- IR construction ------------------------------------------------------------------
    def _add(self, op: str, inputs: list[Value], attrs: dict, span: Span, hint: str,
             n_out: int = 1, name: str | None = None, mod: Mod | None = None) -> Any:
        graph = self.graph
        if graph is None:
            raise Unsupported("tensor operations outside forward")
        for v in inputs:
            if not isinstance(v, Value):
                raise Unsupported(f"{op}: an input is not a tensor")
        if inputs:
            self._as_feature_map(op, inputs[0])
        try:
            node = graph.add_node(op, name or self._fresh(hint), inputs, n_out, attrs=attrs, span=span)
        except TypeError as exc:
            raise Unsupported(f"{op}: {exc}") from None
        if mod is not None:
            if mod.inits and mod.layer is not None and op == mod.layer.op:
                names = tm.KERAS_PARAM.get(op, {})
                node.from_torch.param_inits = {names[k]: v for k, v in mod.inits.items() if k in names}
            # one token per Keras layer: nodes of a torch module called twice share it,
            # the layers a multi-layer nn.LSTM expands into do not
            node.layer = self.layer_tokens.setdefault(node.name, LayerToken(mod.span))
            node.from_torch.path = mod.path
            node.source_name = node.name
            if mod in self.frozen_bias_hh:
                node.from_torch.bias_hh_frozen = True
        node.call_span = span
        try:
            infer_node(node)
        except (IRError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
            raise FrontendError(f"{op}: {exc}", span) from None
        if n_out == 1:
            return Tensor(node.outputs[0])
        return [Tensor(v) for v in node.outputs]

    def _call_module(self, mod: Mod, args, kwargs, span: Span):
        if mod.forward_cls is not None and not any(m is mod for m in self.__dict__.get("leaf_calls", ())):
            # (a subclass of a torch layer: its forward, whose super().forward is the layer; module_inherit)
            forward = mod.forward_cls.method("forward")
            return self._run_method(mod, forward, args, kwargs, forward)
        if mod.kind == "user":
            # (a submodule's first inputs: a model of its own is read on them, torch_parts)
            self.part_inputs.setdefault(mod, [a.value for a in args if isinstance(a, Tensor)])
            forward = mod.cls.method("forward")
            if forward is None:
                raise Unsupported(f"{mod.cls_name} has no forward")
            start = len(self.graph.nodes)
            out = self._run_method(mod, forward, args, kwargs, forward)
            if mod.path and mod is not self.root_mod and ("." not in mod.path or _list_item(mod.path)):
                # the nodes of one call of a block the model holds (``self.res1(y)``): a Keras
                # subclass may call the block's own class there (printers/keras/subclass)
                calls = self.block_calls = getattr(self, "block_calls", 0) + 1
                for node in self.graph.nodes[start:]:
                    node.from_torch.block_call = (mod.path, calls)
            return out
        if mod.kind == "sequential" or (mod.kind == "module_dict" and mod.cls_name == "Sequential"):
            x = args[0]
            for m in (mod.items.values() if isinstance(mod.items, dict) else mod.items):
                x = self._call_module(m, [x], {}, span)
            return x
        if mod.kind in ("module_list", "module_dict"):
            raise Unsupported(f"nn.{mod.cls_name} is not callable; iterate over it")
        if args and isinstance(args[0], merged_batch.Merged):  # (x.view(T * N, -1): merged_batch.py)
            return merged_batch.call_layer(self, mod, args[0], args[1:], kwargs, span)
        if mod.kind == "leaf" and mod.layer is None:  # (a layer the recognisers refused: module_edits)
            raise_refusal(self, mod)
        if mod.layer is not None and mod.layer.kind == "rnn_cell":
            return self._apply_cell(mod, args, kwargs, span)
        states = []
        if mod.layer is not None and mod.layer.kind == "rnn" and \
                not all(_zero_state(a) for a in list(args[1:]) + list(kwargs.values())):
            states = self._initial_states(mod, args, kwargs)
            if not isinstance(args[0], (Tensor, _Reversed)):
                raise Unsupported(f"nn.{mod.cls_name} called on something that is not a tensor")
            x = args[0]
            return self._apply_rnn(mod.layer, mod, x.tensor.value if isinstance(x, _Reversed) else x.value, span,
                                   backwards=isinstance(x, _Reversed), states=states)
        if args and isinstance(args[0], _Reversed):
            if mod.layer is None or mod.layer.kind != "rnn" or mod.layer.extra["bidirectional"]:
                raise Unsupported(f"nn.{mod.cls_name} on a flipped sequence: only a one-way RNN reads it")
            return self._apply_rnn(mod.layer, mod, args[0].tensor.value, span, backwards=True)
        if mod.layer is not None and mod.layer.kind == "attention":
            return self._apply_attention(mod, args, kwargs, span)
        if not args or not all(isinstance(a, Tensor) for a in args[:1]):
            raise Unsupported(f"nn.{mod.cls_name} called on something that is not a tensor")
        return self._apply_layer(mod.layer, mod, [a.value for a in args if isinstance(a, Tensor)], span)

    @staticmethod
    def _initial_states(mod: Mod, args, kwargs) -> list[Value]:
        """``rnn(x, hx)`` / ``rnn(x, (h0, c0))`` with states other than zeros: the (N, H) values
        of Keras' ``initial_state`` (h, and c for an LSTM). A state is torch's (1, N, H) stack:
        ``h.unsqueeze(0)``, ``h.view(1, N, H)`` or another one-layer RNN's ``h_n``."""
        what = f"nn.{mod.cls_name}"
        if set(kwargs) - {"hx"} or len(args) + len(kwargs) != 2:
            raise Unsupported(f"{what}: called with arguments other than (input, hx)")
        if mod.layer.extra["num_layers"] != 1 or mod.layer.extra["bidirectional"]:
            raise Unsupported(f"{what} with num_layers > 1 or bidirectional=True called with an initial state "
                              "other than zeros is not translated yet")
        hx = args[1] if len(args) > 1 else kwargs["hx"]
        lstm = mod.layer.op == "lstm"
        if lstm != isinstance(hx, (tuple, list)) or lstm and len(hx) != 2:
            raise Unsupported(f"{what}: the initial state is {'a pair (h0, c0)' if lstm else 'one tensor h0'}")
        values = []
        for state in (hx if lstm else [hx]):
            if isinstance(state, RNNStates) and len(state.values) == 1:
                values.append(state.values[0])  # another one-layer RNN's h_n
            elif isinstance(state, _StackedState):
                values.append(state.tensor.value)
            else:
                raise Unsupported(f"{what}: an initial state is read as torch's (1, N, H) stack of a (N, H) "
                                  "tensor (h.unsqueeze(0), h.view(1, N, H), a one-layer RNN's h_n); zeros "
                                  "mixed with a given state, or other forms, are not translated yet")
        return values

    def _apply_cell(self, mod: Mod, args, kwargs, span: Span):
        """``cell(x, hx)`` of an ``nn.LSTMCell``/``GRUCell``/``RNNCell`` (modules ``_rnn_cell``):
        the recurrent layer over the one-step sequence ``x[:, None]`` from the states ``hx``
        ((h, c) for an LSTM cell, each (N, H); none, or torch.zeros: Keras' zeros), returning
        torch's (h', c') / h'. The cell's parameters keep their torch keys (``weight_ih``)."""
        layer, what = mod.layer, f"nn.{mod.cls_name}"
        lstm = layer.op == "lstm"
        if set(kwargs) - {"hx"} or not 1 <= len(args) + len(kwargs) <= 2:
            raise Unsupported(f"{what}: called with arguments other than (input, hx)")
        x = args[0] if args else None
        if not isinstance(x, Tensor) or len(x.value.shape) != 2:
            raise Unsupported(f"{what}: the input must be one (N, input_size) tensor")
        if layer.in_features is not None and x.value.shape[-1] != layer.in_features:
            raise FrontendError(f"{what} expects input_size {layer.in_features}, the tensor has "
                                f"{x.value.shape[-1]} features (shape {x.value.shape})", span)
        hx = args[1] if len(args) > 1 else kwargs.get("hx")
        states: list[Value] = []
        if not _zero_state(hx):
            parts = list(hx) if lstm and isinstance(hx, (tuple, list)) and len(hx) == 2 else [hx]
            if lstm != (len(parts) == 2) or not all(isinstance(p, Tensor) for p in parts):
                raise Unsupported(f"{what}: the state is {'a pair (h, c)' if lstm else 'one tensor h'} of (N, "
                                  "hidden_size) tensors (torch.zeros mixed with a given state is not translated)")
            states = [p.value for p in parts]
        step = self._add("expand_dims", [x.value], {"axis": 1}, span, "step").value
        attrs = {**ops_table.get(layer.op).complete_attrs(layer.attrs), "initial_state": bool(states)}
        outs = self._add(layer.op, [step] + states, attrs, span, layer.op, n_out=3 if lstm else 2,
                         name=self._layer_name(mod), mod=mod)
        keys = ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if attrs["use_bias"] else ())
        outs[0].value.producer.from_torch.keys = {f"{k}_l0": f"{mod.path}.{k}" if mod.path else k for k in keys}
        return (outs[1], outs[2]) if lstm else outs[1]

    def _apply_attention(self, mod: Mod, args, kwargs, span: Span):
        """``attn(query, key, value)`` → Keras' (query, value, key=...) order; returns torch's
        (output, weights) pair (the weights only when need_weights=False, as None)."""
        query, key, value, need_weights, masks = tm.bind_multihead_call(mod.layer, args, kwargs)
        if not all(isinstance(t, Tensor) for t in (query, key, value)):
            raise Unsupported(f"nn.{mod.cls_name} called on something that is not a tensor")
        why = tm.check_multihead_inputs(mod.layer, query.value.shape, key.value.shape, value.value.shape)
        if why:
            raise FrontendError(why, span)
        time_major = mod.layer.extra.get("time_major")
        base = self._layer_name(mod)
        q, k, v = query.value, key.value, value.value
        if time_major:  # (L, N, E) → (N, L, E): one transpose per distinct tensor
            moved: list = []  # (tensor, its batch-major value), by identity
            for t in (q, v, k):
                if not any(t is seen for seen, _ in moved):
                    moved.append((t, self._time_major(t, span, f"{base}_batch_major")))
            q, k, v = ([new for seen, new in moved if seen is t][0] for t in (q, k, v))
        inputs, roles = [q, v], ()
        if k is not v:
            inputs, roles = inputs + [k], ("key",)
        for role, mask in masks.items():  # (neither depends on the time-major layout: (L, S), (N, S))
            if mask is None:
                continue
            if not isinstance(mask, Tensor):
                raise Unsupported(f"nn.MultiheadAttention({role}=...): the mask is not a tensor of the model")
            if len(mask.value.shape) not in ((2, 3) if role == "attn_mask" else (2,)):
                raise Unsupported(f"nn.MultiheadAttention({role}=...) of shape {mask.value.shape}")
            inputs, roles = inputs + [mask.value], roles + (role,)
        attrs = {**mod.layer.attrs, "extra_inputs": roles}
        width = query.value.shape[-1]  # (checked equal to embed_dim): a size of the caller's names
        if isinstance(width, sizes.Size) and not isinstance(attrs["key_dim"], sizes.Size):
            attrs["key_dim"] = width // attrs["num_heads"]
        out = self._add("multi_head_attention", inputs, attrs, span, "attention", name=base, mod=mod)
        if time_major:
            out = Tensor(self._time_major(out.value, span, f"{base}_time_major"))
        return (out, Unknown("attention weights (need_weights=True) are not translated") if need_weights else None)

    def _apply_layer(self, layer: TorchLayer, mod: Mod | None, inputs: list[Value], span: Span):
        x = inputs[0]
        for w in layer.warnings:
            if w not in self.warned:
                self.warned.add(w)
                self.program.warn(span, w)
        name = self._layer_name(mod) if mod is not None else None
        if layer.kind == "rnn":
            return self._apply_rnn(layer, mod, x, span)
        op, attrs = op_for_input(layer, x)
        if layer.extra.get("count_include_pad") and attrs["padding"] != "valid":
            pad_name = f"{name}_pad" if name else self._fresh("pad")
            x = self._add(f"pad{len(attrs['pool_size'])}d", [x], {"pads": attrs["padding"]}, span, "pad",
                          name=pad_name).value
            attrs["padding"] = "valid"
        self._as_feature_map(op, x)
        if layer.in_features is not None and op != "dense":
            channels = x.shape[1] if is_channels_first(x.layout) or len(x.shape) == 2 else x.shape[-1]
            if channels is not None and channels != layer.in_features:
                raise FrontendError(f"nn.{mod.cls_name if mod else op} expects {layer.in_features} input "
                                    f"channels, the tensor has {channels} (shape {x.shape})", span)
        if op == "dense" and layer.in_features is not None and x.shape[-1] is None:
            raise FrontendError(lazy_inputs.flatten_message(x, f"nn.Linear({layer.in_features}, ...) on the last axis"),
                                span)
        if op == "dense" and layer.in_features is not None and x.shape[-1] != layer.in_features:
            raise FrontendError(f"nn.Linear expects {layer.in_features} input features, the tensor has "
                                f"{x.shape[-1]} (shape {x.shape})", span)
        if op in ("batch_norm",) and len(x.shape) == 2:
            attrs["axis"] = 1
        if op == "softmax" or op == "log_softmax" or op == "concat":
            pass
        if op == "layer_norm":
            shape = layer.extra["normalized_shape"]
            if tuple(x.shape[-len(shape):]) != tuple(shape):
                raise FrontendError(f"nn.LayerNorm{shape}: the tensor's trailing shape is {x.shape}", span)
        if op == "flatten" and len(x.shape) == 2:
            return Tensor(x)
        if op == "prelu":
            n, rank = layer.extra["num_parameters"], len(x.shape)
            if n == 1:  # one slope for every element: every non-batch axis shared
                attrs["shared_axes"] = tuple(range(1, rank))
            elif n == x.shape[1] and n > 1:
                attrs["shared_axes"] = tuple(range(2, rank)) or None
            else:
                raise Unsupported(f"nn.PReLU(num_parameters={n}) on a {x.shape} tensor is not supported")
        out = self._add(op, [x], attrs, span, op, name=name, mod=mod)
        if op == "embedding" and layer.extra.get("padding_idx") is not None:
            out.value.producer.from_torch.padding_idx = layer.extra["padding_idx"]
        if op == "prelu":
            out.value.producer.from_torch.alpha_init = layer.extra["init"]
        if op == "reshape":
            out.value.producer.out_layout = self._reshape_layout(len(out.value.shape))
            infer_node(out.value.producer)
        return out

    def _apply_rnn(self, layer: TorchLayer, mod: Mod, x: Value, span: Span, backwards: bool = False,
                   states: list[Value] | None = None):
        n_layers, bidi, dropout = layer.extra["num_layers"], layer.extra["bidirectional"], layer.extra["dropout"]
        if layer.in_features is not None and x.shape[-1] != layer.in_features:
            raise FrontendError(f"nn.{mod.cls_name} expects input_size {layer.in_features}, the tensor has "
                                f"{x.shape[-1]} features (shape {x.shape})", span)
        base = self._layer_name(mod)
        states_h, states_c = [], []
        op = layer.op
        time_major = layer.extra.get("time_major")
        if time_major:
            if backwards:
                raise Unsupported(f"nn.{mod.cls_name}(batch_first=False) on a flipped sequence is not translated yet")
            x = self._time_major(x, span, f"{base}_batch_major")
        inner = ops_table.get(op).complete_attrs(layer.attrs)
        for i in range(int(n_layers)):  # (int(): the layer count is structure, its name specialised)
            name = base if n_layers == 1 else f"{base}_l{i}"
            if bidi:
                outs = self._add("bidirectional", [x], {"merge_mode": "concat", "layer": {"op": op, "attrs": inner}},
                                 span, op, n_out=1 + (4 if op == "lstm" else 2), name=name, mod=mod)
                per = 2 if op == "lstm" else 1
                fwd, bwd = outs[1:1 + per], outs[1 + per:]
                states_h += [fwd[0].value, bwd[0].value]
                if op == "lstm":
                    states_c += [fwd[1].value, bwd[1].value]
            else:
                attrs = {**inner, "go_backwards": backwards and i == 0, "initial_state": bool(states)}
                outs = self._add(op, [x] + (states or []), attrs, span, op, n_out=3 if op == "lstm" else 2,
                                 name=name, mod=mod)
                states_h.append(outs[1].value)
                if op == "lstm":
                    states_c.append(outs[2].value)
            node = outs[0].value.producer
            node.from_torch.layer_index = i
            x = outs[0].value
            if dropout and i < n_layers - 1:
                x = self._add("dropout", [x], {"rate": dropout}, span, "dropout", name=f"{base}_dropout{i}").value
        seq = Tensor(self._time_major(x, span, f"{base}_time_major") if time_major else x)
        if op == "lstm":
            return (seq, (RNNStates(states_h), RNNStates(states_c)))
        return (seq, RNNStates(states_h))

    def _time_major(self, x: Value, span: Span, name: str) -> Value:
        """Swap the time and batch axes of a rank-3 sequence: torch's time-major (L, N, F) of an
        RNN or attention built without ``batch_first`` to Keras' (N, L, F) and back (the layer
        computes batch-major between two such transposes; the layout pass folds a pair that
        meets, e.g. two time-major layers in a row)."""
        if len(x.shape) != 3:
            raise Unsupported(f"a time-major sequence layer (batch_first=False) reads a (L, N, F) tensor, "
                              f"got shape {x.shape}")
        taken = {n.name for n in self.graph.nodes}
        while name in taken:
            name += "_"
        out = self._add("transpose", [x], {"perm": (1, 0, 2)}, span, "transpose", name=name).value
        out.producer.from_torch.time_major = True
        return out

    def _as_feature_map(self, op: str, x: Value) -> None:
        """torch's convolutions and pools read axis 1 as channels: a value they read is a
        channels-first map. A graph input or a reshape/permute result is tagged so (its tag
        was a guess); any other value tagged otherwise cannot be read that way."""
        if ops_table.get(op).layout != ops_table.IMPLICIT or len(x.shape) < 3 or is_channels_first(x.layout):
            return
        target = CHANNELS_FIRST[len(x.shape)]
        if x.producer is None:
            x.layout = target
        elif x.producer.op in ("transpose", "reshape"):
            x.producer.out_layout = target
            infer_node(x.producer)
        else:
            raise Unsupported(f"{op} reads axis 1 of a {x.layout} tensor as channels; permute it first")

    def _as_map_of(self, x: Value, other: Value) -> None:
        """A reshape result (``y.view(b, c, 1, 1)``, ``y.unsqueeze(-1).unsqueeze(-1)``,
        ``y[:, :, None, None]``, its tag a guess) broadcast against a channels-first map of its rank is a channels-first
        map too (torch has no other layout): a squeeze-and-excitation gate."""
        if len(x.shape) >= 3 and len(x.shape) == len(other.shape) and is_channels_first(other.layout) and \
                x.layout != other.layout and x.producer is not None and x.producer.op in ("reshape", "expand_dims"):
            x.producer.out_layout = other.layout
            infer_node(x.producer)

    def _reshape_layout(self, rank: int) -> str | None:
        """A reshape in torch produces a channels-first map (rank 3 to 5)."""
        return CHANNELS_FIRST.get(rank)

    def _spread(self, t: Tensor, name: str, args, kwargs, span: Span) -> Tensor:
        """``x.var(dim, keepdim=True)``, ``x.std(1, unbiased=False)``: the mean square deviation
        over static non-batch dims, divided by n - correction (torch's default correction is 1)."""
        x = t.value
        dim = args[0] if args else kwargs.get("dim")
        unbiased = args[1] if len(args) > 1 else kwargs.get("unbiased", True)
        keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        correction = kwargs.get("correction", 1 if unbiased else 0)
        if set(kwargs) - {"dim", "unbiased", "keepdim", "correction"} or not isinstance(unbiased, bool) or \
                isinstance(correction, bool) or not isinstance(correction, (int, float)):
            raise Unsupported(f".{name}(): dim, keepdim and unbiased/correction known statically only")
        mean = self._reduce(t, "mean", [dim, True], {}, span)
        dims = {d % len(x.shape) for d in ((dim,) if isinstance(dim, int) else dim)}
        count = math.prod(x.shape[d] for d in dims)
        if count - correction <= 0:
            raise Unsupported(f".{name}() over {count} element(s) with correction {correction}")
        deviation = self._add("subtract", [x, mean.value], {}, span, "deviation")
        squares = self._add("square", [deviation.value], {}, span, "square")
        total = self._reduce(squares, "sum", [dim, keep], {}, span)
        var = self._add("rescaling", [total.value], {"scale": 1.0 / (count - correction), "offset": 0.0}, span,
                        "var")
        return var if name == "var" else self._add("sqrt", [var.value], {}, span, "std")

    def _l2_norm(self, t, name: str, args, kwargs, span: Span) -> Tensor:
        """``x.norm(dim=1, keepdim=True)``, ``torch.norm(x, 2, -1)`` (torch's order: p, dim,
        keepdim): the 2-norm over static non-batch dims, the root of the sum of squares."""
        p = args[0] if args else kwargs.get("p", "fro")
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        if p not in (2, 2.0, "fro") or isinstance(p, bool) or set(kwargs) - {"p", "dim", "keepdim"}:
            raise Unsupported(f".{name}(p={p!r}): only the 2-norm is supported")
        squares = self._add("square", [t.value], {}, span, "square")
        total = self._reduce(squares, "sum", [dim, keep], {}, span)
        return self._add("sqrt", [total.value], {}, span, "norm")

    @staticmethod
    def _interpolate_factor(x: Value, args: list, kwargs: dict) -> tuple[list, dict]:
        """``F.interpolate(x, size=skip.shape[2:])`` to a whole multiple of x's spatial size is
        ``scale_factor=`` that multiple (the same source positions, nearest or bilinear)."""
        kwargs.update(zip(("size", "scale_factor", "mode", "align_corners"), args[1:]))
        size, spatial = kwargs.get("size"), tuple(x.shape[2:])
        if size is None or kwargs.get("scale_factor") is not None:
            return args[:1], kwargs
        sizes = (size,) * len(spatial) if isinstance(size, int) else tuple(size) if isinstance(size, (tuple, list)) \
            else ()
        if len(sizes) == len(spatial) and all(isinstance(n, int) and isinstance(h, int) and h and n % h == 0
                                              for n, h in zip(sizes, spatial)):
            kwargs["size"], kwargs["scale_factor"] = None, tuple(n // h for n, h in zip(sizes, spatial))
        return args[:1], kwargs


def _list_item(path: str) -> bool:
    """``blocks.0``: an item of a list or Sequential the model holds (a block called in a loop,
    frontend_ast/torch/repeated_blocks)."""
    parts = path.split(".")
    return len(parts) == 2 and parts[1].isdigit()
