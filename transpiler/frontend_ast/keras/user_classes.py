"""The Keras reader's user Layer/Model subclasses: their class refs, instances, methods run on
the interpreter, add_weight, and models called as layers."""

from __future__ import annotations

import math
from typing import Any
import libcst as cst

from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
from transpiler.frontend_ast.keras import training as keras_training
from transpiler.frontend_ast.keras.layers import LayerSpec, Unsupported
from transpiler.ir import ops as ops_table
from transpiler.frontend_ast.interp import ClassRef, Env, FunctionRef, Unknown
from transpiler.ir.graph import Span
from transpiler.ir.modules import ModuleScope
from transpiler.ir.shapes import infer_node
from transpiler.frontend_ast.keras.support import (
    _tensor_arg, _run_time, _has_tensor, _with_training_mode, _reads_tokens, _LAYER_BASES, _tensors_in,
    _bound_args, _tensor_params, _docstring_of, _camel, _identifier)
from transpiler.frontend_ast.size_names import name_arguments
from transpiler.frontend_ast.keras.opaque import KerasOpaqueLayers
from transpiler.frontend_ast.keras.values import (
    FrontendError, ModuleRef, ApiRef, ArrayVal, LayerObj, TensorVal, ModelObj, UserObj, WeightObj,
    keras_api_name)


class KerasSubclasses(KerasOpaqueLayers):
    """Mixin of KerasFrontend: user Layer/Model subclasses."""

    # -- subclassed layers and models ---------------------------------------------
    def _class_ref(self, stmt: cst.ClassDef, env: Env) -> Any:
        """A ClassRef for a Layer/Model subclass (its methods run when it is used)."""
        for arg in stmt.bases:
            if arg.keyword is not None:
                continue
            try:
                base = self._eval(arg.value, env)
            except (Unsupported, FrontendError):
                continue
            ref = None
            if isinstance(base, ClassRef):
                ref = ClassRef(stmt, env, base.kind, base)
            elif isinstance(base, ApiRef) and base.kind == "model":
                ref = ClassRef(stmt, env, "model")
            elif isinstance(base, ModuleRef) and keras_api_name(base.path) in _LAYER_BASES:
                ref = ClassRef(stmt, env, "layer")
            elif isinstance(base, (keras_training.LossClass, ApiRef)) and (
                    not isinstance(base, ApiRef) or base.kind == "loss_base"):  # a custom loss
                ref = keras_training.LossClass(stmt.name.value, stmt)
                self._record_custom_code(ref.name, "loss_class", stmt)
                return ref
            elif isinstance(base, (keras_training.OptimizerClass, ApiRef)) and (
                    not isinstance(base, ApiRef) or base.kind == "optimizer"):  # a Keras optimizer's subclass
                ref = keras_training.OptimizerClass(stmt.name.value, stmt, base.name if isinstance(base, ApiRef)
                                                    else base.base)
                if set(ref.methods()) <= keras_training.LEGACY_OPTIMIZER_METHODS:  # (it trains as its base)
                    self._record_custom_code(ref.name, "optimizer_class", stmt)  # (training_facts.py)
                return ref
            elif isinstance(base, (keras_training.ScheduleClass, ApiRef)) and (
                    not isinstance(base, ApiRef) or base.kind == "schedule_base"):  # a learning-rate schedule
                ref = keras_training.ScheduleClass(stmt.name.value, stmt)
                self._record_custom_code(ref.name, "schedule_class", stmt)  # (training_facts.py)
                return ref
            elif isinstance(base, (keras_training.CallbackClass, ApiRef)) and (
                    not isinstance(base, ApiRef) or base.kind == "callback_base"):  # a training callback
                ref = keras_training.CallbackClass(stmt.name.value, stmt, base if isinstance(
                    base, keras_training.CallbackClass) else None)
                self.program.from_keras.callback_classes.append(stmt.name.value)
                return ref
            if ref is not None:
                self.user_classes[stmt.name.value] = ref
                return ref
        constants = self._constants_class(stmt, env)  # ``class Config: MAX_LEN = 256``
        if constants is not None:
            return constants
        return Unknown(f"class {stmt.name.value}")

    def _tensor_op(self, key: str, args, kwargs, span: Span):
        """``keras.ops.mean(x, axis=1)``, ``tf.concat([a, b], axis=-1)``, ...: the recogniser of
        ``key`` in keras_tensor_ops' table adds the canonical ops."""
        if not _has_tensor([args, kwargs]) and _run_time([args, kwargs]):
            return Unknown(key)  # run-time values (a training loop's loss): not the model's math
        op_class = keras_tensor_ops.keras_op_class(key)
        if op_class is not None:
            self._auto_name(op_class)  # a Keras Operation takes an auto name like a layer
        return self._tensor_math(
            lambda b: keras_tensor_ops.call_function(key, _tensor_arg(list(args)), _tensor_arg(dict(kwargs)), b),
            span, key)

    def _unbuilt_subclass(self, model: ModelObj, where: cst.CSTNode) -> bool:
        """A builder returns a subclassed model it never built: built as Keras would on its
        first call when what ``call()`` hands its input to fixes the shape (lazy.py; True),
        else reported."""
        name = model.user.cls.node.name.value
        span = model.span or self._span(where)
        try:
            self._build_lazily(model, None, span)
        except (Unsupported, FrontendError) as exc:
            self.program.model_stub(span, name, f"{name}: {exc}", self._line(span))
            return False
        if model.graph is not None:
            return True
        self.program.model_stub(span, name, f"{name}: the subclassed model's input shape is never given statically; "
                                "call model.build((None, ...)) or model(keras.Input(shape=...)) where it is "
                                "built", self._line(span))
        return False

    def _name_user(self, obj: UserObj, name: Any) -> None:
        """Keras names a layer when its ``__init__`` reaches Layer.__init__."""
        if not obj.keras_name:
            obj.keras_name = name if isinstance(name, str) else self._auto_name(obj.cls.node.name.value)

    def _run_method(self, obj: UserObj, fn: cst.FunctionDef, args, kwargs):
        """Run a method of a user Layer/Model with ``self`` bound to ``obj``."""
        saved_scope = self.scope_stack
        had = fn.name.value in self.inlined_helpers, fn.name.value in self.visited_functions
        self.self_stack.append(obj)
        self.method_stack.append(fn.name.value)
        self.scope_stack = []  # a method is not a helper function: no name prefix
        try:
            result, _ = self._call_function(FunctionRef(fn, obj.cls.env), [obj, *args], dict(kwargs),
                                            builder_probe=False)
        finally:
            self.self_stack.pop()
            self.method_stack.pop()
            self.scope_stack = saved_scope
            if not had[0]:
                self.inlined_helpers.discard(fn.name.value)
            if not had[1]:
                self.visited_functions.discard(fn.name.value)
        return result

    def _construct_user(self, cls: ClassRef, args, kwargs, span: Span):
        if cls.kind == "model" and cls.method("__init__") is None and cls.method("call") is None:
            return self._functional_subclass(cls, args, kwargs, span)
        obj = UserObj(cls)
        # (a run-time value passed, ``Head(num_classes)``: a run-time size the class takes)
        args = [self._runtime_int(a) for a in args]
        kwargs = {k: self._runtime_int(v) for k, v in kwargs.items()}
        self.seq += 1
        obj.scope = ModuleScope("class", cls.node.name.value, cls.node.name.value, span=span, args=_bound_args(cls.method("__init__"), args, kwargs),
                                params=_tensor_params(cls.method("call")), seq=self.seq,
                                doc=_docstring_of(cls.node),
                                explicit_name=kwargs.get("name") if isinstance(kwargs.get("name"), str) else None)
        init = cls.method("__init__")
        if init is not None:
            args, kwargs = name_arguments(init, args, kwargs, obj.scope, self_param=True)  # sizes with provenance
            self._run_method(obj, init, args, kwargs)
        self._name_user(obj, kwargs.get("name"))
        if cls.kind != "model":
            return obj
        model = ModelObj("subclass", span, user=obj)
        model.construct_statement = self.stmt_stack[-1] if self.stmt_stack else None
        obj.model = model
        if obj.build_shapes:  # it called itself on keras.Input values in __init__
            shapes = obj.build_shapes
            self._build_subclass(model, shapes if len(shapes) > 1 else shapes[0], span)
        return model

    def _functional_subclass(self, cls: ClassRef, args, kwargs, span: Span) -> ModelObj:
        """``MaskedLanguageModel(inputs, outputs)`` of a ``keras.Model`` subclass with neither
        ``__init__`` nor ``call()`` (only its own ``train_step``, metrics): Keras makes a
        Functional model of that class, so it is the Functional model of those tensors, with the
        class's methods."""
        model = self._make_functional(args, kwargs, span, None)
        obj = UserObj(cls)
        self.seq += 1
        obj.scope = ModuleScope("class", cls.node.name.value, cls.node.name.value, span=span, args={}, params=[],
                                seq=self.seq, doc=_docstring_of(cls.node), explicit_name=model.name)
        obj.model, model.user = model, obj
        return model

    def _store_attr(self, obj: UserObj, attr: str, value: Any) -> None:
        obj.attrs[attr] = value
        items = value if isinstance(value, (list, tuple)) else [value]
        for i, item in enumerate(items):
            suffix = attr if len(items) == 1 and not isinstance(value, (list, tuple)) else f"{attr}_{i}"
            if isinstance(item, ModelObj) and item.user is None and item.var is None:
                item.var = suffix  # a Functional/Sequential model held by a layer: named after it
            if isinstance(item, ModelObj) and item.held_by is None and self._made_in_class(item, obj):
                item.held_by = obj  # a part of the layer (``self.ffn = keras.Sequential([...])``)
            if isinstance(item, ModelObj) and item.user is not None:
                item = item.user
            index = i if isinstance(value, (list, tuple)) else None
            if isinstance(item, LayerObj) and item.owner is None:
                item.owner = obj
                item.attr, item.index = attr, index
                if item.hint is None or item.explicit_name is None:
                    item.hint = suffix
            elif isinstance(item, WeightObj) and item.attr is None and item.owner is obj:
                item.attr = suffix
            elif isinstance(item, UserObj) and item.owner is None:
                item.owner, item.attr = obj, suffix
                if item.scope is not None:
                    item.scope.parent, item.scope.attr, item.scope.index = obj.scope, attr, index

    def _made_in_class(self, model: ModelObj, obj: UserObj) -> bool:
        """``model`` was constructed by the code of ``obj``'s class (its ``__init__``), not
        handed to it (a GAN's generator made by a builder is a model of its own too)."""
        where = self._span(obj.cls.node)
        return model.span is not None and where.line <= model.span.line <= (where.end_line or where.line)

    def _call_user(self, obj: UserObj, args, kwargs, span: Span):
        """A user layer or model called on tensors: its ``call()`` runs on the interpreter. A
        custom *layer* whose call() cannot be read becomes one opaque node (opaque.py), so the
        model around it is still translated."""
        if obj.cls.kind != "layer" or not _tensors_in(list(args) + list(kwargs.values())):
            return self._run_call(obj, args, kwargs, span)
        if "__opaque__" in obj.attrs:  # (failed before: the same stub module, called again)
            return self._opaque_call(obj, args, kwargs, span, obj.attrs["__opaque__"])
        mark = len(self.scratch.nodes)
        calls = obj.scope.calls if obj.scope is not None else 0
        try:
            return self._run_call(obj, args, kwargs, span)
        except (Unsupported, FrontendError) as exc:
            self._drop_nodes_from(mark)
            if obj.scope is not None:
                obj.scope.calls = calls
            return self._opaque_call(obj, args, kwargs, span, exc)

    def _run_call(self, obj: UserObj, args, kwargs, span: Span):
        fn = obj.cls.method("call")
        if fn is None:
            raise Unsupported(f"{obj.cls.node.name.value} has no call() method")
        build = obj.cls.method("build")
        if build is not None and not obj.attrs.get("__built__"):
            # Keras calls build(input_shape) before the first call
            first = args[0] if args else next(iter(kwargs.values()), None)
            shapes = [tuple(t.value.shape) for t in (first if isinstance(first, (list, tuple)) else [first])
                      if isinstance(t, TensorVal)]
            if shapes:
                obj.attrs["__built__"] = True
                self._run_method(obj, build, [shapes if len(shapes) > 1 else shapes[0]], {})
        kwargs = _with_training_mode(fn, args, kwargs)
        scope = obj.scope
        if scope is None:
            return self._run_method(obj, fn, args, kwargs)
        scope.calls += 1
        call_no = scope.calls
        scope.call_inputs[call_no] = [t.value for t in _tensors_in(list(args) + list(kwargs.values()))]
        self.module_stack.append((scope, call_no))
        try:
            result = self._run_method(obj, fn, args, kwargs)
        finally:
            self.module_stack.pop()
        scope.call_outputs[call_no] = [t.value for t in _tensors_in([result])]
        return result

    def _add_weight(self, obj: UserObj, args, kwargs, span: Span) -> WeightObj:
        """``self.add_weight(shape=..., initializer=..., trainable=...)`` (Keras 3's argument
        order; tf.keras 2 put ``name`` first)."""
        names = ("shape", "initializer", "dtype", "trainable")
        if args and isinstance(args[0], str):
            names = ("name", "shape", "dtype", "initializer", "regularizer", "trainable")
        bound = dict(zip(names, args)) | dict(kwargs)
        shape = bound.get("shape", ())
        if isinstance(shape, int):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)) or not all(isinstance(d, int) for d in shape):
            raise FrontendError("add_weight(): the shape must be known statically", span)
        for key in ("regularizer", "constraint"):
            if bound.get(key) is not None:
                self.program.warn(span, f"add_weight(): {key} is not translated (affects training only)",
                                  self._line(span))
        trainable = bound.get("trainable")
        weight = WeightObj(obj, tuple(shape), trainable is not False, bound.get("initializer"), span)
        obj.attrs.setdefault("__weights__", []).append(weight)
        return weight

    def _as_tensor(self, value: Any, node) -> Any:
        """A custom layer's weight used in tensor math: a ``variable`` node (its value)."""
        if not isinstance(value, WeightObj):
            return value
        w = value
        owner = w.owner
        if w.layer is None:
            spec = LayerSpec("variable", ops_table.get("variable").complete_attrs(
                {"shape": w.shape, "trainable": w.trainable}))
            own = owner.attrs.get("__weights__", [])
            # Keras saves a layer's own variables trainable first: layers/<name>/vars/<i>
            order = [x for x in own if x.trainable] + [x for x in own if not x.trainable]
            attr = w.attr or f"weight{own.index(w)}"
            w.layer = LayerObj(spec=spec, cls_name="Variable",
                               keras_name=f"{owner.keras_name}/vars/{order.index(w)}", span=w.span,
                               explicit_name=None, hint=attr, owner=owner, attr=attr)
            self.seq += 1
            w.layer.seq = self.seq
        span = self._span(node)
        out = self.scratch.add_node("variable", w.layer.hint, [], 1, attrs=w.layer.spec.attrs, span=span,
                                    source_name=w.layer.keras_name)
        out.from_keras.layer = w.layer
        out.layer = w.layer.ref
        out.from_keras.stmt = self.stmt_stack[-1] if self.stmt_stack else None
        out.from_keras.call_stmts = tuple(self.helper_call_stmts)
        out.from_keras.scopes = tuple(self.module_stack)
        out.from_keras.owner_scope = owner.scope
        out.from_keras.seq = w.layer.seq
        out.from_keras.variable_of = (owner.keras_name, w.layer.attr)
        if w.initializer is not None:
            out.from_keras.initializers = {"initializer": w.initializer}
        infer_node(out)
        w.layer.nodes.append(out)
        return TensorVal(out.outputs[0])

    # long: copies a called model's nodes as one submodule; scopes, calls, names share a map
    def _call_model_as_layer(self, model: ModelObj, args, kwargs, span: Span):
        """A Functional or Sequential model called on tensors: its layers (the same
        objects, so the same weights) run again on them, as one submodule."""
        x = args[0] if args else kwargs.get("inputs")
        inputs = _tensors_in([x])
        self._warn_fixed_mode(kwargs, f"model {model.name or model.var or ''}".strip(), span)
        if model.graph is None and model.input_shape is None and len(inputs) == 1 and model.layers \
                and getattr(model.layers[0], "input_shape", None) is None:
            model.input_shape = tuple(inputs[0].value.shape[1:])  # a Sequential is built by its first call
        graph = self._model_graph(model)
        if len(inputs) != len(graph.inputs) or not inputs:
            raise Unsupported(f"model {model.name or model.var or ''} called on {len(inputs)} tensors, "
                              f"it takes {len(graph.inputs)}")
        name = model.name or model.var or "submodel"
        scope = getattr(model, "scope", None)
        if scope is None:
            self.seq += 1
            scope = ModuleScope("class", _camel(name), name, seq=self.seq, span=model.span,
                                parent=self.module_stack[-1][0] if self.module_stack else None,
                                params=[v.var or "x" for v in graph.inputs], explicit_name=_identifier(name),
                                doc=f"The Keras model ``{name}``, used as a layer.", model_as_layer=True)
            model.scope = scope
        scope.calls += 1
        call_no = scope.calls
        scope.call_inputs[call_no] = [t.value for t in inputs]
        mapping = {id(gv): t.value for gv, t in zip(graph.inputs, inputs)}
        self.module_stack.append((scope, call_no))
        inner_calls: dict[tuple[int, int], int] = {}  # (scope, its call in the model) → this call's
        try:
            for node in graph.nodes:
                if node.from_keras.fused_into is not None:
                    continue  # the layer call makes its activation again
                layer = node.from_keras.layer
                if layer.cls_name and layer.owner is None and layer.made_in is None:
                    layer.made_in = scope  # the submodule holds the model's layers
                ins = [TensorVal(mapping[id(v)]) for v in node.inputs]
                before = len(self.scratch.nodes)
                # the model's own sub-modules (a custom layer in it) run again, as calls of theirs
                inner = []
                chain_ = tuple((node.from_keras.scopes or ()))
                base = graph.from_keras.base_scopes
                chain_ = chain_[len(base):] if chain_[:len(base)] == base else chain_
                around = {id(sc) for sc, _c in self.module_stack}
                for s_, c_ in chain_:
                    if s_ is scope or id(s_) in around:
                        continue  # the model itself, or a scope this call already runs in
                    key = (id(s_), c_)
                    if key not in inner_calls:
                        s_.calls += 1
                        inner_calls[key] = s_.calls
                        s_.call_inputs[s_.calls] = [mapping.get(id(v), v) for v in s_.call_inputs.get(c_, [])]
                        s_.call_outputs[s_.calls] = list(s_.call_outputs.get(c_, []))
                        if s_.parent is None:
                            s_.parent = scope
                    inner.append((s_, inner_calls[key]))
                self.module_stack.extend(inner)
                try:
                    roles = node.attrs.get("extra_inputs") if node.op == "multi_head_attention" else None
                    if roles and set(roles) <= {"key", "attention_mask"}:  # (by role: a mask is no key)
                        self._call_layer(layer, [], {"query": ins[0], "value": ins[1],
                                                     **dict(zip(roles, ins[2:]))}, span)
                    else:
                        self._call_layer(layer, [ins if len(ins) > 1 else ins[0]], {}, span)
                finally:
                    del self.module_stack[len(self.module_stack) - len(inner):]
                made = self.scratch.nodes[before:]
                originals = [node] + [n for n in graph.nodes if n.from_keras.fused_into is node]
                for old, new in zip(originals, made):
                    if old.from_keras.tensor_op is not None and new.from_keras.tensor_op is None:
                        new.from_keras.tensor_op = old.from_keras.tensor_op
                    if old.comments and not new.comments:
                        new.comments = list(old.comments)
                    for ov, nv in zip(old.outputs, new.outputs):
                        mapping[id(ov)] = nv
                        if nv.var is None and ov.var is not None:  # the model's code named it
                            nv.var = ov.var
                            for where, name_ in ov.scope_vars.items():
                                nv.scope_vars.setdefault(id(scope) if where is None else where, name_)
        finally:
            self.module_stack.pop()
        for (sid, _old), new_call in inner_calls.items():
            s_ = next(sc for sc, c in ((sc, c) for n in graph.nodes for sc, c in (n.from_keras.scopes or ()))
                      if id(sc) == sid)
            s_.call_outputs[new_call] = [mapping.get(id(v), v) for v in s_.call_outputs[new_call]]
        outs = [TensorVal(mapping[id(v)]) for v in graph.outputs]
        scope.call_outputs[call_no] = [t.value for t in outs]
        return outs[0] if len(outs) == 1 else outs

    def _call_subclass_model(self, model: ModelObj, args, kwargs, span: Span):
        """``model(x)`` on tensors: call() runs on them; on fresh keras.Input values it also
        fixes the model's input shape (the Keras way to build a subclassed model)."""
        outputs = self._call_user(model.user, args, kwargs, span)
        inputs = [a for a in args if isinstance(a, TensorVal)]
        if model.graph is None and inputs and all(t.value.producer is None for t in inputs):
            model.graph = self._extract_graph(inputs if len(inputs) > 1 else inputs[0], outputs, span)
            self._register_model(model, builder=None, var=None, args={})
        return outputs

    def _build_from_data(self, model: ModelObj, data: Any, span: Span) -> None:
        """A subclassed model first called on (or fit to) data of a known shape: Keras
        builds it then, with that shape."""
        parts = data if isinstance(data, (list, tuple)) else [data]
        if not parts or not all(isinstance(a, ArrayVal) and len(a.shape) >= 1
                                and all(d is not None for d in a.shape[1:]) for a in parts):
            return
        shapes = [(None, *a.shape[1:]) for a in parts]
        self._build_subclass(model, shapes if len(shapes) > 1 else shapes[0], span)
        for value, a in zip(model.graph.inputs, parts):
            if a.dtype and a.dtype.startswith(("int", "uint")) and _reads_tokens(model.graph, value):
                value.dtype = "int64"

    def _build_subclass(self, model: ModelObj, shape, span: Span) -> None:
        """``model.build((None, 28, 28, 1))``: run call() on an input of that shape."""
        if model.graph is not None:
            return
        if isinstance(shape, list) and shape and isinstance(shape[0], (list, tuple)):
            shapes = [tuple(s) for s in shape]
        elif isinstance(shape, (list, tuple)):
            shapes = [tuple(shape)]
        else:
            raise FrontendError("build(): the input shape must be known statically", span)
        inputs = [self._make_input("Input", [s[1:]], {}, span) for s in shapes]
        outputs = self._call_user(model.user, [inputs if len(inputs) > 1 else inputs[0]], {}, span)
        model.graph = self._extract_graph(inputs if len(inputs) > 1 else inputs[0], outputs, span)
        self._register_model(model, builder=None, var=None, args={})
