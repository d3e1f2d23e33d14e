"""The Keras reader's training facts: compile/fit/evaluate/predict calls, optimizer, loss and
metric objects, custom loops (GradientTape), datasets and callbacks, recorded as ir.training
statements."""

from __future__ import annotations

from dataclasses import replace
import libcst as cst

from transpiler.frontend_ast.keras import data_utils
from transpiler.frontend_ast.keras import training as keras_training
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.ir import code_literals
from transpiler.frontend_ast.interp import FunctionRef, Unknown, code_of
from transpiler.ir.program import ModelDef
from transpiler.ir.initializers import Initializer
from transpiler.frontend_ast.keras.support import _walk_names, dataset_shapes
from transpiler.frontend_ast.keras.values import (
    ApiRef, ArrayVal, LambdaVal, TensorVal, ModelObj, DatasetObj, ModelHandle)


class KerasTrainingFacts:
    """Mixin of KerasFrontend: training facts."""

    # long: one case per training method (compile, fit, evaluate, predict, ...), same arguments
    def _training_call(self, obj, method: str, args, kwargs, node):
        """Record ``model.compile/fit/...`` as a TrainingStatement (the printer replaces it)."""
        from transpiler.ir import training as T

        span = self._span(node)
        code = {}
        for i, arg in enumerate(node.args):
            key = arg.keyword.value if arg.keyword is not None else i
            code[key] = code_of(arg.value)
        receiver = code_of(node.func.value) if isinstance(node.func, cst.Attribute) else ""
        stmt = self.stmt_stack[-1] if self.stmt_stack else None

        def bind(positional):
            values = dict(zip(positional, args))
            values.update(kwargs)
            codes = {positional[k] if isinstance(k, int) else k: v for k, v in code.items()
                     if not isinstance(k, int) or k < len(positional)}
            return values, codes

        def static_or_code(values, codes, key, default):
            if key not in values:
                return default
            value = values[key]
            if key in keras_training.DATA_ARGS or isinstance(value, (Unknown, TensorVal)) or callable(value):
                return T.Code(codes[key])
            return value

        try:
            if method == "compile":
                names, n_out = self._model_outputs(obj)
                model = obj
                if isinstance(obj, ModelHandle):
                    model = obj.model or next((m for m, b, _v, _a in self.models if b == obj.builder), None)
                user = getattr(model, "user", None)
                custom_step = user is not None and (user.cls.method("train_step") is not None or
                                                    user.cls.method("compute_loss") is not None)
                config = keras_training.compile_config(
                    [self._api_name(a) for a in args], {k: self._api_name(v) for k, v in kwargs.items()},
                    n_out, names, custom_step=custom_step)
                values, codes = bind(("optimizer", "loss", "loss_weights", "metrics"))
                self._record_custom_functions(values, codes, config, names)
            elif method == "fit":
                values, codes = bind(keras_training.FIT_POSITIONAL)
                fields = {k: static_or_code(values, codes, k, getattr(T.Fit, k, None))
                          for k in keras_training.FIT_POSITIONAL if k != "callbacks"}
                fields["batch_size"] = 32 if fields.get("batch_size") is None else fields["batch_size"]
                callbacks = values.get("callbacks") or []
                if isinstance(callbacks, Unknown):
                    raise Unsupported("fit(callbacks=...) must be a literal list of Keras callbacks")
                config = T.Fit(**fields, callbacks=[self._callback(c, codes, i) for i, c in enumerate(callbacks)])
                unknown = set(values) - set(keras_training.FIT_POSITIONAL)
                if unknown:
                    raise Unsupported(f"fit: argument(s) {', '.join(sorted(unknown))} not supported")
            elif method == "evaluate":
                values, codes = bind(keras_training.EVALUATE_POSITIONAL)
                config = T.Evaluate(x=T.Code(codes["x"]),
                                    y=T.Code(codes["y"]) if "y" in codes else None,
                                    batch_size=static_or_code(values, codes, "batch_size", None) or 32,
                                    verbose=static_or_code(values, codes, "verbose", "auto"),
                                    return_dict=bool(values.get("return_dict", False)),
                                    steps=static_or_code(values, codes, "steps", None))
                if "sample_weight" in values:
                    raise Unsupported("evaluate(sample_weight=...) is not supported yet")
                if values.get("callbacks"):
                    raise Unsupported("evaluate(callbacks=...) is not supported yet")
            elif method in ("train_on_batch", "test_on_batch"):
                # one step (or one evaluation) on the arrays as one batch: fit/evaluate over
                # them with batch_size=len(x) (the printer returns what Keras returns)
                names = ("x", "y", "sample_weight", "class_weight", "return_dict") if method == "train_on_batch" \
                    else ("x", "y", "sample_weight", "return_dict")
                values, codes = bind(names)
                extra = sorted(k for k in values if k not in ("x", "y") and values[k] not in (None, False))
                if extra or "x" not in codes or "y" not in codes:
                    raise Unsupported(f"{method}({', '.join(extra) or 'without y'}) is not supported yet")
                first = code_literals.list_items(codes["x"])  # (several inputs: a list of arrays)
                size = T.Code(f"len({first[0] if first else codes['x']})")
                if method == "train_on_batch":
                    config = T.Fit(x=T.Code(codes["x"]), y=T.Code(codes["y"]), batch_size=size, epochs=1, verbose=0,
                                   shuffle=False)
                else:
                    config = T.Evaluate(x=T.Code(codes["x"]), y=T.Code(codes["y"]), batch_size=size, verbose=0)
            elif method == "predict":
                values, codes = bind(keras_training.PREDICT_POSITIONAL)
                config = T.Predict(x=T.Code(codes["x"]),
                                   batch_size=static_or_code(values, codes, "batch_size", None) or 32)
                if values.get("steps") is not None or values.get("callbacks"):
                    raise Unsupported("predict(steps=..., callbacks=...) is not supported yet")
            elif method in ("save", "save_weights", "load_weights"):
                config = T.Save(T.Code(code.get(0, code.get("filepath", '""'))),
                                weights_only=method != "save", load=method == "load_weights")
            else:  # summary, count_params
                config = None
        except Unsupported as exc:
            self.program.stub(span, f"{receiver}.{method}(): {exc}", self._line(span))
            return Unknown(f"model.{method}()")
        config = self._one_input_array(obj, config, args, kwargs)
        self.program.training.append(T.TrainingStatement(method, receiver, config, span, stmt,
                                                         call=self.source_file.sid(node),
                                                         source=cst.Module([]).code_for_node(node)))
        self.training_models[self.program.training[-1]] = obj
        return Unknown(f"model.{method}()")

    def _one_input_array(self, obj, config, args, kwargs):
        """``model.predict([x])`` (fit, evaluate) on a one-input model: Keras takes the list's one
        array as the input, so the record names the array itself (``x``; ``data[0]`` for a name
        holding the list) and the printer's layout transpose and loaders see an array, not a
        list (keras.io eeg_signal_classification: ``np.transpose`` of the list failed when run)."""
        from transpiler.ir import training as T

        x = getattr(config, "x", None)
        value = args[0] if args else kwargs.get("x")
        if not isinstance(x, T.Code) or not isinstance(value, (list, tuple)) or len(value) != 1:
            return config
        if isinstance(obj, ModelHandle):
            obj = obj.model or next((m for m, b, _v, _a in self.models if b == obj.builder), None)
        if not isinstance(obj, ModelObj) or obj.user is not None:
            return config
        if obj.kind != "sequential" and (obj.graph is None or len(obj.graph.inputs) != 1):
            return config
        items = code_literals.list_items(x.text)
        return replace(config, x=T.Code(items[0] if items is not None and len(items) == 1 else f"{x.text}[0]"))

    def _model_def_of(self, obj) -> ModelDef | None:
        if isinstance(obj, ModelObj):
            return self.model_defs.get(obj)
        if isinstance(obj, ModelHandle):
            if obj.builder is None and obj.model is not None:
                return self.model_defs.get(obj.model)
            return next((md for md in self.program.models if md.builder == obj.builder), None)
        return None

    def _record_object(self, var: str, value, stmt, node) -> None:
        """``optimizer = keras.optimizers.Adam(...)``, ``loss_fn = keras.losses.X(...)``,
        ``dataset = tf.data.Dataset...`` bound to a name: a custom loop will use them."""
        from transpiler.ir import training as T

        span = self._span(node)
        if isinstance(value, data_utils.BatchesVal):  # ``ds = timeseries_dataset_from_array(...)``
            value.statement.model = var
            return
        try:
            if isinstance(value, DatasetObj):
                # made in a function this statement called: its code names that function's
                # variables, the printer keeps the call (the function returns the loader)
                config = replace(value, returned=value.scope != tuple(self.scope_stack))
                kind = "dataset"
            elif isinstance(value, keras_training.TrainingObj) and value.kind == "optimizer":
                config, kind = keras_training.optimizer_config(value), "optimizer_object"
            elif isinstance(value, keras_training.TrainingObj) and value.kind == "loss":
                config, kind = keras_training.loss_config(value), "loss_object"
                if config.kind == "custom":
                    config.params["code"] = cst.Module([]).code_for_node(node)
            elif isinstance(value, keras_training.TrainingObj) and value.kind == "callback":
                value.var = var  # (fit() may receive it through a list or a function's parameter)
                config, kind = keras_training.callback_config(value) if value.name != "LearningRateScheduler" \
                    else None, "callback_object"
                if config is not None and config.kind in keras_training.OBJECT_CALLBACKS:
                    config.params = {k: v for k, v in config.params.items() if k in ("class", "hooks")}
                    config.params["code"] = cst.Module([]).code_for_node(node)
            elif isinstance(value, keras_training.TrainingObj) and value.kind == "metric":
                # a metric object a custom loop updates: keras.metrics.Mean(name=...) or one of a
                # per-sample function (SparseCategoricalAccuracy(), ...): (canonical name, label)
                if value.name == "Mean":
                    extra = set(value.kwargs) - {"name", "dtype"}
                    if value.args or extra:
                        raise Unsupported("keras.metrics.Mean: only name= and dtype= are translated")
                    label = value.kwargs.get("name")
                    config = ("mean", label if isinstance(label, str) else None)
                else:
                    config = (keras_training.metric_name(value), None)
                kind = "metric_object"
            elif isinstance(value, keras_training.TrainingObj) and value.kind == "schedule":
                value.var = value.var or var  # (an optimizer made later names it)
                kind = "schedule_object"  # (also read where an optimizer takes it)
                try:
                    config = keras_training.schedule_config(value)
                except Unsupported:
                    config = None  # (the optimizer that takes it says why)
            elif isinstance(value, Initializer):  # ``kernel_init = keras.initializers.RandomNormal(...)``
                config, kind = value, "initializer_object"
            elif isinstance(value, list) and value and all(
                    isinstance(v, keras_training.TrainingObj) and v.kind == "callback" for v in value):
                config, kind = None, "callback_list"  # ``callbacks = [EarlyStopping(...), ...]``
            else:
                return
        except Unsupported as exc:
            self.program.stub(span, f"{var}: {exc}", self._line(span))
            return
        self.program.training.append(T.TrainingStatement(kind, var, config, span, self.source_file.sid(stmt),
                                                         call=self.source_file.sid(node),
                                                         source=cst.Module([]).code_for_node(node)))

    def _current_stmt(self):
        return self._stmt_nodes[-1] if self._stmt_nodes else None

    def _record_loop(self, kind: str, stmt, node, value=None):
        """A custom training loop's statement (tape, gradient, apply_gradients), recorded
        once: a loop body read more than once gets the first record (not the program's
        latest statement, which may be another one by then)."""
        from transpiler.ir import training as T

        known = next((ts for ts in self.program.training if ts.call == self.source_file.sid(node)), None)
        if known is not None:
            return known
        span = self._span(node)
        self.program.training.append(T.TrainingStatement(
            kind, "", None, span, self.source_file.sid(stmt), call=self.source_file.sid(node),
            source=cst.Module([]).code_for_node(node)))
        return self.program.training[-1]

    def _record_loss_call(self, func: ApiRef, args, kwargs, node):
        """``keras.losses.sparse_categorical_crossentropy(labels, preds)`` outside a model's
        method: the loss function applied to tensors, its per-sample values (Keras reduces
        nothing here). Recorded so the printer puts the torch loss function in its place; the
        value is a :class:`PerSampleLoss` (``tape.gradient`` of it is the gradient of its sum)."""
        from transpiler.ir import training as T

        if self.self_stack:  # (a model's own step: its class printer translates the method)
            return Unknown("loss values")
        span = self._span(node)
        positional = [a for a in node.args if a.keyword is None]
        codes = {a.keyword.value: code_of(a.value) for a in node.args if a.keyword is not None}
        codes.update(zip(("y_true", "y_pred"), (code_of(a.value) for a in positional)))
        try:
            extra = set(codes) - {"y_true", "y_pred", "from_logits"}
            if len(positional) > 2 or extra or not {"y_true", "y_pred"} <= set(codes):
                raise Unsupported(f"{func.name}(): only (y_true, y_pred, from_logits=...) are translated")
            config = keras_training.loss_config(keras_training.TrainingObj(
                "loss", func.name, [], {k: v for k, v in kwargs.items() if k == "from_logits"}))
        except Unsupported as exc:
            self.program.stub(span, f"keras.losses.{func.name}(): {exc}", self._line(span))
            return Unknown("loss values")
        config = T.LossCall(config, T.Code(codes["y_true"]), T.Code(codes["y_pred"]))
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        self.program.training.append(T.TrainingStatement("loss_call", "", config, span, stmt,
                                                         call=self.source_file.sid(node),
                                                         source=cst.Module([]).code_for_node(node)))
        return PerSampleLoss("loss values")

    def _record_gradient(self, node, args) -> None:
        """``tape.gradient(loss, variables)``; a per-sample loss (a vector) is summed first,
        as TensorFlow does for a target that is not a scalar."""
        ts = self._record_loop("gradient", self._current_stmt(), node)
        target = args[0] if args else None
        while isinstance(target, Unknown) and not isinstance(target, PerSampleLoss):
            target = target.origin
        if isinstance(target, PerSampleLoss):
            ts.config = "sum"

    def _load_model(self, node):
        """``keras.models.load_model(path)``: the script's one model class with saved weights."""
        from transpiler.ir import training as T

        span = self._span(node)
        entry = self.models[0] if len(self.models) == 1 else None
        if node.args and entry is None:
            # several models: the one the script saved to this path (model.save("m.keras"))
            path_code = code_of(node.args[0].value)
            saved = [self.training_models.get(st) for st in self.program.training
                     if st.kind == "save" and not st.config.weights_only and st.config.path.text == path_code]
            for obj in saved[-1:]:
                entry = next((e for e in self.models if e[0] is obj or (
                    isinstance(obj, ModelHandle) and obj.builder is not None and e[1] == obj.builder)), None)
        if entry is None or not node.args:
            self.program.stub(span, "load_model(): the saved model is not one of this script's models",
                              self._line(span))
            return Unknown("loaded model")
        model, builder, _var, _args = entry
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        path = T.Code(code_of(node.args[0].value))
        self.program.training.append(T.TrainingStatement("load_model", "", path, span, stmt,
                                                         call=self.source_file.sid(node),
                                                         source=cst.Module([]).code_for_node(node)))
        self.training_models[self.program.training[-1]] = model
        return ModelHandle(builder, model)

    def _data_call(self, func: ApiRef, node, values: list = (), keywords: dict | None = None):
        """``keras.datasets.X.load_data()`` / ``keras.utils.to_categorical(...)`` / a data utility
        (``keras.utils.get_file``, ``load_img``, ...: frontend_ast/keras/data_utils.py): recorded
        so the printer can put framework-free code in their place."""
        from transpiler.ir import training as T

        span = self._span(node)
        if func.kind == "data_util" and func.name in data_utils.WHOLE_STATEMENT and \
                not data_utils._whole_statement(self, node):
            self.program.stub(span, f"keras.utils.{func.name}() whose result the program uses", self._line(span))
            return Unknown(func.name)
        args = ", ".join(cst.Module([]).code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                         for a in node.args)
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        kind = {"dataset": "load_data", "data_util": "data_util"}.get(func.kind, "to_categorical")
        config = func.name if kind == "load_data" else (func.name, T.Code(args)) if kind == "data_util" \
            else T.Code(args)
        self.program.training.append(T.TrainingStatement(kind, "", config, span, stmt,
                                                         call=self.source_file.sid(node),
                                                         source=cst.Module([]).code_for_node(node)))
        if kind == "data_util" and func.name in data_utils.LOADERS:
            # ``train_ds, val_ds = image_dataset_from_directory(..., subset="both")``: both names
            self.program.training[-1].model = data_utils.unpacked_names(self._current_stmt(), node) or ""
            return data_utils.BatchesVal(func.name, statement=self.program.training[-1])
        if kind == "data_util" and func.name in data_utils.TEXT_LAYERS:
            return data_utils.TextLayerVal(func.name, cls_name=func.name, span=span)
        shapes = dataset_shapes(func.name, list(values), keywords or {}) if kind == "load_data" else None
        if shapes is not None:
            (xs, ys), (xt, yt), dtype, label_dtype = shapes
            return ((ArrayVal(kind, xs, dtype), ArrayVal(kind, ys, label_dtype)),
                    (ArrayVal(kind, xt, dtype), ArrayVal(kind, yt, label_dtype)))
        return Unknown(kind)

    def _api_name(self, value):
        """A Keras loss/metric function reference (``keras.losses.mse``) → its name."""
        if isinstance(value, ApiRef) and value.kind in ("loss", "metric"):
            return value.name
        if isinstance(value, keras_training.TrainingObj) and value.kind == "metric":
            return value  # its settings and name= are read (keras_training.metric_name)
        if isinstance(value, (list, tuple)):
            return type(value)(self._api_name(v) for v in value)
        if isinstance(value, dict):
            return {k: self._api_name(v) for k, v in value.items()}
        return value

    def _record_custom_code(self, name: str, kind: str, node) -> None:
        """A loss/metric the script defines (function or Loss subclass): its definition is
        translated where it stands."""
        from transpiler.ir import training as T

        if any(ts.kind == "custom_code" and ts.stmt == self.source_file.sid(node) for ts in self.program.training):
            return
        span = self._span(node)
        self.program.training.append(T.TrainingStatement(
            "custom_code", name, T.CustomCode(name, kind, cst.Module([]).code_for_node(node)), span,
            self.source_file.sid(node), call=self.source_file.sid(node), source=cst.Module([]).code_for_node(node)))

    def _record_custom_functions(self, values, codes, config, output_names) -> None:
        """compile(loss=my_loss, metrics=[my_metric]): record the functions and where each
        custom loss is made (its source expression, per output)."""
        for value in [values.get("loss"), values.get("metrics")]:
            items = list(value.values()) if isinstance(value, dict) else (
                list(value) if isinstance(value, (list, tuple)) else [value])
            for item in items:
                for sub in (item if isinstance(item, (list, tuple)) else [item]):
                    if isinstance(sub, FunctionRef):
                        self._record_custom_code(sub.node.name.value, "function", sub.node)
        loss_code = codes.get("loss", "")
        parts = code_literals.list_items(loss_code)
        as_dict = code_literals.dict_items(loss_code)
        for i, loss in enumerate(config.losses):
            if loss.kind != "custom":
                continue
            if as_dict is not None and output_names[i] in as_dict:
                loss.params["code"] = as_dict[output_names[i]]
            elif parts is not None and len(parts) == len(config.losses):
                loss.params["code"] = parts[i]
            elif parts is None and as_dict is None:
                loss.params["code"] = loss_code
            else:
                raise Unsupported("compile(loss=...): a custom loss inside a container that is not a literal")

    def _callback(self, value, codes, index=0):
        config = keras_training.callback_config(value)
        config.var = getattr(value, "var", None)
        if config.kind in keras_training.OBJECT_CALLBACKS:  # the object itself goes to fit()
            items = code_literals.list_items(codes.get("callbacks", ""))
            if items is None:  # ``callbacks = [MyCallback(), ...]`` then ``fit(callbacks=callbacks)``
                made = [ts for ts in self.program.training if ts.kind == "callback_list"
                        and ts.model == codes.get("callbacks", "").strip()]
                items = code_literals.list_items(made[-1].source) if made else None
            config.params = {k: v for k, v in config.params.items() if k in ("class", "hooks")}
            if items is None:  # the list is built elsewhere (from Keras calls the script printer stubs)
                raise Unsupported("fit(callbacks=...) with callback objects must be a literal list")
            config.params["code"] = items[index]
        if config.kind == "learning_rate_scheduler":
            fn = config.params.get("schedule")
            if isinstance(fn, LambdaVal):  # schedule=lambda epoch, lr: ...
                names = {n.value for n in _walk_names(fn.node.body)} - {p.name.value for p in fn.node.params.params}
                if any(self._framework_name(n) for n in names):
                    raise Unsupported("LearningRateScheduler: a lambda that uses Keras/TensorFlow")
                config.params["schedule"] = f"({cst.Module([]).code_for_node(fn.node)})"
                return config
            if not isinstance(fn, FunctionRef):
                raise Unsupported("LearningRateScheduler needs a module-level function or a lambda")
            config.params["schedule"] = fn.node.name.value
        return config

    def _framework_name(self, name: str) -> bool:
        """``name`` is bound at module level to Keras or TensorFlow (an import or an alias)."""
        value = self.globals.vars.get(name)
        path = getattr(value, "path", None) or getattr(value, "name", None)
        return isinstance(value, ApiRef) or (isinstance(path, str) and
                                             path.split(".")[0] in ("keras", "tensorflow", "tf_keras"))

    def _model_outputs(self, obj) -> tuple[list[str], int]:
        """(output names, number of outputs) of the model a training call is made on."""
        graph = None
        if isinstance(obj, ModelHandle):
            obj = next((model for model, builder, _var, _args in self.models if builder == obj.builder), None)
        if isinstance(obj, ModelObj) and obj.user is None and obj.graph is None and not _has_input_shape(obj):
            # a Sequential compiled before model.build(shape): one output, its last layer's
            last = obj.layers[-1] if obj.layers else None
            return [getattr(last, "keras_name", "") or "output"], 1
        if isinstance(obj, ModelObj):
            # a subclassed model may be compiled before its first call builds it: one output
            graph = obj.graph if obj.user is not None or self._unbuilt(obj) else self._model_graph(obj)
        elif isinstance(obj, ModelHandle):
            for model, builder, _var, _args in self.models:
                if builder == obj.builder and not self._unbuilt(model):  # (lazy.py: built on first use)
                    graph = self._model_graph(model)
        if graph is None:
            return ["output"], 1
        names = []
        for v in graph.outputs:
            producer = v.producer
            layer = (producer.from_keras.fused_into or producer).layer if producer else None
            names.append(layer.keras_name if layer is not None and layer.keras_name else v.name)
        return names, len(graph.outputs)


class PerSampleLoss(Unknown):
    """The per-sample values of a Keras loss function applied to tensors (not reduced)."""


def _has_input_shape(model: ModelObj) -> bool:
    """A Sequential knows its input shape (keras.Input, input_shape= on its first layer, build())."""
    first = model.layers[0] if model.layers else None
    return model.input_shape is not None or getattr(first, "input_shape", None) is not None
