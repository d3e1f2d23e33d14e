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
    """A piece of the user's source kept as an expression (runtime data, variables).

    ``ref`` identifies the source expression (its stable id, ``ir.source_file.NodeId``) when a printer
    must render it through the rewrites recorded for it (PyTorch data code becomes numpy).
    """

    text: str
    ref: Any = field(default=None, compare=False)


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
    "mean_squared_logarithmic_error": "values (> -1)",
    "mean_absolute_percentage_error": "values",
    "poisson": "counts (the outputs are rates)",
    "log_cosh": "values",
    "nll": "class indices (the outputs are log-probabilities)",
}

#: losses whose target holds class indices: it has no class axis, and the output's class axis
#: is the last one in Keras (a channels-last output already has it there: not permuted back)
CLASS_INDEX_LOSSES = frozenset(kind for kind, target in LOSSES.items() if target.startswith("class indices"))

#: cross-entropy losses and the probabilities they read (the ops table's ``probabilities``):
#: a model output made by such an op may hand the loss its logits instead
CROSS_ENTROPY = {"sparse_categorical_crossentropy": "categorical", "categorical_crossentropy": "categorical",
                 "binary_crossentropy": "binary"}

#: optimizers whose update is not linear in the gradient: Keras' TensorFlow backend feeds them
#: an Embedding table's gradient as IndexedSlices (one slice per token occurrence), so a
#: token repeated in a batch moves differently than under the summed gradient torch uses
#: (checked for each: tests/test_training_equivalence.py, _EMBEDDING_ADAPTIVE)
SPARSE_SENSITIVE_OPTIMIZERS = ("adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam")

#: ``Loss.reduction`` values: how the per-sample values become the batch loss. "none" (a Keras
#: loss under compile()): the gradient is the batch sum's, the logged loss the mean;
#: "mean_with_sample_weight": the weighted sum over the sum of the sample weights.
LOSS_REDUCTIONS = ("mean", "sum", "none", "mean_with_sample_weight")

SCHEDULES = ("exponential_decay", "cosine_decay", "piecewise_constant_decay", "inverse_time_decay",
             "cosine_annealing", "lambda")
CALLBACKS = ("early_stopping", "model_checkpoint", "reduce_lr_on_plateau", "learning_rate_scheduler",
             "csv_logger", "tensorboard", "terminate_on_nan", "progbar_logger", "history",
             # objects whose hooks fit() calls: params "code" (the expression that makes the
             # object) and, for the script's own Callback subclasses, "class" and "hooks"
             "lambda_callback", "custom")


@dataclass
class Schedule:
    """A learning-rate schedule, evaluated at the optimizer step (0-based), or at the
    epoch (0-based) when ``per == "epoch"`` (a rate that changes only between epochs).

    ``cosine_annealing`` (``initial_learning_rate``, ``t_max``, ``eta_min``): eta_min +
    (initial - eta_min) * (1 + cos(pi * t / t_max)) / 2, periodic past t_max (unlike
    ``cosine_decay``, which stays at its floor). ``lambda`` (``initial_learning_rate``,
    ``factor``: a ``Code`` function of t): initial * factor(t).
    """

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    #: ``"step"``, ``"epoch"``, or ``"manual"``: stepped by the program's own code (a torch
    #: scheduler's ``step()`` in a custom loop), t = the number of steps so far; it sets
    #: the rate of the optimizer bound to ``optimizer``
    per: str = "step"
    optimizer: str | None = None


@dataclass
class KerasVariables:
    """Some of a model's Keras variables (a torch parameter group): ``(layer name, index in
    layer.weights)`` each; ``text`` is the name of the list holding them in the program (or
    None), ``model`` the model's variable."""

    text: str | None
    model: str
    variables: list[tuple[str, int]]


@dataclass
class Optimizer:
    """An optimizer in unified names (``hyper``), with the variants of the algorithms
    that frameworks spell the same but compute differently (all False/0 is Keras' form):

    ``l2``: ``l2 * param`` added to the gradient before the update (a coupled L2
    penalty, what torch's ``weight_decay`` is for every optimizer but AdamW), as opposed
    to the decoupled ``hyper["weight_decay"]``. ``momentum_on_gradients`` (SGD): the
    momentum buffer sums raw gradients and the rate scales each step (b = m*b + g; p -=
    lr*b) instead of summing rate-scaled steps; equal for a constant rate.
    ``epsilon_after_bias_correction`` (Adam family): epsilon is added to sqrt(v_hat)
    after the bias correction, not to sqrt(v) before it. ``epsilon_outside_sqrt``
    (RMSprop): the denominator is sqrt(v) + epsilon, not sqrt(v + epsilon).
    """

    kind: str
    hyper: dict[str, Any] = field(default_factory=dict)
    schedule: Schedule | None = None
    clip: dict[str, float] = field(default_factory=dict)
    l2: float = 0.0
    momentum_on_gradients: bool = False
    epsilon_after_bias_correction: bool = False
    epsilon_outside_sqrt: bool = False
    #: torch parameter groups with weight_decay=0 (AdamW): the Keras variables to exclude
    no_weight_decay: "KerasVariables | None" = None
    #: torch parameter groups with their own learning rate: (variables, group lr / lr)
    group_learning_rates: list = field(default_factory=list)
    #: why some variables step at their own rate, when it is not the program's parameter groups
    rate_note: str | None = None
    #: the program's own list of parameter groups, built when it runs (its source node's id:
    #: frontend_ast/torch/runtime_params.py); None: none
    runtime_groups: Any = None

    @property
    def learning_rate(self) -> Any:
        return self.hyper["learning_rate"]


@dataclass
class Loss:
    """A loss: ``kind`` (``LOSSES``), ``from_logits``, ``params`` (``delta``,
    ``label_smoothing``, ``log_input`` for a KL divergence read from log-probabilities),
    and ``reduction`` of the per-sample values: ``"mean"`` over the batch (Keras'
    sum_over_batch_size; torch's "mean" for losses that are one number per sample or
    averaged over the last axis) or ``"sum"`` over the batch."""

    kind: str
    from_logits: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    reduction: str = "mean"


@dataclass
class LossCall:
    """A loss function applied to tensors outside a model's methods
    (``keras.losses.sparse_categorical_crossentropy(labels, preds)``): its per-sample
    values, ``y_true`` and ``y_pred`` as source code."""

    loss: Loss
    y_true: Code
    y_pred: Code


@dataclass
class CustomCode:
    """A loss or metric the script defines itself: a function ``(y_true, y_pred)`` or a
    ``keras.losses.Loss`` subclass (``kind`` "function" / "loss_class"). ``source`` is its
    definition; a printer translates the body. A ``Loss`` of kind "custom" names it in
    ``params["function"]``/``params["class"]`` with ``params["code"]``, the expression that
    makes the loss where ``compile`` is; a custom metric is the string ``"custom:<name>"``."""

    name: str
    kind: str
    source: str


@dataclass
class Callback:
    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    span: Span | None = None
    var: str | None = None  # the variable the script bound the callback object to, if any


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
    validation_steps: Any = None
    validation_batch_size: Any = None
    validation_freq: Any = 1  # an int (every n epochs) or a list of 1-based epochs


@dataclass
class Evaluate:
    x: Code
    y: Code | None = None
    batch_size: Any = 32
    verbose: Any = "auto"
    return_dict: bool = False
    steps: Any = None


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
    the variable holding the model, ``target`` the assignment target's source text. From the
    Keras reader ``stmt`` and ``call`` are stable ids (``ir.source_file.NodeId``); the torch
    reader keys its facts by the stable id of the node each replaces (``call``).
    """

    kind: str
    model: str
    config: Any
    span: Span | None = None
    stmt: Any = None
    target: str | None = None
    builder: str | None = None  # set when the statement sits inside a builder function
    model_def: Any = None  # the ir.program.ModelDef the model variable holds
    call: Any = None  # identifies the call expression itself (it may sit inside another)
    source: str = ""  # the call's source text (to rewrite it where it is nested in another call)


@dataclass
class TrainingLoop:
    """A hand-written training loop recognised as a whole: ``for epoch ...: for batch in
    loader: zero_grad; loss = loss_fn(model(x), y); backward; step`` (the usual shape).

    ``compile``/``fit`` say how and on what the model trains (``fit.x``/``fit.y`` and
    ``validation`` are the arrays, as ``Code``); ``model``, ``optimizer``, ``loss`` and
    ``callbacks`` name the program's variables (an optimizer, loss or scheduler object
    is a statement of its own); ``early_stopping`` is a callback the loop's own code
    implemented; ``after`` maps the loop's variables that later code reads to what they
    hold: ``"best_val_loss"`` (the lowest validation loss) or ``"best_weights"`` (the
    weights of the best epoch). ``absorbed`` says in words what the loop did besides
    training (running sums, evaluation, prints) that the target's fit reports itself.
    """

    compile: Compile
    fit: Fit
    model: str
    optimizer: str
    loss: str | None
    validation: tuple[Code, Code] | None = None
    callbacks: list[str] = field(default_factory=list)
    early_stopping: Callback | None = None
    after: dict[str, str] = field(default_factory=dict)
    absorbed: list[str] = field(default_factory=list)


@dataclass
class ArrayExpr:
    """Array (data) code outside the model: ``template`` with ``{0}``, ``{1}``... standing for
    the source expressions ``parts`` (their stable ids, ``ir.source_file.NodeId``) as the
    printer renders them (they may hold rewrites of their own), and the array functions it
    calls marked ``$name(`` (ir/array_functions.py), which the printer spells in the target's
    way. With ``tensors`` the code is a training step's math on the target's tensors and its
    marks name tensor functions (ir/tensor_functions.py) instead."""

    template: str
    parts: tuple = ()
    tensors: bool = False


@dataclass(frozen=True)
class OwnMethod:
    """One method of a model's own training step (Keras' custom-step pattern written in torch:
    ``train_step``, ``test_step``, a ``metrics`` property), as the torch reader read it.

    ``template``: the method's code with its tensor math named as marks (``$mean(``,
    ``$losses.huber(``: ir/tensor_functions.py), which the printer spells. ``tape``: for a
    gradient step, the indices among the method's top-level statements of ``zero_grad()``,
    ``<loss>.backward()`` and ``optimizer.step()`` (kept as written): the statements between
    the first two compute the loss under the gradient recording, the second is the gradient
    of its receiver, the third applies the gradients. The target's spelling of that (a tape,
    ``apply_gradients``) is the printer's."""

    name: str
    template: str
    tape: tuple[int, int, int] | None = None


@dataclass
class OwnStep:
    """A model's own training step (``graph.from_torch.own_step``): its methods in the class's
    order and its mean trackers (attribute → the tracker's constructor arguments as written:
    ``name="loss"``). ``recognised``: the script's helper names these methods used, for the
    reader to drop the helpers (syntax nodes, taken out by the reader before printing)."""

    methods: list[OwnMethod]
    trackers: list[tuple[str, str]] = field(default_factory=list)
    recognised: list = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.methods]
