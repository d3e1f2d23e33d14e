"""The framework-neutral training configuration of a program.

What ``model.compile``/``fit``/``evaluate``/``predict``/``save`` say, in unified
terms that both directions can print: optimizers with one spelling per
hyperparameter (``beta_1``, ``epsilon``, ``weight_decay`` is always decoupled,
``rho`` is RMSprop's moving-average factor), losses with ``from_logits``, metrics,
schedules stepped per optimizer step, and callbacks. Runtime data (``x_train``) is
kept as source code (``Code``); values known statically are plain Python values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.ir.graph import Span


@dataclass(frozen=True)
class Code:
    """A piece of the user's source kept as an expression (runtime data, variables)."""

    text: str


#: Keras 3 defaults per optimizer, in unified names (the source of truth for printers).
OPTIMIZER_DEFAULTS: dict[str, dict[str, Any]] = {
    "adam": {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False,
             "weight_decay": None},
    "adamw": {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False,
              "weight_decay": 0.004},
    "sgd": {"learning_rate": 0.01, "momentum": 0.0, "nesterov": False, "weight_decay": None},
    "rmsprop": {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0, "epsilon": 1e-7, "centered": False,
                "weight_decay": None},
    "adagrad": {"learning_rate": 0.001, "initial_accumulator_value": 0.1, "epsilon": 1e-7,
                "weight_decay": None},
    "adadelta": {"learning_rate": 0.001, "rho": 0.95, "epsilon": 1e-7, "weight_decay": None},
    "adamax": {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "weight_decay": None},
    "nadam": {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "weight_decay": None},
}
CLIP_KEYS = ("clipnorm", "clipvalue", "global_clipnorm")

#: canonical loss names; the value says what the targets look like.
LOSSES = {
    "sparse_categorical_crossentropy": "class indices",
    "categorical_crossentropy": "one-hot / probabilities",
    "binary_crossentropy": "0/1 targets",
    "mean_squared_error": "values",
    "mean_absolute_error": "values",
    "huber": "values",
    "kl_divergence": "probabilities",
    "hinge": "-1/1 (or 0/1) targets",
    "cosine_similarity": "vectors",
}

SCHEDULES = ("exponential_decay", "cosine_decay", "piecewise_constant_decay", "inverse_time_decay")
CALLBACKS = ("early_stopping", "model_checkpoint", "reduce_lr_on_plateau", "learning_rate_scheduler",
             "csv_logger", "tensorboard")


@dataclass
class Schedule:
    """A learning-rate schedule, evaluated at the optimizer step (0-based)."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Optimizer:
    kind: str
    hyper: dict[str, Any] = field(default_factory=dict)
    schedule: Schedule | None = None
    clip: dict[str, float] = field(default_factory=dict)

    @property
    def learning_rate(self) -> Any:
        return self.hyper["learning_rate"]


@dataclass
class Loss:
    kind: str
    from_logits: bool = False
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Callback:
    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    span: Span | None = None


@dataclass
class Compile:
    """``model.compile(...)``: losses and metrics per output (a single entry for one output)."""

    optimizer: Optimizer
    losses: list[Loss]
    loss_weights: list[float] | None = None
    metrics: list[list[str]] = field(default_factory=list)


@dataclass
class Fit:
    x: Code
    y: Code | None = None
    batch_size: Any = 32
    epochs: Any = 1
    verbose: Any = "auto"
    validation_split: Any = 0.0
    validation_data: Code | None = None
    shuffle: Any = True
    class_weight: Code | None = None
    sample_weight: Code | None = None
    initial_epoch: Any = 0
    steps_per_epoch: Any = None
    callbacks: list[Callback] = field(default_factory=list)


@dataclass
class Evaluate:
    x: Code
    y: Code | None = None
    batch_size: Any = 32
    verbose: Any = "auto"
    return_dict: bool = False


@dataclass
class Predict:
    x: Code
    batch_size: Any = 32


@dataclass
class Save:
    """``save``/``save_weights`` (``weights_only``) or ``load_weights``/``load_model`` (``load``)."""

    path: Code
    weights_only: bool = False
    load: bool = False


@dataclass
class TrainingStatement:
    """One statement of the training program, recognised in place.

    ``stmt`` identifies the source statement (the printer replaces it), ``model`` is
    the variable holding the model, ``target`` the assignment target's source text.
    """

    kind: str
    model: str
    config: Any
    span: Span | None = None
    stmt: int | None = None
    target: str | None = None
    builder: str | None = None  # set when the statement sits inside a builder function
    model_def: Any = None  # the ir.program.ModelDef the model variable holds
    call: int | None = None  # identifies the call expression itself (it may sit inside another)
    source: str = ""  # the call's source text (to rewrite it where it is nested in another call)
