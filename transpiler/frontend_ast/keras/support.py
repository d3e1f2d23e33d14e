"""The Keras reader's helpers: tensor builders for keras_tensor_ops, what is static, numpy
shape modelling, user-class facts and the naming of local layers."""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
from transpiler.frontend_ast.interp import FunctionRef, Unknown
from transpiler.frontend_ast.interp.values import Unsupported, contains
from transpiler.frontend_ast.keras.layers import LayerSpec
from transpiler.frontend_ast.keras.values import (TRAINING_MODE, ArrayVal, DatasetObj, FrontendError, ModelHandle,
                                                  ModelObj, ModuleRef, TapeObj, TensorVal, UserObj, _Rng)
from transpiler.ir.graph import Graph, Node, Span, Value
from transpiler.ir.modules import ModuleScope
from transpiler.ir.shapes import infer_node
from transpiler.ir.reserved import GENERATED_IMPORTS, NN_MODULE_ATTRIBUTES



class _TensorBuilder:
    """keras_tensor_ops.Builder for one call site: nodes through ``_apply_anonymous``,
    marked ``tensor_op`` (the layout pass comments on the axis choices it makes for them)."""

    def in_source(self, text: str) -> bool:
        """The script already holds ``text`` (a note a translation added, read back)."""
        return text in self.frontend.source

    def __init__(self, frontend: "KerasFrontend", span: Span, what: str):
        self.frontend = frontend
        self.span = span
        self.what = what

    def add(self, op: str, inputs: list, attrs: dict, hint: str, n_out: int = 1) -> list:
        if not inputs:  # a tensor made from nothing (ops.arange): no layer call to go through
            return self._source(op, attrs, hint).outputs
        out = self.frontend._apply_anonymous(LayerSpec(op, attrs), [TensorVal(v) for v in inputs], self.span, hint)
        values = [t.value for t in (out if isinstance(out, list) else [out])]
        node = values[0].producer
        node.from_keras.tensor_op = self.what
        for v in inputs:
            if v.producer is not None and v.producer.op == "constant" and v.producer.from_keras.fused_into is None:
                v.producer.from_keras.fused_into = node  # reported and commented with its reader
        return values

    def constant(self, value) -> Value:
        return self._source("constant", {"value": value}, "constant", False).outputs[0]

    def statement(self) -> int | None:
        """The id of the statement running the call (``mult = ops.concatenate(...)``)."""
        fe = self.frontend
        return fe.stmt_stack[-1] if fe.stmt_stack else None

    def _source(self, op: str, attrs: dict, hint: str, tensor_op: bool = True):
        """A node with no inputs, placed where the statement computing it runs."""
        fe = self.frontend
        node = fe.scratch.add_node(op, hint, [], attrs=attrs, span=self.span)
        if tensor_op:
            node.from_keras.tensor_op = self.what
        node.from_keras.stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
        node.from_keras.call_stmts = tuple(fe.helper_call_stmts)
        node.from_keras.top_stmt = fe.stmt_stack[0] if fe.stmt_stack else None
        node.from_keras.scopes = tuple(fe.module_stack)
        infer_node(node)
        return node

    def warn(self, message: str) -> None:
        self.frontend.program.warn(self.span, message, self.frontend._line(self.span))


def _tensor_arg(value: Any) -> Any:
    """An argument as keras_tensor_ops reads it: tensors as IR Values, module paths as ApiPath."""
    if isinstance(value, TensorVal):
        return value.value
    if isinstance(value, ModuleRef):
        return keras_tensor_ops.ApiPath(value.path)
    if isinstance(value, keras_tensor_ops.ShapeVector):
        return value  # (sizes, no tensors: kept whole, with the statements that made it)
    if isinstance(value, (list, tuple)):
        return type(value)(_tensor_arg(v) for v in value)
    if isinstance(value, dict):
        return {k: _tensor_arg(v) for k, v in value.items()}
    return value


def _wrap_tensors(value: Any) -> Any:
    if isinstance(value, Value):
        return TensorVal(value)
    if isinstance(value, keras_tensor_ops.ShapeVector):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap_tensors(v) for v in value)
    return value


def _run_time(value: Any) -> bool:
    """True when ``value`` holds something only the running program knows (data, a model's
    output outside the graph), at any depth."""
    return contains(value, (Unknown, ModelObj, ModelHandle, DatasetObj, TapeObj))


def _has_tensor(value: Any) -> bool:
    return contains(value, TensorVal)


def _not_static(value: Any) -> bool:
    """True for a value only the running program knows (``sys.argv[1]``, an imported
    constant of another module), at any depth of a tuple, list or dict."""
    return contains(value, (Unknown, ModuleRef, FunctionRef, TensorVal, ModelObj))


def _static_name(name):
    """A model's ``name=`` when the source gives it statically; None for a name computed at run
    time (``name=name`` of a builder read on its own): the class is then named otherwise."""
    return name if isinstance(name, str) else None


def _names_in(node: cst.CSTNode) -> set[str]:
    """Every plain name a statement mentions."""
    return {n.value for n in nodes_of(node, cst.Name)}


def _custom_step(obj: "UserObj") -> dict | None:
    """A keras.Model subclass's own train_step/test_step: the methods' source, the
    ``@property`` methods next to them (``metrics``) and the metric trackers its
    ``__init__`` makes (attribute, source expression)."""
    cls = obj.cls
    steps = [cls.method(name) for name in ("train_step", "test_step", "compute_loss") if cls.method(name) is not None]
    if not steps:
        return None
    code = cst.Module([]).code_for_node
    props = [s for s in cls.node.body.body if isinstance(s, cst.FunctionDef) and any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in s.decorators)]
    trackers = []
    init = cls.method("__init__")
    for stmt in (init.body.body if init is not None else ()):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                        target.value.value == "self" and isinstance(small.value, cst.Call) and \
                        "metrics." in code(small.value.func):
                    trackers.append((target.attr.value, code(small.value)))
    loss = cls.method("compute_loss")
    helpers = _step_helpers(cls, steps)
    return {"methods": [(m.name.value, code(m.with_changes(leading_lines=()))) for m in props + steps + helpers],
            "helpers": [m.name.value for m in helpers],
            "constants": _step_constants(obj, steps + helpers, {attr for attr, _code in trackers}),
            "trackers": trackers, "tracker_metrics": _tracker_metrics(obj, trackers), "nodes": {m.name.value: m for m in steps},
            # Keras' own train_step/test_step around the model's compute_loss: written out
            "default_steps": [n for n in ("train_step", "test_step") if loss is not None and cls.method(n) is None],
            "loss_params": [p.name.value for p in loss.params.params[1:]] if loss is not None else []}


#: methods of a keras.Model subclass that Keras itself calls, or that the model's module
#: gets otherwise (``call`` is ``forward``): never translated as helpers of a step
_KERAS_HOOKS = ("__init__", "call", "build", "get_config", "from_config", "compute_output_shape",
                "predict_step", "compute_metrics", "compile", "train_step", "test_step", "compute_loss")


def _step_helpers(cls, steps: list) -> list:
    """The model's own methods its steps call (``self.compute_contrastive_loss(...)``), and
    those these call, in the class's order: methods of the torch module too."""
    own = {s.name.value: s for s in cls.node.body.body if isinstance(s, cst.FunctionDef)
           and s.name.value not in _KERAS_HOOKS and not s.decorators}
    reached: set[str] = set()
    todo = list(steps)
    while todo:
        fn = todo.pop()
        for call in nodes_of(fn, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                    and func.attr.value in own and func.attr.value not in reached:
                reached.add(func.attr.value)
                todo.append(own[func.attr.value])
    return [fn for name, fn in own.items() if name in reached]


def _step_constants(obj: "UserObj", methods: list, skip: set[str]) -> list[tuple[str, str]]:
    """The plain settings ``__init__`` stored (``self.temperature = temperature``: a number,
    a bool, a string or None, as this instance holds it) that the step methods read:
    (attribute, its value's source), to set on the torch module too."""
    read = {attr.attr.value for fn in methods for attr in nodes_of(fn, cst.Attribute)
            if isinstance(attr.value, cst.Name) and attr.value.value == "self"}
    out = []
    for name in sorted(read - skip):
        value = obj.attrs.get(name, _MISSING)
        if type(value) in (int, float, bool, str, type(None)) and not (
                isinstance(value, float) and (value != value or value in (float("inf"), float("-inf")))):
            out.append((name, repr(value)))
    return out


_MISSING = object()


def _tracker_metrics(obj: "UserObj", trackers: list) -> dict:
    """What each tracker is, as a custom loop's metric object: attribute → (canonical metric,
    label) (``("mean", "loss")``, ``("sparse_categorical_accuracy", None)``); a metric the
    training reader does not know is left out (the printer then reports it)."""
    from transpiler.frontend_ast.keras import training as keras_training

    out = {}
    for attr, _code in trackers:
        value = obj.attrs.get(attr)
        if not isinstance(value, keras_training.TrainingObj) or value.kind != "metric":
            continue
        try:
            if value.name == "Mean":
                label = value.kwargs.get("name")
                out[attr] = ("mean", label if isinstance(label, str) else None)
            else:
                out[attr] = (keras_training.metric_name(value), None)
        except Unsupported:
            continue
    return out


def _with_training_mode(fn: cst.FunctionDef, args, kwargs) -> dict:
    """call()'s ``training`` left to the mode (not given, or None) is bound to TRAINING_MODE."""
    positional = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)][1:]
    names = positional + [p.name.value for p in fn.params.kwonly_params]
    if "training" not in names:
        return kwargs
    if "training" in positional and positional.index("training") < len(args):
        return kwargs
    if kwargs.get("training") is None:
        return {**kwargs, "training": TRAINING_MODE}
    return kwargs


def _returns(stmt: cst.CSTNode) -> bool:
    """True for a ``return ...`` statement line."""
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in stmt.body)


def _called_names(node: cst.CSTNode) -> set[str]:
    """Names called directly in ``node`` (``f(...)``)."""
    return {call.func.value for call in nodes_of(node, cst.Call) if isinstance(call.func, cst.Name)}


#: keras.datasets shapes: (train x, train y), (test x, test y), x dtype
_DATASET_SHAPES = {
    "mnist": (((60000, 28, 28), (60000,)), ((10000, 28, 28), (10000,)), "uint8"),
    "fashion_mnist": (((60000, 28, 28), (60000,)), ((10000, 28, 28), (10000,)), "uint8"),
    "cifar10": (((50000, 32, 32, 3), (50000, 1)), ((10000, 32, 32, 3), (10000, 1)), "uint8"),
    "cifar100": (((50000, 32, 32, 3), (50000, 1)), ((10000, 32, 32, 3), (10000, 1)), "uint8"),
    "boston_housing": (((404, 13), (404,)), ((102, 13), (102,)), "float64"),
}
#: the labels' dtype where it is not uint8 (Boston house prices)
_DATASET_LABEL_DTYPES = {"boston_housing": "float64"}
#: each loader's parameters, in order, that leave the arrays' shapes as above (``path=``:
#: where the file is cached; ``seed=``: the order of the rows; ``label_mode=``: fine or
#: coarse CIFAR-100 labels, one integer per image either way)
_DATASET_NEUTRAL_PARAMS = {"mnist": ("path",), "fashion_mnist": (), "cifar10": (),
                           "cifar100": ("label_mode",), "boston_housing": ("path", "test_split", "seed")}
#: Boston housing: rows in the file, split as Keras does (``int(n * (1 - test_split))`` first)
_BOSTON_ROWS = 506


def dataset_shapes(name: str, args: list, kwargs: dict) -> tuple | None:
    """The shapes ``keras.datasets.<name>.load_data(*args, **kwargs)`` returns, as
    ``_DATASET_SHAPES`` gives them, when its arguments leave them known statically."""
    if name not in _DATASET_SHAPES:
        return None
    params = _DATASET_NEUTRAL_PARAMS[name]
    if len(args) > len(params) or any(k not in params for k in kwargs):
        return None
    bound = {**dict(zip(params, args)), **kwargs}
    (xs, ys), (xt, yt), dtype = _DATASET_SHAPES[name]
    if "test_split" in bound:
        split = bound["test_split"]
        if not isinstance(split, (int, float)) or isinstance(split, bool) or not 0 <= split <= 1:
            return None
        n = int(_BOSTON_ROWS * (1 - split))
        xs, ys = (n, *xs[1:]), (n, *ys[1:])
        xt, yt = (_BOSTON_ROWS - n, *xt[1:]), (_BOSTON_ROWS - n, *yt[1:])
    return (xs, ys), (xt, yt), dtype, _DATASET_LABEL_DTYPES.get(name, "uint8")
_ARRAY_METHODS = {"astype", "reshape", "copy", "squeeze"}


def _dims(value: Any) -> tuple | None:
    """A shape argument: an int or a tuple/list of ints (None when not static)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
        return tuple(value)
    return None


def _numpy_source(path: str, args, kwargs) -> Any:
    """Arrays made by numpy with a static shape; ``None`` when ``path`` is not one of them."""
    last = path.rsplit(".", 1)[-1]
    if path in ("numpy.random.default_rng", "numpy.random.RandomState"):
        return _Rng()
    dtype = "float64"
    if last in ("rand", "randn"):
        shape = _dims(tuple(args)) if args else ()
    elif last in ("random", "random_sample", "standard_normal", "zeros", "ones", "empty"):
        shape = _dims(args[0] if args else kwargs.get("size", kwargs.get("shape")))
    elif last in ("normal", "uniform"):
        shape = _dims(kwargs.get("size", args[2] if len(args) > 2 else None))
    elif last in ("randint", "integers"):
        shape = _dims(kwargs.get("size", args[2] if len(args) > 2 else None))
        dtype = "int64"
    elif last in ("linspace", "arange") and path.startswith("numpy."):
        return _static_range(last, args, kwargs)
    elif last == "concatenate" and path.startswith("numpy."):
        return _concatenate(args, kwargs)
    elif last == "expand_dims" and args and isinstance(args[0], ArrayVal):
        axis = args[1] if len(args) > 1 else kwargs.get("axis")
        if not isinstance(axis, int):
            return Unknown("expand_dims")
        shape = list(args[0].shape)
        shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
        return ArrayVal("array", tuple(shape), args[0].dtype)
    else:
        return None
    if shape is None:
        return Unknown(path)
    if isinstance(kwargs.get("dtype"), str):
        dtype = kwargs["dtype"]
    return ArrayVal(path, shape, dtype)


def _concatenate(args, kwargs) -> Any:
    """``np.concatenate([a, b], axis=0)`` of arrays of static shapes and one dtype: the shape
    numpy gives (the sizes along ``axis`` add up, the others agree); else a run-time array."""
    parts = args[0] if args else kwargs.get("arrays")
    axis = args[1] if len(args) > 1 else kwargs.get("axis", 0)
    if set(kwargs) - {"arrays", "axis"} or not isinstance(parts, (list, tuple)) or not parts or \
            not all(isinstance(p, ArrayVal) for p in parts) or not isinstance(axis, int) or isinstance(axis, bool):
        return Unknown("numpy.concatenate")
    rank = len(parts[0].shape)
    if rank == 0 or not -rank <= axis < rank or len({p.dtype for p in parts}) != 1 or \
            any(len(p.shape) != rank for p in parts):
        return Unknown("numpy.concatenate")
    axis %= rank
    rest = {p.shape[:axis] + p.shape[axis + 1:] for p in parts}
    if len(rest) != 1:
        return Unknown("numpy.concatenate")
    sizes = [p.shape[axis] for p in parts]
    total = None if None in sizes else sum(sizes)
    shape = parts[0].shape
    return ArrayVal("numpy.concatenate", (*shape[:axis], total, *shape[axis + 1:]), parts[0].dtype)


def _static_range(kind: str, args, kwargs) -> Any:
    """``np.linspace(start, stop, num)`` / ``np.arange([start,] stop[, step])`` of static
    numbers: a 1-D array whose items are known (numpy's arithmetic: ``start + i * step``,
    linspace's last item exactly ``stop``); else a run-time array."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if kind == "linspace":
        names = ("start", "stop", "num", "endpoint")
        given = dict(zip(names, args), **{k: v for k, v in kwargs.items() if k in names})
        start, stop = given.get("start"), given.get("stop")
        num, endpoint = given.get("num", 50), given.get("endpoint", True)
        if set(kwargs) - set(names) - {"dtype"} or kwargs.get("dtype") is not None or not (
                number(start) and number(stop) and isinstance(num, int) and num >= 0 and isinstance(endpoint, bool)):
            return Unknown("numpy.linspace")
        div = num - 1 if endpoint else num
        step = (stop - start) / div if div > 0 else 0.0
        values = [float(start) + i * step for i in range(num)]
        if endpoint and num > 1:
            values[-1] = float(stop)
        return ArrayVal("numpy.linspace", (num,), "float64", values=tuple(values))
    if kwargs or not args or len(args) > 3 or not all(isinstance(v, int) and not isinstance(v, bool) for v in args):
        return Unknown("numpy.arange")  # (float steps: numpy's rounding of the count)
    values = tuple(range(*args))
    return ArrayVal("numpy.arange", (len(values),), "int64", values=values)


def _array_method(obj: ArrayVal, name: str, args, kwargs) -> Any:
    if name == "astype":
        dtype = args[0] if args else kwargs.get("dtype")
        return ArrayVal("array", obj.shape, dtype if isinstance(dtype, str) else obj.dtype)
    if name == "copy":
        return obj
    if name == "reshape":
        dims = _dims(tuple(args) if len(args) > 1 else (args[0] if args else kwargs.get("shape")))
        if dims is None or None in obj.shape or dims.count(-1) > 1:
            return Unknown("reshape")
        total = 1
        for d in obj.shape:
            total *= d
        known = 1
        for d in dims:
            known *= d if d != -1 else 1
        return ArrayVal("array", tuple(total // known if d == -1 else d for d in dims), obj.dtype)
    return Unknown(f"array.{name}")


def _array_binop(left: Any, right: Any) -> Any:
    arrays = [v for v in (left, right) if isinstance(v, ArrayVal)]
    others = [v for v in (left, right) if not isinstance(v, ArrayVal)]
    if len(arrays) == 1 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in others):
        a = arrays[0]
        floats = any(isinstance(v, float) for v in others)
        return ArrayVal("array", a.shape, "float64" if floats and a.dtype and "int" in a.dtype else a.dtype)
    if len(arrays) == 2 and arrays[0].shape == arrays[1].shape:
        return ArrayVal("array", arrays[0].shape, arrays[0].dtype)
    return Unknown("array arithmetic")


def _reads_tokens(graph: Graph, value: Value) -> bool:
    return any(n.op == "embedding" and n.inputs and n.inputs[0] is value for n in graph.nodes)


#: ``super()`` inside a method (becomes a SuperRef when called)
#: base classes of a custom layer, as keras_api_name spells them
_LAYER_BASES = {"layers.Layer", "Layer", "layers.layer.Layer", "engine.base_layer.Layer",
                "engine.Layer"}


def _user_classes_in(graph: Graph) -> set[str]:
    """The user Layer classes whose instances built nodes of ``graph``."""
    out = set()
    for node in graph.nodes:
        owner = getattr(node.from_keras.layer, "owner", None)
        while owner is not None:
            out.add(owner.cls.node.name.value)
            base = owner.cls.base
            while base is not None:
                out.add(base.node.name.value)
                base = base.base
            owner = owner.owner
    return out


_RESERVED_ATTRS = NN_MODULE_ATTRIBUTES | {"reset_parameters", "x", "self"}


# long: naming rounds by priority (user attributes, helper scopes, unnamed layers), one table
def _local_names(graph: Graph, root: ModuleScope | None) -> None:
    """The attribute names inside their own module: a layer's ``node.from_keras.local =
    (attr, index in a list attribute or None)``; a helper-function scope's ``attr``
    (numbered among siblings: ``conv_bn1``, ``conv_bn2``)."""
    scopes: list[ModuleScope] = []
    seen: set[int] = set()
    for node in graph.nodes:
        for sc, _ in (node.from_keras.scopes or ()):
            if sc is not root and id(sc) not in seen:
                seen.add(id(sc))
                scopes.append(sc)
    def owned_by_root(n: Node) -> bool:
        layer = n.from_keras.layer
        owner = getattr(layer, "owner", None)
        scope = owner.scope if owner is not None else getattr(layer, "made_in", None)
        return scope is None or scope is root

    taken: dict[int, set[str]] = {id(None): {n.name for n in graph.nodes if owned_by_root(n)}}

    def key(sc):
        return id(None) if sc is None or sc is root else id(sc)

    def claim(sc, name: str) -> str:
        used = taken.setdefault(key(sc), set())
        base = _identifier(name)
        if base in _RESERVED_ATTRS:
            base += "_layer"
        out, n = base, 1
        while out in used:
            n += 1
            out = f"{base}{n}"
        used.add(out)
        return out

    # fixed names first: attributes the user's classes set
    layers: dict[int, tuple] = {}
    for node in graph.nodes:
        layer = node.from_keras.layer
        if layer is None or not layer.cls_name or id(layer) in layers:
            continue
        if layer.attr is not None and layer.owner is not None:
            taken.setdefault(key(layer.owner.scope), set()).add(_identifier(layer.attr))
            layers[id(layer)] = (_identifier(layer.attr), layer.index)
    for sc in scopes:
        if sc.kind == "class" and sc.attr:
            taken.setdefault(key(sc.parent), set()).add(_identifier(sc.attr))
    # helper-function scopes: the function's name, numbered when a module calls it again
    counts: dict[tuple, int] = {}
    for sc in scopes:
        if sc.kind == "function":
            counts[(key(sc.parent), sc.attr)] = counts.get((key(sc.parent), sc.attr), 0) + 1
    numbered: dict[tuple, int] = {}
    for sc in scopes:
        if sc.kind == "function" and not getattr(sc, "_named", False):
            k = (key(sc.parent), sc.attr)
            if counts[k] > 1:
                numbered[k] = numbered.get(k, 0) + 1
                sc.attr = claim(sc.parent, f"{sc.attr}{numbered[k]}")
            else:
                sc.attr = claim(sc.parent, sc.attr)
            sc._named = True
        elif sc.kind == "class" and not sc.attr:
            sc.attr = claim(sc.parent, sc.explicit_name or _snake(sc.class_name))
    # unnamed layers of a block: conv, bn, or conv1, conv2 when the block has several
    totals: dict[tuple, int] = {}
    counted: set[int] = set()
    for node in graph.nodes:
        layer = node.from_keras.layer
        if layer is not None and layer.cls_name and id(layer) not in layers and id(layer) not in counted \
                and not (layer.explicit_name or layer.hint):
            counted.add(id(layer))
            owner = layer.owner.scope if layer.owner is not None else layer.made_in
            k = (key(owner), _default_hint(node))
            totals[k] = totals.get(k, 0) + 1
    auto: dict[tuple, int] = {}
    for node in graph.nodes:
        layer = node.from_keras.layer
        if layer is None or not layer.cls_name:
            continue
        if id(layer) not in layers:
            owner = layer.owner.scope if layer.owner is not None else layer.made_in
            if owner is None or owner is root:
                layers[id(layer)] = (node.name, None)
            else:
                hint = layer.explicit_name or layer.hint
                if hint is None:
                    hint = _default_hint(node)
                    k = (key(owner), hint)
                    auto[k] = auto.get(k, 0) + 1
                    if totals.get(k, 0) > 1:
                        hint = f"{hint}{auto[k]}"
                layers[id(layer)] = (claim(owner, hint), None)
        node.from_keras.local = layers[id(layer)]


def span_holds(span: Span | None, line: int) -> bool:
    """Whether ``line`` is at or within a few lines above the node's own source span."""
    return span is not None and span.line - 3 <= line <= (span.end_line or span.line)


def _snake(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))
    return _identifier(out)


def _tensors_in(values) -> list:
    """The TensorVals in ``values`` (lists, tuples and dicts looked into), in order."""
    out = []
    for v in values:
        if isinstance(v, TensorVal):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out += _tensors_in(v)
        elif isinstance(v, dict):
            out += _tensors_in(list(v.values()))
    return out


def _bound_args(fn: cst.FunctionDef | None, args, kwargs, self_param: bool = True) -> dict:
    """The static (non-tensor) arguments of a call, by parameter name."""
    if fn is None:
        return {}
    names = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)]
    if self_param:
        names = names[1:]
    out = {}
    for name, value in list(zip(names, args)) + list(kwargs.items()):
        if name != "name" and isinstance(value, (int, float, str, bool, tuple)) and not _tensors_in([value]):
            out[name] = value
    return out


def _tensor_params(fn: cst.FunctionDef | None, args=None, kwargs=None) -> list[str]:
    """The names of a call's tensor parameters: ``call(self, x, training=None)`` → x."""
    if fn is None:
        return []
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if args is None:  # a call() method: every parameter but self, training and mask
        return [p.name.value for p in params[1:] if p.name.value not in ("training", "mask")]
    out = []
    for i, p in enumerate(params):
        value = args[i] if i < len(args) else (kwargs or {}).get(p.name.value)
        if _tensors_in([value]):
            out.append(p.name.value)
    return out


def _docstring_of(node: cst.FunctionDef | cst.ClassDef) -> str | None:
    body = node.body.body
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        value = body[0].body[0].value.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _camel(name: str) -> str:
    parts = [p for p in name.replace("-", "_").split("_") if p]
    out = "".join(p[:1].upper() + p[1:] for p in parts)
    if out in GENERATED_IMPORTS:  # (a model ``f_`` or ``data_loader``: its class would hide the import)
        out += "Net"
    return out if out.isidentifier() else "Net"


def _identifier(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_") or "layer"
    if out[0].isdigit():
        out = "layer_" + out
    import keyword

    if keyword.iskeyword(out):
        out += "_"
    return out


_HINTS = {"conv1d": "conv", "conv2d": "conv", "conv3d": "conv", "dense": "fc",
          "batch_norm": "bn", "max_pool1d": "pool", "max_pool2d": "pool", "max_pool3d": "pool",
          "avg_pool1d": "pool", "avg_pool2d": "pool", "avg_pool3d": "pool",
          "dropout": "dropout", "spatial_dropout": "dropout", "embedding": "embedding",
          "conv_transpose2d": "deconv", "conv_transpose1d": "deconv", "layer_norm": "norm",
          "upsample1d": "upsample", "upsample2d": "upsample", "pad1d": "pad", "pad2d": "pad",
          "pad3d": "pad", "crop1d": "crop", "crop2d": "crop", "depthwise_conv2d": "depthwise",
          "separable_conv2d": "separable", "simple_rnn": "rnn", "bidirectional": "birnn"}


def _default_hint(node: Node) -> str:
    return _HINTS.get(node.op, node.op)


def _syntax_error(source: str, path: str, exc: cst.ParserSyntaxError) -> FrontendError:
    """The FrontendError for unparsable ``source``, located by Python's own parser.

    libcst reports the token after the mistake (often on the next line); CPython's
    parser names the offending line and column, so ask it first.
    """
    import ast  # only to locate the error; the program itself is read with libcst

    try:
        ast.parse(source, filename=path)
    except SyntaxError as err:
        if err.lineno:
            return FrontendError(f"syntax error: {err.msg}", Span(path, err.lineno, err.offset or 1))
    except (ValueError, OverflowError):
        pass
    return FrontendError(f"syntax error: {exc.message}", Span(path, exc.raw_line, exc.raw_column + 1))


def _walk_names(node) -> list:
    """Every Name inside ``node`` (not in source order; libcst.matchers, which costs ~0.5 s to
    import, is kept off the translation path)."""
    return list(nodes_of(node, cst.Name))


def what_it_is(value: Any) -> str:
    """A short description of a value where a tensor or a layer was expected, for the stub's
    message: the reason an Unknown carries says which earlier line lost the value (the first
    failure, of which later "not a tensor" refusals are only the consequence)."""
    if isinstance(value, (list, tuple)):
        parts = [what_it_is(v) for v in value if not isinstance(v, TensorVal)]
        return parts[0] if parts else type(value).__name__
    if isinstance(value, dict):
        return what_it_is([v for v in value.values()])
    if isinstance(value, Unknown):
        reason = value.reason or "a value not known statically"
        return reason if len(reason) <= 160 else reason[:157] + "..."
    if value is None:
        return "None"
    return f"a {type(value).__name__}"
