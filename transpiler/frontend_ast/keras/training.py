"""Keras training API → the framework-neutral training configuration (ir.training).

Optimizers, losses, metrics, schedules and callbacks are recognised from their
strings or constructor calls (``"adam"``, ``keras.optimizers.Adam(lr=1e-3)``, legacy
argument names included) and normalised to the unified spelling of ``ir.training``.
``model.compile/fit/evaluate/predict/save*`` calls become ``TrainingStatement``s;
arguments that are runtime data stay source code (``Code``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.ir import training as T

#: Keras' class names and strings → canonical optimizer kinds
OPTIMIZER_NAMES = {
    "adam": "adam", "Adam": "adam", "adamw": "adamw", "AdamW": "adamw", "sgd": "sgd", "SGD": "sgd",
    "rmsprop": "rmsprop", "RMSprop": "rmsprop", "adagrad": "adagrad", "Adagrad": "adagrad",
    "adadelta": "adadelta", "Adadelta": "adadelta", "adamax": "adamax", "Adamax": "adamax",
    "nadam": "nadam", "Nadam": "nadam",
}
#: legacy or alternative argument names → unified ones
OPTIMIZER_ARG_ALIASES = {"lr": "learning_rate", "decay_rate": "rho", "eps": "epsilon"}
OPTIMIZER_POSITIONAL = ("learning_rate",)

LOSS_NAMES = {
    "sparse_categorical_crossentropy": "sparse_categorical_crossentropy",
    "SparseCategoricalCrossentropy": "sparse_categorical_crossentropy",
    "categorical_crossentropy": "categorical_crossentropy",
    "CategoricalCrossentropy": "categorical_crossentropy",
    "binary_crossentropy": "binary_crossentropy", "BinaryCrossentropy": "binary_crossentropy",
    "mse": "mean_squared_error", "mean_squared_error": "mean_squared_error",
    "MeanSquaredError": "mean_squared_error", "MSE": "mean_squared_error",
    "mae": "mean_absolute_error", "mean_absolute_error": "mean_absolute_error",
    "MeanAbsoluteError": "mean_absolute_error", "MAE": "mean_absolute_error",
    "huber": "huber", "Huber": "huber", "huber_loss": "huber",
    "kld": "kl_divergence", "kl_divergence": "kl_divergence", "KLDivergence": "kl_divergence",
    "kullback_leibler_divergence": "kl_divergence", "KLD": "kl_divergence",
    "hinge": "hinge", "Hinge": "hinge",
    "cosine_similarity": "cosine_similarity", "CosineSimilarity": "cosine_similarity",
    "msle": "mean_squared_logarithmic_error", "MSLE": "mean_squared_logarithmic_error",
    "mean_squared_logarithmic_error": "mean_squared_logarithmic_error",
    "MeanSquaredLogarithmicError": "mean_squared_logarithmic_error",
    "mape": "mean_absolute_percentage_error", "MAPE": "mean_absolute_percentage_error",
    "mean_absolute_percentage_error": "mean_absolute_percentage_error",
    "MeanAbsolutePercentageError": "mean_absolute_percentage_error",
    "poisson": "poisson", "Poisson": "poisson",
    "log_cosh": "log_cosh", "logcosh": "log_cosh", "LogCosh": "log_cosh",
}
METRIC_NAMES = {
    "accuracy": "accuracy", "acc": "accuracy",
    "sparse_categorical_accuracy": "sparse_categorical_accuracy",
    "SparseCategoricalAccuracy": "sparse_categorical_accuracy",
    "categorical_accuracy": "categorical_accuracy", "CategoricalAccuracy": "categorical_accuracy",
    "binary_accuracy": "binary_accuracy", "BinaryAccuracy": "binary_accuracy",
    "mae": "mean_absolute_error", "mean_absolute_error": "mean_absolute_error",
    "MeanAbsoluteError": "mean_absolute_error",
    "mse": "mean_squared_error", "mean_squared_error": "mean_squared_error",
    "MeanSquaredError": "mean_squared_error",
    "msle": "mean_squared_logarithmic_error", "mean_squared_logarithmic_error": "mean_squared_logarithmic_error",
    "MeanSquaredLogarithmicError": "mean_squared_logarithmic_error",
    "mape": "mean_absolute_percentage_error", "mean_absolute_percentage_error": "mean_absolute_percentage_error",
    "MeanAbsolutePercentageError": "mean_absolute_percentage_error",
    "top_k_categorical_accuracy": "top_k_categorical_accuracy",
    "TopKCategoricalAccuracy": "top_k_categorical_accuracy",
    "sparse_top_k_categorical_accuracy": "sparse_top_k_categorical_accuracy",
    "SparseTopKCategoricalAccuracy": "sparse_top_k_categorical_accuracy",
    # stateful (counts over the epoch); default settings only
    "AUC": "auc", "Precision": "precision", "Recall": "recall",
    "RootMeanSquaredError": "root_mean_squared_error",
    "TruePositives": "true_positives", "FalsePositives": "false_positives",
    "TrueNegatives": "true_negatives", "FalseNegatives": "false_negatives",
}
#: metric classes known but not compile()'s: Mean (a custom loop's tracker) and Accuracy
#: (exact equality, refused by metric_name)
OTHER_METRIC_CLASSES = ("Mean", "Accuracy")
#: the log key of each metric object by default (Keras: the snake-cased class name)
METRIC_DEFAULT_LABELS = {"auc": "auc", "precision": "precision", "recall": "recall",
                         "root_mean_squared_error": "root_mean_squared_error",
                         **{c: c for c in ("true_positives", "false_positives", "true_negatives", "false_negatives")}}
#: a per-sample metric object's arguments in Keras' positional order, and the settings the
#: generated function takes (``k``); any other setting only at Keras' default
METRIC_OBJECT_POSITIONAL = {"top_k_categorical_accuracy": ("k", "name", "dtype"),
                            "sparse_top_k_categorical_accuracy": ("k", "name", "dtype")}
METRIC_OBJECT_DEFAULTS = {"dtype": (None, "float32"), "threshold": (0.5,)}
SCHEDULE_NAMES = {"ExponentialDecay": "exponential_decay", "CosineDecay": "cosine_decay",
                  "PiecewiseConstantDecay": "piecewise_constant_decay",
                  "InverseTimeDecay": "inverse_time_decay"}
SCHEDULE_POSITIONAL = {
    "exponential_decay": ("initial_learning_rate", "decay_steps", "decay_rate", "staircase"),
    "cosine_decay": ("initial_learning_rate", "decay_steps", "alpha"),
    "piecewise_constant_decay": ("boundaries", "values"),
    "inverse_time_decay": ("initial_learning_rate", "decay_steps", "decay_rate", "staircase"),
}
CALLBACK_NAMES = {"EarlyStopping": "early_stopping", "ModelCheckpoint": "model_checkpoint",
                  "ReduceLROnPlateau": "reduce_lr_on_plateau",
                  "LearningRateScheduler": "learning_rate_scheduler", "CSVLogger": "csv_logger",
                  "TensorBoard": "tensorboard", "TerminateOnNaN": "terminate_on_nan",
                  "LambdaCallback": "lambda_callback", "BackupAndRestore": "backup_and_restore",
                  "RemoteMonitor": "remote_monitor", "ProgbarLogger": "progbar_logger", "History": "history",
                  "SwapEMAWeights": "swap_ema_weights"}
#: callbacks with no faithful loop equivalent: the fit() call becomes a marked stub
UNTRANSLATED_CALLBACKS = {
    "backup_and_restore": "BackupAndRestore (resuming an interrupted fit) has no translation yet",
    "remote_monitor": "RemoteMonitor (posting logs to a server) has no translation",
    "swap_ema_weights": "SwapEMAWeights needs the optimizer's EMA weights (use_ema), not translated",
}
#: callbacks that stay objects: the generated fit() calls their hooks (the user's own
#: keras.callbacks.Callback subclasses are "custom")
OBJECT_CALLBACKS = ("lambda_callback", "custom")
#: the hooks the generated fit() calls, with Keras' arguments
CALLBACK_HOOKS = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
                  "on_train_batch_end", "on_batch_begin", "on_batch_end")
CALLBACK_POSITIONAL = {
    "early_stopping": ("monitor", "min_delta", "patience", "verbose", "mode", "baseline",
                       "restore_best_weights", "start_from_epoch"),
    "model_checkpoint": ("filepath", "monitor", "verbose", "save_best_only", "save_weights_only", "mode"),
    "reduce_lr_on_plateau": ("monitor", "factor", "patience", "verbose", "mode", "min_delta", "cooldown",
                             "min_lr"),
    "learning_rate_scheduler": ("schedule", "verbose"),
    "csv_logger": ("filename", "separator", "append"),
    "tensorboard": ("log_dir",),
    "terminate_on_nan": (),
    "lambda_callback": ("on_epoch_begin", "on_epoch_end", "on_train_begin", "on_train_end",
                        "on_train_batch_begin", "on_train_batch_end"),
    "progbar_logger": (),
    "history": (),
}
CALLBACK_DEFAULTS = {
    "early_stopping": {"monitor": "val_loss", "min_delta": 0.0, "patience": 0, "mode": "auto",
                       "baseline": None, "restore_best_weights": False, "start_from_epoch": 0},
    "model_checkpoint": {"monitor": "val_loss", "save_best_only": False, "save_weights_only": False,
                         "mode": "auto"},
    "reduce_lr_on_plateau": {"monitor": "val_loss", "factor": 0.1, "patience": 10, "mode": "auto",
                             "min_delta": 1e-4, "cooldown": 0, "min_lr": 0.0},
    "learning_rate_scheduler": {},
    "csv_logger": {"separator": ",", "append": False},
    "tensorboard": {"log_dir": "logs"},
    "terminate_on_nan": {},
    "lambda_callback": {},
    "progbar_logger": {},
    "history": {},
}

TRAINING_METHODS = ("compile", "fit", "evaluate", "predict", "save", "save_weights", "load_weights",
                    "summary", "count_params", "train_on_batch", "test_on_batch")
FIT_POSITIONAL = ("x", "y", "batch_size", "epochs", "verbose", "callbacks", "validation_split",
                  "validation_data", "shuffle", "class_weight", "sample_weight", "initial_epoch",
                  "steps_per_epoch", "validation_steps", "validation_batch_size", "validation_freq")
EVALUATE_POSITIONAL = ("x", "y", "batch_size", "verbose", "sample_weight", "steps", "callbacks",
                       "return_dict")
PREDICT_POSITIONAL = ("x", "batch_size", "verbose", "steps", "callbacks")
DATA_ARGS = {"x", "y", "validation_data", "class_weight", "sample_weight"}
#: Keras' loss reductions → ir.training.Loss.reduction ("mean" is "sum_over_batch_size")
LOSS_REDUCTIONS = {"sum_over_batch_size": "mean", "auto": "mean", "mean": "mean", "sum": "sum",
                   None: "none", "none": "none", "mean_with_sample_weight": "mean_with_sample_weight"}
#: losses whose one-hot / 0-1 targets Keras can smooth (label_smoothing)
SMOOTHABLE_LOSSES = ("categorical_crossentropy", "binary_crossentropy")


@dataclass
class TrainingObj:
    """A constructed optimizer, loss, metric, schedule or callback (a Keras object)."""

    kind: str  # "optimizer" | "loss" | "metric" | "schedule" | "callback"
    name: str
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    cls: "CallbackClass | None" = None  # an instance of the script's own Callback subclass
    var: str | None = None  # the name a statement bound it to (a callback fit() may get through a parameter)
    #: the arguments whose source ends in a string literal (positions and keywords): a file
    #: name written so is renamed for torch (``.weights.h5`` → ``.pt``) at every use, one held
    #: in a variable is kept as it is, since the other uses read the variable
    literal_strings: frozenset = frozenset()


@dataclass(eq=False)
class LossClass:
    """``class MyLoss(keras.losses.Loss)``: the script's own loss class (``call`` per sample)."""

    name: str
    node: Any  # its cst.ClassDef


def _user_function(value: Any) -> str | None:
    """The name of a function the script defines (a FunctionRef), else None."""
    node = getattr(value, "node", None)
    if type(value).__name__ == "FunctionRef" and type(node).__name__ == "FunctionDef":
        return node.name.value
    return None


@dataclass(eq=False)
class CallbackClass:
    """``class MyCallback(keras.callbacks.Callback)``: the script's own callback class."""

    name: str
    node: Any  # its cst.ClassDef
    base: "CallbackClass | None" = None

    def hooks(self) -> list[str]:
        """The ``on_*`` methods it (or a base class of the script) defines."""
        own = [s.name.value for s in self.node.body.body
               if type(s).__name__ == "FunctionDef" and s.name.value.startswith("on_")]
        return sorted(set(own) | set(self.base.hooks() if self.base else ()))


def _static(value: Any, what: str) -> Any:
    if type(value).__name__ in ("Unknown", "TensorVal", "LayerObj", "ModelObj"):
        raise Unsupported(f"{what} cannot be decided statically")
    return value


def _bind(positional: tuple[str, ...], args: list, kwargs: dict, what: str) -> dict:
    if len(args) > len(positional):
        raise Unsupported(f"{what}: too many positional arguments")
    out = dict(zip(positional, args))
    out.update(kwargs)
    return out


def optimizer_config(value: Any) -> T.Optimizer:
    """An optimizer string or object → ``ir.training.Optimizer`` in unified names."""
    if isinstance(value, str):
        name, given = value, {}
    elif isinstance(value, TrainingObj) and value.kind == "optimizer":
        name, given = value.name, _bind(OPTIMIZER_POSITIONAL, value.args, value.kwargs, value.name)
    else:
        raise Unsupported(f"optimizer {value!r} is not supported")
    kind = OPTIMIZER_NAMES.get(name)
    if kind is None:
        raise Unsupported(f"optimizer {name!r} is not supported")
    defaults = T.OPTIMIZER_DEFAULTS[kind]
    hyper = dict(defaults)
    clip: dict[str, float] = {}
    schedule = None
    for key, raw in given.items():
        key = OPTIMIZER_ARG_ALIASES.get(key, key)
        if key in ("name", "jit_compile", "use_ema", "ema_momentum", "ema_overwrite_frequency",
                   "loss_scale_factor", "gradient_accumulation_steps", "decay"):
            if key == "decay" and raw:
                raise Unsupported(f"{name}(decay=...) (legacy time decay) is not supported")
            continue
        if key in T.CLIP_KEYS:
            if raw is not None:
                clip[key] = float(_static(raw, key))
            continue
        if key == "learning_rate" and isinstance(raw, TrainingObj) and raw.kind == "schedule":
            schedule = schedule_config(raw)
            hyper["learning_rate"] = schedule.params["initial_learning_rate"]
            continue
        if key not in defaults:
            raise Unsupported(f"{name}: argument {key!r} is not supported")
        hyper[key] = _static(raw, f"{name}({key}=...)")
    return T.Optimizer(kind, hyper, schedule, clip)


def schedule_config(obj: TrainingObj) -> T.Schedule:
    kind = SCHEDULE_NAMES[obj.name]
    params = _bind(SCHEDULE_POSITIONAL[kind], obj.args, obj.kwargs, obj.name)
    params = {k: _static(v, f"{obj.name}({k}=...)") for k, v in params.items() if k != "name"}
    if kind == "piecewise_constant_decay":
        params["initial_learning_rate"] = params["values"][0]
    params.setdefault("staircase", False)
    if kind == "cosine_decay":
        params.setdefault("alpha", 0.0)
        for key in ("warmup_target", "warmup_steps"):
            if params.get(key):
                raise Unsupported("CosineDecay with warmup is not supported yet")
    return T.Schedule(kind, params)


def loss_config(value: Any) -> T.Loss:
    if _user_function(value) is not None:
        return T.Loss("custom", params={"function": _user_function(value)})
    if isinstance(value, TrainingObj) and value.kind == "loss" and value.cls is not None:
        return T.Loss("custom", params={"class": value.name})
    if isinstance(value, str):
        name, kwargs = value, {}
    elif isinstance(value, TrainingObj) and value.kind == "loss":
        name, kwargs = value.name, dict(value.kwargs)
        if value.args:
            raise Unsupported(f"{name}: positional arguments are not supported")
    else:
        raise Unsupported(f"loss {value!r} is not supported")
    kind = LOSS_NAMES.get(name)
    if kind is None:
        raise Unsupported(f"loss {name!r} is not supported")
    from_logits = bool(_static(kwargs.pop("from_logits", False), "from_logits"))
    params = {}
    reduction = "mean"
    for key, raw in kwargs.items():
        if key in ("name", "dtype"):
            continue
        if key == "reduction":
            reduction = LOSS_REDUCTIONS.get(_static(raw, f"{name}(reduction=...)"), "unknown")
            if reduction == "unknown":
                raise Unsupported(f"{name}(reduction={raw!r}) is not supported")
            continue
        if key == "axis":
            if _static(raw, f"{name}(axis=...)") not in (-1, None):
                raise Unsupported(f"{name}(axis={raw!r}): only the last axis is supported")
            continue
        if key == "ignore_class" and raw is None:
            continue
        if key == "label_smoothing" and kind not in SMOOTHABLE_LOSSES:
            # Keras 3 itself rejects it (TypeError) for SparseCategoricalCrossentropy
            raise Unsupported(f"{name} takes no label_smoothing argument in Keras 3")
        if key in ("label_smoothing", "delta"):
            value = float(_static(raw, f"{name}({key}=...)"))
            if value != {"label_smoothing": 0.0, "delta": 1.0}[key]:
                params[key] = value
            continue
        raise Unsupported(f"{name}: argument {key!r} is not supported")
    return T.Loss(kind, from_logits, params, reduction)


def metric_name(value: Any) -> str:
    if _user_function(value) is not None:
        return f"custom:{_user_function(value)}"
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if name == "Accuracy" and isinstance(value, TrainingObj):
        # (the string "accuracy" is the argmax/threshold accuracy the loss implies; the class
        # counts exact equality of y_true and y_pred, near 0 on probabilities)
        raise Unsupported("keras.metrics.Accuracy() counts exactly equal values, not the accuracy the "
                          "string 'accuracy' means; not translated (use 'accuracy' or "
                          "SparseCategoricalAccuracy())")
    if name not in METRIC_NAMES:
        raise Unsupported(f"metric {value!r} is not supported")
    canonical = METRIC_NAMES[name]
    if isinstance(value, TrainingObj) and canonical not in METRIC_DEFAULT_LABELS:
        return _metric_object(value, name, canonical)
    if isinstance(value, TrainingObj) and canonical in METRIC_DEFAULT_LABELS:
        kwargs = dict(value.kwargs)
        label = kwargs.pop("name", None)
        if value.args or kwargs:
            raise Unsupported(f"keras.metrics.{name}: only its default settings (and name=) are translated, "
                              f"not {', '.join(sorted(kwargs)) or 'positional arguments'}")
        if label is not None:
            label = _static(label, f"{name}(name=...)")
            if label != METRIC_DEFAULT_LABELS[canonical]:
                return f"{canonical}@{label}"
    return canonical


def _metric_object(value: "TrainingObj", name: str, canonical: str) -> str:
    """``keras.metrics.TopKCategoricalAccuracy(k=2, name="top2")`` → ``"top_k_categorical_accuracy(k=2)@top2"``:
    the function's settings in parentheses, the log key after ``@`` (the class's default name
    unless given); a setting the function does not take (``BinaryAccuracy(threshold=0.7)``) is
    refused, not dropped."""
    positional = METRIC_OBJECT_POSITIONAL.get(canonical, ("name", "dtype"))
    given = {k: _static(v, f"{name}({k}=...)") for k, v in _bind(positional, value.args, value.kwargs, name).items()}
    label = given.pop("name", None)
    settings = {k: given.pop(k) for k in [k for k in given if k in positional and k not in ("name", "dtype")]}
    for key, raw in given.items():
        if raw not in METRIC_OBJECT_DEFAULTS.get(key, ()):
            raise Unsupported(f"keras.metrics.{name}({key}={raw!r}) is not translated (only its default)")
    text = canonical + ("(" + ", ".join(f"{k}={v!r}" for k, v in settings.items()) + ")" if settings else "")
    label = label if label is not None else _snake(name) if name[:1].isupper() else None
    return f"{text}@{label}" if label is not None else text


def _snake(name: str) -> str:
    """``TopKCategoricalAccuracy`` → ``top_k_categorical_accuracy`` (Keras' default metric names)."""
    import re

    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def callback_config(value: Any) -> T.Callback:
    if not (isinstance(value, TrainingObj) and value.kind == "callback"):
        raise Unsupported(f"callback {value!r} is not supported")
    if value.cls is not None:
        hooks = value.cls.hooks()
        unknown = [h for h in hooks if h not in CALLBACK_HOOKS]
        if unknown:
            raise Unsupported(f"{value.name}.{unknown[0]}(): the generated fit() calls only the training "
                              f"hooks ({', '.join(CALLBACK_HOOKS[:6])})")
        return T.Callback("custom", {"class": value.name, "hooks": hooks})
    kind = CALLBACK_NAMES[value.name]
    if kind in UNTRANSLATED_CALLBACKS:
        raise Unsupported(UNTRANSLATED_CALLBACKS[kind])
    params = dict(CALLBACK_DEFAULTS[kind])
    for key, raw in _bind(CALLBACK_POSITIONAL[kind], value.args, value.kwargs, value.name).items():
        if key == "schedule" or kind == "lambda_callback":
            params[key] = raw  # a user function: kept as code by the caller
            continue
        params[key] = _static(raw, f"{value.name}({key}=...)")
    if kind == "model_checkpoint" and not ({0, "filepath"} & value.literal_strings):
        params["path_as_written"] = True  # (a variable: its other uses load the same file name)
    return T.Callback(kind, params)


def compile_config(args: list, kwargs: dict, n_outputs: int, output_names: list[str],
                   custom_step: bool = False) -> T.Compile:
    """``compile(...)``'s settings; no loss gives no losses (the printer refuses fit/evaluate
    of such a model unless it has its own train_step)."""
    given = _bind(("optimizer", "loss", "loss_weights", "metrics"), args, kwargs, "compile")
    unknown = set(given) - {"optimizer", "loss", "loss_weights", "metrics", "weighted_metrics",
                            "run_eagerly", "steps_per_execution", "jit_compile", "auto_scale_loss"}
    if unknown:
        raise Unsupported(f"compile: argument(s) {', '.join(sorted(unknown))} not supported")
    optimizer = optimizer_config(given.get("optimizer", "rmsprop"))
    raw_loss = given.get("loss")  # (none: a custom loop trains the model, or its own train_step)
    losses = [] if raw_loss is None else [loss_config(v) for v in _per_output(raw_loss, n_outputs, output_names,
                                                                              "loss")]
    weights = given.get("loss_weights")
    if weights is not None:
        weights = [float(_static(w, "loss_weights")) for w in _per_output(weights, n_outputs, output_names,
                                                                          "loss_weights")]
    metrics_raw = given.get("metrics") or []
    if isinstance(metrics_raw, dict):
        per = [metrics_raw.get(name, []) for name in output_names]
        metrics = [[metric_name(m) for m in (p if isinstance(p, (list, tuple)) else [p])] for p in per]
    elif isinstance(metrics_raw, (list, tuple)) and n_outputs > 1 and len(metrics_raw) == n_outputs and \
            all(isinstance(p, (list, tuple)) for p in metrics_raw):
        metrics = [[metric_name(m) for m in p] for p in metrics_raw]  # a list per output
    else:
        names = [metric_name(m) for m in metrics_raw]
        metrics = [list(names) for _ in range(n_outputs)]
    return T.Compile(optimizer, losses, weights, metrics)


def _per_output(value: Any, n: int, names: list[str], what: str) -> list:
    if isinstance(value, dict):
        missing = [name for name in names if name not in value]
        if missing:
            raise Unsupported(f"compile({what}=...): no entry for output(s) {', '.join(missing)}")
        return [value[name] for name in names]
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise Unsupported(f"compile({what}=...): {len(value)} entries for {n} outputs")
        return list(value)
    return [value] * n
