"""The Keras reader's values (layers, tensors, models, user objects, datasets, ...) and how a
dotted path resolves to a Keras API object."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.frontend_ast.keras import data_utils
from transpiler.frontend_ast.keras import layers as keras_layers
from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
from transpiler.frontend_ast.keras import training as keras_training
from transpiler.frontend_ast.keras import zoo as keras_zoo
from transpiler.frontend_ast.interp import ClassRef, Unknown
from transpiler.frontend_ast.keras.layers import LayerSpec, Unsupported
from transpiler.ir.graph import Graph, LayerRef, Span, Value
from transpiler.ir.modules import ModuleScope
from transpiler.ir.source_file import collect_comments  # noqa: F401  (re-exported)


class FrontendError(Exception):
    """The source cannot be read as a Keras program (with a span)."""

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.span = span


# ---------------------------------------------------------------------------------
# Abstract values
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModuleRef:
    """An imported module or a dotted path inside one (``keras.layers``)."""

    path: str


#: keras.regularizers: name → (l1, l2) defaults (Keras 3: L1(0.01), L2(0.01), L1L2(0, 0))
REGULARIZERS = {"l1": (0.01, None), "L1": (0.01, None), "l2": (None, 0.01), "L2": (None, 0.01),
                "l1_l2": (0.0, 0.0), "L1L2": (0.0, 0.0)}


@dataclass(frozen=True)
class RegularizerVal:
    """``keras.regularizers.l2(0.01)``: the loss term l1 * sum(|w|) + l2 * sum(w ** 2)."""

    l1: float
    l2: float


def _regularizer(name: str, args: list, kwargs: dict) -> "RegularizerVal":
    d1, d2 = REGULARIZERS[name]
    names = [n for n, d in (("l1", d1), ("l2", d2)) if d is not None]
    values = dict(zip(names, args))
    values.update(kwargs)
    if set(values) - set(names) or len(args) > len(names):
        raise Unsupported(f"regularizers.{name}: arguments {sorted(values)} not supported")
    l1 = values.get("l1", d1 or 0.0)
    l2 = values.get("l2", d2 or 0.0)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (l1, l2)):
        raise Unsupported(f"regularizers.{name}: its factors are not known statically")
    return RegularizerVal(float(l1), float(l2))


def _regularizer_factors(value) -> tuple[float, float] | None:
    """(l1, l2) of a layer's ``*_regularizer`` argument: an object or a name (``"l2"``)."""
    if isinstance(value, RegularizerVal):
        return value.l1, value.l2
    if isinstance(value, str) and value in REGULARIZERS:
        reg = _regularizer(value, [], {})
        return reg.l1, reg.l2
    return None


@dataclass(frozen=True)
class ApiRef:
    """A resolved Keras API object: ``kind`` in layer/input/model/sequential/merge/activation.

    ``source`` is the namespace of an activation function (``ops``, ``activations``,
    ``tf.nn``, ``tf.math``): their defaults differ (``keras.ops.gelu`` approximates)."""

    kind: str
    name: str
    source: str = ""

    @property
    def activation_name(self) -> str | None:
        return self.name if self.kind == "activation" else None


@dataclass(eq=False)
class ArrayVal(Unknown):
    """Run-time data whose shape is known statically (``load_data()``, ``np.random.rand(64, 8)``,
    their reshapes, slices and batches): only its shape is used, to build a subclassed model
    on its first call. Everything else treats it as the Unknown it is."""

    shape: tuple = ()
    dtype: str | None = None
    #: the items of a 1-D array numpy computes from static numbers (``np.linspace(0, 0.1, 8)``):
    #: what iterating or indexing it gives; None for data (arithmetic on it keeps the shape only)
    values: tuple | None = None


@dataclass(eq=False)
class LambdaVal(Unknown):
    """A ``lambda``: not evaluated; ``node`` is its source (a LearningRateScheduler's
    schedule is kept as code), ``env`` where it was written (a ``layers.Lambda`` runs it)."""

    node: Any = None
    env: Any = None


@dataclass(eq=False)
class DotLayerObj:
    """``layers.Dot(axes, normalize=False)``: Keras' batch_dot of its two inputs, written with
    the einsum (and L2-normalisation) ops where it is called; it holds no weights."""

    axes: Any
    normalize: bool
    span: Span


@dataclass(eq=False)
class LambdaLayerObj:
    """``layers.Lambda(function, arguments=...)``: calling it runs ``function`` (a ``lambda``
    or a function of the script) on the tensors, its ops inline where it is called."""

    function: Any
    arguments: dict
    span: Span


@dataclass(eq=False)
class LayerObj:
    """A constructed Keras layer (called zero or more times)."""

    spec: LayerSpec
    cls_name: str
    keras_name: str
    span: Span
    explicit_name: str | None = None
    hint: str | None = None
    input_shape: tuple | None = None
    scope: str = ""
    nodes: list = field(default_factory=list)
    stmt: int | None = None
    owner: "UserObj | None" = None  # the subclassed layer/model it is an attribute of
    attr: str | None = None  # the attribute of ``owner`` holding it (``index`` in a list)
    index: int | None = None
    made_in: "ModuleScope | None" = None  # the module scope that constructed it
    seq: int = 0
    #: adapt() ran on it (frontend_ast/keras/data_utils.py): the key of its state at run time
    adapt_key: str | None = None
    #: made with ``trainable=False`` (its torch module's parameters do not require grad)
    frozen: bool = False
    #: called on constants only in a Functional model (LayerRef.constant_call)
    constant_call: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "ref", LayerRef(**{k: getattr(self, k) for k in _SHARED}))

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        if name in _SHARED and "ref" in self.__dict__:
            setattr(self.ref, name, value)  # (the IR's copy, which the nodes hold, stays the same)


#: the facts of a LayerObj the IR's ``LayerRef`` (``Node.layer``) carries past the reader
_SHARED = ("span", "cls_name", "keras_name", "attr", "adapt_key", "frozen", "constant_call")


@dataclass(eq=False)
class TensorVal:
    value: Value
    #: Keras' mask on this tensor: None, the token ids of an Embedding(mask_zero=True), or
    #: a keras_calls.MaskNote (see keras_calls)
    mask: Any = None


@dataclass(eq=False)
class ModelObj:
    kind: str  # "sequential" or "functional"
    span: Span
    name: str | None = None
    layers: list = field(default_factory=list)
    input_shape: tuple | None = None
    input_dtype: str = "float32"
    input_name: str | None = None  # a Sequential's keras.Input(name=...)
    graph: Graph | None = None
    statements: set = field(default_factory=set)
    construct_statement: int | None = None
    #: the statements running when it was made, outside ``construct_statement`` (the call
    #: site of a function that made it: ``model = build_model(16, 3)``)
    made_under: tuple = ()
    var: str | None = None  # the first variable it was bound to (a local one too)
    user: "UserObj | None" = None  # a subclassed model: the instance its call() runs on
    scope: "ModuleScope | None" = None  # as a layer of another model: its module scope
    #: made by calling another builder function while this one was read
    from_builder: str | None = None
    #: the custom layer/model it is an attribute of (``self.ffn = keras.Sequential([...])``)
    held_by: "UserObj | None" = None


@dataclass(eq=False)
class UserObj:
    """An instance of a ClassRef: its attributes as the interpreter ran ``__init__``.

    ``owner``/``attr`` say where it is stored (``self.block1`` of the model), so the layers
    it creates are named after that path (``block1_conv``)."""

    cls: ClassRef
    attrs: dict = field(default_factory=dict)
    keras_name: str = ""
    owner: "UserObj | None" = None
    attr: str = ""
    model: "ModelObj | None" = None
    scope: "ModuleScope | None" = None
    #: ``self(keras.Input(shape=...))`` in a Model subclass's own ``__init__`` (it builds
    #: itself): the input shapes, applied once the model object exists
    build_shapes: list | None = None

    @property
    def path(self) -> str:
        if self.owner is None:
            return ""
        head = self.owner.path
        return f"{head}_{self.attr}" if head else self.attr


@dataclass(eq=False)
class WeightObj:
    """A weight a custom layer made with ``self.add_weight(...)``; ``attr`` is the
    attribute it is stored under. Used in tensor math it becomes a ``variable`` node."""

    owner: UserObj
    shape: tuple
    trainable: bool
    initializer: Any
    span: Span
    attr: str | None = None
    layer: "LayerObj | None" = None


@dataclass(eq=False)
class SuperRef:
    """``super()`` inside a method of ``obj``; ``cls``: the script's class whose method that
    is (its base's methods are what ``super()`` calls), None when not known."""

    obj: UserObj
    cls: Any = None


@dataclass(eq=False)
class SeedGeneratorObj:
    """``keras.random.SeedGenerator(seed)``: the state behind a layer's random numbers (torch
    draws from its own generator, so only its presence matters)."""

    seed: Any = None


class _TrainingMode:
    """``training`` inside ``call()`` when the caller leaves it to the mode (``None``, or passed
    on from an enclosing call): true while training, false at inference. Branches on it become
    ``training_select`` nodes; any other use of its truth value is refused."""

    def __repr__(self) -> str:
        return "training"

    def __bool__(self) -> bool:
        raise Unsupported("`training` used as a value in call() is not translated yet "
                          "(an `if training:` branch is)")


TRAINING_MODE = _TrainingMode()


@dataclass(eq=False)
class TapeObj:
    """A ``tf.GradientTape()``."""


@dataclass(eq=False)
class DatasetObj:
    """``tf.data.Dataset.from_tensor_slices(code)`` with its ``shuffle``/``batch``."""

    code: str
    node: Any = None
    shuffle: bool = False
    batch: Any = None
    ops: list = field(default_factory=list)
    elements: Any = None  # ArrayVal (or a tuple of them) for one element, when known
    #: the interpreted function calls it was made in (``code`` names their variables)
    scope: tuple = ()
    #: bound to a name outside ``scope``: returned by a user function (``ds = make_dataset()``)
    returned: bool = False
    #: made by ``tf.data.experimental.make_csv_dataset``: "labels" (with ``label_name=``: batches
    #: of (dict of columns, labels)) or "features" (a dict of columns); None otherwise
    csv: str | None = None


@dataclass(eq=False)
class ModelHandle:
    """A model returned by a builder function (its graph was read when probing it), or
    loaded with ``load_model`` (``model`` is then the script's model it restores)."""

    builder: str | None
    model: Any = None


_KERAS_ROOTS = ("keras", "tensorflow.keras", "tf_keras", "tensorflow.python.keras")
_MODEL_NAMES = {"Model", "models.Model", "Functional"}
_SEQUENTIAL_NAMES = {"Sequential", "models.Sequential"}
_INPUT_NAMES = {"Input", "layers.Input", "InputLayer", "layers.InputLayer"}
_MERGE_FUNCS = {"add": "Add", "subtract": "Subtract", "multiply": "Multiply", "average": "Average",
                "maximum": "Maximum", "minimum": "Minimum", "concatenate": "Concatenate"}
_SAFE_METHODS = {
    list: {"append", "extend", "insert", "pop", "index", "count", "copy", "reverse"},
    dict: {"get", "items", "keys", "values", "copy", "setdefault", "update"},
    str: {"format", "join", "upper", "lower", "replace", "split", "startswith", "endswith"},
    tuple: {"index", "count"},
}
#: Python operators on tensors → keras_tensor_ops' arithmetic (one table with keras.ops/tf.*)
_TENSOR_BINOPS = {cst.Add: "add", cst.Subtract: "subtract", cst.Multiply: "multiply", cst.Divide: "divide",
                  cst.Power: "power", cst.MatrixMultiply: "matmul"}
_TENSOR_CMPOPS = {cst.GreaterThan: "greater", cst.GreaterThanEqual: "greater_equal", cst.LessThan: "less",
                  cst.LessThanEqual: "less_equal", cst.Equal: "equal", cst.NotEqual: "not_equal"}


def keras_api_name(path: str) -> str | None:
    """``tensorflow.keras.layers.Conv2D`` → ``layers.Conv2D``; None when not Keras."""
    for root in _KERAS_ROOTS:
        if path == root:
            return ""
        if path.startswith(root + "."):
            rest = path[len(root) + 1:]
            for prefix in ("src.", "_v2.", "api._v2."):
                if rest.startswith(prefix):
                    rest = rest[len(prefix):]
            return rest
    if path.startswith("tensorflow.nn.") or path.startswith("tf.nn."):
        return "activations." + path.rsplit(".", 1)[1]
    return None


def is_keras_binding(value: Any) -> bool:
    """True for a name bound to Keras or TensorFlow (a module, a class, a function), or to
    tensorflow_datasets (its data comes as TensorFlow tensors)."""
    if isinstance(value, ApiRef):
        return True
    if isinstance(value, ModuleRef):
        return keras_api_name(value.path) is not None or value.path.split(".")[0] in data_utils.FRAMEWORK_ROOTS
    return False


_TF_APIS = {"tensorflow.GradientTape": ApiRef("gradient_tape", "GradientTape"),
            "tensorflow_datasets.load": ApiRef("tfds_load", "load"),
            "tensorflow_datasets.disable_progress_bar": ApiRef("no_effect", "tfds.disable_progress_bar"),
            "tensorflow_datasets.enable_progress_bar": ApiRef("no_effect", "tfds.enable_progress_bar"),
            "tensorflow.data.Dataset.from_tensor_slices": ApiRef("dataset_slices", "from_tensor_slices"),
            "tensorflow.data.experimental.make_csv_dataset": ApiRef("dataset_csv", "make_csv_dataset"),
            "tensorflow.convert_to_tensor": ApiRef("data_util", "convert_to_tensor"),
            "tensorflow.data.Dataset.zip": ApiRef("dataset_zip", "zip")}


def resolve_api(path: str) -> Any:
    """Map a dotted path to an ApiRef when it names a supported Keras object (tensor
    functions: a key of keras_tensor_ops' table); Python's ``math`` functions and
    constants are themselves (evaluated on static values)."""
    if path in _TF_APIS:
        return _TF_APIS[path]
    if path.startswith("math.") and path.count(".") == 1:
        value = getattr(math, path[5:], None)
        if isinstance(value, float) or callable(value):
            return value
    name = keras_api_name(path)
    key = keras_tensor_ops.key_of(path, name)
    if key is not None:
        return ApiRef("tensor_op", key)
    if path.startswith("tensorflow.math.") or path in ("tensorflow.sigmoid", "tensorflow.tanh"):
        last = path.rsplit(".", 1)[-1]
        if last in keras_layers.ACTIVATIONS:
            return ApiRef("activation", last, "tf.math")
    if name is None:
        return ModuleRef(path)
    last = name.rsplit(".", 1)[-1]
    if name in _MODEL_NAMES:
        return ApiRef("model", last)
    if name in _SEQUENTIAL_NAMES:
        return ApiRef("sequential", last)
    if name in _INPUT_NAMES:
        return ApiRef("input", last)
    if name.startswith("layers.") or "." not in name and keras_layers.lookup(last):
        if last in _MERGE_FUNCS:
            return ApiRef("merge", last)
        if keras_layers.lookup(last):
            return ApiRef("layer", last)
    if name.startswith(("activations.", "ops.", "ops.nn.", "math.")) and last in keras_layers.ACTIVATIONS:
        source = ("tf.nn" if path.startswith("tensorflow.nn.") else "ops" if name.startswith("ops.")
                  else "activations")
        return ApiRef("activation", last, source)
    if name.startswith("optimizers.schedules.") and last in keras_training.SCHEDULE_NAMES:
        return ApiRef("schedule", last)
    if name.startswith("optimizers.") and last in keras_training.OPTIMIZER_NAMES:
        return ApiRef("optimizer", last)
    if name.startswith("losses.") and last in keras_training.LOSS_NAMES:
        return ApiRef("loss", last)
    if name.startswith("metrics.") and (last in keras_training.METRIC_NAMES or last in keras_training.OTHER_METRIC_CLASSES):
        return ApiRef("metric", last)
    if name.startswith("regularizers.") and last in REGULARIZERS:
        return ApiRef("regularizer", last)
    if name in ("random.SeedGenerator", "random.seed_generator.SeedGenerator"):
        return ApiRef("seed_generator", last)
    if name in ("losses.Loss", "losses.loss.Loss"):
        return ApiRef("loss_base", last)
    if name in ("callbacks.Callback", "callbacks.callback.Callback"):
        return ApiRef("callback_base", last)
    if name in ("optimizers.schedules.LearningRateSchedule",
                "optimizers.schedules.learning_rate_schedule.LearningRateSchedule"):
        return ApiRef("schedule_base", last)
    if name.startswith("callbacks.") and last in keras_training.CALLBACK_NAMES:
        return ApiRef("callback", last)
    if name in ("backend.clear_session", "utils.clear_session"):
        return ApiRef("no_effect", "keras.backend.clear_session")
    if name.startswith("datasets.") and last == "load_data" and name.count(".") == 2:
        return ApiRef("dataset", name.split(".")[1])
    if data_utils.utility_of(name) is not None:
        return ApiRef("data_util", data_utils.utility_of(name))
    if name in ("utils.to_categorical", "utils.np_utils.to_categorical", "utils.numerical_utils.to_categorical"):
        return ApiRef("to_categorical", last)
    if name in ("models.load_model", "saving.load_model"):
        return ApiRef("load_model", last)
    if name in ("models.clone_model", "models.cloning.clone_model"):
        return ApiRef("clone_model", last)
    if keras_zoo.is_application(name):  # keras.applications.ResNet50V2: keras/zoo.py
        return ApiRef("application", last)
    return ModuleRef(path)


# ---------------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------------


class _BoundMethod:
    """``obj.name`` of a reader value, called later."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


@dataclass(eq=False)
class _Rng:
    """``np.random.default_rng(seed)`` / ``np.random.RandomState(seed)``."""


class _SuperCall:
    """The builtin ``super`` inside a method of a user class."""


_SUPER = _SuperCall()
