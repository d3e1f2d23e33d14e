"""The torch model reader's tensor functions and methods: torch.nn.functional and torch.* on
tensors, tensor methods (view, permute, split, expand, repeat, reductions, ...)."""

from __future__ import annotations

import math

import libcst as cst

from transpiler.frontend_ast.torch import lazy_inputs
from transpiler.frontend_ast.torch import modules as tm
from transpiler.frontend_ast.keras.frontend import FrontendError
from transpiler.frontend_ast.torch.modules import TorchLayer, Unsupported
from transpiler.frontend_ast.torch.merged_batch import merge_view
from transpiler.frontend_ast.interp import BatchDim
from transpiler.ir.graph import Span, Value
from transpiler.ir.layout import CHANNELS_FIRST, is_channels_first
from transpiler.ir.shapes import infer_node, spatial_axes
from transpiler.frontend_ast.torch.values import (
    Ref, Tensor, Shape, _MaxResult, _Reversed, _StackedState, _UNARY_FUNCTIONS, _REDUCTIONS,
    _FILLED_LIKE, _TORCH_DTYPES, _METHOD_FUNCTIONS, _ZeroState)


def op_for_input(layer: TorchLayer, x: Value) -> tuple[str, dict]:
    """The op and attributes of ``layer`` applied to ``x``: an ``nn.Upsample`` takes its
    rank (and one size per spatial axis) from its input."""
    op, attrs = layer.op, dict(layer.attrs)
    if op.startswith("upsample") and layer.extra.get("rank_from_input"):
        rank = len(x.shape) - 2
        op = f"upsample{rank}d"
        attrs["size"] = (attrs["size"][0],) * rank
    return op, attrs

class TorchTensorCalls:
    """Mixin of TorchFrontend: tensor functions and methods."""

    def _functional(self, fname: str, args, kwargs, span: Span):
        if fname == "normalize":  # x / max(‖x‖₂ over dim, eps)
            if not args or not isinstance(args[0], Tensor) or kwargs.get("p", args[1] if len(args) > 1 else 2) != 2:
                raise Unsupported("F.normalize: only p=2 of a tensor is supported")
            dim = args[2] if len(args) > 2 else kwargs.get("dim", 1)
            eps = args[3] if len(args) > 3 else kwargs.get("eps", 1e-12)
            norm = self._l2_norm(args[0], fname, [2, dim, True], {}, span)
            floor = self._add("clip", [norm.value], {"min": float(eps), "max": None}, span, "clip")
            return self._add("divide", [args[0].value, floor.value], {}, span, "normalized")
        if fname == "interpolate" and args and isinstance(args[0], Tensor):
            args, kwargs = self._interpolate_factor(args[0].value, list(args), dict(kwargs))
        if fname in ("flatten",):
            return self._tensor_method(args[0], "flatten", args[1:], kwargs, None, span)
        if fname == "dropout" or fname == "dropout2d":
            training = kwargs.pop("training", True)
            if training is False:
                return args[0]
        if not args or not isinstance(args[0], Tensor):
            raise Unsupported(f"F.{fname}: the first argument is not a tensor")
        layer = tm.recognize_function(fname, [None] + list(args[1:]), kwargs)
        x = args[0].value
        hint = layer.op if layer.op else fname
        if fname.startswith("max_pool") or fname.startswith("avg_pool") or fname.startswith("adaptive"):
            hint = fname
        return self._apply_layer(layer, None, [x], span) if layer.kind != "op" else \
            self._apply_functional(layer, x, span, hint)

    def _apply_functional(self, layer: TorchLayer, x: Value, span: Span, hint: str):
        op, attrs = op_for_input(layer, x)
        if layer.extra.get("count_include_pad") and attrs["padding"] != "valid":
            x = self._add(f"pad{len(attrs['pool_size'])}d", [x], {"pads": attrs["padding"]}, span, "pad").value
            attrs["padding"] = "valid"
        self._as_feature_map(op, x)
        return self._add(op, [x], attrs, span, hint)

    def _split(self, x: Value, name: str, args, kwargs, span: Span) -> tuple:
        """``x.chunk(n, dim)`` (pieces of ceil(size / n), so maybe fewer than n) and
        ``x.split(size or sizes, dim)`` (the last piece takes what is left): a tuple of pieces."""
        arg = args[0] if args else kwargs.get("chunks", kwargs.get("split_size_or_sections"))
        dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        rank = len(x.shape)
        if not isinstance(dim, int) or not -rank <= dim < rank or dim % rank == 0:
            raise Unsupported(f".{name}() along the batch axis (or a dim not known statically) is not supported")
        total = x.shape[dim]
        if isinstance(arg, (list, tuple)) and name == "split" and all(isinstance(n, int) and n > 0 for n in arg):
            sizes = tuple(arg)
            if sum(sizes) != total:
                raise FrontendError(f".split({list(sizes)}): the sizes do not add up to {total} (shape {x.shape})",
                                    span)
        elif isinstance(arg, int) and not isinstance(arg, bool) and arg > 0:
            step = -(-total // arg) if name == "chunk" else arg
            sizes = tuple(min(step, total - start) for start in range(0, total, step))
        else:
            raise Unsupported(f".{name}({arg!r}): give a number of pieces or piece sizes")
        if len(sizes) == 1:
            return (Tensor(x),)
        return tuple(self._add("split", [x], {"sizes": sizes, "axis": dim}, span, "split", n_out=len(sizes)))

    # long: one case per tensor method (casts, split, masked_fill, reductions, shape queries)
    def _tensor_method(self, t, name, args, kwargs, node, span: Span | None = None):
        span = span or self._span(node)
        if not isinstance(t, Tensor):
            raise Unsupported(f".{name}() on something that is not a tensor")
        x = t.value
        rank = len(x.shape)
        if name == "float" and x.dtype == "bool":  # a comparison's mask as numbers
            return self._add("cast", [x], {"dtype": "float32"}, span, "cast")
        if name in ("contiguous", "float", "clone", "long", "int"):
            if name in ("long", "int") and not x.dtype.startswith("int"):
                if x.producer is not None:  # (categorical columns of a float table: x[:, :3].long())
                    return self._add("cast", [x], {"dtype": "int64" if name == "long" else "int32"}, span, "cast")
                # float token ids given to the model: Keras' Embedding casts them the same way
                self.program.warn(span, f"the float input {x.var!r} is cast to integers where it is read "
                                        "(Keras' Embedding does that itself)")
            return t
        if name == "new_zeros" and set(kwargs) <= {"device", "dtype", "requires_grad"}:
            return _ZeroState()  # (an RNN's initial state, as torch.zeros: anything else refuses it)
        if name in ("chunk", "split"):
            return self._split(x, name, args, kwargs, span)
        if name == "masked_fill" and len(args) + len(kwargs) == 2:
            mask = args[0] if args else kwargs.get("mask")
            value = args[1] if len(args) > 1 else kwargs.get("value")
            return self._tensor_operands("where", [mask, value, t], span)  # (value where mask, else x)
        if name == "flip":
            dims = tuple(args) if args and isinstance(args[0], int) else tuple(args[0] if args else kwargs["dims"])
            if dims not in ((1,), [1]) or len(x.shape) != 3:
                raise Unsupported(f".flip{dims}: only reversing the time axis of (N, T, F) for an RNN is supported")
            return _Reversed(t)
        if name in ("amax", "max") and (args or "dim" in kwargs):
            dims = args[0] if args else kwargs["dim"]
            keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
            dims = tuple(sorted(d % rank for d in ((dims,) if isinstance(dims, int) else tuple(dims))))
            if dims and is_channels_first(x.layout) and tuple(spatial_axes(x.layout or "")) == dims:
                out = self._add(f"global_max_pool{len(dims)}d", [x], {"keepdims": bool(keep)}, span, "max")
                return _MaxResult(out) if name == "max" else out
            out = self._reduce(t, "amax", (dims, keep), {}, span)
            return out if name == "amax" else _MaxResult(out)  # (values, indices): the values
        if name == "size":
            if args:
                return BatchDim(x) if args[0] == 0 else lazy_inputs.axis_size(x, args[0])
            return Shape(x)
        if name == "dim":
            return rank
        if name in _METHOD_FUNCTIONS:
            return self._functional(name, [t] + list(args), kwargs, span)
        if name in _UNARY_FUNCTIONS and not args and not kwargs:
            op = _UNARY_FUNCTIONS[name]
            return self._add(op, [x], {}, span, "absolute" if op == "abs" else op)  # (not the builtin's name)
        if name == "norm":
            return self._l2_norm(t, name, args, kwargs, span)
        if name in ("std", "var"):
            return self._spread(t, name, args, kwargs, span)
        if name in ("clamp", "clip"):
            lo = args[0] if args else kwargs.get("min")
            hi = args[1] if len(args) > 1 else kwargs.get("max")
            if not all(v is None or isinstance(v, (int, float)) for v in (lo, hi)):
                raise Unsupported(f".{name}(): bounds must be numbers")
            return self._add("clip", [x], {"min": lo, "max": hi}, span, "clip")
        if name in ("sum", "amax", "amin") and (args or "dim" in kwargs):
            return self._reduce(t, name, args, kwargs, span)
        if name in ("flatten",):
            start = args[0] if args else kwargs.get("start_dim", 0 if node is None else 0)
            end = args[1] if len(args) > 1 else kwargs.get("end_dim", -1)
            if isinstance(start, int) and isinstance(end, int) and 1 < start % rank < end % rank:
                # x.flatten(2): (N, C, H, W) → (N, C, H·W), a reshape (ViT's patch tokens)
                s, e = start % rank, end % rank
                shape = [BatchDim(), *x.shape[1:s], math.prod(x.shape[s:e + 1]), *x.shape[e + 1:]]
                return self._tensor_method(t, "reshape", shape, {}, node, span)
            if start != 1 or end != -1:
                raise Unsupported(f"flatten(start_dim={start}, end_dim={end}): only start_dim=1 and flattening "
                                  "non-batch axes after it are supported")
            if rank == 2:
                return t
            return self._add("flatten", [x], {}, span, "flatten")
        if name in ("view", "reshape"):
            shape = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
            merged = merge_view(t, shape)  # (x.view(T * N, -1) around a last-axis layer: merged_batch.py)
            if merged is not None:
                return merged
            if rank == 2 and len(shape) == 3 and shape[0] == 1 and (isinstance(shape[1], BatchDim) or shape[1] == -1) \
                    and shape[2] in (x.shape[1], -1) and shape[1:].count(-1) <= 1:
                return _StackedState(t)  # h.view(1, N, H): an RNN's initial state
            if shape and _time_major_batch(self.graph, shape[0]):
                shape[0] = BatchDim()  # (``inputs.size(1)`` of a time-major sequence: its batch)
            if not shape or not (isinstance(shape[0], BatchDim) or shape[0] == -1):
                raise Unsupported(f".{name}{tuple(shape)}: the first size must be the batch (x.size(0) or -1)")
            rest = shape[1:]
            if shape == [-1] and math.prod(x.shape[1:]) == 1:
                rest = []  # (N, 1, ..., 1).view(-1): one number per example
                out = self._add("reshape", [x], {"shape": ()}, span, "reshape")
                return out
            if None in x.shape[1:]:
                what = f".{name}({', '.join('x.size(0)' if isinstance(d, BatchDim) else repr(d) for d in shape)})"
                raise Unsupported(lazy_inputs.flatten_message(x, what))
            if shape[0] == -1 and -1 in rest:
                raise Unsupported(f".{name}: two -1 sizes")
            if not all(isinstance(s, int) for s in rest):
                raise Unsupported(f".{name}{tuple(shape)}: sizes must be known statically")
            if -1 in rest and len(rest) > 1:
                known = math.prod(r for r in rest if r != -1)
                rest[rest.index(-1)] = math.prod(x.shape[1:]) // known
            if rest in ([-1], [math.prod(x.shape[1:])]):
                return t if rank == 2 else self._add("flatten", [x], {}, span, "flatten")
            out = self._add("reshape", [x], {"shape": tuple(rest)}, span, "reshape")
            out.value.producer.out_layout = self._reshape_layout(len(rest) + 1)
            infer_node(out.value.producer)
            return out
        if name in ("permute", "transpose"):
            if name == "permute":
                perm = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
            else:
                a, b = (d % rank for d in args[:2])
                perm = list(range(rank))
                perm[a], perm[b] = perm[b], perm[a]
                perm = tuple(perm)
            perm = tuple(p % rank for p in perm)
            if perm[0] != 0:
                raise Unsupported(f".{name}: moving the batch axis is not supported")
            out = self._add("transpose", [x], {"perm": perm}, span, "permute")
            letters = x.layout or ""
            new = "".join(letters[p] for p in perm) if len(letters) == rank else None
            node_ = out.value.producer
            if new in CHANNELS_FIRST.values() or (new and new in ("NWC", "NHWC", "NDHWC")):
                node_.out_layout = new
            else:
                node_.out_layout = CHANNELS_FIRST.get(rank)
            infer_node(node_)
            return out
        if name == "mean":
            dims = args[0] if args else kwargs.get("dim")
            keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
            if dims is None:
                return self._reduce(t, name, args, kwargs, span)  # refused: the batch axis too
            dims = tuple(sorted(d % rank for d in ((dims,) if isinstance(dims, int) else tuple(dims))))
            layout = x.layout or ""
            if dims and is_channels_first(layout) and tuple(spatial_axes(layout)) == dims and len(dims) in (1, 2, 3):
                return self._add(f"global_avg_pool{len(dims)}d", [x], {"keepdims": bool(keep)}, span, "mean")
            return self._reduce(t, name, args, kwargs, span)
        if name in ("squeeze", "unsqueeze"):
            dim = args[0] if args else kwargs.get("dim")
            if dim is None:
                raise Unsupported(f".{name}() without a dim is not supported")
            shape = list(x.shape)
            if name == "squeeze":
                d = dim % rank
                if d == 0 or shape[d] != 1:
                    return t if d != 0 and shape[d] != 1 else self._unsupported_tensor(name)
                rest = shape[1:d] + shape[d + 1:]
            else:
                d = dim % (rank + 1)
                if d == 0 and rank == 2:
                    return _StackedState(t)  # (an RNN's initial state; anything else refuses it)
                if d == 0:
                    return self._unsupported_tensor(name)
                rest = shape[1:d] + [1] + shape[d:]
            out = self._add("reshape", [x], {"shape": tuple(rest)}, span, name)
            if len(rest) + 1 > 2:
                out.value.producer.out_layout = x.layout if len(rest) + 1 == rank else None
            infer_node(out.value.producer)
            return out
        if name in ("mm", "bmm", "matmul") and len(args) + len(kwargs) == 1:  # (x.mm(W): torch.mm(x, W))
            return self._tensor_binop(cst.MatrixMultiply, t, args[0] if args else next(iter(kwargs.values())), node)
        if name == "repeat":
            return self._repeat(t, tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list))
                                else tuple(args), span)
        if name in ("expand", "expand_as"):
            return self._expand(t, name, args, kwargs, span)
        raise Unsupported(f"tensor method .{name}() is not supported yet")

    def _expand(self, t: Tensor, name: str, args, kwargs, span: Span):
        """``x.unsqueeze(1).expand(-1, n, -1)`` is ``.repeat(1, n, 1)`` (RepeatVector);
        ``gate.expand_as(x)`` broadcasts the gate's size-1 axes to x's shape (``gate + 0 * x``
        as ``gate + zeros_like(x)``)."""
        x = t.value
        if name == "expand_as":
            other = args[0] if args else kwargs.get("other")
            if not isinstance(other, Tensor) or len(other.value.shape) != len(x.shape):
                raise Unsupported(".expand_as(): of a tensor of the same rank only")
            if tuple(other.value.shape) == tuple(x.shape):
                return t
            zeros = self._add("full_like", [other.value], {"value": 0.0, "dtype": ""}, span, "zeros")
            self._as_map_of(x, other.value)
            return self._add("add", [x, zeros.value], {}, span, "expanded")
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        if kwargs or len(sizes) != len(x.shape):
            raise Unsupported(f".expand{sizes}: one size per axis is needed")
        if x.shape[0] is not None:  # (self.cls_token.expand(b, -1, -1): a weight made a batch)
            raise Unsupported(f".expand{sizes} of a module's own parameter to the batch is not translated yet")
        counts = [1]  # (the batch axis: -1 or x.size(0))
        for size, have in zip(sizes[1:], x.shape[1:]):
            if size == -1 or size == have:
                counts.append(1)
            elif have == 1 and isinstance(size, int) and size > 1:
                counts.append(size)
            else:
                raise Unsupported(f".expand{sizes} of a {tuple(x.shape)} tensor: only size-1 axes grow")
        return self._repeat(t, tuple(counts), span)

    def _filled_like(self, path: str, args: list, kwargs: dict, span: Span):
        """``torch.zeros_like(x)``, ``torch.ones_like(x, dtype=torch.int32)``, ``torch.full_like(x, 0.5)``."""
        x = args.pop(0) if args else kwargs.pop("input", None)
        if not isinstance(x, Tensor):
            raise Unsupported(f"{path}: the first argument is not a tensor")
        fill = _FILLED_LIKE[path]
        if fill is None:
            fill = args.pop(0) if args else kwargs.pop("fill_value", None)
            if isinstance(fill, bool) or not isinstance(fill, (int, float)):
                raise Unsupported(f"{path}: fill_value must be a number known statically")
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("device", None)  # Keras places tensors itself
        if args or kwargs:
            raise Unsupported(f"{path}: argument(s) {', '.join(sorted(kwargs)) or 'given by position'} not supported")
        name = ""
        if dtype is not None:
            name = _TORCH_DTYPES.get(dtype.path if isinstance(dtype, Ref) else None, "")
            if not name:
                raise Unsupported(f"{path}: dtype {dtype!r} is not supported")
        return self._add("full_like", [x.value], {"value": float(fill), "dtype": name}, span, path[6:])

    def _repeat(self, t: Tensor, sizes: tuple, span: Span):
        """``x.unsqueeze(1).repeat(1, n, 1)``: (N, F) repeated ``n`` times along a new time axis
        (Keras' RepeatVector); repeats of 1 everywhere return the tensor itself."""
        x = t.value
        if len(sizes) != len(x.shape) or not all(isinstance(s, int) and s >= 1 for s in sizes):
            raise Unsupported(f".repeat{sizes}: one static count per axis is needed")
        if all(s == 1 for s in sizes):
            return t
        if len(x.shape) != 3 or x.shape[1] != 1 or sizes[0] != 1 or sizes[2] != 1:
            raise Unsupported(f".repeat{sizes} of a {tuple(x.shape)} tensor: only (N, 1, F).repeat(1, n, 1) "
                              "(Keras' RepeatVector) is translated")
        prod = x.producer
        if prod is not None and prod.op == "reshape" and len(prod.inputs[0].shape) == 2:
            vector = prod.inputs[0]  # x.unsqueeze(1): the (N, F) vector itself
        else:
            vector = self._add("reshape", [x], {"shape": (x.shape[2],)}, span, "squeeze").value
        return self._add("repeat_vector", [vector], {"n": sizes[1]}, span, "repeat_vector")

    def _tensor_operands(self, op: str, operands: list, span: Span):
        """``op`` over tensors and numbers (a number is a ``constant`` operand, never a param)."""
        ins = []
        for a in operands:
            if isinstance(a, Tensor):
                ins.append(a.value)
            elif isinstance(a, (int, float)):
                ins.append(self._add("constant", [], {"value": a}, span, "const").value)
            else:
                raise Unsupported(f"{op}: an operand is neither a tensor nor a number")
        return self._add(op, ins, {}, span, op)

    def _reduce(self, t, name, args, kwargs, span: Span):
        """``x.mean(dim=-1)``, ``x.sum((1, 2), keepdim=True)``, ``torch.amax(x, 1)``: a reduce op."""
        x = t.value
        rank = len(x.shape)
        dims = args[0] if args else kwargs.get("dim")
        keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        if dims is None or not all(isinstance(d, int) for d in ((dims,) if isinstance(dims, int) else dims)):
            raise Unsupported(f".{name}(): a static dim is needed (a reduction over every axis includes the batch)")
        dims = tuple(sorted({d % rank for d in ((dims,) if isinstance(dims, int) else tuple(dims))}))
        if 0 in dims:
            raise Unsupported(f".{name}(dim={dims}) reduces the batch axis")
        return self._add(_REDUCTIONS[name], [x], {"axis": dims, "keepdims": bool(keep)}, span, _REDUCTIONS[name])

    def _unsupported_tensor(self, name):
        raise Unsupported(f".{name}() on the batch axis is not supported")


def _time_major_batch(graph, size) -> bool:
    """``size`` is axis 1 of a (L, N, F) sequence a time-major RNN or attention read
    (graph_build ``_time_major``): the batch size, which every tensor computed after that
    layer carries first."""
    found = lazy_inputs.axis_of(size)
    if found is None or found[1] != 1:
        return False
    return any(n.op == "transpose" and n.from_torch.time_major and n.inputs and n.inputs[0] is found[0]
               for n in graph.nodes)
