"""The Keras reader's expressions on the shared interpreter (interp/): its hooks for
attributes, operators, subscripts and calls, registered by the type of its values."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import libcst as cst

from transpiler.frontend_ast.keras import layers as keras_layers
from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
from transpiler.frontend_ast.keras import training as keras_training
from transpiler.frontend_ast.interp.values import contains
from transpiler.frontend_ast.interp import (OBJECT_CMPOPS, PASS, ClassRef, FunctionRef, Interpreter,
                                            Unknown, code_of)
from transpiler.frontend_ast.keras import data_lookups, data_utils, data_zip
from transpiler.frontend_ast.keras import zoo as keras_zoo
from transpiler.frontend_ast.keras import layer_refs
from transpiler.frontend_ast.keras import variables as keras_variables
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.support import (_ARRAY_METHODS, _array_binop, _array_method, _bound_args,
                                                   _camel, _docstring_of, _has_tensor, _not_static, _numpy_source,
                                                   _run_time, _tensor_arg, _tensor_params, _tensors_in,
                                                   _TensorBuilder, _wrap_tensors)
from transpiler.frontend_ast.keras.values import (_MERGE_FUNCS, _SAFE_METHODS, _SUPER, _TENSOR_BINOPS,
                                                  _TENSOR_CMPOPS, ApiRef, ArrayVal, DatasetObj, DotLayerObj,
                                                  LambdaLayerObj, LambdaVal, LayerObj, ModelHandle, ModelObj,
                                                  ModuleRef, SeedGeneratorObj, SuperRef, TapeObj, TensorVal,
                                                  UserObj, WeightObj, _BoundMethod, _regularizer, _Rng, _SuperCall,
                                                  keras_api_name)
from transpiler.ir import training as T
from transpiler.ir.graph import Span
from transpiler.ir.initializers import POSITIONAL as INITIALIZER_POSITIONAL, Initializer
from transpiler.ir.modules import ModuleScope
from transpiler.frontend_ast.size_names import name_arguments

#: values a builtin is not called on (run-time values, objects of the reader)
_OPAQUE = (Unknown, TensorVal, LayerObj, ModelObj, ModelHandle, DatasetObj, TapeObj, keras_training.TrainingObj,
           _BoundMethod)



class _Partial:
    """``functools.partial(func, *args, **kwargs)``: called, ``func`` gets these arguments first."""

    def __init__(self, func, args: list, kwargs: dict):
        self.func, self.args, self.kwargs = func, args, kwargs

class KerasExpressions(Interpreter):
    """Mixin of KerasFrontend: the interpreter's hooks for Keras values."""

    #: dict comprehensions are read as list comprehensions are (their calls are facts: ``{name:
    #: tf.convert_to_tensor([v]) for name, v in sample.items()}`` before ``predict``, keras.io's
    #: structured-data examples)
    READ_DICT_COMPREHENSIONS = True

    ASTROID_FALLBACK = True
    CALLS, ATTRIBUTES, SUBSCRIPTS, UNARY, OPERANDS, COMPARANDS, SYNTAX = Interpreter.extended_tables()

    # -- names, f-strings, comprehensions -----------------------------------------------
    def _builtin(self, name: str) -> Any:
        if name == "super" and self.self_stack:
            return _SUPER
        return super()._builtin(name)

    def _formattable(self, value: Any) -> bool:
        return not (_not_static(value) or isinstance(value, LayerObj))

    def _comprehension_items(self, iterable, comp, node):
        if isinstance(iterable, ArrayVal) and iterable.values is not None:
            return iterable.values
        if not isinstance(iterable, Unknown) and not hasattr(iterable, "__iter__"):
            # an attribute of a model (``model.trainable_weights``) is known, not iterable
            iterable = Unknown("iterating an object the frontend does not model")
        if isinstance(iterable, Unknown) and self._constructs_layers(getattr(node, "elt", None) or node.value):
            raise self._err(comp.iter, "a comprehension that builds layers needs a static iterable")
        return super()._comprehension_items(iterable, comp, node)

    def _bind_target(self, target, value, env) -> None:
        self._assign(target, value, env, naming=False)

    def _lambda(self, node, env):
        return LambdaVal("lambda", node, env)

    # -- attributes -----------------------------------------------------------------------
    @ATTRIBUTES.register(ModelObj)
    def _model_attribute(self, base, attr, node):
        if base.user is not None and (attr in base.user.attrs or base.user.cls.method(attr) is not None):
            return self._attribute(base.user, attr, node)  # the subclass's own attributes and methods
        self._mark_keras()
        if attr == "layers" and base.kind == "sequential" and base.user is None:
            return list(base.layers)  # (Keras' Sequential.layers: no InputLayer)
        if attr in ("output", "outputs", "input", "inputs"):
            graph = self._model_graph(base, node)
            vals = graph.outputs if attr.startswith("output") else graph.inputs
            tensors = [TensorVal(v) for v in vals]
            return tensors[0] if attr in ("output", "input") and len(tensors) == 1 else tensors
        return _BoundMethod(base, attr)

    @ATTRIBUTES.register(ArrayVal)
    def _array_attribute(self, base, attr, node):
        if attr == "shape":
            return tuple(Unknown("dim") if d is None else d for d in base.shape)
        if attr in _ARRAY_METHODS:
            return _BoundMethod(base, attr)
        return Unknown(f"array.{attr}")

    @ATTRIBUTES.register(UserObj)
    def _user_attribute(self, base, attr, node):
        if attr in base.attrs:
            return base.attrs[attr]
        if base.cls.method(attr) is not None:
            return _BoundMethod(base, attr)
        if attr == "name":
            return base.keras_name
        if attr in ("dtype", "compute_dtype", "variable_dtype"):
            return "float32"  # Keras' default dtype policy (the models are float32)
        return _BoundMethod(base, attr)

    @ATTRIBUTES.register(data_utils.BatchesVal)
    def _batches_attribute(self, base, attr, node):
        if attr in data_utils.LOADER_METHODS:
            return _BoundMethod(base, attr)  # (.map/.prefetch/.cache: data_utils.record_loader_method)
        if attr not in data_utils.LOADER_ATTRIBUTES and not isinstance(base, data_utils.ElementsVal):
            data_utils.needs_tensorflow(self, node, f".{attr}")  # a tf.data method the DataLoader has not
            # (an element pipeline's runtime class has tf.data's cardinality(), take(), ...)
        return Unknown(f"batches.{attr}")

    @ATTRIBUTES.register(data_utils.TextLayerVal)
    def _text_layer_attribute(self, base, attr, node):
        if attr == "adapt" and base.cls_name in data_lookups.SIGNATURES:
            return _BoundMethod(base, attr)  # (inside a helper on a model's tensors: data_adapt.py)
        return PASS

    @ATTRIBUTES.register(SuperRef, _Rng, TapeObj, DatasetObj)
    def _method_attribute(self, base, attr, node):
        return _BoundMethod(base, attr)

    @ATTRIBUTES.register(keras_training.TrainingObj)
    def _training_object_attribute(self, base, attr, node):
        return _BoundMethod(base, attr) if base.kind == "optimizer" else PASS

    @ATTRIBUTES.register(LayerObj, ModelHandle)
    def _layer_attribute(self, base, attr, node):
        self._mark_keras()
        if isinstance(base, LayerObj) and attr in ("output", "input"):  # (keras/layer_refs.py)
            return layer_refs.layer_tensor(self, base, attr)
        if isinstance(base, ModelHandle) and attr in ("output", "outputs", "input", "inputs") and \
                isinstance(self._handle_model(base), ModelObj):
            return self._model_attribute(self._handle_model(base), attr, node)
        return _BoundMethod(base, attr)

    @ATTRIBUTES.register(layer_refs.InputLayerRef)
    def _input_layer_attribute(self, base, attr, node):
        self._mark_keras()
        if attr in ("output", "input"):
            return base.tensor
        return Unknown(f"input layer.{attr}")

    @ATTRIBUTES.register(ModuleRef)
    def _module_attribute(self, base, attr, node):
        from transpiler.frontend_ast.keras.values import resolve_api

        return resolve_api(f"{base.path}.{attr}")

    @ATTRIBUTES.register(ApiRef)
    def _api_attribute(self, base, attr, node):
        return Unknown(f"{base.name}.{attr}")

    @ATTRIBUTES.register(TensorVal)
    def _tensor_attribute(self, base, attr, node):
        if attr == "shape":
            return tuple(base.value.shape)
        if attr == "dtype":
            return base.value.dtype
        return Unknown(f"tensor.{attr}")

    @ATTRIBUTES.register(Unknown)
    def _unknown_attribute(self, base, attr, node):
        return base

    def _no_attribute(self, base, attr, node):
        methods = _SAFE_METHODS.get(type(base))
        if methods is None:
            for typ, names in _SAFE_METHODS.items():
                if isinstance(base, typ):
                    methods = names
                    break
        if methods is not None and attr in methods:
            return getattr(base, attr)
        return Unknown(f".{attr}")

    # -- operators ------------------------------------------------------------------------
    def _operands(self, left, right, node):
        return self._as_tensor(left, node), self._as_tensor(right, node)

    @OPERANDS.register(TensorVal)
    def _tensor_operands(self, left, right, op, node):
        return self._tensor_binop(op, left, right, node)

    @OPERANDS.register(ArrayVal)
    def _array_operands(self, left, right, op, node):
        return _array_binop(left, right)

    @OPERANDS.register(object)
    def _run_time_operands(self, left, right, op, node):
        if op is cst.Add and isinstance(left, (list, tuple)) and type(left) is type(right) and not any(
                isinstance(v, Unknown) for v in (*left, *right)):
            return PASS  # ``encoded_features + numeric_features``: two lists (of tensors) joined
        if _not_static(left) or _not_static(right):  # 2 * np.pi, n + len(sys.argv)
            return Unknown("arithmetic on a value known only at run time")
        return PASS

    def _arith_error(self, exc, node):
        raise self._err(node, f"cannot evaluate: {exc}") from None

    @UNARY.register(WeightObj)
    def _weight_unary(self, node, value):
        if isinstance(node.operator, cst.Minus):
            return self._tensor_unary(node, self._as_tensor(value, node))  # -self.w: a custom layer's weight
        return PASS

    @UNARY.register(TensorVal)
    def _tensor_unary_operand(self, node, value):
        return self._tensor_unary(node, value)

    @UNARY.register(Unknown)
    def _unknown_unary(self, node, value):
        return value

    @COMPARANDS.register(TensorVal, WeightObj)
    def _tensor_comparands(self, left, right, node, target):
        if type(target.operator) in OBJECT_CMPOPS:
            return PASS
        return self._tensor_compare(node, self._as_tensor(left, node), self._as_tensor(right, node), target)

    def _tensor_binop(self, op, left, right, node):
        """``x * 0.5``, ``2.0 - x``, ``x / y``, ``x ** 2``, ``x @ w``: keras_tensor_ops' arithmetic."""
        code = cst.Module([]).code_for_node(node)
        kind = _TENSOR_BINOPS.get(op)
        if kind is None:
            raise Unsupported(f"tensor arithmetic {code!r} is not supported yet")
        return self._tensor_arithmetic(kind, left, right, node, code)

    def _tensor_arithmetic(self, kind: str, left, right, node, code: str) -> Any:
        # Keras runs ops.add / ops.true_divide ...: Operations that take an auto name
        # from the same counters as layers (a later unnamed Add() is "add_1").
        self._auto_name(keras_tensor_ops.OPERATORS[kind])
        return self._tensor_math(
            lambda b: keras_tensor_ops.arithmetic(b, kind, _tensor_arg(left), _tensor_arg(right), repr(code)),
            self._span(node), code)

    def _tensor_subscript(self, base: "TensorVal", node, env) -> Any:
        """``x[:, 0]``, ``x[..., :3]``, ``x[:, :, None]``: keras_tensor_ops' subscript."""
        keys = [slice(*parts) if isinstance(parts, list) else parts for parts in self._index_keys(node, env)]
        code = cst.Module([]).code_for_node(node)
        self._auto_name("GetItem")  # Keras' __getitem__ is an Operation too
        return self._tensor_math(lambda b: keras_tensor_ops.subscript(b, base.value, tuple(keys), repr(code)),
                                 self._span(node), code)

    def _tensor_math(self, fn, span: Span, what: str) -> Any:
        """Run a keras_tensor_ops recogniser ``fn(builder)``; its Values back as TensorVals."""
        return _wrap_tensors(fn(_TensorBuilder(self, span, what)))

    def _tensor_compare(self, node, left, right, comparison) -> Any:
        code = cst.Module([]).code_for_node(node)
        kind = _TENSOR_CMPOPS.get(type(comparison.operator))
        if kind is None or len(node.comparisons) != 1:
            raise Unsupported(f"tensor comparison {code!r} is not supported yet")
        return self._tensor_arithmetic(kind, left, right, node, code)

    def _tensor_unary(self, node, value: "TensorVal") -> Any:
        code = cst.Module([]).code_for_node(node)
        if isinstance(node.operator, cst.Plus):
            return value
        if not isinstance(node.operator, cst.Minus):
            raise Unsupported(f"tensor operator {code!r} is not supported yet")
        self._auto_name(keras_tensor_ops.OPERATORS["negative"])
        return self._tensor_math(lambda b: b.add("negative", [value.value], {}, "negative")[0],
                                 self._span(node), code)

    def _activation_call(self, func: ApiRef, args, kwargs, span: Span) -> Any:
        """``keras.activations.softmax(x, axis=1)``, ``keras.ops.gelu(x)``, ``tf.nn.relu(x)``."""
        if not _has_tensor([args, kwargs]) and _run_time([args, kwargs]):
            return Unknown(func.name)  # run-time values, outside the model
        return self._tensor_math(
            lambda b: keras_tensor_ops.activation_call(func.name, func.source or "activations", _tensor_arg(args),
                                                       _tensor_arg(kwargs), b), span, func.name)


    # -- conditions -----------------------------------------------------------------------
    def _mode_of(self, test, env):
        return self._mode_test(test, env) if self.self_stack else None

    def _select_mode(self, train, infer, node):
        self.stmt_stack.append(self.stmt_stack[-1] if self.stmt_stack else None)
        try:
            return self._join_modes(train, infer, node, None)
        finally:
            self.stmt_stack.pop()

    def _no_condition(self, test):
        raise self._err(test, "the condition cannot be decided statically")

    def _undecided_choice(self, node, test, env):
        """``a if <test> else b`` with a test only the running program decides (``acc if n > 0
        else 0`` over data): a value known at run time when neither side is part of a model
        (no tensor, layer or model), as the code runs as written. Otherwise, as before, the
        condition is refused."""
        if self.self_stack or _has_tensor(test):
            return self._no_condition(node.test)
        sides = [self._eval(node.body, env), self._eval(node.orelse, env)]
        if contains(sides, _OPAQUE[1:] + (UserObj, LambdaLayerObj)):
            return self._no_condition(node.test)
        return Unknown("a value chosen by a condition decided at run time")

    # -- subscripts -----------------------------------------------------------------------
    @SUBSCRIPTS.register(ArrayVal)
    def _array_subscript_of(self, base, node, env):
        return self._array_subscript(base, node, env)

    @SUBSCRIPTS.register(TensorVal)
    def _tensor_subscript_of(self, base, node, env):
        return self._tensor_subscript(base, node, env)

    @SUBSCRIPTS.register(Unknown)
    def _unknown_subscript(self, base, node, env):
        return base

    def _subscript_error(self, exc, node):
        raise self._err(node, f"cannot evaluate subscript: {exc}") from None

    def _static_subscript(self, base, node, env) -> Any:
        """A list, tuple, dict, str or range indexed. By a value known only at run time
        (``class_names[np.argmax(p)]``, ``labels[label]`` in a loop over data) the item is one
        known only at run time; so is an index the static value does not hold
        (``point_clouds[0]`` of a list a loop over files fills when the program runs): the
        code runs as written in the output, so neither is a stub."""
        if not isinstance(base, (list, tuple, dict, str, range)):
            return super()._static_subscript(base, node, env)
        key = self._subscript_key(node, env)
        parts = key if isinstance(key, tuple) else (key,)
        if any(isinstance(p, Unknown) or isinstance(p, slice) and any(isinstance(q, Unknown)
                                                                      for q in (p.start, p.stop, p.step))
               for p in parts):
            return Unknown("subscript by a value known only at run time")
        try:
            return base[key]
        except (IndexError, KeyError):  # (filled at run time, where the static value is not)
            return Unknown("an item the program adds at run time")
        except Exception as exc:
            return self._subscript_error(exc, node)

    def _index_keys(self, node, env) -> list:
        """The subscript's items evaluated: values (``...`` as Ellipsis, ``tf.newaxis`` as None),
        and each slice as the list of its evaluated [start, stop, step]."""
        keys = []
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                value = Ellipsis if isinstance(sl.value, cst.Ellipsis) else self._eval(sl.value, env)
                if isinstance(value, ModuleRef) and value.path.endswith(".newaxis"):
                    value = None
                keys.append(value)
            else:
                keys.append([None if p is None else self._eval(p, env) for p in (sl.lower, sl.upper, sl.step)])
        return keys

    def _array_subscript(self, base: ArrayVal, node, env) -> Any:
        """``x[:1000]``, ``x[..., None]``, ``x[..., tf.newaxis]``, ``x[i]``: the result's shape
        (an item of an array of known items: that item)."""
        if base.values is not None and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = self._eval(node.slice[0].slice.value, env)
            if isinstance(key, int) and not isinstance(key, bool) and -len(base.values) <= key < len(base.values):
                return base.values[key]
        keys = [(slice(*k) if not any(_not_static(p) for p in k) else slice(0, None)) if isinstance(k, list) else k
                for k in self._index_keys(node, env)]
        shape = list(base.shape)
        out: list = []
        i = 0
        for n, key in enumerate(keys):
            if key is Ellipsis:
                rest = sum(1 for k in keys[n + 1:] if k is not None)
                take = len(shape) - i - rest
                out += shape[i:i + take]
                i += take
            elif key is None:
                out.append(1)
            elif isinstance(key, slice):
                if i >= len(shape):
                    return Unknown("subscript")
                dim = shape[i]
                out.append(len(range(*key.indices(dim))) if dim is not None else None)
                i += 1
            elif isinstance(key, int) and not isinstance(key, bool):
                i += 1
            else:
                return Unknown("subscript")
        return ArrayVal("array", tuple(out + shape[i:]), base.dtype)


    # -- calls ----------------------------------------------------------------------------
    def _call_site(self, func, args, kwargs, node):
        try:
            return self._call(func, args, kwargs, node)
        except Unsupported as exc:
            if getattr(exc, "span", None) is None:
                exc.span = self._span(node)  # the innermost call is where the user looks
            raise

    @CALLS.register(ApiRef)
    def _call_api(self, func, args, kwargs, node):
        span = self._span(node)
        if func.kind == "data_util" and func.name == "convert_to_tensor" and _has_tensor([args, kwargs]):
            func = ApiRef("tensor_op", "tf.convert_to_tensor")  # (on a model's tensors: the tensor op)
        if func.kind in ("tensor_op", "activation"):
            args = [self._as_tensor(a, node) for a in args]  # a custom layer's weight used as a tensor
            kwargs = {k: self._as_tensor(v, node) for k, v in kwargs.items()}
        if func.kind == "tensor_op" and keras_variables.outside_call(self.self_stack, self.method_stack) \
                and not _has_tensor([args, kwargs]):  # ``keras.random.normal((1, 1, 8))`` in __init__
            made = keras_variables.tensor_source(keras_variables.api_path(func.name), args, kwargs)
            if made is not None:
                return made
        self._mark_keras()
        handler = _API_CALLS.get(func.kind)
        if handler is None:
            return self._no_call(func, args, kwargs, node)
        return handler(self, func, args, kwargs, node, span)

    @CALLS.register(keras_training.CallbackClass)
    def _call_callback_class(self, func, args, kwargs, node):  # the script's own callback: kept as is
        return keras_training.TrainingObj("callback", func.name, list(args), dict(kwargs), cls=func)

    @CALLS.register(keras_training.OptimizerClass)
    def _call_optimizer_class(self, func, args, kwargs, node):  # a subclass of a Keras optimizer
        return keras_training.TrainingObj("optimizer", func.base, list(args), dict(kwargs), cls=func)

    @CALLS.register(keras_training.ScheduleClass)
    def _call_schedule_class(self, func, args, kwargs, node):  # the script's own learning-rate schedule
        return keras_training.TrainingObj("schedule", func.name, list(args), dict(kwargs), cls=func)

    @CALLS.register(keras_training.LossClass)
    def _call_loss_class(self, func, args, kwargs, node):  # the script's own Loss subclass
        return keras_training.TrainingObj("loss", func.name, list(args), dict(kwargs), cls=func)

    @CALLS.register(data_utils.TextLayerVal)
    def _call_text_layer(self, func, args, kwargs, node):  # (on data: kept as code)
        if _has_tensor([args, kwargs]) and func.cls_name in data_lookups.SIGNATURES and func.made is not None:
            # StringLookup / IntegerLookup inside a model: an index_lookup node (data_lookups.py)
            adapted = None
            if func.adapt_key is not None:  # (adapted where a helper is called: data_adapt.py)
                from transpiler.frontend_ast.keras import data_adapt

                adapted = (func.adapt_key, data_adapt.depth_size(self, func.adapt_key))
            spec = data_lookups.lookup_spec(func.cls_name, *func.made, runtime=self._runtime_size, adapted=adapted)
            inputs = args[0] if args else kwargs.get("inputs")
            return self._apply_anonymous(spec, [inputs], self._span(node), data_lookups.HINTS[func.cls_name],
                                         adapt_key=func.adapt_key)
        if _has_tensor([args, kwargs]):
            if self.scope_stack:  # (a builder's model: the builder is a stub naming why)
                raise Unsupported(data_utils.text_layer_in_model(func.cls_name))
            # at module level (keras.io's end-to-end model over strings): the statement is a stub
            # and its result unknown, so a model built on it is a stub too (never built on a
            # stale tensor of that name)
            span = self._span(node)
            self.program.stub(span, data_utils.text_layer_in_model(func.cls_name), self._line(span))
        return Unknown(f"{func.cls_name}()")

    @CALLS.register(ModuleRef)
    def _call_module_ref(self, func, args, kwargs, node):
        if func.path == "functools.partial" and args:
            return _Partial(args[0], list(args[1:]), dict(kwargs))
        if func.path.startswith("numpy"):
            made = _numpy_source(func.path, args, kwargs)
            if made is not None:
                return made
        made = keras_variables.tensor_source(func.path, args, kwargs) \
            if keras_variables.outside_call(self.self_stack, self.method_stack) else None  # tf.ones((2, 224, 224, 3))
        if made is None and func.path in keras_variables._FLOAT32_LINSPACE:
            made = keras_variables.float32_range(_numpy_source("numpy.linspace", args, kwargs), func.path)
        if made is None and keras_variables.is_variable(func.path) and self.self_stack:
            made = keras_variables.variable_weight(func.path, self.self_stack[-1], args, kwargs, self._span(node))
            if made is not None and func.path.startswith("tensorflow."):
                self.program.warn(self._span(node), keras_variables.UNTRACKED, self._line(self._span(node)))
        if made is not None:
            return made
        api = keras_api_name(func.path)
        if api is not None:
            self._mark_keras()
            span = self._span(node)
            last = api.rsplit(".", 1)[-1]
            if api == "layers.Lambda":
                return self._lambda_layer(args, kwargs, span)
            if api in ("layers.Dot", "layers.dot"):
                return self._dot_layer(api, args, kwargs, span)
            if api == "initializers.get" and len(args) == 1 and not kwargs and isinstance(args[0], (str, Initializer)):
                return args[0]  # keras.initializers.get("glorot_uniform"): the initializer that name gives
            if api in _EPSILON_APIS and not args and not kwargs and "set_epsilon" not in self.source:
                return 1e-7  # Keras' fuzz factor (a number: ops.maximum(x, keras.backend.epsilon()))
            if api.startswith("layers.") and last[:1].isupper():
                # a Keras layer class without a recogniser (TimeDistributed, Lambda, ...):
                # it must become a reported stub, never an Unknown that vanishes.
                raise Unsupported(keras_layers.unsupported_reason(last))
            if any(isinstance(a, TensorVal) for a in list(args) + list(kwargs.values())):
                raise Unsupported(f"{func.path} on tensors is not supported yet")
            named = dict(zip(INITIALIZER_POSITIONAL.get(last, ()), args)) | dict(kwargs)
            if api.startswith("initializers.") and last[:1].isupper() and len(named) == len(args) + len(
                    kwargs) and all(isinstance(v, (int, float, str)) or v is None for v in named.values()):
                return Initializer(last, named)  # its arguments say what it draws
        if func.path.startswith("tensorflow.") and _has_tensor([args, kwargs]):
            raise Unsupported(f"{func.path} on tensors is not supported yet")
        return Unknown(func.path)

    @CALLS.register(_Partial)
    def _call_partial(self, func, args, kwargs, node):
        """``partial(layers.LayerNormalization, epsilon=1e-6)()``: the callable, its arguments first."""
        return self._call_site(func.func, [*func.args, *args], {**func.kwargs, **kwargs}, node)

    @CALLS.register(_SuperCall)
    def _call_super(self, func, args, kwargs, node):
        obj = self.self_stack[-1]
        line = self._span(node).line
        cls = obj.cls
        while cls is not None and not (self._span(cls.node).line <= line <= (self._span(cls.node).end_line or 0)):
            cls = cls.base  # (the class whose method holds this super(): A -> B -> C)
        return SuperRef(obj, cls)

    @CALLS.register(ClassRef)
    def _call_class(self, func, args, kwargs, node):
        self._mark_keras()
        return self._construct_user(func, args, kwargs, self._span(node))

    @CALLS.register(UserObj)
    def _call_user_obj(self, func, args, kwargs, node):
        if func.cls.kind == "model" and func.model is None and self.self_stack and self.self_stack[-1] is func:
            # ``self(keras.Input(shape=...))`` in the model's own __init__: it builds itself
            # there; the model is built (call() traced) once __init__ is done
            inputs = args[0] if args and isinstance(args[0], (list, tuple)) else args[:1]
            if inputs and all(isinstance(t, TensorVal) and t.value.producer is None for t in inputs):
                shapes = [tuple(t.value.shape) for t in inputs]
                func.build_shapes = func.build_shapes or shapes
                return Unknown("the model built in its __init__")
        self._mark_keras()
        return self._call_user(func, args, kwargs, self._span(node))

    @CALLS.register(LayerObj)
    def _call_layer_obj(self, func, args, kwargs, node):
        args = [self._as_tensor(a, node) for a in args]  # a custom layer's weight used as a tensor
        kwargs = {k: self._as_tensor(v, node) for k, v in kwargs.items()}
        self._mark_keras()
        return self._call_layer(func, args, kwargs, self._span(node))

    @CALLS.register(LambdaLayerObj)
    def _call_lambda_obj(self, func, args, kwargs, node):
        return self._call_lambda(func, args, kwargs, self._span(node))

    @CALLS.register(DotLayerObj)
    def _call_dot_obj(self, func, args, kwargs, node):
        return self._call_dot(func, args, kwargs, self._span(node))

    @CALLS.register(ModelObj, ModelHandle)
    def _call_model(self, func, args, kwargs, node):
        span = self._span(node)
        on_tensors = any(isinstance(a, TensorVal) for a in list(args) + list(kwargs.values()))
        if not on_tensors and isinstance(func, (ModelObj, ModelHandle)) and len(args) == 1 and \
                isinstance(args[0], (dict, list, tuple)) and args[0] and \
                all(isinstance(t, TensorVal) for t in (args[0].values() if isinstance(args[0], dict) else args[0])):
            on_tensors = True  # a model of several inputs called on a dict or list of tensors
        if isinstance(func, ModelObj) and func.user is not None and on_tensors:
            self._mark_keras()
            return self._call_subclass_model(func, args, kwargs, span)
        if isinstance(func, ModelObj) and func.user is not None and func.graph is None and args:
            self._build_from_data(func, args[0], span)
        elif isinstance(func, ModelObj) and func.graph is None and args and not on_tensors and \
                isinstance(args[0], ArrayVal):
            self._build_lazily(func, args[0], span)  # a Sequential: Keras builds it on this call, from the data
        if not on_tensors:
            # a model applied to data at run time: model(x, training=...)
            training = kwargs.get("training")
            call = self._record_loop("model_call", self._current_stmt(), node)
            call.config = training if isinstance(training, bool) else None
            if isinstance(node.func, cst.Name):
                call.model = node.func.value
            if isinstance(func, (ModelObj, ModelHandle)):
                self.training_models[call] = func  # (its graph says which mode Keras runs it in)
            return Unknown("model output")
        if isinstance(func, ModelHandle):  # a builder's model (``encoder = create_encoder()``)
            built = self._handle_model(func)
            if not isinstance(built, ModelObj) or built.user is not None:
                return self._no_call(func, args, kwargs, node)
            self._mark_keras()
            return self._model_as_layer(func, args, kwargs, span, self._given_name(node))
        self._mark_keras()
        if func.user is None:
            return self._model_as_layer(func, args, kwargs, span, self._given_name(node))
        raise Unsupported("calling a model as a layer is not supported yet")

    @CALLS.register(_BoundMethod)
    def _call_bound(self, func, args, kwargs, node):
        return self._call_method(func, args, kwargs, node)

    @CALLS.register(FunctionRef)
    def _call_user_function(self, func, args, kwargs, node):
        span = self._span(node)
        name = func.node.name.value
        if name in self.failed_builders:
            return Unknown(f"model from {name}() (reported)")
        if getattr(self, "builders", None) and name in self.builders and self.probing:
            # a builder called while another is read (VAE(build_encoder(), build_decoder())):
            # its model is built again, with layers of its own, to be used as a layer
            self.builder_calls.add(self.stmt_stack[-1] if self.stmt_stack else None)
            mark = len(self.models)
            result, _ = self._call_function(func, args, kwargs, builder_probe=True)
            del self.models[mark:]  # not a model of the program: a part of the one being read
            if isinstance(result, ModelObj):
                result.from_builder = name
            return result
        if getattr(self, "builders", None) and name in self.builders:
            self._check_builder_call(func, args, kwargs, span)
            self.builder_calls.add(self.stmt_stack[-1] if self.stmt_stack else None)
            # the builder's layers take their auto names before what follows
            for prefix, n in self.builder_uids.get(name, {}).items():
                self.uids[prefix] = self.uids.get(prefix, 0) + n
            return ModelHandle(name)
        saved_sites = self.call_sites
        if self._constructs_models(func.node):
            self.call_sites = []  # a function that builds a model is not a helper
        else:
            self.call_sites = [*saved_sites, span]
        scope = None
        if self.call_sites and _tensors_in(list(args) + list(kwargs.values())) and not keras_zoo.defines(func):
            # a helper that builds a block from tensors: a module of its own
            scope = ModuleScope("function", _camel(name), name, attr=name,
                                parent=self.module_stack[-1][0] if self.module_stack else None,
                                args=_bound_args(func.node, args, kwargs, self_param=False),
                                params=_tensor_params(func.node, args, kwargs),
                                doc=_docstring_of(func.node))
            self.seq += 1
            scope.seq, scope.calls = self.seq, 1
            scope.call_inputs[1] = [t.value for t in _tensors_in(list(args) + list(kwargs.values()))]
            self.module_stack.append((scope, 1))
            args, kwargs = name_arguments(func.node, args, kwargs, scope)  # sizes with provenance
        calls = self.__dict__.setdefault("helper_call_nodes", [])  # (data_adapt.py: the call's arguments)
        calls.append(node)
        try:
            result, _ = self._call_function(func, args, kwargs, builder_probe=False)
        finally:
            calls.pop()
            self.call_sites = saved_sites
            if scope is not None:
                self.module_stack.pop()
        if scope is not None:
            scope.call_outputs[1] = [t.value for t in _tensors_in([result])]
        return result

    def _no_call(self, func, args, kwargs, node):
        if callable(func) and getattr(func, "__self__", None) is not None and \
                isinstance(func.__self__, (list, dict, str, tuple)):
            try:
                return func(*args, **kwargs)  # container methods: list.append(tensor) is fine
            except Exception:  # "{:.3f}".format(<unknown>), [].index(<unknown>), ...
                return Unknown(f"{type(func.__self__).__name__} method on run-time values")
        if callable(func) and not isinstance(func, Unknown):
            if any(isinstance(a, _OPAQUE) for a in list(args) + list(kwargs.values())):
                # (a _BoundMethod argument: a model attribute the frontend does not model,
                # ``len(model.trainable_variables)``)
                return Unknown("builtin on unknown values")
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                raise self._err(node, f"cannot evaluate call: {exc}") from None
        callee = self._code_of(node.func) if isinstance(node, cst.Call) else ""
        return Unknown(f"a call of {callee}()" if callee and len(callee) <= 60 else "call")

    # long: one case per receiver type (arrays, user objects, models, tf.data, tapes)
    def _call_method(self, bound: "_BoundMethod", args, kwargs, node):
        obj, name = bound.obj, bound.name
        if isinstance(obj, ArrayVal):
            return _array_method(obj, name, args, kwargs)
        if isinstance(obj, data_utils.TextLayerVal):  # lookup.adapt(data): kept as code on data, unless
            from transpiler.frontend_ast.keras import data_adapt  # the lookup is made for a model

            if data_adapt.in_helper_on_tensors(self):
                data_adapt.record_lookup(self, obj, node)
                return None
            return Unknown(f"{obj.cls_name}.{name}()")
        if isinstance(obj, _Rng):
            made = _numpy_source(f"numpy.random.{name}", args, kwargs)
            return Unknown(f"rng.{name}()") if made is None else made
        if isinstance(obj, SuperRef):
            base = obj.cls.base if obj.cls is not None else None
            if base is not None and base.method(name) is not None:
                # the script's own base class (``class ViTDistilled(ViTClassifier)``): its method
                # runs on the same object (its __init__ makes the layers the subclass uses)
                return self._run_method(obj.obj, base.method(name), args, kwargs)
            if name == "__init__":
                self._name_user(obj.obj, kwargs.get("name"))
            return None
        if isinstance(obj, UserObj) and obj.model is not None and name in keras_training.TRAINING_METHODS \
                and self._is_wrapper(obj.model):  # (its own compile(): wrappers.py)
            return self._wrapper_call(obj.model, name, args, kwargs, node)
        if isinstance(obj, UserObj):
            fn = obj.cls.method(name)
            if fn is not None:
                return self._run_method(obj, fn, args, kwargs)
            if name == "add_weight":
                return self._add_weight(obj, args, kwargs, self._span(node))
            if name in ("add_loss", "add_metric") and obj.cls.kind == "layer":
                # (its effect is on training, not on the output: never dropped silently)
                raise Unsupported(f"self.{name}() in a layer's call() is not translated yet")
            if obj.model is not None:
                return self._call_method(_BoundMethod(obj.model, name), args, kwargs, node)
            return Unknown(f"layer.{name}()")
        if isinstance(obj, ModelObj) and obj.user is not None:
            if obj.user.cls.method(name) is not None and name not in keras_training.TRAINING_METHODS:
                return self._run_method(obj.user, obj.user.cls.method(name), args, kwargs)
            if name == "build":
                shape = args[0] if args else kwargs.get("input_shape")
                self._build_subclass(obj, shape, self._span(node))
                obj.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                return None
        if isinstance(obj, data_utils.BatchesVal):
            made = data_utils.record_loader_method(self, obj, name, node)
            if made is None:  # other methods or arguments: a stub
                data_utils.needs_tensorflow(self, node, f".{name}()")
                return Unknown(f"batches.{name}()")
            return made
        if isinstance(obj, DatasetObj):
            if name == "shuffle":
                return replace(obj, shuffle=True, ops=obj.ops + ["shuffle"])
            if name == "batch":
                size = args[0] if args else kwargs.get("batch_size")
                drop = args[1] if len(args) > 1 else kwargs.get("drop_remainder", False)
                if not isinstance(drop, bool):
                    return Unknown("dataset.batch(drop_remainder=<not a constant>)")
                if isinstance(size, Unknown):  # a size the script computes: printed as its code
                    size = T.Code(self._code_of(next(a.value for a in node.args if a.keyword is None
                                                     or a.keyword.value == "batch_size")))
                # "batch:drop": batch(n, drop_remainder=True) leaves out a last, smaller batch
                return replace(obj, batch=size, ops=obj.ops + ["batch:drop" if drop else "batch"])
            if name in ("prefetch", "cache"):
                return replace(obj, ops=obj.ops + [name])
            if name == "repeat" and not args and kwargs.get("count") is None:
                return replace(obj, ops=obj.ops + ["repeat"])
            positional = [a for a in node.args if a.keyword is None]
            # map's scheduling options change no element (tf.data keeps the order unless told)
            scheduling = {"num_parallel_calls", "deterministic"} if name == "map" else set()
            if name in ("repeat", "map") and len(positional) == 1 and node.args[0].keyword is None and all(
                    a.keyword.value in scheduling for a in node.args if a.keyword is not None):
                # "repeat:<count>", "map:<function>": the printer reads the source text
                text = code_of(node.args[0].value)
                elements = obj.elements if name == "repeat" else None  # a map may change the elements
                return replace(obj, ops=obj.ops + [f"{name}:{text}"], elements=elements)
            return Unknown(f"dataset.{name}()")
        if isinstance(obj, TapeObj) and name == "gradient":
            self._record_gradient(node, args)  # (training_facts.py)
            return Unknown("gradients")
        if isinstance(obj, keras_training.TrainingObj) and name == "apply_gradients":
            self._record_loop("apply_gradients", self._current_stmt(), node)
            return None
        if isinstance(obj, (ModelObj, ModelHandle)) and name == "get_layer":
            self._mark_keras()
            return layer_refs.get_layer(self, obj, args, kwargs, self._span(node))
        if isinstance(obj, ModelHandle) and name == "build":
            if self._build_handle(obj, args, kwargs, node):  # (lazy.py: a static shape)
                return None
            if obj.builder is not None:
                # ``model = create_model(); model.build((None, n))`` with a shape the reader
                # cannot give the lazy build: the builder's Sequential, reported when it fails
                built = next((m for m, b, _v, _a in self.models if b == obj.builder), None)
                if isinstance(built, ModelObj) and built.kind == "sequential" and built.graph is None:
                    return self._call_method(_BoundMethod(built, name), args, kwargs, node)
        if isinstance(obj, (ModelObj, ModelHandle)) and name in keras_training.TRAINING_METHODS:
            model = self._handle_model(obj) if isinstance(obj, ModelHandle) else obj
            if isinstance(model, ModelObj) and self._is_wrapper(model):  # (wrappers.py)
                return self._wrapper_call(model, name, args, kwargs, node)
            if isinstance(model, ModelObj) and model.graph is None:
                data = args[0] if args else kwargs.get("x")
                if isinstance(data, DatasetObj) and data.elements is not None:
                    els = data.elements
                    data = els[0] if isinstance(els, tuple) else els
                    data = ArrayVal("batch", (None, *data.shape), data.dtype)
                self._build_lazily(model, data, self._span(node))  # (lazy.py: from the data or first use)
            return self._training_call(obj, name, args, kwargs, node)
        if isinstance(obj, ModelObj):
            if name == "add" and obj.kind == "sequential":
                layer = args[0]
                if isinstance(layer, TensorVal):  # Sequential.add(Input(...))
                    obj.input_shape = tuple(layer.value.shape[1:])
                    obj.input_dtype = layer.value.dtype
                    obj.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                    return None
                if isinstance(layer, data_utils.TextLayerVal):
                    raise Unsupported(data_utils.text_layer_in_model(layer.cls_name))
                if not isinstance(layer, (LayerObj, UserObj, ModelObj, LambdaLayerObj)) or layer is obj:
                    raise self._err(node, "Sequential.add() of something that is not a layer")
                obj.layers.append(layer)
                obj.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                return None
            if name == "build" and obj.kind == "sequential":
                shape = args[0] if args else kwargs.get("input_shape")
                obj.input_shape = tuple(shape[1:])
                obj.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                return None
            if name == "summary":
                return None
            self.untranslated.append((self._span(node), name))
            return Unknown(f"model.{name}()")
        if isinstance(obj, LayerObj) and name == "adapt":
            self._mark_keras()
            if data_utils.record_adapt(self, obj, node):  # the runtime computes its state
                return None
            span = self._span(node)
            self.program.warn(span, keras_layers.adapt_note(obj.cls_name), self._line(span))
            return None
        if isinstance(obj, LayerObj) and name in ("build", "set_weights") and \
                data_utils.record_layer_weights(self, obj, name, node):
            self._mark_keras()
            return None
        return Unknown(f"layer.{name}()")



# -- Keras API objects called: by ApiRef.kind ------------------------------------------------
def _api_layer(fe, func, args, kwargs, node, span):
    return fe._construct_layer(func.name, args, kwargs, span)


def _api_input(fe, func, args, kwargs, node, span):
    return fe._make_input(func.name, args, kwargs, span)


def _api_sequential(fe, func, args, kwargs, node, span):
    return fe._make_sequential(args, kwargs, span)


def _api_model(fe, func, args, kwargs, node, span):
    return fe._make_functional(args, kwargs, span, node)


def _api_merge(fe, func, args, kwargs, node, span):
    layer_kwargs = {k: v for k, v in kwargs.items() if k != "inputs"}
    inputs = args[0] if args else kwargs.get("inputs")
    if not isinstance(inputs, (list, tuple)):  # (a list the program computes when it runs)
        raise Unsupported(f"layers.{func.name}(): the inputs are not a list known statically")
    layer = fe._construct_layer(_MERGE_FUNCS[func.name], [], layer_kwargs, span)
    return fe._call_layer(layer, [list(inputs)], {}, span)


def _api_data(fe, func, args, kwargs, node, span):
    made = fe._data_call(func, node, args, kwargs)
    if isinstance(made, data_utils.TextLayerVal):  # (its arguments: a lookup a model calls reads them)
        made.made = (list(args), dict(kwargs))
    return made


def _api_tfds_load(fe, func, args, kwargs, node, span):
    from transpiler.frontend_ast.keras import data_tfds

    return data_tfds.tfds_load(fe, args, kwargs, node, span)


def _api_no_effect(fe, func, args, kwargs, node, span):
    fe.program.from_keras.no_effect_calls.append((span, func.name))
    if func.name == "keras.backend.clear_session":
        fe.uids = {}  # Keras names the layers made after it afresh (dense, dense_1, ...)
    return None


def _api_load_model(fe, func, args, kwargs, node, span):
    return fe._load_model(node)


def _api_clone_model(fe, func, args, kwargs, node, span):
    from transpiler.frontend_ast.keras.clones import clone_model

    return clone_model(fe, node, args, kwargs)


def _api_gradient_tape(fe, func, args, kwargs, node, span):
    return TapeObj()


def _api_seed_generator(fe, func, args, kwargs, node, span):
    return SeedGeneratorObj(args[0] if args else kwargs.get("seed"))


def _api_dataset_slices(fe, func, args, kwargs, node, span):
    code = cst.Module([]).code_for_node(node.args[0].value) if node.args else ""
    data = args[0] if args else None
    parts = data if isinstance(data, tuple) else (data,)
    elements = None
    if parts and all(isinstance(a, ArrayVal) and a.shape for a in parts):
        items = tuple(ArrayVal("element", a.shape[1:], a.dtype) for a in parts)
        elements = items if isinstance(data, tuple) else items[0]
    return DatasetObj(code, node, elements=elements, scope=tuple(fe.scope_stack))


def _api_dataset_csv(fe, func, args, kwargs, node, span):
    """``tf.data.experimental.make_csv_dataset(...)``: batches of a dict of columns (the runtime's
    ``make_csv_dataset``, runtime/torch/tabular.py); one pass only (``num_epochs=1``: an endless
    dataset is not translated)."""
    epochs = args[9] if len(args) > 9 else kwargs.get("num_epochs")
    if epochs != 1 or any(a.star for a in node.args):
        fe._mark_keras()
        return Unknown("make_csv_dataset(num_epochs other than 1)")
    labels = len(args) > 4 and args[4] is not None or kwargs.get("label_name") is not None
    return DatasetObj(code_of(node), node, batch=args[1] if len(args) > 1 else kwargs.get("batch_size"),
                      shuffle=bool(args[11] if len(args) > 11 else kwargs.get("shuffle", True)),
                      scope=tuple(fe.scope_stack), csv="labels" if labels else "features")


def _api_training_object(fe, func, args, kwargs, node, span):
    if func.kind == "loss" and args and func.name[:1].islower():  # a loss function on tensors
        return fe._record_loss_call(func, args, kwargs, node)  # (training_facts.py)
    # (the arguments whose code ends in a string literal, ``"m.weights.h5"``, ``d + "/m.h5"``: the
    # torch printers rename such a file name at every use, as written)
    literal = frozenset((a.keyword.value if a.keyword is not None else i)
                        for i, a in enumerate(node.args)
                        if cst.Module([]).code_for_node(a.value).rstrip().endswith(("'", '"')))
    return keras_training.TrainingObj(func.kind, func.name, list(args), dict(kwargs), literal_strings=literal)


def _api_regularizer(fe, func, args, kwargs, node, span):
    return _regularizer(func.name, list(args), dict(kwargs))


def _api_tensor_op(fe, func, args, kwargs, node, span):
    return fe._tensor_op(func.name, args, kwargs, span)


#: keras.backend.epsilon() / keras.config.epsilon(): 1e-7 unless the script sets another
_EPSILON_APIS = ("backend.epsilon", "config.epsilon")


def _api_activation(fe, func, args, kwargs, node, span):
    return fe._activation_call(func, args, kwargs, span)


_API_CALLS = {
    "layer": _api_layer, "input": _api_input, "sequential": _api_sequential, "model": _api_model,
    "merge": _api_merge, "dataset": _api_data, "to_categorical": _api_data, "data_util": _api_data, "tfds_load": _api_tfds_load, "no_effect": _api_no_effect,
    "load_model": _api_load_model, "clone_model": _api_clone_model, "application": keras_zoo.construct_api,
    "gradient_tape": _api_gradient_tape, "seed_generator": _api_seed_generator,
    "dataset_slices": _api_dataset_slices, "dataset_csv": _api_dataset_csv, "dataset_zip": data_zip.zip_datasets, "optimizer": _api_training_object, "loss": _api_training_object,
    "metric": _api_training_object, "schedule": _api_training_object, "callback": _api_training_object,
    "regularizer": _api_regularizer, "tensor_op": _api_tensor_op, "activation": _api_activation,
}
