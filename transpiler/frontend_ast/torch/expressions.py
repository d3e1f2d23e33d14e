"""The torch model reader's expressions on the shared interpreter (interp/): its hooks for
attributes, operators, subscripts and calls, registered by the type of its values; torch API calls."""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler.frontend_ast.torch import const_arrays
from transpiler.frontend_ast.torch import modules as tm
from transpiler.frontend_ast.torch import params as torch_params
from transpiler.frontend_ast.torch.params import TensorData
from transpiler.frontend_ast.keras.layers import Unsupported as KerasUnsupported
from transpiler.frontend_ast.keras.tensor_ops import subscript
from transpiler.frontend_ast.torch.functions import call_torch_function
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.interp import Interpreter, PASS, ArgumentError, BatchDim, ClassRef, Env, FunctionRef, Unknown
from transpiler.frontend_ast.interp.core import DynamicIterable
from transpiler.ir.fields import Fields
from transpiler.ir.graph import Span, Value
from transpiler.ir.layout import is_channels_first
from transpiler.frontend_ast.torch.support import _training_test, _code, _one_weight_module, _walk, _INDEX_HINTS
from transpiler.frontend_ast.torch import cli_args, lazy_inputs
from transpiler.frontend_ast.torch import merged_batch
from transpiler.frontend_ast.torch.module_edits import raise_refusal, refused_layer
from transpiler.frontend_ast.torch.values import (
    Ref, Mod, ParamObj, Tensor, RNNStates, Shape, Bound, LayerParam, _ClassOf, _IsInstance, _Type,
    _SPECIAL_NAMES, _MaxResult, _ZeroState, _ZERO_STATE_METHODS, _StackedState, _STACKED_STATE_METHODS,
    _Super, _Return, _SAFE_BUILTINS, _TENSOR_MERGES, _TENSOR_COMPARISONS)


class TorchExpressions(Interpreter):
    """Mixin of TorchFrontend: the interpreter's hooks for torch values."""

    BUILTINS = _SAFE_BUILTINS
    STATIC_FSTRINGS = False
    CALLS, ATTRIBUTES, SUBSCRIPTS, UNARY, OPERANDS, COMPARANDS, SYNTAX = Interpreter.extended_tables()


    # -- expressions: the shared interpreter's hooks for torch values ------------------------
    def _no_expression(self, node):
        raise Unsupported(f"expression {_code(node)!r} is not supported")

    def _builtin(self, name: str):
        special = _SPECIAL_NAMES.get(name)
        return special if special is not None else super()._builtin(name)

    def _comprehension_items(self, iterable, comp, node):
        if isinstance(iterable, Unknown) and iterable.reason.startswith("the parameters of "):
            raise DynamicIterable()  # (``sum(p.numel() for p in self.parameters())``: a run-time number)
        return self._iterate(iterable, comp.iter)

    def _unknown_star_call(self, arg) -> bool:
        return False

    # -- the command line: argparse defaults (cli_args.py) ----------------------------------
    def _command_lines(self) -> dict:
        found = self.__dict__.get("_cli_namespaces")
        if found is None:
            found = self.__dict__["_cli_namespaces"] = cli_args.namespaces(self.module)
        return found

    def _unbound(self, name: str, node=None):
        namespace = self._command_lines().get(name)
        return namespace if namespace is not None else super()._unbound(name, node)

    def _read(self, name: str, value):
        if isinstance(value, Unknown):  # (``args = parser.parse_args()`` read at module level)
            namespace = self._command_lines().get(name)
            if namespace is not None:
                return namespace
        return super()._read(name, value)

    @ATTRIBUTES.register(cli_args.CommandLine)
    def _command_line_attribute(self, obj, name, node):
        value = obj.get(name)
        if not isinstance(value, Unknown):
            self.__dict__.setdefault("_cli_log", []).append((f"{_code(node.value)}.{name}", value))
        return value

    def _written_call(self, node, env):
        """(the options read by a call that builds a module, its target and arguments included,
        chose the model: the translation is made for their defaults, cli_args.default_guard)"""
        log = self.__dict__.setdefault("_cli_log", [])
        mark = len(log)
        value = super()._written_call(node, env)
        if isinstance(value, Mod) and len(log) > mark:
            reads = self.__dict__.setdefault("cli_reads", {})
            for key, read in log[mark:]:
                reads.setdefault(key, read)
        return value

    # -- attributes -----------------------------------------------------------------------
    @ATTRIBUTES.register(Ref)
    def _ref_attribute(self, obj, name, node):
        return Ref(f"{obj.path}.{name}")

    @SUBSCRIPTS.register(Ref)
    def _ref_subscript(self, obj, node, env):
        """``models.__dict__[name]`` of an imported module: its attribute ``name``."""
        if not obj.path.endswith(".__dict__"):
            return PASS
        key = self._subscript_key(node, env)
        return Ref(f"{obj.path[:-len('.__dict__')]}.{key}") if isinstance(key, str) else PASS

    @ATTRIBUTES.register(ClassRef)
    def _class_attribute(self, obj, name, node):
        value = self._class_attr(obj, name)
        if value is not None:
            return value
        raise Unsupported(f"class attribute {_code(node)!r}")

    @ATTRIBUTES.register(Mod)
    def _module_attribute(self, obj, name, node):
        if obj.kind == "leaf" and obj.layer is None:
            raise_refusal(self, obj)
        if obj.kind == "user" and name in obj.attrs:
            value = obj.attrs[name]
            if isinstance(value, ParamObj) and self.graph is not None:
                return self._variable(value, node, _one_weight_module(obj, name))
            return value
        if obj.kind == "user" and self._class_attr(obj.cls, name) is not None:
            return self._class_attr(obj.cls, name)
        if obj.kind == "user" and obj.cls.method(name) is not None:
            return Bound(obj, name)
        if obj.kind == "leaf" and name in obj.attrs and name not in ("weight", "bias") and \
                not callable(obj.attrs[name]) and name not in tm.torch_param_shapes(obj.layer):
            return obj.attrs[name]  # (``self.resnet.fc.in_features``: the constructor's argument)
        if name == "training":
            return Unknown("self.training")
        if name == "__class__":
            return _ClassOf(obj)
        if obj.kind == "leaf" and self.init_calls is not None and name in ("weight", "bias"):
            shapes = tm.torch_param_shapes(obj.layer)
            if name in shapes:
                return LayerParam(obj, name, shapes[name])
            if name == "bias" and "weight" in shapes:
                return None  # bias=False
        return Bound(obj, name)

    @ATTRIBUTES.register(_ClassOf)
    def _class_of_attribute(self, obj, name, node):
        if name == "__name__":
            return obj.mod.cls.node.name.value if obj.mod.kind == "user" else obj.mod.cls_name
        return PASS

    @ATTRIBUTES.register(LayerParam)
    def _layer_param_attribute(self, obj, name, node):
        return obj if name == "data" else Bound(obj, name)

    @ATTRIBUTES.register(Bound)
    def _bound_attribute(self, obj, name, node):
        if self.init_calls is not None and isinstance(obj.obj, Mod):
            # initialisation code reaching into a layer's inner module (``att.out_proj.weight``):
            # what nn.init draws there is reported as not reproduced, the rest still read
            return Bound(obj, name)
        return PASS

    @ATTRIBUTES.register(_MaxResult)
    def _max_attribute(self, obj, name, node):
        if name in ("values",):
            return obj.values
        raise Unsupported(f"torch.max(...).{name} is not supported")

    @ATTRIBUTES.register(Tensor)
    def _tensor_attribute(self, obj, name, node):
        if name == "shape":
            return Shape(obj.value)
        if name == "device":  # (torch.zeros(..., device=x.device): Keras places tensors itself)
            return Unknown("a tensor's device")
        if name in ("T", "data", "dtype"):
            raise Unsupported(f"tensor attribute .{name}")
        return Bound(obj, name)

    @ATTRIBUTES.register(list, dict, str, tuple, RNNStates, _Super, merged_batch.Merged)
    def _method_attribute(self, obj, name, node):
        return Bound(obj, name)

    @ATTRIBUTES.register(_ZeroState)
    def _zero_state_attribute(self, obj, name, node):
        return Bound(obj, name) if name in _ZERO_STATE_METHODS else PASS

    @ATTRIBUTES.register(_StackedState)
    def _stacked_state_attribute(self, obj, name, node):
        return Bound(obj, name) if name in _STACKED_STATE_METHODS else PASS

    @ATTRIBUTES.register(const_arrays.ConstArray, TensorData)
    def _const_attribute(self, obj, name, node):  # (``pe.unsqueeze``: const_arrays.method)
        return Bound(obj, name)

    @ATTRIBUTES.register(Fields)
    def _fields_attribute(self, obj, name, node):  # ``config.n_embd`` (ir/fields.py)
        if name.startswith("__"):
            raise Unsupported(f"attribute {_code(node)!r} of a configuration object")
        return obj.get(name)

    @ATTRIBUTES.register(Unknown)
    def _unknown_attribute(self, obj, name, node):
        return obj

    @ATTRIBUTES.register(torch_params.ParamSet)
    def _param_set_attribute(self, obj, name, node):  # parameter groups (torch_param_groups)
        return Bound(obj, name) if name in ("named_parameters", "parameters") else obj.attribute(name)

    def _no_attribute(self, obj, name, node):
        raise Unsupported(f"attribute {_code(node)!r}")

    def _class_attr(self, cls: ClassRef, name: str):
        for stmt in cls.node.body.body:
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
                assign = stmt.body[0]
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in assign.targets):
                    return self._eval(assign.value, self.globals)
        return self._class_attr(cls.base, name) if cls.base is not None else None


    # -- operators ------------------------------------------------------------------------
    @OPERANDS.register(TensorData)
    def _data_operands(self, left, right, op, node):
        if not any(isinstance(v, const_arrays.ConstArray) for v in (left, right)):
            try:
                return torch_params.scaled_data(op, left, right)
            except Unsupported:
                if not all(const_arrays.as_const(v) is not None or isinstance(v, (int, float)) for v in (left, right)):
                    raise
        return self._const_operands(left, right, op, node)

    @OPERANDS.register(const_arrays.ConstArray)
    def _const_operands(self, left, right, op, node):  # (a constant of __init__: const_arrays.py)
        return const_arrays.binary(op, const_arrays.as_const(left) or left, const_arrays.as_const(right) or right)

    @OPERANDS.register(Tensor)
    def _tensor_operands_rule(self, left, right, op, node):
        return self._tensor_binop(op, left, right, node)

    @OPERANDS.register(BatchDim, merged_batch.MergedDims)
    def _batch_operands(self, left, right, op, node):  # (``size[0] * size[1]``: merged_batch.py)
        return merged_batch.merged_dims(op, left, right)

    @OPERANDS.register(Unknown)
    def _unknown_operands(self, left, right, op, node):
        return Unknown("arithmetic on an unknown value")

    @OPERANDS.register(str)
    def _format_operands(self, left, right, op, node):  # ``"%.2fM" % (n_params / 1e6,)``, n_params run-time
        if isinstance(left, str) and op is cst.Modulo and \
                any(isinstance(v, Unknown) for v in (right if isinstance(right, tuple) else (right,))):
            return Unknown("a string formatted from a run-time value")
        return PASS

    @OPERANDS.register(_ZeroState)
    def _zero_state_operands(self, left, right, op, node):
        raise Unsupported(f"{_code(node)!r}: torch.zeros made in forward is read only as an RNN's initial state")

    def _no_operator(self, op, node, what):
        raise Unsupported(f"operator in {_code(node)!r}")

    def _tensor_binop(self, op, left, right, node):
        span = self._span(node)
        if isinstance(left, Tensor) and isinstance(right, Tensor):
            name = _TENSOR_MERGES.get(op)
            if name is None:
                raise Unsupported(f"tensor operator in {_code(node)!r}")
            self._as_map_of(left.value, right.value)
            self._as_map_of(right.value, left.value)
            return self._add(name, [left.value, right.value], {}, span, name)
        tensor, scalar = (left, right) if isinstance(left, Tensor) else (right, left)
        if not isinstance(scalar, (int, float)) or isinstance(scalar, bool):
            raise Unsupported(f"{_code(node)!r}: an operand is neither a tensor nor a number")
        if op is cst.Power or op is cst.Divide and isinstance(right, Tensor):
            # x ** 2, 1.0 / x: a constant operand (a number, never a param)
            return self._tensor_operands(_TENSOR_MERGES[op], [left, right], span)
        if op is cst.Multiply:
            return self._add("rescaling", [tensor.value], {"scale": float(scalar), "offset": 0.0}, span, "scale")
        if op is cst.Divide and isinstance(left, Tensor):
            return self._add("rescaling", [tensor.value], {"scale": 1.0 / float(scalar), "offset": 0.0}, span,
                             "scale")
        if op is cst.Add:
            return self._add("rescaling", [tensor.value], {"scale": 1.0, "offset": float(scalar)}, span, "shift")
        if op is cst.Subtract:
            if isinstance(left, Tensor):
                return self._add("rescaling", [tensor.value], {"scale": 1.0, "offset": -float(scalar)}, span, "shift")
            return self._add("rescaling", [tensor.value], {"scale": -1.0, "offset": float(scalar)}, span, "shift")
        raise Unsupported(f"tensor operator in {_code(node)!r}")


    @UNARY.register(Tensor)
    def _tensor_unary(self, node, value):
        if isinstance(node.operator, cst.Minus):
            return self._add("rescaling", [value.value], {"scale": -1.0, "offset": 0.0}, self._span(node), "neg")
        if isinstance(node.operator, cst.Plus):
            return value
        return PASS

    @UNARY.register(Unknown)
    def _unknown_unary(self, node, value):
        return Unknown() if isinstance(node.operator, cst.Not) else PASS

    @COMPARANDS.register(Tensor)
    def _tensor_comparands(self, left, right, node, target):
        kind = _TENSOR_COMPARISONS.get(type(target.operator))
        if kind and len(node.comparisons) == 1:
            return self._tensor_operands(kind, [left, right], self._span(node))
        return Unknown("comparison")

    # -- conditions -----------------------------------------------------------------------
    def _mode_of(self, test, env):
        return _training_test(test)

    def _select_mode(self, train, infer, node):
        return self._join_training(train, infer, self._span(node), "select")

    def _undecided(self, test) -> bool:
        return isinstance(test, (Unknown, Tensor))

    def _no_condition(self, test):
        raise Unsupported(f"the condition {_code(test)!r} is not known statically")

    # -- subscripts -----------------------------------------------------------------------
    @SUBSCRIPTS.register(LayerParam, Bound)
    def _param_subscript(self, obj, node, env):
        self._subscript_key(node, env)
        if self.init_calls is None:
            return PASS
        # initialisation code drawing part of a weight (``bias_ih_l0[32:64]``): not
        # reproduced (reported with the rest of the init code), while what it draws for
        # whole weights still is
        return LayerParam(obj.mod, obj.name, obj.shape, part=True) if isinstance(obj, LayerParam) else obj

    @SUBSCRIPTS.register(Mod)
    def _module_subscript(self, obj, node, env):
        index = self._subscript_key(node, env)
        if obj.kind in ("sequential", "module_list"):
            if isinstance(index, slice):
                raise Unsupported("slicing a module container is not supported")
            return obj.items[index]
        if obj.kind == "module_dict":
            return obj.items[index]
        return PASS

    @SUBSCRIPTS.register(RNNStates)
    def _states_subscript(self, obj, node, env):
        index = self._subscript_key(node, env)
        if isinstance(index, tuple) and index and all(i == slice(None) for i in index[1:]):
            index = index[0]  # h_n[-1, :, :] is h_n[-1]
        if isinstance(index, int) and not isinstance(index, bool):
            return Tensor(obj.values[index])
        if isinstance(index, slice) and obj.values[index]:  # ``h_n[-2:]``: the last layer's two directions
            return RNNStates(obj.values[index])
        raise Unsupported(f"{_code(node)!r}: index the stacked RNN states with one integer")

    @SUBSCRIPTS.register(Shape)
    def _shape_subscript(self, obj, node, env):
        index = self._subscript_key(node, env)
        if index == 0:
            return BatchDim(obj.value)
        return lazy_inputs.axis_size(obj.value, index)

    @SUBSCRIPTS.register(Tensor)
    def _tensor_subscript(self, obj, node, env):
        return self._tensor_index(obj, self._subscript_key(node, env), node)

    @SUBSCRIPTS.register(Unknown)
    def _unknown_subscript(self, obj, node, env):
        self._subscript_key(node, env)
        return obj

    def _static_subscript(self, obj, node, env):
        return obj[self._subscript_key(node, env)]

    def _tensor_index(self, t: Tensor, index, node):
        """``seq[:, -1]`` of a forward RNN's sequence output is its final state; slices of a
        feature map's spatial axes (``x[:, :, 1:-1, :-2]``) are a crop."""
        v = t.value
        prod = v.producer
        crop = self._crop_of(v, index)
        if crop is not None:
            return self._add(f"crop{len(crop)}d", [v], {"cropping": crop}, self._span(node), "crop")
        last_step = index in ((slice(None), -1), (slice(None), -1, slice(None)))
        if last_step and prod is not None and prod.spec.states and v is prod.outputs[0] \
                and prod.attrs["return_state"]:
            return Tensor(prod.outputs[1])
        return self._subscript(v, index, node)

    def _subscript(self, v: Value, index, node) -> Tensor:
        """``x[..., :16]``, ``x[:, 0]``, ``x[:, 1:3, None]``: static slices, int indices and new
        axes become ``slice``/``take``/``expand_dims`` nodes (the same reading as Keras')."""
        span = self._span(node)
        what = f"tensor indexing {_code(node)!r}"
        items = list(index) if isinstance(index, tuple) else [index]
        for i, k in enumerate(items):  # ``pos_emb[:, :t]``, t an axis's size at run time: slice_like
            found = lazy_inputs.axis_of(k.stop) if isinstance(k, slice) else None
            if found is None or k.start not in (None, 0) or k.step not in (None, 1) or Ellipsis in items[:i] or \
                    None in items[:i]:
                continue
            like, like_axis = found
            v = self._add("slice_like", [v, like], {"axis": i, "like_axis": like_axis}, span, "part").value
            items[i] = slice(None)
            index = tuple(items) if isinstance(index, tuple) else items[0]
            if all(isinstance(k, slice) and k == slice(None) for k in items):
                return Tensor(v)  # (nothing else to index)

        class _Adapter:
            @staticmethod
            def add(op, inputs, attrs, hint, n_out=1):
                # (``slice`` would shadow the builtin in the printed code)
                out = self._add(op, inputs, attrs, span, _INDEX_HINTS.get(hint, hint), n_out)
                return [t.value for t in (out if isinstance(out, list) else [out])]

        try:
            return Tensor(subscript(_Adapter, v, index, what))
        except KerasUnsupported as exc:
            raise Unsupported(str(exc)) from None

    def _crop_of(self, v: Value, index):
        if not isinstance(index, tuple) or not is_channels_first(v.layout) or len(index) > len(v.shape):
            return None
        index = index + (slice(None),) * (len(v.shape) - len(index))
        if not all(isinstance(s, slice) and s.step in (None, 1) for s in index):
            return None
        if index[0] != slice(None) or index[1] != slice(None):
            return None
        pairs = []
        for s, size in zip(index[2:], v.shape[2:]):
            lo = s.start or 0
            if size is None:  # (an unknown size: a crop by non-negative starts and negative stops only)
                if not isinstance(lo, int) or lo < 0 or not (s.stop is None or isinstance(s.stop, int) and s.stop < 0):
                    return None
                pairs.append((lo, 0 if s.stop is None else -s.stop))
                continue
            hi = size if s.stop is None else s.stop
            if not isinstance(lo, int) or not isinstance(hi, int):
                return None
            lo = lo + size if lo < 0 else lo
            hi = hi + size if hi < 0 else hi
            if not 0 <= lo < hi <= size:
                return None
            pairs.append((lo, size - hi))
        return tuple(pairs)


    # -- calls ----------------------------------------------------------------------------
    @CALLS.register(Ref)
    def _call_ref(self, func, args, kwargs, node):
        return self._call_api(func.path, args, kwargs, node)

    @CALLS.register(ClassRef)
    def _call_class(self, func, args, kwargs, node):
        if not func.is_module:
            return self._plain_object(func, node)
        return self._instantiate(func, args, kwargs, node)

    @CALLS.register(FunctionRef)
    def _call_user_function(self, func, args, kwargs, node):
        return self._call_function(func, args, kwargs, node)

    @CALLS.register(_IsInstance)
    def _call_isinstance(self, func, args, kwargs, node):
        return self._isinstance(*args)

    @CALLS.register(_Type)
    def _call_type(self, func, args, kwargs, node):
        if len(args) != 1 or kwargs or not isinstance(args[0], Mod):
            raise Unsupported("type(...) of something that is not a module")
        return _ClassOf(args[0])

    @CALLS.register(Mod)
    def _call_mod(self, func, args, kwargs, node):
        return self._call_module(func, args, kwargs, self._span(node))

    @CALLS.register(Bound)
    def _call_bound(self, func, args, kwargs, node):
        return self._call_method(func, args, kwargs, node)

    @CALLS.register(Unknown)
    def _call_unknown(self, func, args, kwargs, node):
        why = f" ({func.reason})" if func.reason.startswith("an instance of") else ""
        raise Unsupported(f"{_code(node.func)!r} is not known statically{why}")

    def _no_call(self, func, args, kwargs, node):
        if callable(func) and func in _SAFE_BUILTINS.values():
            if any(isinstance(a, (Unknown, Tensor)) for a in args):
                return Unknown("builtin on an unknown value")
            if func is len and args and isinstance(args[0], Mod):
                return len(args[0].items)
            # enumerate(self.blocks), zip(self.a, self.b), list(self.layers): a container's modules
            args = [self._iterate(a, node) if isinstance(a, Mod) and a.kind != "leaf" and a.kind != "user" else a
                    for a in args]
            return func(*args, **kwargs)
        raise Unsupported(f"call {_code(node)!r} is not supported")

    def _call_api(self, path: str, args, kwargs, node):
        """A call of a module path: torch_functions' registry."""
        return call_torch_function(self, path, args, kwargs, node, self._span(node))

    def _construct(self, cls_name: str, args, kwargs, span: Span) -> Any:
        if cls_name == "Sequential":
            if len(args) == 1 and isinstance(args[0], dict):
                return Mod("module_dict", span, items=dict(args[0]), cls_name="Sequential")
            items = list(args)
            if not all(isinstance(m, Mod) for m in items):
                raise Unsupported("nn.Sequential of something that is not a module")
            return Mod("sequential", span, items=items, cls_name="Sequential")
        if cls_name == "ModuleList":
            items = list(args[0]) if args else list(kwargs.get("modules") or [])
            return Mod("module_list", span, items=items, cls_name="ModuleList")
        if cls_name == "ModuleDict":
            return Mod("module_dict", span, items=dict(args[0]) if args else {}, cls_name="ModuleDict")
        if cls_name == "Parameter":
            data = args[0] if args else kwargs.get("data")
            trainable = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
            if not isinstance(data, TensorData) or not isinstance(trainable, bool):
                raise Unsupported("nn.Parameter of a tensor whose shape or requires_grad is not known statically")
            return ParamObj(data.shape, span, init=data.init, trainable=trainable)
        if any(isinstance(a, (Unknown, Tensor)) for a in list(args) + list(kwargs.values())):
            bad = next(a for a in list(args) + list(kwargs.values()) if isinstance(a, (Unknown, Tensor)))
            raise Unsupported(f"nn.{cls_name}: an argument is not known statically ({getattr(bad, 'reason', '')})")
        try:
            layer = tm.recognize(cls_name, list(args), dict(kwargs))
        except Unsupported as exc:  # (in a constructor: refused where it is used; never called, harmless)
            if self.depth == 0:
                raise
            return refused_layer(self, cls_name, span, exc)
        # (its constructor's arguments by name: ``fc.in_features`` reads them back)
        return Mod("leaf", span, layer=layer, cls_name=cls_name,
                   attrs=tm.constructor_arguments(cls_name, list(args), dict(kwargs)))

    def _plain_object(self, cls: ClassRef, node) -> Unknown:
        """An instance of a class that is not an ``nn.Module`` (a metric tracker kept for a
        ``train_step``): it has no weights and no place in the model's graph. It is not
        interpreted; ``forward`` reading it is refused where it does."""
        name = cls.node.name.value
        if self.graph is not None:
            raise Unsupported(f"class {name} is not an nn.Module (used in forward)")
        self.program.warn(self._span(node), f"{name}(...) is not an nn.Module: not part of the model's layers "
                                            "(the code using it is translated with the program, or stubbed)",
                          self.source_line(self._span(node)))
        return Unknown(f"an instance of {name}, which is not an nn.Module")

    def _instantiate(self, cls: ClassRef, args, kwargs, node) -> Mod:
        from transpiler.frontend_ast.torch.module_inherit import leaf_instance

        leaf = leaf_instance(self, cls, args, kwargs, node)  # (``class Linear(Bottle, nn.Linear)``)
        if leaf is not None:
            return leaf
        mod = Mod("user", self._span(node), cls=cls, cls_name=cls.node.name.value)
        init = cls.method("__init__")
        if init is not None:
            self._run_method(mod, init, args, kwargs, node)
        return mod

    def _run_method(self, obj: Mod, fn: cst.FunctionDef, args, kwargs, node):
        self.ran_methods.add(fn)
        env = Env(self.globals)
        params = fn.params.params
        env.vars[params[0].name.value] = obj
        self._bind_params(env, fn, args, kwargs, skip=1)
        self.depth += 1
        if self.depth > 40:
            raise Unsupported("recursion too deep")
        running = self.__dict__.setdefault("running_methods", [])  # (``super()``: module_inherit.py)
        running.append((obj, fn))
        try:
            self._exec_block(fn.body.body, env)
        except _Return as ret:
            return ret.value
        finally:
            running.pop()
            self.depth -= 1
        return None

    def _bind_params(self, env: Env, fn: cst.FunctionDef, args, kwargs, skip: int = 0) -> None:
        try:
            env.vars.update(self._bind_arguments(fn, args, kwargs, self.globals, skip))
        except ArgumentError as exc:
            what = f"missing argument {exc.name}" if exc.kind == "missing" else "too many arguments"
            raise Unsupported(f"{fn.name.value}: {what}") from None

    def _call_function(self, fn: FunctionRef, args, kwargs, node):
        if self.init_calls is not None:
            self._init_running.add(fn.node.name.value)
        env = Env(self.globals)
        self._bind_params(env, fn.node, args, kwargs)
        self.depth += 1
        if self.depth > 40:
            raise Unsupported("recursion too deep")
        try:
            self._exec_block(fn.node.body.body, env)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
        return None

    def _call_method(self, bound: Bound, args, kwargs, node):
        obj, name = bound.obj, bound.name
        if isinstance(obj, _Super):  # (frontend_ast/torch/module_inherit.py)
            from transpiler.frontend_ast.torch.module_inherit import call_super

            return call_super(self, obj, name, args, kwargs, node)
        if isinstance(obj, Mod):
            if obj.kind == "user" and name == "__init__":
                return None
            if obj.kind == "user" and name in ("register_buffer", "register_parameter"):
                return self._register(obj, name, args, kwargs, node)
            if obj.kind == "user" and obj.cls.method(name) is not None:
                if obj is self.root_mod and name != "forward" and not kwargs and args and \
                        all(isinstance(a, Tensor) for a in args):
                    self.method_calls.setdefault(name, [a.value for a in args])
                return self._run_method(obj, obj.cls.method(name), args, kwargs, node)
            if obj.kind in ("module_list", "sequential") and name in ("append", "extend", "insert"):
                getattr(obj.items, name)(*args)
                return None
            if name == "add_module" and len(args) == 2 and not kwargs:  # (frontend_ast/torch/module_names.py)
                from transpiler.frontend_ast.torch.module_edits import add_module
                return add_module(obj, *args)
            if obj.kind == "module_dict" and name in ("keys", "values", "items") and not args and not kwargs:
                return list(getattr(obj.items, name)())  # in insertion order, as torch's
            if name == "forward":
                return self._call_module(obj, args, kwargs, self._span(node))
            if name in ("modules", "children", "named_modules", "named_children") and not args and not kwargs:
                walked = list(_walk(obj)) if name in ("modules", "named_modules") else obj.children()
                return [m for _, m in walked] if not name.startswith("named") else walked
            if name == "apply" and len(args) == 1 and not kwargs and self.init_calls is not None:
                # torch applies fn to every submodule, children before their parent
                for _, m in reversed(list(_walk(obj))):
                    self._call(args[0], [m], {}, node)
                return obj
            if name in ("parameters", "named_parameters") and not args and self.graph is None:
                # (read in a constructor for what it reports: ``sum(p.numel() for p in
                # self.blocks.parameters())`` printed; a custom initialisation is init code)
                return Unknown(f"the parameters of {obj.cls_name or 'a module'}")
            if name in ("apply", "_init_weights", "init_weights"):
                raise Unsupported(f".{name}(...): custom initialisation is not translated yet")
            raise Unsupported(f"module method .{name}() is not supported")
        if isinstance(obj, merged_batch.Merged):
            return merged_batch.merged_method(obj, name, args, kwargs)
        if isinstance(obj, LayerParam):
            return self._param_method(obj, name, args, kwargs)
        if isinstance(obj, Tensor):
            return self._tensor_method(obj, name, args, kwargs, node)
        if isinstance(obj, (_ZeroState, _StackedState)):
            return obj
        if isinstance(obj, RNNStates):
            dim = args[0] if args else kwargs.get("dim")
            if name == "squeeze" and dim == 0 and len(obj.values) == 1:
                return Tensor(obj.values[0])
            if name in _STACKED_STATE_METHODS and not args:
                return obj
            if _batch_first_axes(name, args, kwargs):
                # ``h_n.transpose(0, 1)``: torch's (layers*directions, N, H) stack put batch
                # first, (N, layers*directions, H): the states stacked along axis 1
                if len(obj.values) == 1:
                    return self._tensor_method(Tensor(obj.values[0]), "unsqueeze", [1], {}, node)
                return self._add("stack", list(obj.values), {"axis": 1}, self._span(node), "stack")
            raise Unsupported(f"stacked RNN states .{name}(): index them (h_n[-1]) instead")
        if isinstance(obj, (list, dict, str, tuple)) or isinstance(obj, torch_params.ParamSet) and not kwargs:
            return getattr(obj, name)(*args, **kwargs)
        if const_arrays.as_const(obj) is not None:  # (a constant of __init__)
            return const_arrays.method(const_arrays.as_const(obj), name, args, kwargs)
        raise Unsupported(f"method .{name}() is not supported")


def _batch_first_axes(name, args, kwargs) -> bool:
    """``transpose(0, 1)`` / ``transpose(1, 0)`` / ``permute(1, 0, 2)`` of a (L, N, H) stack."""
    if kwargs:
        return False
    if name in ("transpose", "swapaxes", "swapdims"):
        return sorted(a % 3 if isinstance(a, int) else a for a in args) == [0, 1]
    if name == "permute":
        dims = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)
        return dims == (1, 0, 2)
    return False
