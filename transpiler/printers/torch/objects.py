"""compile()'s objects in Keras → PyTorch programs: optimizers (torch's own with Keras'
hyperparameters, the differences reported; Keras-exact classes under --exact), learning-rate schedules, losses and metrics. The helper
functions and classes they name are copied from transpiler/runtime/torch/ (losses.py,
metrics.py, optimizers.py, keras_exact.py) through printers/runtime_source.py.

``CompiledObjects`` is a part of ``TrainingPrinter`` (printers/torch/training.py): it reads
and fills the printer's ``needs``, ``loss_fns``, ``metric_fns`` and ``optimizer_classes``.
"""

from __future__ import annotations

import libcst as cst

from transpiler import cst_fast
from transpiler.ir import training as T
from transpiler.ir.training import CROSS_ENTROPY, SPARSE_SENSITIVE_OPTIMIZERS  # noqa: F401
from transpiler.printers import differences, runtime_source
from transpiler.printers.torch import keras_exact
from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.printers.code import comment_text, docstring, lit


#: runtime modules (transpiler/runtime/torch/) the helpers are copied from
LOSSES, METRICS, TRAINING = "torch.losses", "torch.metrics", "torch.training"
CALLBACKS = "torch.callbacks"
METRIC_AS_LOSS = {"mean_absolute_error", "mean_squared_error", "mean_absolute_percentage_error",
                  "mean_squared_logarithmic_error"}
#: metrics with a state over the epoch (confusion counts): objects fit()/evaluate() update
#: batch by batch (runtime/torch/metrics.py); ``logits`` variants apply the sigmoid the
#: model's output skipped
STATEFUL_CLASSES = {"auc": "AUC", "precision": "Precision", "recall": "Recall",
                    "root_mean_squared_error": "RootMeanSquaredError", "true_positives": "TruePositives",
                    "false_positives": "FalsePositives", "true_negatives": "TrueNegatives",
                    "false_negatives": "FalseNegatives"}

#: callbacks whose objects go to the generated fit() (it calls their hooks)
OBJECT_CALLBACKS = ("lambda_callback", "custom")
#: loop-code callbacks that stop training through model.stop_training
STOPPING_CALLBACKS = ("terminate_on_nan",)

OPTIMIZER_CLASSES = {"adam": "Adam", "adamw": "AdamW", "sgd": "SGD", "rmsprop": "RMSprop",
                     "adagrad": "Adagrad", "adadelta": "Adadelta", "adamax": "Adamax", "nadam": "NAdam"}


def resolve_metric(name: str, loss: T.Loss) -> str:
    """Keras' ``"accuracy"`` means the accuracy that fits the loss."""
    if name != "accuracy":
        return name
    return {"sparse_categorical_crossentropy": "sparse_categorical_accuracy",
            "categorical_crossentropy": "categorical_accuracy",
            "binary_crossentropy": "binary_accuracy"}.get(loss.kind, "accuracy")


EMBEDDING_SLICES_NOTE = [
    "# Keras' TensorFlow backend feeds this optimizer one Embedding gradient slice per token",
    "# occurrence (repeats not summed first); torch uses the summed gradient",
]

#: per-sample accuracies a metric object of a custom loop may wrap (they rank logits and
#: probabilities alike)
_ACCURACIES = {"sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy",
               "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy"}


class CompiledObjects:
    """Optimizer, schedule, loss and metric expressions of a TrainingPrinter."""

    def optimizer_expr(self, model: str, opt: T.Optimizer) -> str:
        h = opt.hyper
        kind = opt.kind
        cls = OPTIMIZER_CLASSES[kind]
        args = [f"{model}.parameters()", f"lr={lit(float(h['learning_rate']))}"]
        if "beta_1" in h:
            args.append(f"betas=({lit(float(h['beta_1']))}, {lit(float(h['beta_2']))})")
        if kind == "rmsprop":
            args.append(f"alpha={lit(float(h['rho']))}")
        if kind == "adadelta":
            args.append(f"rho={lit(float(h['rho']))}")
        if "epsilon" in h:
            args.append(f"eps={lit(float(h['epsilon']))}")
        if h.get("momentum"):
            args.append(f"momentum={lit(float(h['momentum']))}")
        if h.get("nesterov"):
            args.append("nesterov=True")
        if h.get("centered"):
            args.append("centered=True")
        if h.get("amsgrad"):
            args.append("amsgrad=True")
        if kind == "adagrad":
            args.append(f"initial_accumulator_value={lit(float(h['initial_accumulator_value']))}")
        wd = h.get("weight_decay")
        if kind == "adam" and wd:
            cls = "AdamW"  # Keras' weight decay is decoupled, as in AdamW
        if wd or kind == "adamw":
            args.append(f"weight_decay={lit(float(wd or 0.0))}")
        if kind == "nadam":
            args.append("momentum_decay=1.0")  # Keras' Nadam: mu_t = beta_1 (1 - 0.5 * 0.96 ** t)
        if self.keras_exact and kind in keras_exact.EXACT_OPTIMIZERS:
            name = "AdamW" if cls == "AdamW" else keras_exact.EXACT_OPTIMIZERS[kind]
            return self._keras_exact_optimizer(kind, name, args)
        if cls in ("Adam", "AdamW", "RMSprop"):  # torch's own: what it computes otherwise is reported
            differences.record(self.program, differences.TO_PYTORCH,
                               "rmsprop_epsilon" if cls == "RMSprop" else "adam_epsilon")
        return f"torch.optim.{cls}({', '.join(args)})"

    def _keras_exact_optimizer(self, kind: str, name: str, args: list[str]) -> str:
        """``Keras<name>(...)``, a class that updates as Keras' TensorFlow backend does (the
        program asked for --exact; see printers/torch/keras_exact.py), with its base."""
        self.optimizer_classes["KerasOptimizer"] = runtime_source.source(keras_exact.RUNTIME, "KerasOptimizer")
        stem = "Adam" if name == "AdamW" else name  # AdamW: Adam's class, renamed
        self.optimizer_classes[f"Keras{name}"] = runtime_source.source(
            keras_exact.RUNTIME, f"Keras{stem}", {f"Keras{stem}": f"Keras{name}", stem: name})
        args = [a.replace("alpha=", "rho=") for a in args  # torch's RMSprop calls rho alpha
                if not a.startswith("momentum_decay=")]  # Keras' Nadam schedule is built in
        if name in ("Adam", "AdamW"):
            self.code.imports.add("import math")
        return f"Keras{name}({', '.join(args)})"

    def schedule_lambda(self, s: T.Schedule) -> str:
        p = s.params
        if s.kind == "custom":  # the script's own schedule object: the rate itself (base rate 1)
            self.code.imports.add("import torch")
            return f"lambda step: float({p['code']}(torch.tensor(step)))"
        init = float(p["initial_learning_rate"])
        if s.kind in ("exponential_decay", "inverse_time_decay"):
            ratio = f"step // {p['decay_steps']}" if p.get("staircase") else f"step / {p['decay_steps']}"
            if s.kind == "exponential_decay":
                return f"lambda step: {lit(float(p['decay_rate']))} ** ({ratio})"
            return f"lambda step: 1 / (1 + {lit(float(p['decay_rate']))} * ({ratio}))"
        if s.kind == "cosine_decay":
            self.code.imports.add("import math")
            steps, alpha = p["decay_steps"], float(p.get("alpha", 0.0))
            cos = f"0.5 * (1 + math.cos(math.pi * min(step, {steps}) / {steps}))"
            return f"lambda step: (1 - {lit(alpha)}) * {cos} + {lit(alpha)}"
        values = [float(v) / init for v in p["values"]]
        return f"lambda step: {lit(values)}[sum(step > b for b in {lit(list(p['boundaries']))})]"

    def initializer_lines(self, ts: T.TrainingStatement) -> list[str]:
        """``kernel_init = keras.initializers.RandomNormal(mean=0.0, stddev=0.02)``: the layers
        built with it draw their weights that way in their module's ``reset_parameters``; the
        name becomes the torch initializer function that draws the same (a builder's default
        ``kernel_initializer=kernel_init`` still names something), None for one torch has no
        function for (a comment says so)."""
        from transpiler.printers.torch.ops import _INIT, _drawn  # (the layers' own init lines)

        init = ts.config
        shown = repr(init)
        line = _drawn(init, "tensor")
        if line is None and not set(init.params) - {"seed"}:
            line = _INIT.get(init.snake_name(), None)
            line = line.format(t="tensor") if line else None
        if line is None:
            return [comment_text(f"# {shown}: the modules built with it initialise their weights "
                                 "in reset_parameters"), f"{ts.model} = None"]
        return [f"def {ts.model}(tensor):", f"    {docstring(shown + ' as a torch initializer', '    ')}",
                f"    return {line}"]

    def custom_code_lines(self, ts: T.TrainingStatement) -> list[str]:
        """The script's own loss/metric function or Loss subclass, its body in torch."""
        cc: T.CustomCode = ts.config
        if cc.kind == "optimizer_class":  # (only methods Keras 3 never calls: frontend training.py)
            head = " ".join(cc.source.lstrip().split("\n", 1)[0].split())
            return [comment_text(f"# {head}"),
                    "# Keras 3 never calls the methods it overrides (Keras 2's optimizer API): it trains",
                    "# as its base class (the torch optimizer is made where the script uses it)"]
        node = cst.parse_module(cc.source).body[0]
        aliases = torch_loss_functions.module_aliases(cst_fast.parse(self.program.source))
        try:
            new, uses_f = torch_loss_functions.translate_function(
                node, aliases, lambda name, logits: self.loss_name(T.Loss(name, logits), False))
        except torch_loss_functions.Untranslatable as exc:
            raise NotImplementedError(f"{cc.name}: {exc} has no torch translation yet") from None
        if uses_f:
            self.needs.add("F")
        self.needs.add("custom_loss")
        if cc.kind == "schedule_class":  # (its __call__ reads a step tensor, as Keras passes)
            self.needs.add("schedule_class")
            bases = [b.with_changes(value=cst.Name("LearningRateSchedule")) if torch_loss_functions.canonical(
                torch_loss_functions.resolve(b.value, aliases) or "").endswith(".LearningRateSchedule") else b
                for b in new.bases]
            new = new.with_changes(bases=bases)
        if cc.kind == "loss_class":
            self.needs.add("loss_class")
            bases = [b.with_changes(value=cst.Name("Loss")) if torch_loss_functions.canonical(
                torch_loss_functions.resolve(b.value, aliases) or "") in ("losses.Loss", "losses.loss.Loss") else b
                for b in new.bases]
            new = new.with_changes(bases=bases)
        return cst.Module([]).code_for_node(new).rstrip("\n").split("\n")

    def loss_name(self, loss: T.Loss, logits: bool) -> str:
        kind = loss.kind
        if kind == "custom":  # the script's own function or Loss object, Keras' (y_true, y_pred) order
            self.needs.add("custom_loss")
            return f"keras_loss({loss.params.get('code') or loss.params.get('function') or loss.params['class']})"
        from_logits = loss.from_logits or logits
        key = (kind, from_logits if kind in CROSS_ENTROPY else False)
        name = kind if (kind not in CROSS_ENTROPY or key[1]) else f"{kind}_from_probs"
        if not runtime_source.defines(LOSSES, name):
            raise NotImplementedError(f"loss {kind}")
        self.loss_fns[key] = runtime_source.source(LOSSES, name)
        self.needs.add("F")
        expr = name
        if kind == "huber" and loss.params.get("delta", 1.0) != 1.0:
            self.code.imports.add("import functools")
            expr = f"functools.partial(huber, delta={lit(float(loss.params['delta']))})"
        if loss.params.get("label_smoothing"):
            smoothed = f"{name}_smoothed"
            self.loss_fns[(smoothed, False)] = runtime_source.source(
                LOSSES, f"{kind}_smoothed", {f"{kind}_smoothed": smoothed, kind: name})
            self.code.imports.add("import functools")
            expr = f"functools.partial({smoothed}, label_smoothing={lit(float(loss.params['label_smoothing']))})"
        reduction = loss.reduction
        wrapper = f"keras_{reduction}_reduction"
        if reduction in ("sum", "none"):  # Keras' reductions other than the batch mean
            self.loss_fns[(wrapper, False)] = runtime_source.source(LOSSES, wrapper)
            expr = f"{wrapper}({expr})"
        return expr

    def metric_object_expr(self, name: str, label: str | None) -> str:
        """A metric object a custom loop updates itself: ``Mean`` (Keras' running mean), or a
        ``MeanMetricWrapper`` of an accuracy's per-sample function (``update_state(y_true,
        y_pred)``, ``result()``, ``reset_state()`` as in Keras). Metrics of values (mae, ...)
        would see the logits where the model's final activation moved into a loss: not
        translated here, nor the stateful ones (AUC, ...)."""
        self.needs.add("mean_metric")
        if name == "mean":
            return f"Mean(name={lit(label)})" if label else "Mean()"
        canonical, _, named = name.partition("@")
        base = canonical.partition("(")[0]
        if base not in _ACCURACIES:
            raise NotImplementedError(f"the metric object {base} in a custom loop (accuracies and Mean are "
                                      "translated)")
        fn = self.metric_fn(canonical, T.Loss("mean_squared_error"), None)  # (explicit kinds: no loss read)
        self.needs.add("metric_wrapper")
        return f"MeanMetricWrapper({fn}, name={lit(named or base)})"

    def metric_fn(self, name: str, loss: T.Loss, logits: bool | str | None) -> str:
        """The metric's function (or stateful object) in fit's metrics list; ``logits``: the
        final activation ("sigmoid"/"softmax") the model's output skips for the loss, if any.
        Metrics of values (mae, mse, the script's own) get the probabilities back, as in Keras;
        accuracies rank the logits alike; the stateful ones apply the sigmoid themselves."""
        if logits in ("sigmoid", "softmax") and (name.startswith("custom:") or name in METRIC_AS_LOSS):
            fn = self.metric_fn(name, loss, None)
            if logits == "softmax":
                self.needs.add("F")
            probabilities = "torch.sigmoid(output)" if logits == "sigmoid" else "F.softmax(output, dim=-1)"
            return f"lambda output, target: {fn}({probabilities}, target)"
        if name.startswith("custom:"):
            self.needs.add("custom_loss")
            return f"keras_metric({name[len('custom:'):]})"
        name, paren, settings = name.partition("(")  # "top_k_categorical_accuracy(k=2)": a metric object's
        if paren:
            return f"lambda output, target: {self.metric_fn(name, loss, logits)}(output, target, {settings[:-1]})"
        name = resolve_metric(name, loss)
        if name in STATEFUL_CLASSES:
            cls = STATEFUL_CLASSES[name]
            copier = self.__dict__.setdefault("_metric_copier", runtime_source.Copier())  # (a base once)
            for text in copier.take(METRICS, cls):  # (nothing when this program holds it already)
                defined = text.split()[1].split("(")[0].rstrip(":")
                # a base keyed "_Name": printed before the metrics (keyed by snake_case names)
                self.metric_fns[(name, "class") if defined == cls else ("_" + defined, "class")] = text
            self.features.add("stateful")
            if logits == "softmax":  # (the probabilities back, over the last axis, as Keras reads them)
                return f'{cls}(from_logits="softmax")'
            return f"{cls}(from_logits=True)" if logits else f"{cls}()"
        if name in METRIC_AS_LOSS:
            self.loss_fns[(name, False)] = runtime_source.source(LOSSES, name)
            return name
        key = (name, bool(loss.from_logits or logits) if name == "binary_accuracy" else None)
        variant = f"{name}_from_logits" if key[1] else name  # copied under the Keras name
        if not runtime_source.defines(METRICS, variant):
            raise KeyError(name)
        self.metric_fns[key] = runtime_source.source(METRICS, variant, {variant: name})
        return name
