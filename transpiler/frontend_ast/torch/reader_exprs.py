"""The training reader's expressions, on the shared interpreter (interp/): the hooks for what
its values mean (attributes, subscripts, operators and calls, registered by value type), the
idioms it reads from their syntax (``SYNTAX``), and the calls of builtins and of ``torch.*``
constructors and functions.

The training reader *translates* what it reads (each torch call it reads becomes a fact the
printer replaces), so every part of an expression is read (``READ_EVERY_PART``), and what it
cannot decide is ``OTHER``. Its calls take their arguments as ``(cst.Arg, value)`` pairs (the
facts name argument nodes): its ``CALLS`` handlers are ``handler(self, func, node, args, scope)``.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler.frontend_ast.interp import PASS, ClassRef, FunctionRef, Interpreter, Unknown, contains
from transpiler.frontend_ast.torch.downloads import DOWNLOAD_PATHS, download_call
from transpiler.frontend_ast.torch import episodes as torch_episodes
from transpiler.frontend_ast.torch import plumbing as torch_plumbing
from transpiler.frontend_ast.torch import trainers as torch_trainers
from transpiler.frontend_ast.torch import vision as torch_vision
from transpiler.frontend_ast.torch.expressions import TorchExpressions
from transpiler.frontend_ast.torch.helper_calls import HelperRefV
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.values import Ref
from transpiler.ir import training as T
from transpiler.frontend_ast.torch.reader_values import (
    _child_expressions, _code, _combine, _Enumerated, _root_names, _Zipped, ACTIVATIONS, Arr, CheckpointV,
    ChildV, DATA_PATHS, DatasetClassV, DatasetV, DictV, DistributionV, DTYPES, FuncV, GroupV, LiveV, LoadedV,
    LoaderV, LOSSES, LossV,
    MapDatasetV, ModelAttrV, ModelFactory, ModelV, NoGradV, NUMPY_UNARY, OptimizerV, OTHER, ParamsV, ParamV,
    SchedulerV, Scope, StateV, tensor_item, TorchRef, TupleV, V)
from transpiler.ir.code_literals import bare_argument

#: what the reader holds that is not a plain Python value
READER_VALUES = (V, Ref, FunctionRef, ClassRef, Unknown)


class MethodV(V):
    """``obj.name`` as the callee of a call: a method of what ``obj`` holds."""

    __slots__ = ("obj", "name")

    def __init__(self, obj: Any, name: str):
        self.obj, self.name = obj, name


def _static(value: Any) -> bool:
    """A plain Python value (not one of the reader's, nor holding one)."""
    return not contains(value, READER_VALUES)


class ReaderExpressions(Interpreter):
    """Mixin of ``TrainingReader`` (reader_exprs): the interpreter's hooks for its values."""

    READ_EVERY_PART = True
    CALLS, ATTRIBUTES, SUBSCRIPTS, UNARY, OPERANDS, COMPARANDS, SYNTAX = Interpreter.extended_tables()

    def expr(self, node, scope: Scope) -> V:
        """What ``node`` holds, its facts recorded."""
        return self._eval(node, scope)

    def string_value(self, node, scope: Scope | None = None) -> str | None:
        """The string ``node`` holds when the interpreter knows it (``"s" "um"``, a name bound
        to one), without recording facts; else None."""
        value = self.peek(node, self.cur_scope if scope is None else scope)
        return value if isinstance(value, str) else None

    def count_use(self, value) -> None:
        """A read of a loader or dataset (of each in a dict) outside the recognised loops."""
        if isinstance(value, LoaderV):
            self.used_loaders[value] += 1
        elif isinstance(value, DatasetV):
            self.used_datasets[value] += 1
        elif isinstance(value, DictV):
            for item in value.items.values():
                self.count_use(item)

    # -- what the reader cannot decide ------------------------------------------------------
    def _unknown(self, reason: str) -> V:
        return OTHER

    def _undecided(self, test) -> bool:
        return isinstance(test, READER_VALUES)

    def _either(self, body, orelse, node):
        return body

    def _other_expression(self, node, scope):
        """A kind of expression without a meaning here (``await``, ``yield``, ``:=``): its parts are read."""
        for child in _child_expressions(node):
            self._eval(child, scope)
        return OTHER

    # -- names ------------------------------------------------------------------------------
    def _read(self, name: str, value):
        self.count_use(value)
        return value

    def _builtin(self, name: str):
        """A builtin, unless the script binds the name (a builder called ``sum``: its scopes
        are not the reader's, the module's definitions shadow builtins all the same)."""
        if name in self.factories or name in self.dataset_classes or name in self.helper_calls.helpers or \
                name in self.fe.functions or name in self.fe.globals.vars:
            return self.NOT_BUILTIN
        return super()._builtin(name)

    def _unbound(self, name: str, node=None):
        """A name the program's scopes do not bind: a model builder or class, a Dataset class,
        a training helper, a torch import, a module function."""
        for table in (self.factories, self.dataset_classes, self.trainer_classes):
            if name in table:
                return table[name]
        ref = self.helper_calls.name(node) if node is not None else None
        if ref is not None:
            return ref
        g = self.fe.globals.vars.get(name)
        if isinstance(g, Ref):
            return TorchRef(g.path) if g.path.split(".")[0] == "torch" else OTHER
        if name in self.fe.functions:
            return FuncV(self.fe.functions[name].node)
        return OTHER

    # -- attributes -------------------------------------------------------------------------
    def _no_attribute(self, base, attr, node):
        return OTHER

    ATTRIBUTES.register(TorchRef)(TorchExpressions._ref_attribute)  # (the torch model reader's)

    @ATTRIBUTES.register(Arr)
    def _array_attribute(self, obj, name, node):
        if name == "T":
            return Arr()
        if name == "data":
            self.array(node, "{0}", [node.value])
            return Arr()
        if name in ("requires_grad", "is_cuda"):  # (array data: no gradient, no device)
            self.array(node, "False", [])
            return OTHER
        if name in ("dtype", "device", "grad"):
            raise Unsupported(f"tensor attribute .{name} of {_code(node.value)!r}")
        return OTHER  # (shape, ndim)

    @ATTRIBUTES.register(ModelV, ModelAttrV)
    def _model_attribute(self, obj, name, node):
        if isinstance(obj, ModelAttrV) and obj.key is not None:
            return OTHER
        return self.model_attribute(obj, name, node)

    @ATTRIBUTES.register(LoaderV)
    def _loader_attribute(self, obj, name, node):
        if name == "dataset":
            return obj.dataset
        if name == "batch_size":
            return OTHER
        raise Unsupported(f"DataLoader attribute .{name}")

    @ATTRIBUTES.register(DatasetV)
    def _dataset_attribute(self, obj, name, node):
        if name == "tensors":
            self.array(node, "{0}.arrays", [node.value])
            return TupleV([Arr() for _ in obj.arrays])
        raise Unsupported(f"TensorDataset attribute .{name}")

    @ATTRIBUTES.register(ParamV)
    def _parameter_attribute(self, obj, name, node):
        if name == "requires_grad":
            self.array(node, "{0}.trainable", [node.value])
            return OTHER
        if name == "shape":
            return OTHER
        raise Unsupported(f"parameter attribute .{name}")

    @ATTRIBUTES.register(OptimizerV, SchedulerV, StateV, LossV)
    def _object_attribute(self, obj, name, node):
        raise Unsupported(f"{_code(node)}: this attribute of a PyTorch object is not translated")

    @ATTRIBUTES.register(ChildV)
    def _child_attribute(self, obj, name, node):
        raise Unsupported(f"{_code(node)}: a child module's attributes are not translated to its Keras layer")

    # -- subscripts -------------------------------------------------------------------------
    @SYNTAX.register(cst.Subscript)
    def _dict_item(self, node: cst.Subscript, scope: Scope):
        """``d["train"]`` of a dict held in a variable: a read of that item only."""
        if not (isinstance(node.value, cst.Name) and len(node.slice) == 1 and
                isinstance(node.slice[0].slice, cst.Index)):
            return PASS
        held = scope.lookup(node.value.value)
        if not isinstance(held, DictV):
            return PASS
        key = self.peek(node.slice[0].slice.value, scope)
        if not isinstance(key, str):
            return PASS
        item = held.items.get(key, OTHER)
        self.count_use(item)
        return item

    def _static_subscript(self, base, node, scope):
        key = self._subscript_key(node, scope)
        if isinstance(base, (list, tuple, dict, str, range)):
            try:
                return base[key]
            except Exception:  # noqa: BLE001 - an index the program computes at run time
                return OTHER
        return OTHER

    @SUBSCRIPTS.register(Arr)
    def _array_item(self, obj, node, scope):
        self._subscript_key(node, scope)
        return Arr()

    @SUBSCRIPTS.register(LiveV)
    def _live_item(self, obj, node, scope):
        """An item or slice of a Keras tensor of the step (``correct[:k]``): a Keras tensor,
        indexed as torch's; of a feature map the Keras model returns channels-last, only its
        batch axis (the others are in another order)."""
        self._subscript_key(node, scope)
        if obj.permuted and len(node.slice) > 1:
            raise Unsupported(f"{_code(node)}: indexing a feature map the Keras model returns channels-last")
        return LiveV(obj.permuted)

    @SUBSCRIPTS.register(TupleV)
    def _tuple_item(self, obj, node, scope):
        index = self._subscript_key(node, scope)
        if type(index) is int and -len(obj.items) <= index < len(obj.items):
            return obj.items[index]
        return tensor_item(obj)

    @SUBSCRIPTS.register(DatasetV)
    def _dataset_item(self, obj, node, scope):
        self._subscript_key(node, scope)
        return TupleV([Arr() for _ in obj.arrays])

    @SUBSCRIPTS.register(CheckpointV)
    def _checkpoint_item(self, obj, node, scope):
        key = self._subscript_key(node, scope)
        if isinstance(key, str) and key in obj.entries:
            return StateV(obj.entries[key], snapshot=True)
        raise Unsupported(f"{_code(node)}: a key the checkpoint was not saved with")

    @SUBSCRIPTS.register(ModelV, StateV, LoadedV, OptimizerV)
    def _object_item(self, obj, node, scope):
        self._subscript_key(node, scope)
        if isinstance(obj, ModelV) and self.optimizer_args:
            return OTHER  # a parameter group (``model[0].parameters()``): read statically
        raise Unsupported(f"{_code(node)}: indexing a PyTorch object is not translated")

    # -- containers and comprehensions ------------------------------------------------------
    def _container(self, value, node):
        if isinstance(node, cst.Dict):
            if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                return DictV(value)
            return OTHER
        return TupleV(list(value)) if isinstance(value, (list, tuple)) else OTHER

    def _iterate(self, value, node):
        """``*value``: its items where the reader knows them."""
        if isinstance(value, TupleV):
            return value.items
        if isinstance(value, (list, tuple)):
            return list(value)
        return [OTHER]

    def _comprehension_items(self, iterable, comp, node):
        return [self.element_of(iterable, comp.iter)]  # read once, for what an item holds

    def _bind_target(self, target, value, scope) -> None:
        self.assign(target, value, scope)

    def _comprehension_value(self, results, node):
        return OTHER

    @SYNTAX.register(cst.ListComp)
    def _trainable_parameters_rule(self, node, scope):
        return OTHER if self._trainable_parameters(node, scope) else PASS

    # -- operators --------------------------------------------------------------------------
    @OPERANDS.register(*READER_VALUES)
    def _combined(self, left, right, op, node):
        return _combine(left, right)

    def _arith_error(self, exc, node):
        return OTHER

    @UNARY.register(*READER_VALUES)
    def _unary(self, node, value):
        return value

    @COMPARANDS.register(*READER_VALUES)
    def _compared(self, left, right, node, target):
        if isinstance(left, LiveV) or isinstance(right, LiveV):  # (a tensor's comparison is one)
            return LiveV(getattr(left, "permuted", False) or getattr(right, "permuted", False))
        return Arr() if isinstance(left, Arr) or isinstance(right, Arr) else OTHER

    # -- calls ------------------------------------------------------------------------------
    @SYNTAX.register(cst.Call)
    def _vision_call(self, node, scope):
        made = torch_vision.call(self, node, scope)
        return PASS if made is None else made

    @SYNTAX.register(cst.Call)
    def _isinstance_tensor_rule(self, node, scope):
        """``isinstance(h, torch.Tensor)`` → the generated ``is_tensor(h)``: a Keras tensor or
        a numpy array (what torch's tensors are in the Keras program)."""
        if not (isinstance(node.func, cst.Name) and node.func.value == "isinstance" and len(node.args) == 2 and
                scope.lookup("isinstance") is None and
                torch_plumbing._torch_path(self, node.args[1].value, scope) == "torch.Tensor"):
            return PASS
        self.expr(node.args[0].value, scope)
        self.runtime_expr(node, "is_tensor({0})", [node.args[0].value], ["is_tensor"])
        return OTHER

    @SYNTAX.register(cst.Call)
    def _count_params_rule(self, node, scope):
        return OTHER if self._count_params(node, scope) else PASS

    def _call_target(self, func, scope):
        if isinstance(func, cst.Attribute):
            obj = self._eval(func.value, scope)
            if isinstance(obj, TorchRef):
                return TorchRef(f"{obj.path}.{func.attr.value}")
            return MethodV(obj, func.attr.value)
        return self._eval(func, scope)

    def _call_expression(self, func, node: cst.Call, scope):
        if isinstance(func, TorchRef) and func.path == "torch.device":
            # Keras places tensors on its device itself: nothing to choose; the program's own
            # checks and prints read the generated Device (``device.type``)
            parts = [a.value for a in node.args]
            for part in parts:
                self.expr(part, scope)
            texts = [("{%d}" % i) if a.keyword is None else f"{a.keyword.value}={{{i}}}" for i, a in enumerate(node.args)]
            self.runtime_expr(node, f"Device({', '.join(texts)})", parts, ["Device"])
            return OTHER
        # an optimizer's parameter groups are read statically (parameter_groups)
        groups = isinstance(func, TorchRef) and func.path.startswith("torch.optim.") and \
            ".lr_scheduler" not in func.path and bool(node.args) and isinstance(node.args[0].value,
                                                                                 (cst.List, cst.Tuple))
        self.optimizer_args += groups
        try:
            args = self.arguments(node, scope)
        finally:
            self.optimizer_args -= groups
        value = self.CALLS.apply(self, func, node, args, scope)
        if value is not PASS:
            return value
        if isinstance(node.func, cst.Name):
            return self.builtin_call(node.func.value, func, node, args, scope)
        return OTHER

    @CALLS.register(torch_trainers.TrainerClassV)
    def _call_trainer_class(self, func, node, args, scope):
        return torch_trainers.construct(self, func, node, args)

    @ATTRIBUTES.register(torch_trainers.InstanceV)
    def _instance_attribute(self, obj, name, node):
        return torch_trainers.attribute(obj, name)

    @CALLS.register(MethodV)
    def _call_method(self, func, node, args, scope):
        if isinstance(func.obj, torch_trainers.InstanceV):
            held = torch_trainers.held_callable(func.obj, func.name)
            if held is not None:  # (``self.model(source)``: the model the instance holds)
                value = self.CALLS.apply(self, held, node, args, scope)
                return OTHER if value is PASS else value
            return torch_trainers.call_method(self, func.obj, func.name, args)
        if isinstance(func.obj, DistributionV):
            return torch_episodes.distribution_method(self, func.name, node, args)
        if isinstance(func.obj, (TupleV, GroupV)):  # (a list the program appends tensors to)
            appended = torch_episodes.list_method(func.obj, func.name, args)
            if appended is not None:
                return appended
        return self.method(func.obj, func.name, node, args, scope)

    @CALLS.register(TorchRef)
    def _call_torch(self, func, node, args, scope):
        return self.torch_call(func.path, node, args, scope)

    @CALLS.register(HelperRefV)
    def _call_helper(self, func, node, args, scope):
        made = self.helper_calls.construct(func, node, args)
        if made is not None:
            return made
        if isinstance(func.helper.node, cst.FunctionDef):
            return self._call_function(FuncV(func.helper.node), node, args, scope)
        return PASS

    @CALLS.register(ModelFactory)
    def _call_factory(self, func, node, args, scope):
        model = ModelV(func.name, func.md, elsewhere=func.elsewhere)
        torch_episodes.construction(self, node, args, model)
        return model

    @SYNTAX.register(cst.Call)
    def _namedtuple_call(self, node, scope):
        """A record class made by ``namedtuple``: its instance is the tuple of its fields."""
        if isinstance(node.func, cst.Name) and node.func.value in torch_episodes.namedtuple_names(self) and \
                all(a.keyword is None and not a.star for a in node.args):
            return TupleV([v for _, v in self.arguments(node, scope)])
        return PASS

    @ATTRIBUTES.register(DistributionV)
    def _distribution_attribute(self, obj, name, node):
        return torch_episodes.distribution_attribute(self, name, node)

    @CALLS.register(torch_vision.TransformV)
    def _call_transform(self, func, node, args, scope):
        return Arr()  # (a tensor made by torchvision's transform: numpy data in the Keras program)

    @CALLS.register(DatasetClassV)
    def _call_dataset_class(self, func, node, args, scope):
        return MapDatasetV(func.arity)

    @CALLS.register(FuncV)
    def _call_function(self, func, node, args, scope):
        if func.node.name.value in self.skip_defs:
            return OTHER
        values = [v for a, v in args if a.keyword is None and not a.star]
        kw = {a.keyword.value: v for a, v in args if a.keyword is not None}
        made = self.helper_calls.call(func.node, node, args)
        if made is not None:
            return made
        from transpiler.frontend_ast.torch.layout_boundary import torch_layout_call

        # its code is read once, for torch's layout: the call hands it a map permuted back
        given = torch_layout_call(self, node, args)
        if given is not None:
            values = [v for (a, _), v in zip(args, given) if a.keyword is None and not a.star]
            kw = {a.keyword.value: v for (a, _), v in zip(args, given) if a.keyword is not None}
        return self.read_function(func.node, values, kw, closure=func.env)

    @CALLS.register(ModelV)
    def _call_model(self, func, node, args, scope):
        return self.model_call(func, node, args)

    @CALLS.register(LossV)
    def _call_loss(self, func, node, args, scope):
        return self.loss_call(func, node, args)

    def arguments(self, node: cst.Call, scope: Scope) -> list[tuple[cst.Arg, V]]:
        out = []
        for arg in node.args:
            value = self._eval(arg.value, scope)
            if isinstance(value, TorchRef):
                value = self.torch_value(value, arg.value)
            out.append((arg, value))
        return out

    def torch_value(self, ref: TorchRef, node) -> V:
        """A torch name used as a value (not called): dtypes become numpy dtype names."""
        parts = ref.path.split(".")
        if len(parts) == 2 and parts[1] in DTYPES:
            self.fact(node, "array_expr", T.ArrayExpr(f'"{DTYPES[parts[1]]}"'))
            return OTHER
        return ref

    def same_binding(self, name: str, scope: Scope, dataset: "DatasetV | None") -> bool:
        """Whether ``name`` can be read here and means what it meant where ``dataset`` was made
        (a function given the loader may bind the same name to a batch: ``for x, y in loader``)."""
        here = scope.lookup(name)
        if here is None and name not in self.fe.globals.vars:
            return False
        if dataset is None or dataset.bindings is None or name not in dataset.bindings:
            return True
        return here is dataset.bindings[name]

    # -- calls of builtins (and of names nothing binds) -------------------------------------
    def builtin_call(self, name: str, func, node: cst.Call, args, scope) -> V:
        """``name(...)``: a builtin, or a function the reader does not know; a builtin runs
        on plain Python values."""
        values = [v for _, v in args]
        if any(isinstance(v, (StateV, LoadedV, CheckpointV)) for v in values) and not (
                name == "list" and len(values) == 1 and isinstance(values[0], StateV) and values[0].model.md):
            raise Unsupported(f"{name}() of a state_dict (Keras keeps a model's weights as a list, without "
                              "names)")
        handler = _BUILTIN_CALLS.get(name)
        value = PASS if handler is None or not values else handler(self, node, args, values, scope)
        if value is not PASS:
            return value
        if func in self._builtin_functions and all(_static(v) and not a.star for a, v in args):
            try:
                return func(*[v for a, v in args if a.keyword is None],
                            **{a.keyword.value: v for a, v in args if a.keyword is not None})
            except Exception:  # noqa: BLE001 - what Python would raise when the program runs
                return OTHER
        return OTHER

    def _len_call(self, node, args, values, scope):
        """``len(loader)`` / ``len(dataset)``: the number, from the arrays when they can be read here."""
        if len(args) != 1:
            return PASS
        arg = args[0][0].value
        holder = None
        if isinstance(values[0], LoaderV):
            loader = values[0]
            holder = loader
            first = loader.dataset.arrays[0]
            if loader.batch_size is None:
                template, parts = "len({0})", [first]
            elif loader.drop_last is not None and _code(bare_argument(loader.drop_last)) != "False":
                template, parts = "len({0}) // {1}", [first, loader.batch_size]
            else:
                template, parts = "math.ceil(len({0}) / {1})", [first, loader.batch_size]
        elif isinstance(values[0], DatasetV):
            holder = values[0]
            template, parts = "len({0})", [values[0].arrays[0]]
            if isinstance(arg, cst.Attribute) and isinstance(arg.value, (cst.Name, cst.Subscript)):
                owner = self.peek(arg.value, scope)  # (``loader.dataset``, ``loaders["val"].dataset``)
                if isinstance(owner, LoaderV):
                    holder = owner
        else:
            return PASS
        dataset = holder.dataset if isinstance(holder, LoaderV) else holder
        visible = all(self.same_binding(n.value, scope, dataset) for part in parts for n in _root_names(part))
        if visible and all(isinstance(p, (cst.Name, cst.Subscript, cst.Integer, cst.Attribute)) for p in parts):
            # (a function given the loader does not see the arrays it was made of: it keeps len())
            # the number is known from the arrays: the loader itself is not needed for it
            self.array(node, template, parts)
            counts = self.used_loaders if isinstance(holder, LoaderV) else self.used_datasets
            counts[holder] -= 1
        return OTHER

    def _print_call(self, node, args, values, scope):
        if len(args) == 1 and isinstance(values[0], ModelV):
            self.fact(node, "summary", model=_code(args[0][0].value))
            return OTHER
        return PASS

    def _state_keys(self, node, args, values, scope):
        if len(values) == 1 and isinstance(values[0], StateV) and values[0].model.md is not None:
            # a state_dict's keys: the names of the model's weights (Keras' own: "fc/kernel")
            self.array(node, f"[weight.path for weight in {values[0].model.name}().weights]", [])
            return OTHER
        return self._same_items(node, args, values, scope)

    def _same_items(self, node, args, values, scope):
        """``list(model.parameters())``, ``tuple(batch)``: what it held."""
        return values[0] if isinstance(values[0], (ParamsV, TupleV)) else PASS

    def _next_call(self, node, args, values, scope):
        return TupleV([Arr() for _ in values[0].dataset.arrays]) if isinstance(values[0], LoaderV) else PASS

    def _trainable_parameters(self, node, scope) -> bool:
        """``[p for p in model.parameters() if p.requires_grad]`` → ``model.trainable_weights``
        (Keras' list of the weights that train)."""
        comp = node.for_in if isinstance(node, cst.ListComp) else None
        if comp is None or comp.inner_for_in is not None or len(comp.ifs) != 1 or \
                not isinstance(comp.target, cst.Name) or not isinstance(node.elt, cst.Name) or \
                node.elt.value != comp.target.value:
            return False
        test = comp.ifs[0].test
        call = comp.iter
        if not (isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and
                test.value.value == comp.target.value and test.attr.value == "requires_grad" and
                isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute) and
                call.func.attr.value == "parameters" and isinstance(call.func.value, cst.Name)):
            return False
        if not isinstance(self.expr(call.func.value, scope), ModelV):
            return False
        self.array(node, "{0}.trainable_weights", [call.func.value])
        return True

    def _count_params(self, node: cst.Call, scope) -> bool:
        """``sum(t.numel() for t in model.state_dict().values() if t.is_floating_point())`` →
        ``model.count_params()``: every weight, buffers such as BatchNorm statistics included
        (Keras counts those too; ``num_batches_tracked`` is an int)."""
        if not (isinstance(node.func, cst.Name) and node.func.value == "sum" and len(node.args) == 1
                and node.args[0].keyword is None and not node.args[0].star
                and isinstance(node.args[0].value, (cst.GeneratorExp, cst.ListComp))):
            return False
        comp = node.args[0].value
        loop = comp.for_in
        if loop.inner_for_in is not None or len(loop.ifs) != 1 or not isinstance(loop.target, cst.Name):
            return False
        var = loop.target.value

        def method_of(expr, method: str):
            """``x`` of ``x.method()``."""
            if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
                    and expr.func.attr.value == method:
                return expr.func.value
            return None

        def is_var(expr) -> bool:
            return isinstance(expr, cst.Name) and expr.value == var

        model = method_of(method_of(loop.iter, "values"), "state_dict")
        if not (is_var(method_of(comp.elt, "numel")) and is_var(method_of(loop.ifs[0].test, "is_floating_point"))
                and model is not None and isinstance(self.peek(model, scope), ModelV)):
            return False
        self.expr(model, scope)
        self.array(node, "{0}.count_params()", [model])
        return True

    # -- calls of torch -------------------------------------------------------------
    def torch_call(self, path: str, node: cst.Call, args, scope: Scope) -> V:
        pos = [a.value for a, _ in args if a.keyword is None and not a.star]
        vals = [v for a, v in args if a.keyword is None and not a.star]
        kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}
        kwv = {a.keyword.value: v for a, v in args if a.keyword is not None}
        if DATA_PATHS.get(path) == "loader" and any(a.star == "**" for a, _ in args):
            return self.torch_call(path, node, torch_plumbing.unpacked_loader_options(self, args, scope), scope)
        if any(a.star for a, _ in args) and path not in ("torch.randn", "torch.rand", "torch.zeros", "torch.ones"):
            raise Unsupported(f"{path}(*...): unpacked arguments")
        short = path.split(".")[-1]
        if torch_plumbing.query(self, path, node) is not None:
            return OTHER
        wrapped = torch_plumbing.distributed_call(self, path, node, pos, vals, kw)
        if wrapped is not None:
            return wrapped
        if path in torch_episodes.CATEGORICAL:
            return torch_episodes.distribution(self, path, node, args)
        if any(torch_episodes.holds_live(v) for v in vals + list(kwv.values())) and not path.startswith(
                ("torch.optim", "torch.utils.data", "torch.nn.utils")):
            from transpiler.frontend_ast.torch.steps import live_function

            return live_function(self, path, node, pos, vals, kw)
        from transpiler.frontend_ast.torch.tensor_params import DATA_CALLS

        if path in DATA_CALLS:  # (pad_sequence, torch.FloatTensor, sparse tensors: frontend_ast/torch/tensor_params)
            return DATA_CALLS[path](self, node, pos, kw)
        call = _TorchCall(path, short, node, pos, vals, kw)
        handler = _TORCH_CALLS.get(path) or _TORCH_MODULES.get(path.rsplit(".", 1)[0])
        value = PASS if handler is None else handler(self, call, kwv, scope)
        if value is not PASS:
            return value
        return self.torch_function(path, short, node, pos, vals, kw)

    def static(self, node, what: str) -> Any:
        """The value of a constant expression (module constants included), else Code (an
        option of the program's command line stays code: ``args.lr``, cli_args.py)."""
        from transpiler.frontend_ast.torch.cli_args import reads_command_line

        if reads_command_line(node, self.fe._command_lines()):
            return T.Code(_code(node), self.sid(node))
        try:
            value = self.fe._eval(node, self.fe.globals)
        except Exception:  # noqa: BLE001 - anything the interpreter cannot decide stays code
            value = None
        if type(value).__name__ in ("Unknown", "Tensor", "Mod", "Ref", "NoneType", "FunctionRef", "ClassRef"):
            if isinstance(node, cst.Name) and node.value == "None":
                return None
            return T.Code(_code(node), self.sid(node))
        if isinstance(value, (int, float, bool, str, tuple, list)):
            return value
        return T.Code(_code(node), self.sid(node))

    # long: one case per torch function family (constructors, random, reductions, losses)
    def torch_function(self, path: str, short: str, node: cst.Call, pos, vals, kw) -> V:
        """A torch function on array data: the numpy code computing it (``_TORCH_FUNCTIONS``)."""
        call = _TorchCall(path, short, node, pos, vals, kw)
        handler = _TORCH_FUNCTIONS.get(path)
        if handler is None and path.count(".") == 1 and short in NUMPY_UNARY:
            handler = _numpy_unary
        if handler is None:
            template = torch_plumbing.array_function(short, path, pos, kw, call.p)
            if template is not None:  # (torch.flatten, triu/tril, eye, diag: numpy's)
                return call.array(self, template)
            raise Unsupported(f"{path}() is not translated to Keras yet")
        return handler(self, call)


#: builtins with a meaning for the reader's values, by name (``builtin_call``)
_BUILTIN_CALLS = {
    "len": ReaderExpressions._len_call,
    "print": ReaderExpressions._print_call,
    "list": ReaderExpressions._state_keys,
    "tuple": ReaderExpressions._same_items, "iter": ReaderExpressions._same_items,
    "reversed": ReaderExpressions._same_items, "sorted": ReaderExpressions._same_items,
    "enumerate": lambda self, node, args, values, scope: _Enumerated(values[0]),
    "zip": lambda self, node, args, values, scope: _Zipped(values),
    "next": ReaderExpressions._next_call,
}


class _TorchCall:
    """One call of a torch function and the numpy code made of it: ``p(arg)`` places an
    argument's code (``{i}`` in the template, ``parts[i]`` the argument)."""

    def __init__(self, path: str, short: str, node: cst.Call, pos: list, vals: list, kw: dict):
        self.path, self.short, self.node, self.pos, self.vals, self.kw = path, short, node, pos, vals, kw
        self.parts: list = []

    def p(self, n) -> str:
        self.parts.append(n)
        return "{%d}" % (len(self.parts) - 1)

    def shape(self) -> str:
        if "size" in self.kw:
            return self.p(self.kw["size"])
        sizes = [a for a in self.node.args if a.keyword is None]  # ``torch.randn(4, *SHAPE)`` too
        if len(sizes) == 1 and not sizes[0].star and not isinstance(sizes[0].value, cst.Integer):
            return self.p(sizes[0].value)
        texts = [("*" if a.star else "") + self.p(a.value) for a in sizes]
        return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"

    def dtype(self, default: str) -> str:
        return self.p(self.kw["dtype"]) if "dtype" in self.kw else f'"{default}"'

    def array(self, reader, template: str, result: V | None = None) -> V:
        reader.array(self.node, template, self.parts)
        return Arr() if result is None else result

    def not_translated(self):
        raise Unsupported(f"{self.path}() is not translated to Keras yet")


def _from_data(r, c: _TorchCall) -> V:
    if c.path == "torch.from_numpy":
        return c.array(r, c.p(c.pos[0]))
    data = c.p(c.pos[0])
    dtype = f", dtype={c.p(c.kw['dtype'])}" if "dtype" in c.kw else ""
    return c.array(r, f"$asarray({data}{dtype})")


_SHAPED = {"torch.randn": "$random.standard_normal({shape}).astype({dtype})",
           "torch.rand": "$random.random_sample({shape}).astype({dtype})",
           "torch.zeros": "$zeros({shape}, dtype={dtype})", "torch.ones": "$ones({shape}, dtype={dtype})",
           "torch.empty": "$empty({shape}, dtype={dtype})"}


def _shaped(r, c: _TorchCall) -> V:
    shape = c.shape()
    return c.array(r, _SHAPED[c.path].format(shape=shape, dtype=c.dtype("float32")))


def _full(r, c: _TorchCall) -> V:
    fill = c.pos[1] if len(c.pos) > 1 else c.kw["fill_value"]
    default = "float32" if isinstance(fill, cst.Float) or not isinstance(fill, cst.Integer) else "int64"
    size = c.p(c.pos[0] if c.pos else c.kw["size"])
    return c.array(r, f"$full({size}, {c.p(fill)}, dtype={c.dtype(default)})")


def _randint(r, c: _TorchCall) -> V:
    pos, kw = c.pos, c.kw
    if "size" in kw and len(pos) + ("low" in kw) + ("high" in kw) in (1, 2):  # (randint(10, size=(3,)))
        given = dict(zip(("low", "high") if len(pos) == 2 or "high" in kw else ("high",), pos), **kw)
        low, high, size = given.get("low"), given["high"], kw["size"]
        return c.array(r, f"$random.randint({c.p(low) if low is not None else '0'}, {c.p(high)}, "
                          f"size={c.p(size)})")
    if len(c.pos) == 2:
        low, high, size = None, c.pos[0], c.pos[1]
    elif len(c.pos) >= 3:
        low, high, size = c.pos[0], c.pos[1], c.pos[2]
    else:
        raise Unsupported("torch.randint with keyword sizes")
    return c.array(r, f"$random.randint({c.p(low) if low is not None else '0'}, {c.p(high)}, size={c.p(size)})")


def _randperm(r, c: _TorchCall) -> V:
    if len(c.pos) != 1 or not set(c.kw) <= {"dtype", "device"}:
        c.not_translated()
    return c.array(r, f"$random.permutation({c.p(c.pos[0])})")  # (torch's int64 too)


#: torch.arange / torch.linspace keywords as NumPy's
_RANGE_KEYWORDS = {"arange": {"start": "start", "end": "stop", "step": "step"},
                   "linspace": {"start": "start", "end": "stop", "steps": "num"}}


def _range(r, c: _TorchCall) -> V:
    """``torch.arange`` / ``torch.linspace`` as NumPy's, bounds by position or keyword, with
    torch's result dtype where NumPy's differs: arange is int64 for integer bounds and float32
    (not NumPy's float64) when a bound is a float; linspace is float32."""
    names = _RANGE_KEYWORDS[c.short]
    args = [c.p(a) for a in c.pos] + [f"{names[k]}={c.p(v)}" for k, v in c.kw.items() if k in names]
    bounds = list(c.pos) + [v for k, v in c.kw.items() if k in names]
    if "dtype" in c.kw:
        args.append(f"dtype={c.dtype('float32')}")
    elif c.short == "linspace" or any(_float_literal(b) for b in bounds):
        args.append('dtype="float32"')
    return c.array(r, f"${c.short}(" + ", ".join(args) + ")")


def _float_literal(node) -> bool:
    """A float written in the source (``0.5``, ``-1e-3``)."""
    while isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, cst.Float)


_LIKE = {"torch.zeros_like": "$zeros_like({0})", "torch.ones_like": "$ones_like({0})",
         "torch.randn_like": "$random.standard_normal({0}.shape).astype({0}.dtype)",
         "torch.rand_like": "$random.random_sample({0}.shape).astype({0}.dtype)",
         "torch.full_like": "$full_like({0}, {1})"}


def _like(r, c: _TorchCall) -> V:
    base = c.p(c.pos[0])
    fill = c.p(c.pos[1]) if c.path == "torch.full_like" and len(c.pos) > 1 else ""
    return c.array(r, _LIKE[c.path].format(base, fill))


def _join(r, c: _TorchCall) -> V:
    dim = c.kw.get("dim") or (c.pos[1] if len(c.pos) > 1 else None)
    fn = "$stack" if c.short == "stack" else "$concatenate"
    return c.array(r, f"{fn}({c.p(c.pos[0])}" + (f", axis={c.p(dim)}" if dim is not None else "") + ")")


def _close(r, c: _TorchCall) -> V:
    fn = {"allclose": "$allclose", "isclose": "$isclose", "equal": "$array_equal"}[c.short]
    extra = "".join(f", {k}={c.p(v)}" for k, v in c.kw.items() if k in ("rtol", "atol", "equal_nan"))
    return c.array(r, f"{fn}({c.p(c.pos[0])}, {c.p(c.pos[1])}{extra})", Arr() if c.short == "isclose" else OTHER)


def _reduce(r, c: _TorchCall) -> V:
    return r.tensor_method(c.short, c.pos[0], c.node, [(cst.Arg(a), OTHER) for a in c.pos[1:]] +
                           [(cst.Arg(v, keyword=cst.Name(k)), OTHER) for k, v in c.kw.items()],
                           receiver_node=c.pos[0], parts=c.parts)


def _extremum(r, c: _TorchCall) -> V:
    if len(c.pos) == 2 and not c.kw and isinstance(c.vals[1], Arr):
        return c.array(r, f"${c.short}imum({c.p(c.pos[0])}, {c.p(c.pos[1])})")  # elementwise
    return _reduce(r, c)


def _numpy_unary(r, c: _TorchCall) -> V:
    if len(c.pos) != 1 or c.kw:
        c.not_translated()
    return c.array(r, f"{NUMPY_UNARY[c.short]}({c.p(c.pos[0])})")


def _relu(r, c: _TorchCall) -> V:
    return c.array(r, f"$maximum({c.p(c.pos[0])}, 0)")


def _clip(r, c: _TorchCall) -> V:
    lo = c.kw.get("min") or (c.pos[1] if len(c.pos) > 1 else None)
    hi = c.kw.get("max") or (c.pos[2] if len(c.pos) > 2 else None)
    return c.array(r, f"$clip({c.p(c.pos[0])}, {c.p(lo) if lo is not None else 'None'}, "
                      f"{c.p(hi) if hi is not None else 'None'})")


def _where(r, c: _TorchCall) -> V:
    if len(c.pos) != 3:
        c.not_translated()
    return c.array(r, f"$where({c.p(c.pos[0])}, {c.p(c.pos[1])}, {c.p(c.pos[2])})")


def _multinomial(r, c: _TorchCall) -> V:
    """``torch.multinomial(w, k[, replacement])`` of a weights vector or a matrix of them → the
    generated ``array_multinomial`` (runtime/keras/arrays.py: numpy's choice per row, int64
    indices of torch's shape)."""
    names = ("input", "num_samples", "replacement")
    given = dict(zip(names, c.pos), **c.kw)
    if set(given) - set(names) or "num_samples" not in given or "input" not in given or len(c.pos) > 3:
        c.not_translated()
    texts = [c.p(given[k]) if i < len(c.pos) else f"{k}={c.p(given[k])}" for i, k in enumerate(names) if k in given]
    r.runtime_expr(c.node, f"array_multinomial({', '.join(texts)})", c.parts, ["array_multinomial"])
    return Arr()


def _loss_on_arrays(r, c: _TorchCall) -> V:
    raise Unsupported(f"{c.path} on array data")  # handled in functional_loss


def _table(*entries) -> dict:
    return {path: handler for paths, handler in entries for path in paths}


#: torch functions on array data, by path → the handler writing their numpy code
_TORCH_FUNCTIONS = _table(
    (("torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.Tensor", "torch.asarray"), _from_data),
    (tuple(_SHAPED), _shaped), (("torch.full",), _full), (("torch.randint",), _randint),
    (("torch.randperm",), _randperm), (("torch.arange", "torch.linspace"), _range), (tuple(_LIKE), _like),
    (("torch.cat", "torch.concat", "torch.stack"), _join),
    (("torch.allclose", "torch.isclose", "torch.equal"), _close),
    (("torch.max", "torch.min"), _extremum),
    (("torch.argmax", "torch.argmin", "torch.sum", "torch.mean", "torch.amax", "torch.amin", "torch.std",
      "torch.var", "torch.prod", "torch.topk"), _reduce),
    (("torch.multinomial",), _multinomial),
    (("torch.relu", "torch.nn.functional.relu"), _relu), (("torch.clamp", "torch.clip"), _clip),
    (("torch.where",), _where), (("torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss"), _loss_on_arrays),
)


# -- torch calls that make objects or facts (``torch_call``) -----------------------------------
def _map_dataset(r, c: _TorchCall, kwv, scope) -> V:
    return r.map_dataset(c.short, c.node, c.pos, c.vals, c.kw, kwv)


def _data_object(r, c: _TorchCall, kwv, scope) -> V:
    return r.data_object(DATA_PATHS[c.path], c.node, c.pos, c.vals, c.kw, kwv, scope)


def _scheduler(r, c: _TorchCall, kwv, scope) -> V:
    return r.scheduler(c.short, c.node, c.pos, c.vals, c.kw)


def _optimizer(r, c: _TorchCall, kwv, scope) -> V:
    return r.optimizer(c.short, c.node, c.pos, c.vals, c.kw)


def _loss_object(r, c: _TorchCall, kwv, scope) -> V:
    if c.short not in LOSSES:
        return PASS
    loss = r.loss_config(c.short, {k: r.static(v, f"{c.short}({k}=...)") for k, v in c.kw.items()}, c.pos)
    r.fact(c.node, "loss_object", loss)
    return LossV(loss, c.node)


def _functional_loss(r, c: _TorchCall, kwv, scope) -> V:
    return r.functional_loss(c.short, c.node, c.pos, c.vals, c.kw) if c.short in LOSSES else PASS


def _no_grad(r, c: _TorchCall, kwv, scope) -> V:
    if c.path == "torch.enable_grad":
        raise Unsupported("torch.enable_grad() is not translated")
    return NoGradV()


def _seed(r, c: _TorchCall, kwv, scope) -> V:
    r.fact(c.node, "seed", T.Code(_code(c.pos[0]), r.sid(c.pos[0])) if c.pos else None)
    return OTHER


def _global_setting(r, c: _TorchCall, kwv, scope) -> V:
    raise Unsupported(f"{c.path}() is not translated")


def _save(r, c: _TorchCall, kwv, scope) -> V:
    return r.torch_save(c.node, c.pos, c.vals)


def _onnx_export(r, c: _TorchCall, kwv, scope) -> V:
    return r.onnx_export(c.node, c.pos, c.vals, c.kw, private=c.path == "torch.onnx._export")


def _download(r, c: _TorchCall, kwv, scope) -> V:
    return download_call(r, c.node, c.pos, c.kw)


def _load(r, c: _TorchCall, kwv, scope) -> V:
    if not c.pos:
        raise Unsupported("torch.load without a path")
    return r.torch_load(c.node, c.pos[0])


def _activation(r, c: _TorchCall, kwv, scope) -> V:
    if c.vals and isinstance(c.vals[0], LiveV):
        from transpiler.frontend_ast.torch.steps import live_function

        return live_function(r, c.path, c.node, c.pos, c.vals, c.kw)
    if not c.vals or not isinstance(c.vals[0], Arr):
        raise Unsupported(f"{c.path} on something that is not array data")
    axis = c.kw.get("dim") or (c.pos[1] if len(c.pos) > 1 else None)
    r.fact(c.node, "activation", {"op": ACTIVATIONS[c.path], "x": r.sid(c.pos[0]),
                                  "axis": r.sid(axis) if axis is not None else None})
    return Arr()


#: torch calls by path (before the families of ``_TORCH_MODULES``, then ``_TORCH_FUNCTIONS``)
_TORCH_CALLS = _table(
    (("torch.utils.data.random_split", "torch.utils.data.dataset.random_split", "torch.utils.data.Subset",
      "torch.utils.data.dataset.Subset"), _map_dataset),
    (tuple(DATA_PATHS), _data_object),
    (("torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.autograd.no_grad"), _no_grad),
    (("torch.manual_seed", "torch.random.manual_seed"), _seed),
    (("torch.set_grad_enabled", "torch.set_num_threads", "torch.use_deterministic_algorithms",
      "torch.backends.cudnn.benchmark"), _global_setting),
    (("torch.save",), _save), (("torch.load",), _load), (tuple(ACTIVATIONS), _activation),
    (("torch.onnx.export", "torch.onnx._export"), _onnx_export), (DOWNLOAD_PATHS, _download),
)
#: families of torch calls by module (a handler may decline: a function of ``torch.nn.functional`` that is no loss)
_TORCH_MODULES = {"torch.optim.lr_scheduler": _scheduler, "torch.optim": _optimizer, "torch.nn": _loss_object,
                  "torch.nn.functional": _functional_loss}
