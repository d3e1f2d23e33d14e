"""The training reader's expressions: names, attributes, subscripts, operators, literals and
calls (builtins, ``torch.*`` constructors and functions), each read to what it holds.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler.frontend_ast.torch import plumbing as torch_plumbing
from transpiler.frontend_ast.torch import vision as torch_vision
from transpiler.frontend_ast.torch.helper_calls import HelperRefV
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.ir import training as T
from transpiler.frontend_ast.torch.reader_values import (
    _child_expressions, _code, _combine, _Enumerated, _root_names, _Zipped, ACTIVATIONS, Arr, CheckpointV,
    ChildV, DATA_PATHS, DatasetClassV, DatasetV, DictV, DTYPES, FuncV, LiveV, LoadedV, LoaderV, LOSSES, LossV,
    MapDatasetV, ModelAttrV, ModelFactory, ModelV, NoGradV, NUMPY_UNARY, OptimizerV, OTHER, ParamsV, ParamV,
    SchedulerV, Scope, StateV, TorchRef, TupleV, V)


class ReaderExpressions:
    """Mixin of ``TrainingReader`` (reader_exprs)."""

    # -- expressions ------------------------------------------------------------------
    def expr(self, node, scope: Scope) -> V:
        method = getattr(self, f"_e_{type(node).__name__}", None)
        if method is None:
            for child in _child_expressions(node):
                self.expr(child, scope)
            return OTHER
        return method(node, scope)

    def count_use(self, value) -> None:
        """A read of a loader or dataset (of each in a dict) outside the recognised loops."""
        if isinstance(value, LoaderV):
            self.used_loaders[id(value)] += 1
        elif isinstance(value, DatasetV):
            self.used_datasets[id(value)] += 1
        elif isinstance(value, DictV):
            for item in value.items.values():
                self.count_use(item)

    def _e_Name(self, node: cst.Name, scope: Scope) -> V:
        value = scope.lookup(node.value)
        if value is not None:
            self.count_use(value)
            return value
        if node.value in self.factories:
            return self.factories[node.value]
        if node.value in self.dataset_classes:
            return self.dataset_classes[node.value]
        ref = self.helper_calls.name(node)
        if ref is not None:
            return ref
        g = self.fe.globals.vars.get(node.value)
        if g is not None and type(g).__name__ == "Ref":
            return TorchRef(g.path) if g.path.split(".")[0] == "torch" else OTHER
        if node.value in self.fe.functions:
            return FuncV(self.fe.functions[node.value].node)
        return OTHER

    def _e_Attribute(self, node: cst.Attribute, scope: Scope) -> V:
        obj = self.expr(node.value, scope)
        name = node.attr.value
        if isinstance(obj, TorchRef):
            path = f"{obj.path}.{name}"
            return TorchRef(path)
        if isinstance(obj, Arr):
            if name in ("shape", "ndim"):
                return OTHER
            if name == "T":
                return Arr()
            if name == "data":
                self.array(node, "{0}", [node.value])
                return Arr()
            if name in ("dtype", "device", "grad", "requires_grad", "is_cuda"):
                raise Unsupported(f"tensor attribute .{name} of {_code(node.value)!r}")
            return OTHER
        if isinstance(obj, ModelV) or isinstance(obj, ModelAttrV) and obj.key is None:
            return self.model_attribute(obj, name, node)
        if isinstance(obj, LoaderV):
            if name == "dataset":
                return obj.dataset
            if name == "batch_size":
                return OTHER
            raise Unsupported(f"DataLoader attribute .{name}")
        if isinstance(obj, DatasetV):
            if name == "tensors":
                self.array(node, "{0}.arrays", [node.value])
                return TupleV([Arr() for _ in obj.arrays])
            raise Unsupported(f"TensorDataset attribute .{name}")
        if isinstance(obj, ParamV):
            if name == "requires_grad":
                self.array(node, "{0}.trainable", [node.value])
                return OTHER
            if name == "shape":
                return OTHER
            raise Unsupported(f"parameter attribute .{name}")
        if isinstance(obj, (OptimizerV, SchedulerV, StateV, LossV)):
            raise Unsupported(f"{_code(node)}: this attribute of a PyTorch object is not translated")
        if isinstance(obj, ChildV):
            raise Unsupported(f"{_code(node)}: a child module's attributes are not translated to its Keras layer")
        return OTHER

    def _e_Subscript(self, node: cst.Subscript, scope: Scope) -> V:
        held = scope.lookup(node.value.value) if isinstance(node.value, cst.Name) else None
        if isinstance(held, DictV) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and \
                isinstance(node.slice[0].slice.value, cst.SimpleString):  # d["train"]: a read of that item only
            item = held.items.get(node.slice[0].slice.value.evaluated_value, OTHER)
            self.count_use(item)
            return item
        obj = self.expr(node.value, scope)
        index = None
        for el in node.slice:
            self._slice(el.slice, scope)
            if isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Integer):
                index = int(el.slice.value.value)
        if isinstance(obj, Arr):
            return Arr()
        if isinstance(obj, TupleV):
            if index is not None and -len(obj.items) <= index < len(obj.items):
                return obj.items[index]
            return OTHER
        if isinstance(obj, DatasetV):
            return TupleV([Arr() for _ in obj.arrays])
        if isinstance(obj, CheckpointV):
            if isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.SimpleString):
                key = node.slice[0].slice.value.evaluated_value
                if key in obj.entries:
                    return StateV(obj.entries[key], snapshot=True)
            raise Unsupported(f"{_code(node)}: a key the checkpoint was not saved with")
        if isinstance(obj, ModelV) and self.optimizer_args:
            return OTHER  # a parameter group (``model[0].parameters()``): read statically
        if isinstance(obj, (StateV, LoadedV, ModelV, OptimizerV)):
            raise Unsupported(f"{_code(node)}: indexing a PyTorch object is not translated")
        return OTHER

    def _slice(self, s, scope: Scope) -> V:
        if isinstance(s, cst.Index):
            return self.expr(s.value, scope)
        for part in (s.lower, s.upper, s.step):
            if part is not None:
                self.expr(part, scope)
        return OTHER

    def _e_BinaryOperation(self, node, scope):
        return _combine(self.expr(node.left, scope), self.expr(node.right, scope))

    def _e_UnaryOperation(self, node, scope):
        return self.expr(node.expression, scope)

    def _e_BooleanOperation(self, node, scope):
        self.expr(node.left, scope)
        self.expr(node.right, scope)
        return OTHER

    def _e_Comparison(self, node, scope):
        kinds = [self.expr(node.left, scope)] + [self.expr(c.comparator, scope) for c in node.comparisons]
        return Arr() if any(isinstance(k, Arr) for k in kinds) else OTHER

    def _e_Tuple(self, node, scope):
        items = []
        for el in node.elements:
            value = self.expr(el.value, scope)
            items.append(OTHER if isinstance(el, cst.StarredElement) else value)
        return TupleV(items)

    _e_List = _e_Tuple

    def _e_Dict(self, node: cst.Dict, scope):
        items: dict | None = {}
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                self.expr(el.key, scope)
                value = self.expr(el.value, scope)
                if items is not None and isinstance(el.key, cst.SimpleString):
                    items[el.key.evaluated_value] = value
                    continue
            else:
                self.expr(el.value, scope)
            items = None
        return DictV(items) if items is not None else OTHER

    def _e_IfExp(self, node, scope):
        self.expr(node.test, scope)
        body = self.expr(node.body, scope)
        self.expr(node.orelse, scope)
        return body

    def _e_Lambda(self, node: cst.Lambda, scope: Scope):
        inner = Scope(scope)
        for p in node.params.params:
            inner.vars[p.name.value] = OTHER
        self.expr(node.body, inner)
        return OTHER

    def _comprehension(self, node, scope):
        if self._trainable_parameters(node, scope):
            return OTHER
        inner = Scope(scope)
        comp = node.for_in
        while comp is not None:
            items = self.expr(comp.iter, inner)
            self.assign(comp.target, self.element_of(items, comp.iter), inner)
            for cond in comp.ifs:
                self.expr(cond.test, inner)
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            self.expr(node.key, inner)
            self.expr(node.value, inner)
        else:
            self.expr(node.elt, inner)
        return OTHER

    _e_ListComp = _e_GeneratorExp = _e_SetComp = _e_DictComp = _comprehension

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

    def _e_FormattedString(self, node, scope):
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.expr(part.expression, scope)
                if part.format_spec:
                    for sub in part.format_spec:
                        if isinstance(sub, cst.FormattedStringExpression):
                            self.expr(sub.expression, scope)
        return OTHER

    def _e_Call(self, node: cst.Call, scope: Scope) -> V:
        func = node.func
        made = torch_vision.call(self, node, scope)
        if made is not None:
            return made
        if isinstance(func, cst.Attribute):
            obj = self.expr(func.value, scope)
            if not isinstance(obj, TorchRef):
                args = self.arguments(node, scope)
                return self.method(obj, func.attr.value, node, args, scope)
            target: V = TorchRef(f"{obj.path}.{func.attr.value}")
        else:
            target = self.expr(func, scope)
        if self._count_params(node, scope):
            return OTHER
        if isinstance(target, TorchRef) and target.path == "torch.device":
            # Keras places tensors on its device itself: nothing to choose
            self.array(node, "None", [])
            return OTHER
        # an optimizer's parameter groups are read statically (parameter_groups)
        groups = isinstance(target, TorchRef) and target.path.startswith("torch.optim.") and \
            ".lr_scheduler" not in target.path and node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple))
        self.optimizer_args += groups
        try:
            args = self.arguments(node, scope)
        finally:
            self.optimizer_args -= groups
        if isinstance(target, TorchRef):
            return self.torch_call(target.path, node, args, scope)
        if isinstance(target, HelperRefV):
            made = self.helper_calls.construct(target, node, args)
            if made is not None:
                return made
            target = FuncV(target.helper.node) if isinstance(target.helper.node, cst.FunctionDef) else OTHER
        if isinstance(target, ModelFactory):
            return ModelV(target.name, target.md)
        if isinstance(target, DatasetClassV):
            return MapDatasetV(target.arity)
        if isinstance(target, FuncV):
            if target.node.name.value in self.skip_defs:
                return OTHER
            values = [v for a, v in args if a.keyword is None and not a.star]
            kw = {a.keyword.value: v for a, v in args if a.keyword is not None}
            made = self.helper_calls.call(target.node, node, args)
            if made is not None:
                return made
            if any(isinstance(v, LiveV) and v.permuted for v in list(values) + list(kw.values())):
                # its code is read once, for torch's layout: dims and indices would land on other axes
                raise Unsupported(f"{target.node.name.value}() gets a feature map the Keras model returns "
                                  "channels-last (its code indexes torch's channels-first layout)")
            return self.read_function(target.node, values, kw)
        if isinstance(target, ModelV):
            return self.model_call(target, node, args)
        if isinstance(target, LossV):
            return self.loss_call(target, node, args)
        if isinstance(func, cst.Name):
            return self.builtin_call(func.value, node, args, scope)
        return OTHER

    def arguments(self, node: cst.Call, scope: Scope) -> list[tuple[cst.Arg, V]]:
        out = []
        for arg in node.args:
            value = self.expr(arg.value, scope)
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

    def builtin_call(self, name: str, node: cst.Call, args, scope) -> V:
        values = [v for _, v in args]
        if name == "list" and len(values) == 1 and isinstance(values[0], StateV) and values[0].model.md is not None:
            # a state_dict's keys: the names of the model's weights (Keras' own: "fc/kernel")
            self.array(node, f"[weight.path for weight in {values[0].model.name}().weights]", [])
            return OTHER
        if any(isinstance(v, (StateV, LoadedV, CheckpointV)) for v in values):
            raise Unsupported(f"{name}() of a state_dict (Keras keeps a model's weights as a list, without "
                              "names)")
        if name == "print" and len(args) == 1 and isinstance(values[0], ModelV):
            self.fact(node, "summary", model=_code(args[0][0].value))
            return OTHER
        if name == "len" and len(args) == 1:
            arg = args[0][0].value
            holder = None
            if isinstance(values[0], LoaderV):
                loader = values[0]
                holder = loader
                first = loader.dataset.arrays[0]
                if loader.batch_size is None:
                    template, parts = "len({0})", [first]
                elif loader.drop_last is not None and _code(loader.drop_last) != "False":
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
            dataset = holder.dataset if isinstance(holder, LoaderV) else holder
            visible = holder is not None and all(
                self.same_binding(n.value, scope, dataset) for part in parts for n in _root_names(part))
            if holder is not None and visible and all(
                    isinstance(p, (cst.Name, cst.Subscript, cst.Integer, cst.Attribute)) for p in parts):
                # (a function given the loader does not see the arrays it was made of: it keeps len())
                # the number is known from the arrays: the loader itself is not needed for it
                self.array(node, template, parts)
                counts = self.used_loaders if isinstance(holder, LoaderV) else self.used_datasets
                counts[id(holder)] -= 1
            return OTHER
        if name in ("enumerate",) and values:
            return _Enumerated(values[0])
        if name == "zip":
            return _Zipped(values)
        if name in ("list", "tuple", "iter", "reversed", "sorted") and values and \
                isinstance(values[0], (ParamsV, TupleV)):
            return values[0]
        if name == "next" and values and isinstance(values[0], LoaderV):
            return TupleV([Arr() for _ in values[0].dataset.arrays])
        return OTHER

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
        if any(isinstance(v, LiveV) for v in vals + list(kwv.values())) and not path.startswith(
                ("torch.optim", "torch.utils.data", "torch.nn.utils")):
            from transpiler.frontend_ast.torch.steps import live_function

            return live_function(self, path, node, pos, vals, kw)
        if path in ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split",
                    "torch.utils.data.Subset", "torch.utils.data.dataset.Subset"):
            return self.map_dataset(short, node, pos, vals, kw, kwv)
        if path in DATA_PATHS:
            return self.data_object(DATA_PATHS[path], node, pos, vals, kw, kwv, scope)
        if path.startswith("torch.optim.lr_scheduler."):
            return self.scheduler(short, node, pos, vals, kw)
        if path.startswith("torch.optim.") and path.count(".") == 2:
            return self.optimizer(short, node, pos, vals, kw)
        if path.startswith("torch.nn.") and path.count(".") == 2 and short in LOSSES:
            loss = self.loss_config(short, {k: self.static(v, f"{short}({k}=...)") for k, v in kw.items()}, pos)
            self.fact(node, "loss_object", loss)
            return LossV(loss, node)
        if path.startswith("torch.nn.functional.") and short in LOSSES:
            return self.functional_loss(short, node, pos, vals, kw)
        if path in ("torch.no_grad", "torch.inference_mode", "torch.enable_grad") or \
                path == "torch.autograd.no_grad":
            if path == "torch.enable_grad":
                raise Unsupported("torch.enable_grad() is not translated")
            return NoGradV()
        if path == "torch.manual_seed" or path == "torch.random.manual_seed":
            self.fact(node, "seed", T.Code(_code(pos[0]), id(pos[0])) if pos else None)
            return OTHER
        if path in ("torch.set_grad_enabled", "torch.set_num_threads", "torch.use_deterministic_algorithms",
                    "torch.backends.cudnn.benchmark"):
            raise Unsupported(f"{path}() is not translated")
        if path == "torch.save":
            return self.torch_save(node, pos, vals)
        if path == "torch.load":
            if not pos:
                raise Unsupported("torch.load without a path")
            return self.torch_load(node, pos[0])
        if path in ACTIVATIONS:
            if vals and isinstance(vals[0], LiveV):
                from transpiler.frontend_ast.torch.steps import live_function

                return live_function(self, path, node, pos, vals, kw)
            if not vals or not isinstance(vals[0], Arr):
                raise Unsupported(f"{path} on something that is not array data")
            axis = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
            self.fact(node, "activation", {"op": ACTIVATIONS[path], "x": id(pos[0]),
                                           "axis": id(axis) if axis is not None else None})
            return Arr()
        return self.torch_function(path, short, node, pos, vals, kw)

    def static(self, node, what: str) -> Any:
        """The value of a constant expression (module constants included), else Code."""
        try:
            value = self.fe._eval(node, self.fe.globals)
        except Exception:  # noqa: BLE001 - anything the interpreter cannot decide stays code
            value = None
        if type(value).__name__ in ("Unknown", "Tensor", "Mod", "Ref", "NoneType", "FunctionRef", "ClassRef"):
            if isinstance(node, cst.Name) and node.value == "None":
                return None
            return T.Code(_code(node), id(node))
        if isinstance(value, (int, float, bool, str, tuple, list)):
            return value
        return T.Code(_code(node), id(node))

    def torch_function(self, path: str, short: str, node: cst.Call, pos, vals, kw) -> V:
        parts: list = []

        def p(n) -> str:
            parts.append(n)
            return "{%d}" % (len(parts) - 1)

        def shape_of() -> str:
            if "size" in kw:
                return p(kw["size"])
            sizes = [a for a in node.args if a.keyword is None]  # ``torch.randn(4, *SHAPE)`` too
            if len(sizes) == 1 and not sizes[0].star and not isinstance(sizes[0].value, cst.Integer):
                return p(sizes[0].value)
            texts = [("*" if a.star else "") + p(a.value) for a in sizes]
            return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"

        def dtype(default: str) -> str:
            if "dtype" in kw:
                return p(kw["dtype"])
            return f'"{default}"'

        if path in ("torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.Tensor", "torch.asarray"):
            if path == "torch.from_numpy":
                template = p(pos[0])
            else:
                template = f"np.asarray({p(pos[0])}" + (f", dtype={p(kw['dtype'])}" if "dtype" in kw else "") + ")"
            self.array(node, template, parts)
            return Arr()
        if path in ("torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty"):
            shape = shape_of()
            template = {"torch.randn": f"np.random.standard_normal({shape}).astype({dtype('float32')})",
                        "torch.rand": f"np.random.random_sample({shape}).astype({dtype('float32')})",
                        "torch.zeros": f"np.zeros({shape}, dtype={dtype('float32')})",
                        "torch.ones": f"np.ones({shape}, dtype={dtype('float32')})",
                        "torch.empty": f"np.empty({shape}, dtype={dtype('float32')})"}[path]
            self.array(node, template, parts)
            return Arr()
        if path == "torch.full":
            fill = pos[1] if len(pos) > 1 else kw["fill_value"]
            default = "float32" if isinstance(fill, cst.Float) or not isinstance(fill, cst.Integer) else "int64"
            self.array(node, f"np.full({p(pos[0] if pos else kw['size'])}, {p(fill)}, dtype={dtype(default)})",
                       parts)
            return Arr()
        if path == "torch.randint":
            if "size" in kw and len(pos) + ("low" in kw) + ("high" in kw) in (1, 2):  # (randint(10, size=(3,)))
                given = dict(zip(("low", "high") if len(pos) == 2 or "high" in kw else ("high",), pos), **kw)
                low, high, size = given.get("low"), given["high"], kw["size"]
            elif len(pos) == 2:
                low, high, size = None, pos[0], pos[1]
            elif len(pos) >= 3:
                low, high, size = pos[0], pos[1], pos[2]
            else:
                raise Unsupported("torch.randint with keyword sizes")
            template = f"np.random.randint({p(low) if low is not None else '0'}, {p(high)}, size={p(size)})"
            self.array(node, template, parts)
            return Arr()
        if path == "torch.randperm" and len(pos) == 1 and set(kw) <= {"dtype", "device"}:
            self.array(node, f"np.random.permutation({p(pos[0])})", parts)  # (torch's int64 too)
            return Arr()
        if path in ("torch.arange", "torch.linspace"):
            self.array(node, f"np.{short}(" + ", ".join(p(a) for a in pos) + ")", parts)
            return Arr()
        if path in ("torch.zeros_like", "torch.ones_like", "torch.randn_like", "torch.rand_like", "torch.full_like"):
            base = p(pos[0])
            template = {"torch.zeros_like": f"np.zeros_like({base})", "torch.ones_like": f"np.ones_like({base})",
                        "torch.randn_like": f"np.random.standard_normal({base}.shape).astype({base}.dtype)",
                        "torch.rand_like": f"np.random.random_sample({base}.shape).astype({base}.dtype)",
                        "torch.full_like": f"np.full_like({base}, {p(pos[1]) if len(pos) > 1 else ''})"}[path]
            self.array(node, template, parts)
            return Arr()
        if path in ("torch.cat", "torch.concat", "torch.stack"):
            dim = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
            fn = "np.stack" if short == "stack" else "np.concatenate"
            self.array(node, f"{fn}({p(pos[0])}" + (f", axis={p(dim)}" if dim is not None else "") + ")", parts)
            return Arr()
        if path in ("torch.allclose", "torch.isclose", "torch.equal"):
            fn = {"allclose": "np.allclose", "isclose": "np.isclose", "equal": "np.array_equal"}[short]
            extra = "".join(f", {k}={p(v)}" for k, v in kw.items() if k in ("rtol", "atol", "equal_nan"))
            self.array(node, f"{fn}({p(pos[0])}, {p(pos[1])}{extra})", parts)
            return OTHER if short != "isclose" else Arr()
        if path in ("torch.max", "torch.min") and len(pos) == 2 and not kw and isinstance(vals[1], Arr):
            self.array(node, f"np.{short}imum({p(pos[0])}, {p(pos[1])})", parts)  # elementwise
            return Arr()
        if path in ("torch.argmax", "torch.argmin", "torch.sum", "torch.mean", "torch.amax", "torch.amin",
                    "torch.std", "torch.var", "torch.prod", "torch.max", "torch.min"):
            return self.tensor_method(short, pos[0], node, [(cst.Arg(a), OTHER) for a in pos[1:]] +
                                      [(cst.Arg(v, keyword=cst.Name(k)), OTHER) for k, v in kw.items()],
                                      receiver_node=pos[0], parts=parts)
        if path.startswith("torch.") and path.count(".") == 1 and short in NUMPY_UNARY and len(pos) == 1 and not kw:
            self.array(node, f"{NUMPY_UNARY[short]}({p(pos[0])})", parts)
            return Arr()
        if path in ("torch.relu", "torch.nn.functional.relu"):
            self.array(node, f"np.maximum({p(pos[0])}, 0)", parts)
            return Arr()
        if path in ("torch.clamp", "torch.clip"):
            lo = kw.get("min") or (pos[1] if len(pos) > 1 else None)
            hi = kw.get("max") or (pos[2] if len(pos) > 2 else None)
            self.array(node, f"np.clip({p(pos[0])}, {p(lo) if lo is not None else 'None'}, "
                             f"{p(hi) if hi is not None else 'None'})", parts)
            return Arr()
        if path == "torch.where" and len(pos) == 3:
            self.array(node, f"np.where({p(pos[0])}, {p(pos[1])}, {p(pos[2])})", parts)
            return Arr()
        if path in ("torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss"):
            raise Unsupported(f"{path} on array data")  # handled in functional_loss
        template = torch_plumbing.array_function(short, path, pos, kw, p)
        if template is not None:  # (torch.flatten, triu/tril, eye, diag: numpy's)
            self.array(node, template, parts)
            return Arr()
        raise Unsupported(f"{path}() is not translated to Keras yet")
