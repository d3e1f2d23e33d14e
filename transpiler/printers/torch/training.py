"""Print the training program (ir.training) as idiomatic PyTorch.

``model.compile`` becomes a ``torch.optim`` optimizer (every hyperparameter mapped,
Keras' defaults made explicit), a loss function and, for schedules, a ``LambdaLR``
stepped per optimizer step as Keras does. ``fit``/``evaluate``/``predict`` become
calls of module-level helpers generated for this program: ``make_loader``
(``TensorDataset``/``DataLoader``), ``train_step``, ``fit`` (the epoch loop with
running-mean metrics printed per epoch, validation and callbacks as loop code),
``evaluate`` and ``predict``. Channels-last arrays are permuted once, where they enter.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import libcst as cst

from transpiler import cst_fast
from transpiler.cst_fast import walk
from transpiler.ir import code_literals
from transpiler.ir import training as T
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.ir.program import ModelDef, Program
from transpiler.printers import differences
from transpiler.printers.torch import data_pipelines, data_utils, dataset_features, dataset_loaders
from transpiler.printers.torch import data_pipeline, predict_data, tensor_definitions
from transpiler.printers.torch.data_pipeline import Pipeline, refuse_negative_steps
from transpiler.printers.torch import custom_step as torch_custom_step
from transpiler.printers.torch import wrapper_training
from transpiler.printers.torch.model_calls import model_call_lines
from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.printers.code import comment_text, docstring, lit
from transpiler.printers.torch.callbacks import _callback_object_code, _pt_path, rewrite_callback_class  # noqa: F401
from transpiler.printers.torch.callbacks import given_to_untranslated, keep_binding, read_elsewhere, \
    used_by_compile_or_fit
from transpiler.printers.torch.objects import (CALLBACKS, EMBEDDING_SLICES_NOTE, LOSSES,  # noqa: F401
                                              METRICS, OBJECT_CALLBACKS, SPARSE_SENSITIVE_OPTIMIZERS,
                                              STOPPING_CALLBACKS, TRAINING, CompiledObjects)
from transpiler.printers.torch.training_helpers import RuntimeHelpers
from transpiler.printers.torch.training_text import OneChannelLayout, _arg_text, _from_layout, _to_layout  # noqa: F401


@dataclass
class ModelTraining:
    """What the training statements of one model variable need."""

    md: ModelDef | None
    compile: T.Compile | None = None
    optimizer_var: str = "optimizer"
    loss_var: str = "loss_fn"
    scheduler_var: str | None = None


@dataclass
class TrainingCode:
    """Helpers (module level) and per-statement replacement lines."""

    helpers: list[str] = field(default_factory=list)
    statements: dict[int, list[str]] = field(default_factory=dict)
    expressions: dict[int, str] = field(default_factory=dict)
    unwrap: dict[int, list[str]] = field(default_factory=dict)
    after: dict[int, list[str]] = field(default_factory=dict)
    imports: set[str] = field(default_factory=set)
    functions: dict[str, list[str]] = field(default_factory=dict)  # module-level defs, translated
    #: a model class's own train_step/test_step: class name → (``__init__`` lines, methods)
    class_extensions: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    wrapper_classes: dict[str, str] = field(default_factory=dict)  # (wrapper_training.py) class → text
    #: lines standing where a statement building the model was (``x = helper(tensor, ...)``): the
    #: data side of a helper called on a model's tensors (``adapt()``: frontend_ast/keras/data_adapt.py)
    model_statement_lines: dict[int, list[str]] = field(default_factory=dict)
    #: the statements (ids) whose training call could not be translated (reported as stubs): the
    #: script printer prints them as stubs too, never as the Keras line (``model.fit`` on a module)
    failed: set[int] = field(default_factory=set)


def _uses_logits(md: ModelDef | None, index: int) -> bool:
    return md is not None and index in md.graph.logits_outputs


def _logits_activation(md: ModelDef | None, index: int) -> str | None:
    """The final activation (``"sigmoid"``/``"softmax"``) output ``index`` skips for its loss."""
    return md.graph.logits_outputs.get(index) if md is not None else None


class TrainingPrinter(RuntimeHelpers, CompiledObjects):
    """Generates the torch training code of one program."""

    def __init__(self, program: Program):
        self.program = program
        self.code = TrainingCode()
        self.models: dict[str, ModelTraining] = {}
        self.loss_fns: dict[tuple[str, bool], str] = {}
        self.metric_fns: dict[tuple[str, bool | None], str] = {}
        self.fit_variants: dict[str, str] = {}
        self.optimizer_classes: dict[str, str] = {}
        #: --exact: optimizers that update as Keras' TensorFlow backend does
        self.keras_exact = program.exact
        self.datasets: set[str] = set()
        self.features: set[str] = set()  # fit/train_step options the program uses
        self.needs = set()

    # -- per statement ------------------------------------------------------------
    def run(self) -> TrainingCode:
        # (which outputs the loss reads as logits: ir/passes/training_analyses.py, before printing)
        if self.program.from_keras.callback_classes:
            self.needs.add("callback_class")  # the script's Callback subclasses derive from it
        compiled_vars = {ts.model for ts in self.program.training if ts.kind == "compile"}
        from transpiler.printers.torch.printer import regularization_lines

        if any(regularization_lines(md.graph) for md in self.program.models):
            self.features.add("regularization")  # train_step/evaluate add model.regularization_loss()
        self._custom_steps()  # first: fit() is a stub when the model's train_step cannot be translated
        wrapper_training.translate_classes(self)  # (models wrapping others: their class, before their fit)
        for ts in self.program.training:
            try:
                lines = self.statement(ts, several=len(compiled_vars) > 1)
                if ts.kind == "tape" and lines is not None:
                    preamble = self._tape_preamble(ts)  # (a tape whose updates are not translated: a stub)
            except NotImplementedError as exc:
                self.program.stub(ts.span, f"{ts.model}.{ts.kind}(): {exc}")
                if ts.stmt is not None:
                    self.code.failed.add(ts.stmt)
                continue
            if ts.builder is not None and ts.kind != "custom_code":
                if ts.kind == "data_util" and ts.config[0] in data_utils.PREAMBLE:
                    # (the builder's body becomes the module class: the call would be lost)
                    self.program.stub(ts.span, f"{ts.source}: adapt() inside the builder function "
                                      f"{ts.builder}() is not translated (the statistics would stay at 0 "
                                      "and 1): adapt the layer before the builder runs")
                    continue
                if ts.kind == "compile":  # printed where the builder's result lands; register
                    self.optimizer_expr("model", ts.config.optimizer)  # the helpers it needs now
                    md = next((m for m in self.program.models if m.builder == ts.builder), None)
                    if md is None:  # a function returning the model it compiles: its body stays
                        md = ts.model_def
                        self.code.statements[ts.stmt] = [f"# compiled where {ts.builder}()'s result lands"]
                    for i, loss in enumerate(ts.config.losses):
                        self.loss_name(loss, _uses_logits(md, i))
                continue
            if lines is None:
                continue
            if ts.kind == "data_util" and ts.call is None:  # (adapt() in a helper: before the model)
                self.code.model_statement_lines.setdefault(ts.stmt, []).extend(lines)
                continue
            if ts.kind == "data_util" and ts.config[0] in data_utils.STATEMENTS:
                self.code.statements[ts.stmt] = lines  # (a comment: the whole statement goes)
                continue
            if ts.kind == "tape":
                self.code.unwrap[ts.stmt] = preamble
            elif ts.kind in ("compile", "wrapper_compile", "optimizer_object", "loss_object", "callback_object", "callback_list",
                             "initializer_object",
                             "schedule_object", "dataset", "gradient", "apply_gradients", "custom_code",
                             "metric_object"):
                self.code.statements[ts.stmt] = lines
            else:
                self.code.expressions[ts.call] = lines[0]
        # data calls nested in the arguments of other translated calls
        nested = {ts.source: (self.code.expressions[ts.call], ts.kind == "model_call") for ts in self.program.training
                  if ts.kind in ("load_data", "to_categorical", "load_model", "data_util", "clone_model",
                                 "model_call")  # (``head(encoder(x, training=True))``: both calls)
                  and ts.call in self.code.expressions}
        sources = {ts.call: ts.source for ts in self.program.training if ts.call is not None}
        for key, text in list(self.code.expressions.items()):
            # the longest first: a call holding another (``ds.map(f).map(g)``) before the one it holds
            for source, (replacement, call) in sorted(nested.items(), key=lambda kv: -len(kv[0])):
                if call and not (source in sources.get(key, "") and source != sources.get(key)):
                    continue  # (a model call inside this call's source, not text that reads the same)
                if source in text and text != replacement:  # (a whole call: not ``my_model(x)`` for ``model(x)``)
                    text = re.sub(r"(?<![\w.])" + re.escape(source), lambda _m, r=replacement: r, text)
            self.code.expressions[key] = text
        self._tensor_functions()
        self.datasets |= data_utils.image_helpers_used(self.code)  # (tf.image calls of .map() functions)
        self.code.helpers = self._helpers()
        return self.code

    def _custom_steps(self) -> None:
        """A keras.Model subclass's own train_step/test_step → methods of its module."""
        if not self.program.source:
            return
        from transpiler.printers.torch.printer import module_members

        module = cst_fast.parse(self.program.source)
        aliases = torch_loss_functions.module_aliases(module)
        numbers = torch_custom_step.module_numbers(module)
        for md in self.program.models:
            step = md.graph.from_keras.custom_step
            if not step or md.class_name in self.code.class_extensions:
                continue
            try:
                init = [f"self.{attr} = {torch_custom_step.tracker_expr(code, aliases, step.get('tracker_metrics', {}).get(attr), self.metric_object_expr)}"  # noqa: E501
                        for attr, code in step["trackers"]]
                # what the extended module will have: the printed class's members and the trackers
                members = frozenset(module_members(md)) | {attr for attr, _code in step["trackers"]}
                # the plain settings the steps read (``self.temperature``): set where __init__ set them
                constants = [(attr, value) for attr, value in step.get("constants", ()) if attr not in members]
                init += [f"self.{attr} = {value}" for attr, value in constants]
                members |= {attr for attr, _value in constants}
                methods = []
                for name, text in step["methods"]:
                    fn = cst.parse_module(text).body[0]
                    if name not in torch_custom_step.STEP_METHODS and name not in step.get("helpers", ()):
                        methods.append(text)  # a property (``metrics``): plain Python
                        continue
                    method, uses_f = torch_custom_step.translate_method(
                        fn, aliases, lambda kind, logits: self.loss_name(T.Loss(kind, logits), False),
                        frozenset(n for n, _text in step["methods"]), members,
                        torch_custom_step.layer_attributes(md.graph), numbers)
                    if uses_f:
                        self.needs.add("F")
                    methods.append(method)
            except torch_loss_functions.Untranslatable as exc:
                span = next(iter(step["spans"].values()))
                self.program.stub(span, f"{md.class_name}.train_step(): {exc} has no torch translation yet")
                md.graph.from_keras.custom_step_failed = True
                continue
            defaults = step.get("default_steps", [])
            if defaults:  # compute_loss only: Keras' own steps around it, with its loss tracker
                if not any(attr == "loss_tracker" for attr, _code in step["trackers"]):
                    init.append('self.loss_tracker = Mean(name="loss")')
                if not any(name == "metrics" for name, _text in step["methods"]):
                    methods.insert(0, "@property\ndef metrics(self):\n    return [self.loss_tracker]")
                methods += [torch_custom_step.default_step(kind, step["loss_params"]) for kind in defaults]
            if init:
                self.needs.add("mean_metric")
            self.code.class_extensions[md.class_name] = (init, methods)

    def _tensor_functions(self) -> None:
        """Module-level functions and plain classes of Keras/TensorFlow tensor math, in torch
        (printers/torch/tensor_definitions.py)."""
        tensor_definitions.translate(self)

    def _model(self, ts: T.TrainingStatement, several: bool) -> ModelTraining:
        key = ts.model
        if key not in self.models:
            prefix = f"{key}_" if several else ""
            self.models[key] = ModelTraining(ts.model_def, optimizer_var=f"{prefix}optimizer",
                                             loss_var=f"{prefix}loss_fn")
            builder = ts.model_def.builder if ts.model_def is not None else None
            builder = builder or self.program.from_keras.compiled_by.get(key)  # (training_returns.py)
            if builder:
                builder_compile = next((s for s in self.program.training if s.kind == "compile"
                                        and s.builder == builder), None)
                if builder_compile is not None:
                    self.models[key].compile = builder_compile.config
        return self.models[key]

    # long: one case per statement kind of a custom loop (objects, tf.data, tapes, gradients)
    def loop_lines(self, ts: T.TrainingStatement) -> list[str] | None:
        """Custom training loops: optimizer/loss objects, tf.data, GradientTape."""
        if ts.kind == "loss_object" and ts.config.kind == "custom":
            self.loss_name(ts.config, False)  # the helpers it needs
            return [f"{ts.model} = {ts.config.params['code']}"]
        if ts.kind == "callback_object" and ts.config is not None and ts.config.kind in OBJECT_CALLBACKS:
            # an object whose hooks the generated fit() calls: made here as in the source
            if ts.config.kind == "lambda_callback":
                self.needs.add("lambda_callback")
            self.needs.add("callback_class")
            return [f"{ts.model} = {_callback_object_code(ts.config.params['code'])}"]
        untranslated = given_to_untranslated(self.program, ts.model) if ts.kind in (
            "callback_list", "callback_object", "optimizer_object") and not self._used_by_compile_or_fit(ts.model) \
            else None
        if untranslated and not (ts.kind == "optimizer_object" and (self._loop_model(ts.model) or
                                                                    wrapper_training.passed_to_wrapper(self, ts.model))):
            # its compile()/fit() call is a stub of its own (the reason is there, not here)
            source = " ".join(ts.source.split())
            return keep_binding(self.program, ts.model, [comment_text(
                f"# {ts.model} = {source}: given to {untranslated}() below, not translated (see its stub)")])
        if ts.kind == "callback_list":
            if not self._used_by_compile_or_fit(ts.model):
                raise NotImplementedError("callbacks not passed to a translated fit()")
            comment = f"# {ts.model} = [...]: the callbacks run inside the generated fit() loop"
            return keep_binding(self.program, ts.model, [comment])
        if ts.kind == "schedule_object" and ts.config is not None and ts.config.kind == "custom":
            # an object of the script's own schedule class (translated where it is defined)
            return [f"{ts.model} = {ts.source}"]
        if ts.kind == "schedule_object":
            users = [o.model for o in self.program.training if o.kind == "optimizer_object"
                     and re.search(rf"(?<![\w.]){re.escape(ts.model)}\b(?!\s*=(?!=))", o.source)]
            used = self._used_by_compile_or_fit(ts.model) or any(self._used_by_compile_or_fit(u) for u in users)
            if ts.config is not None and (not used or read_elsewhere(self.program, ts.model)):
                # read by the script itself (``lr_schedule(step)``): the rate at a step, as Keras gives it
                self.needs.add("schedule_function")
                init = lit(float(ts.config.params["initial_learning_rate"]))
                return [f"{ts.model} = ScheduleFunction({init}, {self.schedule_lambda(ts.config)})"]
            if used:
                source = " ".join(ts.source.split())
                return [comment_text(f"# {ts.model} = {source}: the torch scheduler made with the optimizer steps it")]
            raise NotImplementedError("a learning-rate schedule not given to an optimizer compile() uses")
        if ts.kind in ("optimizer_object", "loss_object", "callback_object") and self._used_by_compile_or_fit(ts.model):
            what = {"optimizer_object": "the torch optimizer is made where compile() was",
                    "loss_object": "compile() below picks the matching loss function",
                    "callback_object": "it runs inside the generated fit() loop"}[ts.kind]
            source = " ".join(ts.source.split())  # one comment line, also for a source black wrapped
            return keep_binding(self.program, ts.model, [comment_text(f"# {ts.model} = {source}: {what}")])
        if ts.kind == "callback_object":
            raise NotImplementedError("a callback not passed to a translated fit()")
        if ts.kind == "optimizer_object" and wrapper_training.passed_to_wrapper(self, ts.model):
            return wrapper_training.factory_lines(self, ts)
        if ts.kind == "optimizer_object":
            model = self._loop_model(ts.model)
            if model is None:
                raise NotImplementedError("an optimizer neither given to a translated compile() nor used by "
                                          "apply_gradients(... model.trainable_variables)")
            return [f"{ts.model} = {self.optimizer_expr(model, ts.config)}"]
        if ts.kind == "metric_object":
            return [f"{ts.model} = {self.metric_object_expr(*ts.config)}"]
        if ts.kind == "loss_object":
            name = self.loss_name(ts.config, ts.config.from_logits)
            doc = f"Keras' {ts.config.kind} loss object: (y_true, y_pred) in, the batch mean out."
            return [f"def {ts.model}(target, output):", "    " + docstring(doc),
                    f"    return {name}(output, target).mean()"]
        if ts.kind == "dataset":
            ds = ts.config
            if dataset_features.is_features(ds):  # (a dict of columns: runtime/torch/tabular.py)
                return dataset_features.statement_lines(self, ts)
            if ds.returned:
                call = cst.parse_expression(ts.source)
                if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
                    raise NotImplementedError("a tf.data pipeline a function returned, changed after the call "
                                              "(build it whole in the function)")
                return None  # the function, translated, returns the loader
            target = f"{ts.model} = " if ts.model else "return "  # ``return tf.data.Dataset...``
            if ds.batch is None:
                later = self.program.training[self.program.training.index(ts) + 1:]
                if ts.model and any(o.kind == "dataset" and o.model == ts.model and o.config.code == ds.code
                                    and o.config.batch is not None for o in later):
                    # ``ds = from_tensor_slices(...)`` then ``ds = ds.shuffle(...).batch(n)``:
                    # the loader below is made from the same arrays
                    return [comment_text(f"# {ts.model} = {' '.join(ts.source.split())}: batched below")]
                if data_pipelines.zipped_elements(self.program, ts):  # (Dataset.zip before .batch())
                    return data_pipelines.dataset_lines(self, ts)
                raise NotImplementedError("a tf.data pipeline without .batch()")
            parts = code_literals.list_items(ds.code) if ds.code.startswith("(") else None
            layouts = self._single_model_layouts()
            pipe = self._pipeline(ds)
            self.needs.add("loader")
            extra = ""
            if parts and len(parts) == 2:
                data = f"{_to_layout(parts[0], layouts[0])}, {parts[1]}"
                zip_mapped = data_utils.zipped_and_mapped(self.program, ts)  # (its map permutes)
                if (pipe.element_map or pipe.batch_map or zip_mapped) and data != ds.code.strip("()"):
                    # the maps run on channels-last elements, as in Keras; each batch's inputs
                    # are then permuted into the model's layout
                    data = f"{parts[0]}, {parts[1]}"
                    if not zip_mapped:
                        extra = f", layout={lit(Layout(channels_last_of(layouts[0]), layouts[0]).perm)}"
                        self.features.add("layout_after_map")
            else:
                data = ds.code
                if not parts:  # (one array, or a name: tf.data gives its batches alone, not 1-tuples)
                    self.features.add("single")
            extra = (", shuffle=True" if ds.shuffle else "") + extra
            if pipe.drop_last:
                extra += ", drop_last=True"  # tf.data's drop_remainder=True
                self.features.add("drop_last")
            for key, fn in (("element_map", pipe.element_map), ("batch_map", pipe.batch_map)):
                if fn is not None:
                    extra += f", {key}={fn}"
                    self.features.add("map")
            if data_utils.uses_text_layers(self.program):
                self.features.add("text")  # (strings a text layer adapts to or a map vectorizes)
            comments = ["tf.data shuffle buffer → a full reshuffle each epoch"] if ds.shuffle else []
            comments += pipe.notes
            loader = f"make_loader({data}, batch_size={_arg_text(ds.batch)}{extra})"
            if pipe.repeat is not None:
                self.needs.add("repeated")
                loader = f"Repeated({loader}, {pipe.repeat})"
            if comments == ["tf.data shuffle buffer → a full reshuffle each epoch"]:
                return [f"{target}{loader}  # {comments[0]}"]
            return [comment_text(f"# tf.data {c}" if c.startswith(".") else f"# {c}") for c in comments] + \
                [f"{target}{loader}"]
        if ts.kind == "gradient":
            call = cst.parse_expression(ts.source)
            loss = cst.Module([]).code_for_node(call.args[0].value)
            if ts.config == "sum":  # TensorFlow's gradient of a target that is not a scalar
                return ["# tape.gradient of per-sample loss values: the gradient of their sum",
                        f"{loss}.sum().backward()"]
            return [f"{loss}.backward()"]
        if ts.kind == "apply_gradients":
            optimizer = ts.source.split(".apply_gradients", 1)[0]
            return [f"{optimizer}.step()"]
        if ts.kind == "tape":
            return []
        if ts.kind == "model_call":
            return model_call_lines(self, ts, self._in_tape(ts))  # (model_calls.py: in the mode Keras runs it)
        return None

    def _in_tape(self, ts) -> bool:
        """Whether ``ts`` sits in a ``with tf.GradientTape()`` block (a training step's forward)."""
        return any(t.kind == "tape" and t.stmt is not None and ts.span is not None and
                   t.stmt.line <= ts.span.line <= (t.stmt.end_line or t.stmt.line) for t in self.program.training)

    def _pipeline(self, ds) -> "Pipeline":
        return data_pipeline.pipeline_of(self, ds)  # (.map/.batch/.repeat/.prefetch/.cache)

    def _tensorflow_translated(self, code: str) -> str:
        """An expression (the data of an ``adapt()`` moved out of a helper, its ``.map`` lambdas
        reading ``tf.expand_dims``) with its TensorFlow calls in torch."""
        module = cst_fast.parse(self.program.source) if self.program.source else cst.Module([])
        aliases = torch_loss_functions.module_aliases(module)
        body = self._translated_expression(cst.Parameters(), cst.parse_expression(code), aliases, code)
        return cst.Module([]).code_for_node(body)

    def _translated_expression(self, params: cst.Parameters, expr: cst.BaseExpression, aliases, what: str):
        """``expr`` (over ``params``) with its TensorFlow calls in torch: translated as the body of
        a one-line function (``what`` names it in the refusal)."""
        wrapper = cst.FunctionDef(cst.Name("_expr"), params,
                                  cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(expr)])]))
        try:
            new, uses_f = torch_loss_functions.translate_function(wrapper, aliases, _no_builtin_loss)
        except torch_loss_functions.Untranslatable as exc:
            raise NotImplementedError(f"{what}: {exc} has no torch spelling") from None
        if uses_f:
            self.needs.add("F")
        return new.body.body[0].body[0].value

    def _map_function(self, code: str) -> str:
        """A ``.map()`` argument in torch: a function of the script (translated with it when it
        uses TensorFlow) or a lambda whose TensorFlow calls are translated here."""
        module = cst_fast.parse(self.program.source) if self.program.source else cst.Module([])
        aliases = torch_loss_functions.module_aliases(module)
        expr = cst.parse_expression(code)
        factory = data_pipeline.function_factory(expr, module)  # (``.map(preprocess(True))``)
        if isinstance(expr, cst.Name) or factory is not None:
            name = expr.value if factory is None else factory.name.value
            fn = factory or next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name),
                                 None) or next((s for s in tensor_definitions.nested_mapped(module)
                                                if s.name.value == name), None)
            if fn is None:
                raise NotImplementedError(f"tf.data .map({code}): not a function of this script")
            refuse_negative_steps(fn, code)
            keras_roots = {k for k, v in aliases.items() if v.split(".")[0] in ("keras", "tensorflow", "tf_keras")}
            uses_keras = any(isinstance(n, cst.Name) and n.value in keras_roots for n in walk(fn))
            if uses_keras:
                try:
                    torch_loss_functions.translate_function(fn, aliases, _no_builtin_loss)
                except torch_loss_functions.Untranslatable as exc:
                    raise NotImplementedError(f"tf.data .map({code}): {exc} has no torch spelling") from None
            return code  # the script printer translates the def itself (_tensor_functions)
        if not isinstance(expr, cst.Lambda):
            raise NotImplementedError(f"tf.data .map({code}): not a function or lambda")
        refuse_negative_steps(expr, "")
        body = self._translated_expression(expr.params, expr.body, aliases, "tf.data .map()")
        return cst.Module([]).code_for_node(expr.with_changes(body=body))

    def _tape_preamble(self, ts: T.TrainingStatement) -> list[str]:
        """What stands where ``with tf.GradientTape() as tape:`` was: clear the gradients."""
        after = [s for s in self.program.training if s.kind == "apply_gradients" and s.span and ts.span
                 and s.span.line > ts.span.line]
        if not after:
            raise NotImplementedError("a GradientTape without optimizer.apply_gradients")
        optimizer = after[0].source.split(".apply_gradients", 1)[0]
        model = self._loop_model(optimizer)
        lines = [f"{model}.train()"] if model else []
        return lines + [f"{optimizer}.zero_grad()  # the tape's gradients start from zero"]

    def _used_by_compile_or_fit(self, var: str) -> bool:
        return used_by_compile_or_fit(self.program, var)

    def _loop_model(self, optimizer_var: str) -> str | None:
        import re

        for ts in self.program.training:
            if ts.kind == "apply_gradients" and ts.source.startswith(f"{optimizer_var}.apply_gradients"):
                found = re.search(r"(\w+)\.trainable_(variables|weights)", ts.source)
                if found:
                    return found.group(1)
        return None

    def _single_model_layouts(self) -> list:
        if len(self.program.models) == 1:
            return [v.layout for v in self.program.models[0].graph.inputs]
        return [None]

    def statement(self, ts: T.TrainingStatement, several: bool) -> list[str] | None:
        if ts.kind == "wrapper_compile" or ts.model in wrapper_training.instances(self):
            return wrapper_training.statement_lines(self, ts)
        if ts.kind == "custom_code":
            return self.custom_code_lines(ts)
        if ts.kind == "initializer_object":
            return self.initializer_lines(ts)  # (objects.py)
        if ts.kind in ("load_data", "to_categorical", "load_model", "data_util", "clone_model"):
            return self.data_lines(ts)
        if ts.kind in ("optimizer_object", "loss_object", "callback_object", "callback_list", "schedule_object",
                       "dataset", "gradient", "apply_gradients", "tape", "model_call", "metric_object"):
            return self.loop_lines(ts)
        if ts.kind == "loss_call":  # Keras' per-sample values: the runtime's function of (output, target)
            return [f"{self.loss_name(ts.config.loss, False)}({ts.config.y_pred.text}, {ts.config.y_true.text})"]
        mt = self._model(ts, several)
        if ts.kind == "compile":
            if ts.builder is not None:
                return None
            mt.compile = ts.config
            return self.compile_lines(ts.model, mt)
        return self.call_lines(ts, mt)

    def data_lines(self, ts: T.TrainingStatement) -> list[str]:
        if ts.kind == "load_model":
            md = ts.model_def or (self.program.models[0] if len(self.program.models) == 1 else None)
            if md is None:
                raise NotImplementedError("load_model() in a script with several models")
            if getattr(self, "model_class", md.class_name) != md.class_name:
                raise NotImplementedError("load_model() of two different models")
            self.datasets.add("load_model")
            self.model_class = md.class_name
            return [f"load_model({_pt_path(ts.config.text)})"]
        if ts.kind == "load_data":
            if ts.config not in dataset_loaders.LOADERS:
                raise NotImplementedError(f"keras.datasets.{ts.config}.load_data()")
            self.datasets.add(ts.config)
            call = cst.parse_expression(ts.source)
            args = ", ".join(cst.Module([]).code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                             for a in call.args)  # the loader takes Keras' parameters
            return [f"load_{ts.config}({args})"]
        if ts.kind == "data_util":  # get_file, load_img, ...: the runtime's function of the same arguments
            name, args = ts.config
            if name in data_utils.STATEMENTS:
                return data_utils.statement_util_lines(name, args.text)
            if name not in data_utils.UTILITIES and name not in data_utils.LOADER_OPS:
                raise NotImplementedError(f"keras.utils.{name}()")
            if name in data_utils.LOADERS:  # (and their .map/.prefetch/.cache)
                self.datasets |= {name} - data_utils.LOADER_OPS
                return data_utils.loader_lines(self, ts)
            if name not in data_utils.PREAMBLE and name not in data_utils.preamble_names(self.program):
                # (those the script printer puts after the imports: not twice)
                self.datasets.add(name)
            lines = data_utils.call_lines(name, args.text, self._single_model_layouts())
            return [self._tensorflow_translated(line) for line in lines] if ts.call is None else lines
        self.datasets.add(ts.kind)  # to_categorical, clone_model: the runtime's function, same arguments
        return [f"{ts.kind}({ts.config.text})"]

    def call_lines(self, ts: T.TrainingStatement, mt: ModelTraining) -> list[str] | None:
        if ts.kind == "summary":
            return [f"print({ts.model})"]
        if ts.kind == "count_params":
            # Keras counts every weight, the BatchNorm statistics too (torch's buffers): the
            # floating state (num_batches_tracked is an int)
            return [f"sum(t.numel() for t in {ts.model}.state_dict().values() if t.is_floating_point())"]
        if ts.kind in ("fit", "evaluate", "train_on_batch", "test_on_batch") and mt.compile is None:
            raise NotImplementedError("the model was never compiled in this script")
        if ts.kind in ("fit", "evaluate", "train_on_batch", "test_on_batch") and not mt.compile.losses \
                and not _has_method(mt.md, "train_step"):
            raise NotImplementedError(f"{ts.kind}() of a model compiled without a loss (Keras trains the losses "
                                      "its layers add with add_loss(), not translated yet)")
        if ts.kind == "fit":
            return self.fit_lines(ts, mt)
        if ts.kind == "evaluate":
            return self.evaluate_lines(ts, mt)
        if ts.kind == "train_on_batch":  # fit over the arrays as one batch; its logs as Keras returns them
            if _has_method(mt.md, "train_step") or mt.compile.optimizer.schedule is not None:
                raise NotImplementedError("train_on_batch with the model's own train_step or a schedule")
            lines = self.fit_lines(ts, mt)
            if len(lines) != 1:
                raise NotImplementedError("train_on_batch on a tf.data pipeline")
            self.needs.add("batch_logs")
            return [f"batch_logs({lines[0]})"]
        if ts.kind == "test_on_batch":  # evaluate over the arrays as one batch: the same return value
            if _has_method(mt.md, "test_step") or _has_method(mt.md, "train_step"):
                raise NotImplementedError("test_on_batch with the model's own test_step")
            return self.evaluate_lines(ts, mt)
        if ts.kind == "predict":
            return self.predict_lines(ts, mt)
        if ts.kind in ("save", "save_weights", "load_weights"):
            return self.save_lines(ts)
        return None

    def compile_lines(self, model: str, mt: ModelTraining) -> list[str]:
        c = mt.compile
        opt = c.optimizer
        if _has_method(mt.md, "train_step"):
            if c.losses:
                raise NotImplementedError("compile(loss=...) for a model with its own train_step")
            lines = [f"{model}.optimizer = {self.optimizer_expr(model, opt)}"
                     "  # train_step reads self.optimizer, as in Keras"]
            if opt.schedule is not None:
                # Keras evaluates the schedule at each apply_gradients: the scheduler steps
                # after each step of the optimizer, wherever train_step takes it
                mt.scheduler_var = mt.optimizer_var.replace("optimizer", "scheduler")
                lines += [f"{mt.scheduler_var} = torch.optim.lr_scheduler.LambdaLR({model}.optimizer, "
                          f"{self.schedule_lambda(opt.schedule)})",
                          f"{model}.optimizer.register_step_post_hook(lambda *_: {mt.scheduler_var}.step())"
                          "  # the schedule follows the optimizer's steps, as Keras'"]
            return lines
        if not c.losses:  # (a custom loop trains it: fit/evaluate of it are refused)
            return [comment_text(f"# {model}.compile() without a loss: nothing to set up in torch (the "
                                 "program trains the model in its own loop)")]
        expr = self.optimizer_expr(model, opt)
        lines = [f"{mt.optimizer_var} = {expr}"]
        if opt.kind in SPARSE_SENSITIVE_OPTIMIZERS and mt.md is not None \
                and any(n.spec.sparse_gradient for n in mt.md.graph.nodes):
            lines[:0] = EMBEDDING_SLICES_NOTE
            if self.keras_exact:
                lines[1:2] = [f"# occurrence (repeats not summed first): KerasEmbedding and {expr.split('(')[0]} "
                              "reproduce", "# that (transpile --exact)"]
            differences.record(self.program, differences.TO_PYTORCH, "embedding_slices")
        losses = [self.loss_name(loss, _uses_logits(mt.md, i)) for i, loss in enumerate(c.losses)]
        if len(losses) == 1:
            lines.append(f"{mt.loss_var} = {losses[0]}")
        else:
            lines.append(f"{mt.loss_var} = [{', '.join(losses)}]")
        if any(_uses_logits(mt.md, i) for i in range(len(c.losses))):
            lines[-1] += "  # on logits: the model's final activation moves into the loss"
        if opt.schedule is not None:
            mt.scheduler_var = mt.optimizer_var.replace("optimizer", "scheduler")
            lines.append(f"{mt.scheduler_var} = torch.optim.lr_scheduler.LambdaLR("
                         f"{mt.optimizer_var}, {self.schedule_lambda(opt.schedule)})"
                         "  # stepped per batch, as Keras does")
        return lines

    # -- fit / evaluate / predict -------------------------------------------------
    def _io(self, mt: ModelTraining):
        graph = mt.md.graph if mt.md else None
        in_layouts = [v.layout for v in graph.inputs] if graph else [None]
        if graph:
            one = [v.layout is not None and is_channels_first(v.layout) and v.shape is not None and
                   len(v.shape) > 2 and v.shape[1] == 1 for v in graph.inputs]
            if any(one):  # (an (N, 28, 28) array for Input((28, 28, 1)): Keras adds the axis)
                self.needs.add("one_channel_layout")
                in_layouts = [OneChannelLayout(lay) if o else lay for lay, o in zip(in_layouts, one)]
        out_layouts = [v.layout for v in graph.outputs] if graph else [None]
        return in_layouts, out_layouts

    def _output_names(self, mt: ModelTraining) -> list[str]:
        graph = mt.md.graph
        names = []
        for v in graph.outputs:
            producer = v.producer
            owner = (producer.from_keras.fused_into or producer) if producer else None
            layer = owner.layer if owner else None
            names.append(layer.keras_name if layer is not None and layer.keras_name else v.name)
        return names

    @staticmethod
    def _input_names(mt: ModelTraining) -> list:
        """The model's input names (``keras.Input(name=...)``, else the variable's): the keys
        Keras matches a dict of arrays against."""
        return [v.var for v in mt.md.graph.inputs] if mt.md else []

    @staticmethod
    def _input_shapes(mt: ModelTraining) -> list:
        """The model's inputs' per-sample shapes."""
        return [tuple(v.shape[1:]) for v in mt.md.graph.inputs] if mt.md else []

    def model_inputs_expr(self, code: T.Code, layouts: list, mt: ModelTraining) -> str:
        """``inputs_expr`` for the inputs of ``mt``'s model (their names and shapes)."""
        return self.inputs_expr(code, layouts, self._input_names(mt), self._input_shapes(mt))

    def inputs_expr(self, code: T.Code, layouts: list, names: list = (), shapes: list = ()) -> str:
        as_dict = code_literals.dict_items(code.text) if len(layouts) > 1 else None
        if as_dict is not None and len(names) == len(layouts) and set(names) <= set(as_dict):
            # a dict keyed by input name: the arrays in the order of forward()'s arguments
            return "[" + ", ".join(_to_layout(as_dict[n], lay) for n, lay in zip(names, layouts)) + "]"
        keyed = dataset_features.keyed_inputs(code.text, names, layouts, shapes) if len(layouts) > 1 else None
        if keyed is not None:  # (a dict comprehension keyed by input name)
            return keyed
        parts = code_literals.list_items(code.text) if len(layouts) > 1 else None
        if len(layouts) > 1 and parts is None:
            return f"[{', '.join(_to_layout(f'{code.text}[{i}]', lay) for i, lay in enumerate(layouts))}]"
        if parts is not None:
            return "[" + ", ".join(_to_layout(p, lay) for p, lay in zip(parts, layouts)) + "]"
        return _to_layout(code.text, layouts[0])

    def targets_expr(self, code: T.Code, mt: ModelTraining, layouts: list) -> str:
        if len(layouts) == 1:
            return _to_layout(code.text, layouts[0])
        as_dict = code_literals.dict_items(code.text)
        names = self._output_names(mt)
        if as_dict is not None:
            return "[" + ", ".join(_to_layout(as_dict[n], lay) for n, lay in zip(names, layouts)) + "]"
        parts = code_literals.list_items(code.text)
        if parts is not None:
            return "[" + ", ".join(_to_layout(p, lay) for p, lay in zip(parts, layouts)) + "]"
        return f"[{code.text}[k] for k in {lit(tuple(names))}]"

    def _metrics_arg(self, mt: ModelTraining) -> str:
        c = mt.compile
        several = len(c.losses) > 1
        names = self._output_names(mt) if several else [""]
        items = []
        for i, (loss, metrics) in enumerate(zip(c.losses, c.metrics or [[]] * len(c.losses))):
            for m in metrics:
                m, _, named = m.partition("@")  # a metric object's own name= (its log key)
                fn = self.metric_fn(m, loss, _logits_activation(mt.md, i))
                m = m.partition("(")[0]  # its settings (k=2) are the function's
                label = named or {"mean_absolute_error": "mae", "mean_squared_error": "mse",
                                  "mean_absolute_percentage_error": "mape",
                                  "mean_squared_logarithmic_error": "msle"}.get(m, m)
                label = label[len("custom:"):] if label.startswith("custom:") else label  # its __name__
                label = f"{names[i]}_{label}" if several else label
                items.append(f"({lit(label)}, {i}, {fn})")
        return "[" + ", ".join(items) + "]" if items else "[]"

    def _from_dataset(self, x: T.Code, y, ts: T.TrainingStatement | None = None):
        """fit/evaluate on a tf.data pipeline: its (x, y) arrays, batch size and shuffle; for a
        pipeline with ``.map()``, the loader itself (its batches are the mapped ones)."""
        if y is not None:
            return None
        made = [t for t in self.program.training if t.kind == "dataset" and t.model == x.text]
        if ts is not None and ts in self.program.training:  # the binding in force at the call
            made = [t for t in made if self.program.training.index(t) < self.program.training.index(ts)] or made
        ds = made[-1].config if made else None
        if ds is None and data_utils.loader_statement(self.program, x.text, ts) is not None:
            self.features.add("loader_input")  # (timeseries_dataset_from_array: a DataLoader of (x, y))
            return x, T.Code("None"), T.Code(f"{x.text}.batch_size"), False, False, None, True
        if ds is None:
            return None
        if dataset_features.is_features(ds):
            return dataset_features.fit_data(self, x, ts, ds)
        parts = code_literals.list_items(ds.code) if ds.code.startswith("(") else None
        if not parts or len(parts) != 2 or ds.batch is None:
            raise NotImplementedError("fit on a tf.data pipeline other than from_tensor_slices((x, y)).batch(n)")
        pipe = self._pipeline(ds)
        if pipe.element_map or pipe.batch_map or pipe.drop_last:
            if ds.returned or pipe.repeat is not None or "repeat" in ds.ops:
                raise NotImplementedError("fit/evaluate on a repeated tf.data pipeline with .map() or "
                                          "drop_remainder=True, or one a function returned")
            # the loader the dataset statement made yields the mapped (x, y) batches, without a
            # last smaller one for drop_remainder=True
            self.features.add("loader_input")
            return x, T.Code("None"), T.Code(f"{x.text}.batch_size"), ds.shuffle, False, None, True
        if ds.returned:
            # made by a function (ds = make_dataset()): its arrays are the loader's, already in
            # the model's layout (the function's make_loader put them there)
            if any(code_literals.list_items(p) is not None for p in parts) or "repeat" in ds.ops:
                raise NotImplementedError("fit/evaluate on a repeated or several-array tf.data pipeline a "
                                          "function returned")
            arrays = [T.Code(f"{x.text}.dataset.tensors[{i}]") for i in (0, 1)]
            return arrays[0], arrays[1], T.Code(f"{x.text}.batch_size"), ds.shuffle, False, None, True
        return T.Code(parts[0]), T.Code(parts[1]), ds.batch, ds.shuffle, "repeat" in ds.ops, pipe.repeat, False

    @staticmethod
    def _require_targets(y, dataset, call: str) -> None:
        """``fit(ds)`` / ``evaluate(ds)`` without ``y``: ``ds`` yields (x, y) batches, which the
        array helpers cannot take unless ``ds`` is a pipeline of arrays read above."""
        if y is None and dataset is None:
            raise NotImplementedError(f"{call}() on a dataset of (x, y) batches other than a tf.data "
                                      "pipeline of arrays (from_tensor_slices((x, y)).batch(n))")

    def _data_layouts(self, mt: ModelTraining, dataset) -> tuple[list, list]:
        """The layouts fit/evaluate put (x, y) in: none for a loader's arrays (already there)."""
        in_layouts, out_layouts = self._io(mt)
        if dataset is None or not dataset[6]:
            return in_layouts, out_layouts
        if len(in_layouts) > 1 or len(out_layouts) > 1:
            raise NotImplementedError("fit/evaluate on a tf.data pipeline a function returned, for a model "
                                      "with several inputs or outputs")
        return [None], [None]

    # long: each Keras fit argument (validation, weights, callbacks, clipping) of one fit() call
    def fit_lines(self, ts: T.TrainingStatement, mt: ModelTraining) -> list[str]:
        f: T.Fit = ts.config
        if _has_method(mt.md, "train_step"):
            return self.fit_train_step_lines(ts, mt)
        dataset = self._from_dataset(f.x, f.y, ts)
        if dataset is not None:
            f = dataclasses.replace(f, x=dataset[0], y=dataset[1], batch_size=dataset[2], shuffle=dataset[3])
            f = dataset_features.with_weights(f, dataset)  # (a feature-columns map giving sample weights)
        self._require_targets(f.y, dataset, "fit")
        repeat = dataset is not None and dataset[4]
        if dataset is not None and dataset[5] is not None:
            # .repeat(count): an epoch is count passes, each reshuffled, batches never straddling two
            repeat = True
            if f.steps_per_epoch is None:
                self.code.imports.add("import math")
                f = dataclasses.replace(f, steps_per_epoch=T.Code(
                    f"{dataset[5]} * math.ceil(len({dataset[0].text}) / {dataset[2]})"))
        if repeat and f.steps_per_epoch is None:
            raise NotImplementedError("fit on a repeated (endless) tf.data pipeline without steps_per_epoch")
        if dataset is not None and dataset[1].text == "None" and (
                f.validation_split or f.class_weight is not None or f.sample_weight is not None):
            raise NotImplementedError("fit on a tf.data pipeline with .map() and validation_split, class_weight "
                                      "or sample_weight")
        if (f.class_weight is not None or f.sample_weight is not None) and any(
                loss.reduction == "mean_with_sample_weight" for loss in mt.compile.losses):
            raise NotImplementedError("reduction='mean_with_sample_weight' with sample or class weights")
        x_layouts, y_layouts = self._data_layouts(mt, dataset)
        fit_name = self.fit_function(f)
        args = [ts.model, mt.optimizer_var, mt.loss_var,
                self.model_inputs_expr(f.x, x_layouts, mt),
                self.targets_expr(f.y, mt, y_layouts) if f.y is not None else "None"]
        kw = {"epochs": f.epochs, "batch_size": f.batch_size}
        if self._metrics_arg(mt) != "[]":
            kw["metrics"] = T.Code(self._metrics_arg(mt))
        if mt.compile.loss_weights:
            kw["loss_weights"] = mt.compile.loss_weights
        if f.verbose != "auto":
            kw["verbose"] = f.verbose
        if f.validation_split:
            kw["validation_split"] = f.validation_split
            self.features.add("validation")
        if f.validation_data is not None:
            parts = code_literals.list_items(f.validation_data.text)
            val_ds = self._from_dataset(f.validation_data, None, ts) if parts is None else None
            dataset_features.unweighted(val_ds, "validation data")
            if val_ds is not None:  # a tf.data pipeline: its arrays, evaluated in its batches
                parts = [val_ds[0].text, val_ds[1].text]
                if f.validation_batch_size is None:
                    f = dataclasses.replace(f, validation_batch_size=val_ds[2])
            if parts is None or len(parts) != 2:
                raise NotImplementedError("validation_data must be an (x, y) pair or a tf.data pipeline")
            val_in, val_out = self._data_layouts(mt, val_ds)
            kw["validation_data"] = T.Code(
                f"({self.model_inputs_expr(T.Code(parts[0]), val_in, mt)}, "
                f"{self.targets_expr(T.Code(parts[1]), mt, val_out)})")
            self.features.add("validation")
        if f.shuffle is not True:
            kw["shuffle"] = f.shuffle
        if f.class_weight is not None:
            kw["class_weight"] = f.class_weight
            self.features |= {"class_weight", "weights"}
        if f.sample_weight is not None:
            kw["sample_weight"] = f.sample_weight
            self.features.add("weights")
        if f.initial_epoch:
            kw["initial_epoch"] = f.initial_epoch
            self.features.add("initial_epoch")
        if f.steps_per_epoch is not None:
            kw["steps_per_epoch"] = f.steps_per_epoch
            self.features.add("steps")
            self.needs.add("epoch_batches")
        if repeat:
            kw["repeat"] = True  # tf.data .repeat(): the batches run on across passes
        options = {"validation_steps": None, "validation_batch_size": None, "validation_freq": 1}
        for key, default in options.items():
            value = getattr(f, key)
            if value != default and (f.validation_split or f.validation_data is not None):
                kw[key] = value
                self.features |= {"validation_options", "eval_steps"}
                self.needs.add("evaluate")
        objects = [cb for cb in f.callbacks if cb.kind in OBJECT_CALLBACKS]
        if objects:
            kw["callbacks"] = T.Code("[" + ", ".join(_callback_object_code(cb.params["code"]) for cb in objects) + "]")
            self.features |= {"callback_objects", "stop"}
            self.needs.add("callback_objects")
            if any(cb.kind == "lambda_callback" for cb in objects):
                self.needs.add("lambda_callback")
        if any(cb.kind in STOPPING_CALLBACKS for cb in f.callbacks):
            self.features.add("stop")
        if mt.scheduler_var:
            kw["scheduler"] = T.Code(mt.scheduler_var)
            self.features.add("scheduler")
        clip = mt.compile.optimizer.clip
        for key, value in clip.items():
            kw[key] = value
            self.features.add("clip")
        text = ", ".join(args + [f"{k}={_arg_text(v)}" for k, v in kw.items()])
        return [f"{fit_name}({text})"]

    def fit_train_step_lines(self, ts: T.TrainingStatement, mt: ModelTraining) -> list[str]:
        """``fit`` of a model with its own train_step: the loop calls it per batch."""
        f: T.Fit = ts.config
        if mt.md.graph.from_keras.custom_step_failed:
            raise NotImplementedError("its train_step is not translated")
        others = {k for k in ("validation_split", "class_weight", "sample_weight", "steps_per_epoch",
                              "validation_steps")
                  if getattr(f, k) not in (None, 0.0, getattr(T.Fit, k, None))}
        unknown = [cb.kind for cb in f.callbacks if cb.kind not in OBJECT_CALLBACKS]
        if others or unknown or f.initial_epoch:
            raise NotImplementedError(f"fit({', '.join(sorted(others)) or 'callbacks'}=...) with the model's own "
                                      "train_step" + (f" ({', '.join(unknown)})" if unknown else ""))
        in_layouts, out_layouts = self._io(mt)
        steps = [text for name, text in mt.md.graph.from_keras.custom_step["methods"] if name in ("train_step", "test_step")]
        if any(is_channels_first(lay) for lay in out_layouts if lay) or (
                any(is_channels_first(lay) for lay in in_layouts if lay)
                and not all(torch_custom_step.layout_free(text) for text in steps)):
            raise NotImplementedError("a train_step on channels-first tensors (its axis arguments would need "
                                      "rewriting)")
        self.needs |= {"fit_train_step", "loader"}
        args = [ts.model, self.model_inputs_expr(f.x, in_layouts, mt)]
        if f.y is not None:
            args.append(self.targets_expr(f.y, mt, out_layouts))
        kw = {"epochs": f.epochs, "batch_size": f.batch_size}
        if f.verbose != "auto":
            kw["verbose"] = f.verbose
        if f.shuffle is not True:
            kw["shuffle"] = f.shuffle
        if f.validation_data is not None:  # (as a wrapper model's fit: wrapper_training.py)
            parts = code_literals.list_items(f.validation_data.text)
            if parts is None or len(parts) != 2 or not _has_method(mt.md, "test_step"):
                raise NotImplementedError("fit(validation_data=...) other than an (x, y) pair, or without the "
                                          "model's own test_step")
            val_x = self.model_inputs_expr(T.Code(parts[0]), in_layouts, mt)
            val_y = self.targets_expr(T.Code(parts[1]), mt, out_layouts)
            kw["validation_data"] = T.Code(f"({val_x}, {val_y})")
            self.features.add("step_validation")
            self.needs.add("evaluate_test_step")
        if f.callbacks:  # the script's own Callback subclasses and LambdaCallbacks: Keras' hooks
            kw["callbacks"] = T.Code("[" + ", ".join(_callback_object_code(cb.params["code"])
                                                     for cb in f.callbacks) + "]")
            self.features.add("step_callbacks")
            self.needs.add("callback_class")
            if any(cb.kind == "lambda_callback" for cb in f.callbacks):
                self.needs.add("lambda_callback")
        return [f"fit_train_step({', '.join(args + [f'{k}={_arg_text(v)}' for k, v in kw.items()])})"]

    def evaluate_lines(self, ts: T.TrainingStatement, mt: ModelTraining) -> list[str]:
        e: T.Evaluate = ts.config
        if _has_method(mt.md, "test_step") or (_has_method(mt.md, "train_step") and not mt.compile.losses):
            return self.evaluate_test_step_lines(ts, mt)
        dataset = self._from_dataset(e.x, e.y, ts)
        dataset_features.unweighted(dataset, "evaluate() on a dataset")
        if dataset is not None:
            e = dataclasses.replace(e, x=dataset[0], y=dataset[1], batch_size=dataset[2])
        self._require_targets(e.y, dataset, "evaluate")
        in_layouts, out_layouts = self._data_layouts(mt, dataset)
        self.needs.add("evaluate")
        args = [ts.model, mt.loss_var, self.model_inputs_expr(e.x, in_layouts, mt),
                self.targets_expr(e.y, mt, out_layouts)]
        kw = [f"batch_size={lit(e.batch_size) if not isinstance(e.batch_size, T.Code) else e.batch_size.text}"]
        if self._metrics_arg(mt) != "[]":
            kw.append(f"metrics={self._metrics_arg(mt)}")
        if mt.compile.loss_weights:
            kw.append(f"loss_weights={lit(mt.compile.loss_weights)}")
        if e.return_dict:
            kw.append("return_dict=True")
        if e.steps is not None:
            kw.insert(1, f"steps={e.steps.text if isinstance(e.steps, T.Code) else lit(e.steps)}")
            self.features.add("eval_steps")
        return [f"evaluate({', '.join(args + kw)})"]

    def evaluate_test_step_lines(self, ts: T.TrainingStatement, mt: ModelTraining) -> list[str]:
        """``evaluate`` of a model with its own test_step: the loop calls it per batch."""
        e: T.Evaluate = ts.config
        if not _has_method(mt.md, "test_step"):
            raise NotImplementedError("evaluate() of a model with its own train_step, no test_step and no "
                                      "compiled loss")
        if mt.md.graph.from_keras.custom_step_failed or e.steps is not None:
            raise NotImplementedError("its test_step is not translated" if e.steps is None else
                                      "evaluate(steps=...) with the model's own test_step")
        in_layouts, out_layouts = self._io(mt)
        self.needs |= {"evaluate_test_step", "loader"}
        args = [ts.model, self.model_inputs_expr(e.x, in_layouts, mt)]
        if e.y is not None:
            args.append(self.targets_expr(e.y, mt, out_layouts))
        kw = {"batch_size": e.batch_size}
        if e.return_dict:
            kw["return_dict"] = True
        return [f"evaluate_test_step({', '.join(args + [f'{k}={_arg_text(v)}' for k, v in kw.items()])})"]

    def predict_lines(self, ts: T.TrainingStatement, mt: ModelTraining) -> list[str]:
        p: T.Predict = ts.config
        data_utils.refuse_loader(self.program, p.x.text, ts, "predict")
        feature = dataset_features.predict_data(self, p.x, ts)
        if feature is not None:  # (a tf.data pipeline of feature columns: its inputs, in its batches)
            p = dataclasses.replace(p, x=feature[0], batch_size=feature[1])
        elif (arrays := predict_data.pipeline_inputs(self, p.x, ts)) is not None:
            p = dataclasses.replace(p, x=arrays[0], batch_size=arrays[1])  # (a tf.data pipeline of arrays)
        in_layouts, out_layouts = self._io(mt)
        self.needs.add("predict")
        call = f"predict({ts.model}, {self.model_inputs_expr(p.x, in_layouts, mt)}"
        if p.batch_size != 32:
            call += f", batch_size={p.batch_size.text if isinstance(p.batch_size, T.Code) else lit(p.batch_size)}"
        call += ")"
        if len(out_layouts) == 1:
            return [_from_layout(call, out_layouts[0])]
        if any(lay and is_channels_first(lay) for lay in out_layouts):
            perms = [Layout(lay, channels_last_of(lay)).perm if lay and is_channels_first(lay) else None
                     for lay in out_layouts]  # each output back to Keras' channels-last layout
            call = f"[out if perm is None else np.transpose(out, perm) for out, perm in zip({call}, {lit(perms)})]"
        keys = mt.md.graph.from_keras.output_keys if mt.md else None
        if keys:  # outputs={"a": ..., "b": ...}: Keras' predict returns a dict too
            return [f"dict(zip({lit(tuple(keys))}, {call}))"]
        return [call]

    def save_lines(self, ts: T.TrainingStatement) -> list[str]:
        s: T.Save = ts.config
        path = _pt_path(s.path.text)
        if s.load:
            return [f"{ts.model}.load_state_dict(torch.load({path}, weights_only=True))"]
        return [f"torch.save({ts.model}.state_dict(), {path})"]

    def fit_function(self, f: T.Fit) -> str:
        """The name of a generated ``fit`` with this call's callbacks as loop code."""
        key = repr([(c.kind, sorted(c.params.items())) for c in f.callbacks if c.kind not in OBJECT_CALLBACKS])
        if key not in self.fit_variants:
            name = "fit" if not self.fit_variants else f"fit_{len(self.fit_variants) + 1}"
            self.fit_variants[key] = name
            self.needs.add(("fit", name, key))
            self._fit_callbacks = getattr(self, "_fit_callbacks", {})
            self._fit_callbacks[name] = [c for c in f.callbacks if c.kind not in OBJECT_CALLBACKS]
        if f.validation_split or f.validation_data is not None:
            self.needs.add("evaluate")  # validation runs evaluate() after each epoch
        return self.fit_variants[key]


def _has_method(md: ModelDef | None, name: str) -> bool:
    """Whether the model's module has its own ``name`` (train_step, test_step): the source's,
    or Keras' default one written out around the model's own compute_loss."""
    step = md.graph.from_keras.custom_step if md is not None else {}
    return any(n == name for n, _text in step.get("methods", ())) or name in step.get("default_steps", ())


def _no_builtin_loss(name: str, logits: bool) -> str:
    raise NotImplementedError(f"keras.losses.{name} outside compile()")

