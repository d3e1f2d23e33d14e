"""Keras source → ir.Program, by abstract interpretation of the user's code.

libcst parses the file (comments survive); a small interpreter walks the builder
functions with their default arguments, evaluating Python-object arguments itself
(tuples, arithmetic, ``widths[0]``, ``config["hidden"]``, ``2 if downsample else 1``,
loops with static trip counts, helper functions that take and return tensors) and
asking astroid for module-level values it cannot see directly. Keras calls become IR
nodes; everything else is recorded as untouched Python.
"""

from __future__ import annotations

import functools
import io
import math
import tokenize
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from transpiler.cst_fast import nodes_of, positions as cst_positions
from transpiler.frontend_ast import keras_calls, keras_layers, keras_tensor_ops, keras_training
from transpiler.frontend_ast.keras_layers import BoundArgs, LayerSpec, Unsupported
from transpiler.ir import code_literals
from transpiler.ir import ops as ops_table
from transpiler.ir import sizes
from transpiler.frontend_ast.size_names import name_arguments, name_module_constants
from transpiler.frontend_ast.interp import BINOPS, CMPOPS, SAFE_BUILTINS, Break, Continue, Env, Return
from transpiler.ir.graph import Graph, IRError, Node, Span, Value
from transpiler.ir.initializers import POSITIONAL as INITIALIZER_POSITIONAL, Initializer
from transpiler.ir.layout import default_layout
from transpiler.ir.modules import ModuleScope
from transpiler.ir.passes.shape_inference import infer_node, spatial_axes
from transpiler.ir.program import ModelDef, Program


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
class Unknown:
    """A value the interpreter cannot decide statically."""

    reason: str = ""


@dataclass(eq=False)
class ArrayVal(Unknown):
    """Run-time data whose shape is known statically (``load_data()``, ``np.random.rand(64, 8)``,
    their reshapes, slices and batches): only its shape is used, to build a subclassed model
    on its first call. Everything else treats it as the Unknown it is."""

    shape: tuple = ()
    dtype: str | None = None


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
    var: str | None = None  # the first variable it was bound to (a local one too)
    user: "UserObj | None" = None  # a subclassed model: the instance its call() runs on
    scope: "ModuleScope | None" = None  # as a layer of another model: its module scope
    #: made by calling another builder function while this one was read
    from_builder: str | None = None


@dataclass(eq=False)
class ClassRef:
    """A class the script defines that derives from keras.layers.Layer or keras.Model."""

    node: cst.ClassDef
    env: "Env"
    kind: str  # "layer" or "model"
    base: "ClassRef | None" = None

    def method(self, name: str) -> cst.FunctionDef | None:
        for stmt in self.node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        return self.base.method(name) if self.base is not None else None


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
    """``super()`` inside a method of ``obj``."""

    obj: UserObj


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


@dataclass(eq=False)
class ModelHandle:
    """A model returned by a builder function (its graph was read when probing it), or
    loaded with ``load_model`` (``model`` is then the script's model it restores)."""

    builder: str | None
    model: Any = None


@dataclass(eq=False)
class FunctionRef:
    node: cst.FunctionDef
    env: "Env"


_Return, _Break, _Continue = Return, Break, Continue


_KERAS_ROOTS = ("keras", "tensorflow.keras", "tf_keras", "tensorflow.python.keras")
_MODEL_NAMES = {"Model", "models.Model", "Functional"}
_SEQUENTIAL_NAMES = {"Sequential", "models.Sequential"}
_INPUT_NAMES = {"Input", "layers.Input", "InputLayer", "layers.InputLayer"}
_MERGE_FUNCS = {"add": "Add", "subtract": "Subtract", "multiply": "Multiply", "average": "Average",
                "maximum": "Maximum", "minimum": "Minimum", "concatenate": "Concatenate"}
_SAFE_BUILTINS = SAFE_BUILTINS
_SAFE_METHODS = {
    list: {"append", "extend", "insert", "pop", "index", "count", "copy", "reverse"},
    dict: {"get", "items", "keys", "values", "copy", "setdefault", "update"},
    str: {"format", "join", "upper", "lower", "replace", "split", "startswith", "endswith"},
    tuple: {"index", "count"},
}
_BINOPS, _CMPOPS = BINOPS, CMPOPS
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
    """True for a name bound to Keras or TensorFlow (a module, a class, a function)."""
    if isinstance(value, ApiRef):
        return True
    if isinstance(value, ModuleRef):
        return keras_api_name(value.path) is not None or value.path.split(".")[0] in ("tensorflow", "keras")
    return False


_TF_APIS = {"tensorflow.GradientTape": ApiRef("gradient_tape", "GradientTape"),
            "tensorflow.data.Dataset.from_tensor_slices": ApiRef("dataset_slices", "from_tensor_slices")}


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
    if name.startswith("callbacks.") and last in keras_training.CALLBACK_NAMES:
        return ApiRef("callback", last)
    if name.startswith("datasets.") and last == "load_data" and name.count(".") == 2:
        return ApiRef("dataset", name.split(".")[1])
    if name in ("utils.to_categorical", "utils.np_utils.to_categorical"):
        return ApiRef("to_categorical", last)
    if name in ("models.load_model", "saving.load_model"):
        return ApiRef("load_model", last)
    return ModuleRef(path)


def collect_comments(source: str) -> dict[int, tuple[str, bool]]:
    """Every comment by line: (text, is_full_line)."""
    out: dict[int, tuple[str, bool]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError):
        return out
    line_has_code: set[int] = set()
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENDMARKER):
            for ln in range(tok.start[0], tok.end[0] + 1):
                line_has_code.add(ln)
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = (tok.string, tok.start[0] not in line_has_code)
    return out


# ---------------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------------
class KerasFrontend:
    """Reads one Keras source file into an ir.Program."""

    MAX_LOOP = 10_000
    #: longer loops that build no layers are read once, abstractly
    DATA_LOOP = 64

    def __init__(self, source: str, path: str = "<string>"):
        self.path = path
        self.source = source
        self.lines = source.splitlines()
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            raise _syntax_error(source, path, exc) from None
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # a fresh parse: no shared nodes
        self.module = self.wrapper.module
        self.positions = cst_positions(self.wrapper)
        self.program = Program(path=path, source=source, framework="keras")
        self.scratch = Graph("scratch")
        self.globals = Env()
        self.uids: dict[str, int] = {}
        self.scope_stack: list[str] = []
        self.scope_counts: dict[str, int] = {}
        self.stmt_stack: list[int] = []
        self.keras_statements: set[int] = set()
        self.builder_calls: set[int] = set()
        self.models: list[tuple[ModelObj, str | None, str | None, dict]] = []
        self.comments = collect_comments(source)
        self._astroid_module = None
        self.function_defs: dict[str, cst.FunctionDef] = {}
        self.untranslated: list[tuple[Span, str]] = []
        self.training_models: dict[int, Any] = {}
        self.value_stmts: dict[int, int | None] = {}
        self._stmt_nodes: list = []
        self.model_defs: dict[int, ModelDef] = {}
        self.inlined_helpers: set[str] = set()
        self.visited_functions: set[str] = set()
        self.failed_builders: set[str] = set()  # reported once, not again from main()
        self.call_sites: list[Span] = []  # helper calls below the model-building function
        self.module_uids: dict[str, int] = {}
        self.builder_uids: dict[str, dict[str, int]] = {}
        self.self_stack: list[UserObj] = []  # the instance whose method runs
        self.user_classes: dict[str, ClassRef] = {}
        self.module_stack: list[tuple[ModuleScope, int]] = []  # the module scopes a call runs in
        self.seq = 0  # construction order of layers and user objects
        self.probing = False  # reading a builder function (run(): each one in turn)
        #: module-level statements bound before the builders are read: what they recorded
        self.module_layer_stmts: dict[int, tuple] = {}
        self.module_layers: dict[int, tuple] = {}  # those binding layers: (names, layers)

    # -- entry point --------------------------------------------------------------
    def run(self) -> Program:
        """Interpret the module and every builder function; return the Program."""
        self.globals.set("__name__", "__transpiler__")
        self._definitions_pass()
        name_module_constants(self.module, self.globals)  # sizes with provenance
        self.module_uids = dict(self.uids)
        module_layer_uids = self._bind_module_layers()
        builders: dict[str, FunctionRef] = {}
        self.builders = builders
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and self._all_defaults(stmt):
                fn = self.globals.vars.get(stmt.name.value)
                if not isinstance(fn, FunctionRef):
                    continue
                mark = len(self.models)
                tmark = len(self.program.training)
                self.probing = True
                # Keras names layers from per-session counters: a builder called after
                # keras.backend.clear_session() starts them afresh (after the module-level
                # layers importing the script made).
                self.uids = dict(module_layer_uids)
                try:
                    result, args = self._call_function(fn, [], {}, builder_probe=True)
                except (Unsupported, FrontendError) as exc:
                    del self.models[mark:]
                    del self.program.training[tmark:]
                    self.failed_builders.add(stmt.name.value)
                    if self._constructs_layers(stmt) or _called_names(stmt) & set(self.user_classes):
                        span = getattr(exc, "span", None) or self._span(stmt)
                        self.program.stub(span, f"{stmt.name.value}: {exc}", self._line(span))
                        self.program.meta.setdefault("failures", {})[stmt.name.value] = span
                    continue
                finally:
                    self.probing = False
                del self.models[mark:]
                if isinstance(result, ModelObj) and result.user is not None and result.graph is None:
                    self._unbuilt_subclass(result, stmt)
                    result = None
                if isinstance(result, ModelObj) and result.from_builder:
                    result = None  # ``return build_mlp(64)``: that builder's model, not a new one
                if not isinstance(result, ModelObj):
                    del self.program.training[tmark:]  # probed, not a builder: read again later
                else:
                    for statement in self.program.training[tmark:]:
                        statement.builder = stmt.name.value  # e.g. compile() inside the builder
                if isinstance(result, ModelObj):
                    self.builder_uids[stmt.name.value] = {
                        k: n - module_layer_uids.get(k, 0) for k, n in self.uids.items()}
                    builders[stmt.name.value] = fn
                    self._register_model(result, builder=stmt.name.value, var=None, args=args)
        self._interpret_rest(builders)
        for model, builder, var, args in self.models:
            self._finish_model(model, builder, var, args)
        self._builder_layer_statements()
        unbuilt = [st for st in self.program.training
                   if isinstance(self.training_models.get(id(st)), ModelObj)
                   and self.training_models[id(st)].user is not None
                   and self.training_models[id(st)].graph is None]
        for statement in unbuilt:  # a subclassed model never built: nothing to train
            name = self.training_models[id(statement)].user.cls.node.name.value
            self.program.stub(statement.span, f"model.{statement.kind}(): {name} is never built with a "
                                              "static input shape, so it was not translated",
                              self._line(statement.span))
        self.program.training = [st for st in self.program.training if st not in unbuilt]
        for statement in self.program.training:
            statement.model_def = self._model_def_of(self.training_models.get(id(statement)))
        self.program.meta["keras_names"] = sorted(
            name for name, value in self.globals.vars.items() if is_keras_binding(value))
        self.program.meta["untranslated"] = list(self.untranslated)
        self.program.meta["inlined_helpers"] = sorted(self.inlined_helpers - set(builders))
        return self.program

    def _definitions_pass(self) -> None:
        """Bind what the script defines (imports, functions, classes, constants) without
        running it: statements that build models or call the script's own functions wait
        for the second pass, once the builders are known."""
        functions = {stmt.name.value for stmt in self.module.body if isinstance(stmt, cst.FunctionDef)}
        for stmt in self.module.body:
            if isinstance(stmt, cst.If):
                continue
            if isinstance(stmt, cst.SimpleStatementLine) and not isinstance(stmt.body[0], (cst.Import, cst.ImportFrom)):
                code = cst.Module([]).code_for_node(stmt)
                calls = _called_names(stmt)
                keras_bound = {n for n in calls if is_keras_binding(self.globals.vars.get(n))}
                if calls & functions or calls & set(self.user_classes) or keras_bound or any(
                        word in code for word in ("keras", "layers", "tf.", "Model(", "Sequential(", "Input(")):
                    continue
            if not isinstance(stmt, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef)):
                continue
            try:
                self._exec_stmt(stmt, self.globals, top=True)
            except (Unsupported, FrontendError, _Return, _Break, _Continue):
                pass

    def _bind_module_layers(self) -> dict[str, int]:
        """Bind the module-level layers and models a builder uses (``augment =
        keras.Sequential([...])`` above ``def build_model()``), as importing the script would
        before anything calls the builder; without them the builder cannot be read. The
        second pass keeps these objects (the builder's model holds them) and replays what
        their statements recorded at the statement's place (``self.module_layer_stmts``).

        Returns the auto-name counters they took.
        """
        functions = {s.name.value for s in self.module.body if isinstance(s, cst.FunctionDef)}
        used: set[str] = set()
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and self._all_defaults(stmt):
                used |= _names_in(stmt.body)
        saved_uids, self.uids = self.uids, {}
        for stmt in self.module.body:
            if not (isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign)):
                continue
            targets = {t.target.value for t in stmt.body[0].targets if isinstance(t.target, cst.Name)}
            calls = _called_names(stmt)
            if not targets & used or any(n in self.globals.vars for n in targets) \
                    or calls & functions or calls & set(self.user_classes):
                continue
            mark, tmark, dmark = len(self.models), len(self.program.training), len(self.program.diagnostics)
            uids = dict(self.uids)
            try:
                self._exec_stmt(stmt, self.globals, top=True)
            except (Unsupported, FrontendError, _Return, _Break, _Continue):
                for name in targets:
                    self.globals.vars.pop(name, None)  # read again, and reported, in the second pass
                self.uids = uids
                ok = False
            else:
                ok = True
            recorded = (self.models[mark:], self.program.training[tmark:], self.program.diagnostics[dmark:],
                        {k: n - uids.get(k, 0) for k, n in self.uids.items()})
            del self.models[mark:]
            del self.program.training[tmark:]
            del self.program.diagnostics[dmark:]
            if ok:
                self.module_layer_stmts[id(stmt)] = recorded
                if all(isinstance(self.globals.vars.get(n), LayerObj) for n in targets):
                    self.module_layers[id(stmt)] = (targets, [self.globals.vars[n] for n in targets])
        taken, self.uids = self.uids, saved_uids
        return taken

    def _builder_layer_statements(self) -> None:
        """The module-level layer statements the output leaves out: layers only translated
        builders hold (their modules do the work) and no other module-level code names."""
        held = {id(node.meta.get("layer")) for md in self.program.models if md.builder
                for node in md.graph.nodes}
        named: set[str] = set()
        for stmt in self.module.body:
            if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and id(stmt) not in self.module_layers:
                named |= _names_in(stmt)
        drop = {sid for sid, (names, objs) in self.module_layers.items()
                if all(id(o) in held for o in objs) and not names & named}
        if drop:
            self.program.meta["builder_layer_statements"] = drop

    def _replay_module_layer_stmt(self, stmt: cst.CSTNode) -> None:
        """What a statement run by ``_bind_module_layers`` recorded, at its place in the script."""
        models, training, diagnostics, uids = self.module_layer_stmts[id(stmt)]
        for entry in models:
            self._register_model(*entry)
        self.program.training.extend(training)
        for diag in diagnostics:
            self.program._add(diag)
        for k, n in uids.items():
            self.uids[k] = self.uids.get(k, 0) + n

    def _interpret_rest(self, builders: dict[str, FunctionRef]) -> None:
        """Interpret the ``__main__`` block, then non-builder functions it did not reach
        (``main()`` with required arguments), for models built inline.

        Each function runs once, in the order the script would run it, so inline models
        are found once and Keras' name counters continue from the module-level ones.
        A function or block that fails keeps none of its models: a half-built model
        would be a silent mistake, the stub says what to finish by hand.
        """
        self.uids = dict(self.module_uids)
        self.globals.set("__name__", "__main__")
        self.visited_functions = set()
        # the script, top to bottom, as `python script.py` would run it
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if id(stmt) in self.module_layer_stmts:
                self._replay_module_layer_stmt(stmt)
                continue
            mark = len(self.models)
            try:
                self._exec_stmt(stmt, self.globals)
            except (Unsupported, FrontendError) as exc:
                del self.models[mark:]
                # a model this statement was still building (`model.add(...)`) is dropped too:
                # a half-built model would be a silent mistake
                touched = {id(v) for name, v in self.globals.vars.items()
                           if isinstance(v, ModelObj) and name in _names_in(stmt)}
                self.models = [entry for entry in self.models if id(entry[0]) not in touched]
                span = getattr(exc, "span", None) or self._span(stmt)
                self.program.stub(span, str(exc), self._line(span))
            except (_Return, _Break, _Continue):
                pass
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value not in builders \
                    and stmt.name.value not in self.visited_functions:
                fn = self.globals.vars.get(stmt.name.value)
                if isinstance(fn, FunctionRef) and self._constructs_models(stmt):
                    mark = len(self.models)
                    try:
                        self._call_function(fn, [Unknown()] * self._n_required(stmt), {},
                                            builder_probe=False)
                    except (Unsupported, FrontendError) as exc:
                        del self.models[mark:]
                        span = getattr(exc, "span", None) or self._span(stmt)
                        self.program.stub(span, f"{stmt.name.value}: {exc}", self._line(span))

    # -- helpers for spans and source ---------------------------------------------
    def _span(self, node: cst.CSTNode) -> Span:
        try:
            pos = self.positions[node]
        except KeyError:
            return Span(self.path, 0, 0)
        return Span(self.path, pos.start.line, pos.start.column + 1, pos.end.line)

    def _line(self, span: Span | None) -> str:
        if span is None or not 1 <= span.line <= len(self.lines):
            return ""
        return self.lines[span.line - 1].strip()

    def _err(self, node: cst.CSTNode, message: str) -> FrontendError:
        return FrontendError(message, self._span(node))

    @staticmethod
    def _all_defaults(fn: cst.FunctionDef) -> bool:
        p = fn.params
        return all(param.default is not None for param in p.params) and not p.posonly_params \
            and all(param.default is not None for param in p.kwonly_params)

    @staticmethod
    def _n_required(fn: cst.FunctionDef) -> int:
        return sum(1 for p in fn.params.params if p.default is None)

    @staticmethod
    def _is_main_guard(stmt: cst.If) -> bool:
        return "__name__" in cst.Module([]).code_for_node(stmt.test) if isinstance(stmt, cst.If) else False

    def _code_of(self, node: cst.CSTNode) -> str:
        """``node``'s source text, generated once per node (loops ask again and again)."""
        cache = self.__dict__.setdefault("_code_cache", {})
        key = id(node)
        if key not in cache:
            cache[key] = (node, cst.Module([]).code_for_node(node))  # the node keeps its id alive
        return cache[key][1]

    def _constructs_layers(self, node: cst.CSTNode) -> bool:
        code = self._code_of(node)
        return any(word in code for word in ("layers", "Model", "Sequential", "Input", "keras"))

    def _constructs_models(self, node: cst.CSTNode) -> bool:
        code = self._code_of(node)
        return any(word in code for word in ("Model(", "Sequential(", "Input("))

    # -- statements ---------------------------------------------------------------
    def _exec_block(self, body, env: Env, top: bool = False) -> None:
        for i, stmt in enumerate(body):
            if not top:
                if self.self_stack and isinstance(stmt, cst.If):
                    sense = self._mode_test(stmt.test, env)
                    if sense is not None:
                        if self._exec_mode_if(stmt, sense, env, body[i + 1:]):
                            return
                        continue
                self._exec_stmt(stmt, env, top)
                continue
            mark = len(self.models)
            try:
                self._exec_stmt(stmt, env, top)
            except (Unsupported, FrontendError) as exc:
                # a module-level statement that cannot be read: report it, drop the
                # models it touched (half-built), and go on with the rest of the file
                del self.models[mark:]
                touched = {id(v) for k, v in env.vars.items() if isinstance(v, ModelObj)
                           and k in _names_in(stmt)}
                self.models = [m for m in self.models if id(m[0]) not in touched]
                span = getattr(exc, "span", None) or self._span(stmt)
                self.program.stub(span, str(exc), self._line(span))

    def _exec_stmt(self, stmt: cst.CSTNode, env: Env, top: bool = False) -> None:
        self.stmt_stack.append(id(stmt))
        self._stmt_nodes.append(stmt)
        try:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._exec_small(small, env, stmt)
            elif isinstance(stmt, cst.FunctionDef):
                env.set(stmt.name.value, FunctionRef(stmt, env))
                if top:
                    self.function_defs[stmt.name.value] = stmt
            elif isinstance(stmt, cst.ClassDef):
                env.set(stmt.name.value, self._class_ref(stmt, env))
            elif isinstance(stmt, cst.If):
                if top and self._is_main_guard(stmt):
                    return
                self._exec_if(stmt, env)
            elif isinstance(stmt, cst.For):
                self._exec_for(stmt, env)
            elif isinstance(stmt, cst.While):
                if self._constructs_layers(stmt.body):
                    raise self._err(stmt, "a while loop that builds layers has no static trip count")
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    value = self._eval(item.item, env)
                    if isinstance(value, TapeObj):
                        self._record_loop("tape", stmt, item.item, value=None)
                    if item.asname is not None and isinstance(item.asname.name, cst.Name):
                        env.set(item.asname.name.value, value)
                self._exec_block(stmt.body.body, env)
            elif isinstance(stmt, cst.Try):
                self._exec_block(stmt.body.body, env)
        finally:
            self.stmt_stack.pop()
            self._stmt_nodes.pop()

    # -- call(..., training): branches on the mode --------------------------------------
    def _mode_test(self, test: cst.BaseExpression, env: Env) -> bool | None:
        """For an ``if`` test in call(): True when it holds exactly while training, False when
        exactly at inference, None when it does not read the mode (``training`` bound to a
        Python bool by the caller is an ordinary static test)."""
        if isinstance(test, cst.Name):
            try:
                return True if env.lookup(test.value) is TRAINING_MODE else None
            except KeyError:
                return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._mode_test(test.expression, env)
            return None if inner is None else not inner
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            inner = self._mode_test(test.left, env)
            if inner is None or not isinstance(target.comparator, cst.Name) or \
                    target.comparator.value not in ("True", "False"):
                return None
            if not isinstance(target.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
                return None
            positive = isinstance(target.operator, (cst.Is, cst.Equal)) == (target.comparator.value == "True")
            return inner if positive else not inner
        return None

    def _exec_mode_if(self, stmt: cst.If, sense: bool, env: Env, rest: list) -> bool:
        """``if training: ...`` in call(): both branches run on the same tensors; every variable
        they bind differently (or the value they return) becomes a ``training_select`` of the
        two. ``if training: return a`` with no else takes the rest of the block as the
        inference branch. Returns True when the rest of the block was consumed."""
        body = list(stmt.body.body)
        if isinstance(stmt.orelse, cst.If):
            other = [stmt.orelse]
        elif isinstance(stmt.orelse, cst.Else):
            other = list(stmt.orelse.body.body)
        else:
            other = []
        consumed = False
        if stmt.orelse is None and body and _returns(body[-1]):
            other, consumed = list(rest), True
        train, infer = (body, other) if sense else (other, body)
        self.stmt_stack.append(id(stmt))
        self._stmt_nodes.append(stmt)
        try:
            before = dict(env.vars)
            names = dict(self.uids)
            trained = self._run_branch(train, env)
            # Keras traces call() with training=None: only the inference branch takes op names
            self.uids.clear()
            self.uids.update(names)
            env.vars = dict(before)
            inferred = self._run_branch(infer, env)
            env.vars = dict(before)
            if trained[0] != inferred[0]:
                raise self._err(stmt.test, "one branch on `training` returns and the other does not")
            if trained[0] == "return":
                raise _Return(self._join_modes(trained[1], inferred[1], stmt, "result"))
            for name in trained[1]:
                if name in inferred[1]:
                    t, i = trained[1][name], inferred[1][name]
                    env.vars[name] = t if t is i else self._join_modes(t, i, stmt, name)
        finally:
            self.stmt_stack.pop()
            self._stmt_nodes.pop()
        return consumed

    def _run_branch(self, stmts: list, env: Env) -> tuple[str, Any]:
        try:
            self._exec_block(stmts, env)
        except _Return as ret:
            return "return", ret.value
        return "vars", dict(env.vars)

    def _join_modes(self, train: Any, infer: Any, stmt: cst.CSTNode, name: str | None) -> Any:
        if train is infer:
            return train
        if isinstance(train, (tuple, list)) and isinstance(infer, (tuple, list)) and len(train) == len(infer):
            return type(train)(self._join_modes(t, i, stmt, name) for t, i in zip(train, infer))
        numbers = (TensorVal, WeightObj, int, float)
        if isinstance(train, numbers) and isinstance(infer, numbers) and not isinstance(train, bool) \
                and not isinstance(infer, bool) and isinstance(train, (TensorVal, WeightObj)) == isinstance(
                    infer, (TensorVal, WeightObj)):
            def select(b):
                t, i = (v.value if isinstance(v, TensorVal) else self._as_tensor(v, stmt).value
                        if isinstance(v, WeightObj) else b.constant(v) for v in (train, infer))
                return b.add("training_select", [t, i], {}, name or "select")[0]

            out = self._tensor_math(select, self._span(stmt.test), "if training")
            if name not in (None, "result") and out.value.var is None:
                out.value.var = name
            return out
        if not isinstance(train, (TensorVal, WeightObj, LayerObj, ModelObj)) and \
                not isinstance(infer, (TensorVal, WeightObj, LayerObj, ModelObj)) and train == infer:
            return train
        raise self._err(stmt.test, f"the branches on `training` give {name!r} values of different kinds; "
                                   "not translated yet")

    def _exec_if(self, stmt: cst.If, env: Env) -> None:
        test = self._eval(stmt.test, env)
        if isinstance(test, (Unknown, TensorVal, ModelObj, LayerObj)) or test is ...:
            if self._constructs_layers(stmt):
                raise self._err(stmt.test, "a condition around layer code cannot be decided statically")
            return
        if test:
            self._exec_block(stmt.body.body, env)
        elif isinstance(stmt.orelse, cst.If):
            self._exec_if(stmt.orelse, env)
        elif isinstance(stmt.orelse, cst.Else):
            self._exec_block(stmt.orelse.body.body, env)

    def _exec_for(self, stmt: cst.For, env: Env) -> None:
        iterable = self._eval(stmt.iter, env)
        if isinstance(iterable, Unknown) or not hasattr(iterable, "__iter__") or isinstance(iterable, str):
            if self._constructs_layers(stmt.body):
                raise self._err(stmt.iter, "a loop that builds layers needs a static trip count")
            # a loop over run-time data (batches): read its body once, abstractly, for the
            # training statements in it
            item = Unknown("loop item")
            if isinstance(iterable, DatasetObj) and iterable.elements is not None and iterable.batch is not None:
                els = iterable.elements
                batched = tuple(ArrayVal("batch", (None, *e.shape), e.dtype)
                                for e in (els if isinstance(els, tuple) else (els,)))
                item = batched if isinstance(els, tuple) else batched[0]
            self._assign(stmt.target, item, env, naming=False)
            try:
                self._exec_block(stmt.body.body, env)
            except (_Break, _Continue):
                pass
            return
        items = list(iterable)
        if len(items) > self.MAX_LOOP:
            return
        if len(items) > self.DATA_LOOP and not self._constructs_layers(stmt.body):
            # a data loop (make_data's range(600)): what it computes is run-time data; read
            # the body once, abstractly, for any training statement in it
            self._assign(stmt.target, Unknown("loop item"), env, naming=False)
            try:
                self._exec_block(stmt.body.body, env)
            except (_Break, _Continue):
                pass
            return
        for item in items:
            self._assign(stmt.target, item, env, naming=False)
            try:
                self._exec_block(stmt.body.body, env)
            except _Break:
                break
            except _Continue:
                continue

    def _exec_small(self, small: cst.CSTNode, env: Env, line: cst.SimpleStatementLine) -> None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, env)
            for target in small.targets:
                self._assign(target.target, value, env)
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                self._record_object(small.targets[0].target.value, value, line, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._assign(small.target, self._eval(small.value, env), env)
        elif isinstance(small, cst.AugAssign):
            current = self._eval(small.target, env)
            rhs = self._eval(small.value, env)
            op = type(small.operator).__name__.replace("Assign", "")
            value = self._binop(getattr(cst, op)(), current, rhs, small)
            self._assign(small.target, value, env)
        elif isinstance(small, cst.Expr):
            self._eval(small.value, env)
        elif isinstance(small, cst.Return):
            value = None if small.value is None else self._eval(small.value, env)
            if isinstance(value, DatasetObj) and value.scope == tuple(self.scope_stack):
                self._record_object("", value, line, small.value)  # ``return tf.data.Dataset...``
            raise _Return(value)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self._exec_import(small, env)
        elif isinstance(small, cst.Break):
            raise _Break()
        elif isinstance(small, cst.Continue):
            raise _Continue()

    def _exec_import(self, node, env: Env) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = cst.Module([]).code_for_node(alias.name)
                if alias.asname is not None:
                    env.set(alias.asname.name.value, resolve_api(full))
                else:
                    root = full.split(".")[0]
                    env.set(root, ModuleRef(root))
            return
        if node.module is None or node.relative:
            return
        base = cst.Module([]).code_for_node(node.module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = cst.Module([]).code_for_node(alias.name)
            bound = alias.asname.name.value if alias.asname is not None else name
            env.set(bound, resolve_api(f"{base}.{name}"))

    def _assign(self, target: cst.BaseExpression, value: Any, env: Env, naming: bool = True) -> None:
        """Bind ``target`` to ``value``; ``naming`` lets the variable name a layer or tensor
        (not for loop variables, which name every element in turn)."""
        if isinstance(target, cst.Name):
            name = target.value
            if naming and isinstance(value, TensorVal) and value.value.var is None:
                value.value.var = name
            if naming and isinstance(value, TensorVal):
                where = id(self.module_stack[-1][0]) if self.module_stack else None
                value.value.scope_vars.setdefault(where, name)
            if naming and isinstance(value, LayerObj) and value.hint is None:
                value.hint = name
            if isinstance(value, ModelObj):
                value.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                if value.var is None:
                    value.var = name
            env.set(name, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, Unknown):
                for el in target.elements:
                    self._assign(el.value, value, env, naming)
                return
            items = list(value)
            if len(items) != len(target.elements):
                raise self._err(target, "cannot unpack: the number of values differs")
            for el, item in zip(target.elements, items):
                self._assign(el.value, item, env, naming)
        elif isinstance(target, cst.Subscript):
            container = self._eval(target.value, env)
            if isinstance(container, (list, dict)) and len(target.slice) == 1:
                key = self._eval(target.slice[0].slice.value, env)
                container[key] = value
        elif isinstance(target, cst.Attribute):
            base = self._eval(target.value, env)
            if target.attr.value == "trainable" and value is not True and isinstance(base, (LayerObj, ModelObj)):
                span = self._span(target)
                self.program.warn(span, "`.trainable = False` (frozen weights) is not translated: the torch "
                                        "optimizer updates these parameters and a frozen BatchNormalization "
                                        "follows model.train(); freeze them with requires_grad_(False) and "
                                        "eval()", self._line(span))
            if isinstance(base, ModelObj) and base.user is not None:
                base = base.user
            if isinstance(base, UserObj):
                self._store_attr(base, target.attr.value, value)

    # -- expressions --------------------------------------------------------------
    def _eval(self, node: cst.BaseExpression, env: Env) -> Any:
        method = getattr(self, "_eval_" + type(node).__name__, None)
        if method is None:
            return Unknown(f"cannot evaluate {type(node).__name__}")
        return method(node, env)

    def _eval_Integer(self, node, env):
        return node.evaluated_value

    def _eval_Float(self, node, env):
        return node.evaluated_value

    def _eval_SimpleString(self, node, env):
        return node.evaluated_value

    def _eval_ConcatenatedString(self, node, env):
        return node.evaluated_value

    def _eval_FormattedString(self, node, env):
        text = self._format_parts(node.parts, env)
        return Unknown("f-string") if text is None else text

    def _format_parts(self, parts, env) -> str | None:
        """The text of f-string ``parts`` (format specs and ``!r`` included), or None."""
        out = []
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            value = self._eval(part.expression, env)
            if _not_static(value) or isinstance(value, LayerObj):
                return None
            spec = "" if part.format_spec is None else self._format_parts(part.format_spec, env)
            if spec is None:
                return None
            conversion = part.conversion
            if conversion is None and part.equal is not None and part.format_spec is None:
                conversion = "r"  # f"{name=}" shows repr(name)
            if conversion is not None:
                value = {"r": repr, "s": str, "a": ascii}[conversion](value)
            if part.equal is not None:
                out.append(cst.Module([]).code_for_node(part.expression) + "=")
            try:
                out.append(format(value, spec))
            except (TypeError, ValueError):
                return None
        return "".join(out)

    def _eval_Name(self, node, env):
        name = node.value
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name == "super" and self.self_stack:
            return _SUPER
        try:
            return env.lookup(name)
        except KeyError:
            pass
        if name in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[name]
        return self._astroid_value(name)

    def _astroid_value(self, name: str) -> Any:
        """Ask astroid for a module-level value the interpreter did not bind.

        Only a value every assignment of ``name`` agrees on is static: ``UNITS = 64``
        in one branch of an undecidable ``if`` and ``UNITS = 8`` in the other is not.
        """
        _none = object()
        found: Any = _none
        if not self._module_may_bind(name):
            return Unknown(f"name {name!r}")  # what astroid answers too, without its ~0.3 s start-up
        try:
            import astroid

            if self._astroid_module is None:
                self._astroid_module = astroid.parse(self._astroid_source(), path=self.path)
            for assigned in self._astroid_module.locals.get(name, []):
                if not _astroid_static(assigned, astroid):
                    return Unknown(f"name {name!r}")
                for inferred in assigned.infer():
                    value = _astroid_constant(inferred, astroid)
                    if value is _ASTROID_UNKNOWN:
                        return Unknown(f"name {name!r}")
                    if found is not _none and (type(found) is not type(value) or found != value):
                        return Unknown(f"name {name!r} has several values")
                    found = value
        except Exception:  # astroid raises many kinds of inference errors
            return Unknown(f"name {name!r}")
        return Unknown(f"name {name!r}") if found is _none else found

    def _module_may_bind(self, name: str) -> bool:
        """False when astroid's module cannot bind ``name`` (``print``, ``slice``): nothing in
        the source astroid reads binds it, and no star import there could."""
        bound = self._astroid_bound
        return bound is None or name in bound

    @functools.cached_property
    def _astroid_bound(self) -> frozenset[str] | None:
        """Every name :meth:`_astroid_source` binds anywhere, in any scope (a superset of the
        module's: astroid builds it from the same ``ast`` tree, names NFKC-normalised alike),
        or None when a star import could bind any name."""
        import ast

        try:
            tree = ast.parse(self._astroid_source())
        except (SyntaxError, ValueError):
            return None
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                if node.name == "*":
                    return None
                names.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.add(node.rest)
        return frozenset(names)

    def _astroid_source(self) -> str:
        """The module's top level without functions and classes (imports of frameworks left out):
        the names astroid is asked about are module-level constants, and a class deriving
        from keras.Model makes astroid read all of Keras (10 s) just to build the module."""
        keep = []
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if not isinstance(stmt, cst.SimpleStatementLine):
                keep.append(cst.Module([]).code_for_node(stmt))  # constants set under an if
                continue
            small = stmt.body[0]
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                code = cst.Module([]).code_for_node(small)
                words = code.replace(",", " ").replace(".", " ").split()
                if any(w in _FRAMEWORK_MODULES for w in words):
                    continue
            keep.append(cst.Module([]).code_for_node(stmt))
        return "".join(keep)

    def _eval_Attribute(self, node, env):
        base = self._eval(node.value, env)
        attr = node.attr.value
        if isinstance(base, ModelObj) and base.user is not None and (
                attr in base.user.attrs or base.user.cls.method(attr) is not None):
            base = base.user  # the subclass's own attributes and methods
        if isinstance(base, ArrayVal):
            if attr == "shape":
                return tuple(Unknown("dim") if d is None else d for d in base.shape)
            if attr in _ARRAY_METHODS:
                return _BoundMethod(base, attr)
            return Unknown(f"array.{attr}")
        if isinstance(base, UserObj):
            if attr in base.attrs:
                return base.attrs[attr]
            if base.cls.method(attr) is not None:
                return _BoundMethod(base, attr)
            if attr == "name":
                return base.keras_name
            if attr in ("dtype", "compute_dtype", "variable_dtype"):
                return "float32"  # Keras' default dtype policy (the models are float32)
            return _BoundMethod(base, attr)
        if isinstance(base, SuperRef):
            return _BoundMethod(base, attr)
        if isinstance(base, ModuleRef):
            return resolve_api(f"{base.path}.{attr}")
        if isinstance(base, ApiRef):
            return Unknown(f"{base.name}.{attr}")
        if isinstance(base, TensorVal):
            if attr == "shape":
                return tuple(base.value.shape)
            if attr == "dtype":
                return base.value.dtype
            return Unknown(f"tensor.{attr}")
        if isinstance(base, ModelObj):
            self._mark_keras()
            if attr in ("output", "outputs", "input", "inputs"):
                graph = self._model_graph(base, node)
                vals = graph.outputs if attr.startswith("output") else graph.inputs
                tensors = [TensorVal(v) for v in vals]
                return tensors[0] if attr in ("output", "input") and len(tensors) == 1 else tensors
            return _BoundMethod(base, attr)
        if isinstance(base, _Rng):
            return _BoundMethod(base, attr)
        if isinstance(base, (TapeObj, DatasetObj)) or (
                isinstance(base, keras_training.TrainingObj) and base.kind == "optimizer"):
            return _BoundMethod(base, attr)
        if isinstance(base, (LayerObj, ModelHandle)):
            self._mark_keras()
            return _BoundMethod(base, attr)
        if isinstance(base, Unknown):
            return base
        for typ, methods in _SAFE_METHODS.items():
            if isinstance(base, typ) and attr in methods:
                return getattr(base, attr)
        return Unknown(f".{attr}")

    def _eval_Tuple(self, node, env):
        return tuple(self._elements(node.elements, env))

    def _eval_List(self, node, env):
        return list(self._elements(node.elements, env))

    def _eval_Set(self, node, env):
        return Unknown("set")

    def _elements(self, elements, env):
        out = []
        for el in elements:
            value = self._eval(el.value, env)
            if isinstance(el, cst.StarredElement):
                out.extend(value)
            else:
                out.append(value)
        return out

    def _eval_Dict(self, node, env):
        out = {}
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                out[self._eval(el.key, env)] = self._eval(el.value, env)
            else:
                rest = self._eval(el.value, env)
                if not isinstance(rest, dict):  # ``**{...comprehension over run-time data}``
                    return Unknown("a dict built from run-time data")
                out.update(rest)
        return out

    def _eval_ListComp(self, node, env):
        return self._comprehension(node, env, list)

    def _eval_GeneratorExp(self, node, env):
        return self._comprehension(node, env, list)

    def _comprehension(self, node, env, kind):
        results = []
        inner = Env(env)

        class _Dynamic(Exception):
            pass

        def walk(comp):
            iterable = self._eval(comp.iter, inner)
            if not isinstance(iterable, Unknown) and not hasattr(iterable, "__iter__"):
                # an attribute of a model (``model.trainable_weights``) is known, not iterable
                iterable = Unknown("iterating an object the frontend does not model")
            if isinstance(iterable, Unknown):
                if self._constructs_layers(node.elt):
                    raise self._err(comp.iter, "a comprehension that builds layers needs a static iterable")
                raise _Dynamic()
            for item in iterable:
                self._assign(comp.target, item, inner, naming=False)
                if all(self._eval(cond.test, inner) for cond in comp.ifs):
                    if comp.inner_for_in is not None:
                        walk(comp.inner_for_in)
                    else:
                        results.append(self._eval(node.elt, inner))

        try:
            walk(node.for_in)
        except _Dynamic:
            return Unknown("comprehension over run-time data")
        return kind(results)

    def _eval_BinaryOperation(self, node, env):
        left = self._eval(node.left, env)
        right = self._eval(node.right, env)
        return self._binop(node.operator, left, right, node)

    def _binop(self, op, left, right, node):
        left, right = self._as_tensor(left, node), self._as_tensor(right, node)
        if isinstance(left, TensorVal) or isinstance(right, TensorVal):
            return self._tensor_binop(op, left, right, node)
        if isinstance(left, ArrayVal) or isinstance(right, ArrayVal):
            return _array_binop(left, right)
        if _not_static(left) or _not_static(right):  # 2 * np.pi, n + len(sys.argv)
            return Unknown("arithmetic on a value known only at run time")
        fn = _BINOPS.get(type(op))
        if fn is None:
            return Unknown(type(op).__name__)
        try:
            return fn(left, right)
        except Exception as exc:  # user arithmetic on odd types
            raise self._err(node, f"cannot evaluate: {exc}") from None

    def _tensor_binop(self, op, left, right, node):
        """``x * 0.5``, ``2.0 - x``, ``x / y``, ``x ** 2``, ``x @ w``: keras_tensor_ops' arithmetic."""
        code = cst.Module([]).code_for_node(node)
        kind = _TENSOR_BINOPS.get(type(op))
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

    def _eval_UnaryOperation(self, node, env):
        value = self._eval(node.expression, env)
        if isinstance(value, WeightObj) and isinstance(node.operator, cst.Minus):
            value = self._as_tensor(value, node)  # -self.w: a custom layer's weight
        if isinstance(value, TensorVal):
            return self._tensor_unary(node, value)
        if isinstance(value, Unknown):
            return value
        if isinstance(node.operator, cst.Minus):
            return -value
        if isinstance(node.operator, cst.Plus):
            return +value
        if isinstance(node.operator, cst.Not):
            return not value
        return Unknown("unary")

    def _eval_BooleanOperation(self, node, env):
        left = self._eval(node.left, env)
        if isinstance(left, Unknown):
            return left
        if isinstance(node.operator, cst.And):
            return self._eval(node.right, env) if left else left
        return left if left else self._eval(node.right, env)

    def _eval_Comparison(self, node, env):
        left = self._eval(node.left, env)
        for target in node.comparisons:
            right = self._eval(target.comparator, env)
            if (isinstance(left, (TensorVal, WeightObj)) or isinstance(right, (TensorVal, WeightObj))) and \
                    type(target.operator) not in (cst.Is, cst.IsNot, cst.In, cst.NotIn):
                return self._tensor_compare(node, self._as_tensor(left, node), self._as_tensor(right, node), target)
            if isinstance(left, Unknown) or isinstance(right, Unknown):
                return Unknown("comparison")
            if not _CMPOPS[type(target.operator)](left, right):
                return False
            left = right
        return True

    def _eval_IfExp(self, node, env):
        sense = self._mode_test(node.test, env) if self.self_stack else None
        if sense is not None:  # ``a if training else b`` in call(): a training_select of the two
            body, orelse = self._eval(node.body, env), self._eval(node.orelse, env)
            train, infer = (body, orelse) if sense else (orelse, body)
            self.stmt_stack.append(self.stmt_stack[-1] if self.stmt_stack else None)
            try:
                return self._join_modes(train, infer, node, None)
            finally:
                self.stmt_stack.pop()
        test = self._eval(node.test, env)
        if isinstance(test, Unknown):
            raise self._err(node.test, "the condition cannot be decided statically")
        return self._eval(node.body if test else node.orelse, env)

    def _eval_Subscript(self, node, env):
        base = self._eval(node.value, env)
        if isinstance(base, ArrayVal):
            return self._array_subscript(base, node, env)
        if isinstance(base, Unknown):
            return base
        if isinstance(base, TensorVal):
            return self._tensor_subscript(base, node, env)
        if not isinstance(base, (list, tuple, dict, str, range)):
            return Unknown("subscript of a value known only at run time")  # sys.argv[1]
        keys = []
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                keys.append(self._eval(sl.value, env))
            else:
                parts = [None if p is None else self._eval(p, env) for p in (sl.lower, sl.upper, sl.step)]
                keys.append(slice(*parts))
        key = keys[0] if len(keys) == 1 else tuple(keys)
        try:
            return base[key]
        except Exception as exc:
            raise self._err(node, f"cannot evaluate subscript: {exc}") from None

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
        """``x[:1000]``, ``x[..., None]``, ``x[..., tf.newaxis]``, ``x[i]``: the result's shape."""
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

    def _eval_Lambda(self, node, env):
        return LambdaVal("lambda", node, env)

    # -- calls --------------------------------------------------------------------
    def _eval_Call(self, node, env):
        func = self._eval(node.func, env)
        args, kwargs = [], {}
        for arg in node.args:
            value = self._eval(arg.value, env)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star in ("*", "**") and isinstance(value, Unknown):
                return Unknown("call with unknown *args")
            elif arg.star == "*":
                args.extend(value)
            elif arg.star == "**":
                kwargs.update(value)
            else:
                args.append(value)
        try:
            return self._call(func, args, kwargs, node)
        except Unsupported as exc:
            if getattr(exc, "span", None) is None:
                exc.span = self._span(node)  # the innermost call is where the user looks
            raise

    def _call(self, func, args, kwargs, node):
        span = self._span(node)
        if isinstance(func, LayerObj) or isinstance(func, ApiRef) and func.kind in ("tensor_op", "activation"):
            # a custom layer's weight used as a tensor
            args = [self._as_tensor(a, node) for a in args]
            kwargs = {k: self._as_tensor(v, node) for k, v in kwargs.items()}
        if isinstance(func, ApiRef):
            self._mark_keras()
            if func.kind == "layer":
                return self._construct_layer(func.name, args, kwargs, span)
            if func.kind == "input":
                return self._make_input(func.name, args, kwargs, span)
            if func.kind == "sequential":
                return self._make_sequential(args, kwargs, span)
            if func.kind == "model":
                return self._make_functional(args, kwargs, span, node)
            if func.kind == "merge":
                layer_kwargs = {k: v for k, v in kwargs.items() if k != "inputs"}
                inputs = args[0] if args else kwargs["inputs"]
                layer = self._construct_layer(_MERGE_FUNCS[func.name], [], layer_kwargs, span)
                return self._call_layer(layer, [list(inputs)], {}, span)
            if func.kind in ("dataset", "to_categorical"):
                return self._data_call(func, node)
            if func.kind == "load_model":
                return self._load_model(node)
            if func.kind == "gradient_tape":
                return TapeObj()
            if func.kind == "seed_generator":
                return SeedGeneratorObj(args[0] if args else kwargs.get("seed"))
            if func.kind == "dataset_slices":
                code = cst.Module([]).code_for_node(node.args[0].value) if node.args else ""
                data = args[0] if args else None
                parts = data if isinstance(data, tuple) else (data,)
                elements = None
                if parts and all(isinstance(a, ArrayVal) and a.shape for a in parts):
                    items = tuple(ArrayVal("element", a.shape[1:], a.dtype) for a in parts)
                    elements = items if isinstance(data, tuple) else items[0]
                return DatasetObj(code, node, elements=elements, scope=tuple(self.scope_stack))
            if func.kind in ("optimizer", "loss", "metric", "schedule", "callback"):
                return keras_training.TrainingObj(func.kind, func.name, list(args), dict(kwargs))
            if func.kind == "regularizer":
                return _regularizer(func.name, list(args), dict(kwargs))
            if func.kind == "tensor_op":
                return self._tensor_op(func.name, args, kwargs, span)
            if func.kind == "activation":
                return self._activation_call(func, args, kwargs, span)
        if isinstance(func, keras_training.CallbackClass):  # the script's own callback: kept as is
            return keras_training.TrainingObj("callback", func.name, list(args), dict(kwargs), cls=func)
        if isinstance(func, keras_training.LossClass):  # the script's own Loss subclass
            return keras_training.TrainingObj("loss", func.name, list(args), dict(kwargs), cls=func)
        if isinstance(func, ModuleRef) and func.path.startswith("numpy"):
            made = _numpy_source(func.path, args, kwargs)
            if made is not None:
                return made
        if isinstance(func, ModuleRef):
            api = keras_api_name(func.path)
            if api is not None:
                self._mark_keras()
                last = api.rsplit(".", 1)[-1]
                if api == "layers.Lambda":
                    return self._lambda_layer(args, kwargs, span)
                if api in ("layers.Dot", "layers.dot"):
                    return self._dot_layer(api, args, kwargs, span)
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
        if func is _SUPER:
            return SuperRef(self.self_stack[-1])
        if isinstance(func, ClassRef):
            self._mark_keras()
            return self._construct_user(func, args, kwargs, span)
        if isinstance(func, UserObj) and func.cls.kind == "model" and func.model is None and \
                self.self_stack and self.self_stack[-1] is func:
            # ``self(keras.Input(shape=...))`` in the model's own __init__: it builds itself
            # there; the model is built (call() traced) once __init__ is done
            inputs = args[0] if args and isinstance(args[0], (list, tuple)) else args[:1]
            if inputs and all(isinstance(t, TensorVal) and t.value.producer is None for t in inputs):
                shapes = [tuple(t.value.shape) for t in inputs]
                func.build_shapes = func.build_shapes or shapes
                return Unknown("the model built in its __init__")
        if isinstance(func, UserObj):
            self._mark_keras()
            return self._call_user(func, args, kwargs, span)
        if isinstance(func, ModelObj) and func.user is not None and any(
                isinstance(a, TensorVal) for a in list(args) + list(kwargs.values())):
            self._mark_keras()
            return self._call_subclass_model(func, args, kwargs, span)
        if isinstance(func, LayerObj):
            self._mark_keras()
            return self._call_layer(func, args, kwargs, span)
        if isinstance(func, LambdaLayerObj):
            return self._call_lambda(func, args, kwargs, span)
        if isinstance(func, DotLayerObj):
            return self._call_dot(func, args, kwargs, span)
        if isinstance(func, ModelObj) and func.user is not None and func.graph is None and args:
            self._build_from_data(func, args[0], span)
        if isinstance(func, (ModelObj, ModelHandle)) and not any(
                isinstance(a, TensorVal) for a in list(args) + list(kwargs.values())):
            # a model applied to data at run time: model(x, training=...)
            training = kwargs.get("training")
            self._record_loop("model_call", self._current_stmt(), node)
            self.program.training[-1].config = training if isinstance(training, bool) else None
            if isinstance(node.func, cst.Name):
                self.program.training[-1].model = node.func.value
            return Unknown("model output")
        if isinstance(func, ModelObj) and func.user is None:
            self._mark_keras()
            return self._call_model_as_layer(func, args, kwargs, span)
        if isinstance(func, ModelObj):
            self._mark_keras()
            raise Unsupported("calling a model as a layer is not supported yet")
        if isinstance(func, _BoundMethod):
            return self._call_method(func, args, kwargs, node)
        if isinstance(func, FunctionRef):
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
            if self.call_sites and _tensors_in(list(args) + list(kwargs.values())):
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
            try:
                result, _ = self._call_function(func, args, kwargs, builder_probe=False)
            finally:
                self.call_sites = saved_sites
                if scope is not None:
                    self.module_stack.pop()
            if scope is not None:
                scope.call_outputs[1] = [t.value for t in _tensors_in([result])]
            return result
        if callable(func) and getattr(func, "__self__", None) is not None and \
                isinstance(func.__self__, (list, dict, str, tuple)):
            try:
                return func(*args, **kwargs)  # container methods: list.append(tensor) is fine
            except Exception:  # "{:.3f}".format(<unknown>), [].index(<unknown>), ...
                return Unknown(f"{type(func.__self__).__name__} method on run-time values")
        if callable(func) and not isinstance(func, Unknown):
            if any(isinstance(a, (Unknown, TensorVal, LayerObj, ModelObj, ModelHandle, DatasetObj, TapeObj,
                                  keras_training.TrainingObj, _BoundMethod))
                   for a in list(args) + list(kwargs.values())):
                # (a _BoundMethod argument: a model attribute the frontend does not model,
                # ``len(model.trainable_variables)``)
                return Unknown("builtin on unknown values")
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                raise self._err(node, f"cannot evaluate call: {exc}") from None
        return Unknown("call")

    def _call_method(self, bound: "_BoundMethod", args, kwargs, node):
        obj, name = bound.obj, bound.name
        if isinstance(obj, ArrayVal):
            return _array_method(obj, name, args, kwargs)
        if isinstance(obj, _Rng):
            made = _numpy_source(f"numpy.random.{name}", args, kwargs)
            return Unknown(f"rng.{name}()") if made is None else made
        if isinstance(obj, SuperRef):
            if name == "__init__":
                self._name_user(obj.obj, kwargs.get("name"))
            return None
        if isinstance(obj, UserObj):
            fn = obj.cls.method(name)
            if fn is not None:
                return self._run_method(obj, fn, args, kwargs)
            if name == "add_weight":
                return self._add_weight(obj, args, kwargs, self._span(node))
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
        if isinstance(obj, DatasetObj):
            if name == "shuffle":
                return replace(obj, shuffle=True, ops=obj.ops + ["shuffle"])
            if name == "batch":
                size = args[0] if args else kwargs.get("batch_size")
                return replace(obj, batch=size, ops=obj.ops + ["batch"])
            if name in ("prefetch", "cache"):
                return replace(obj, ops=obj.ops + [name])
            if name == "repeat" and not args and kwargs.get("count") is None:
                return replace(obj, ops=obj.ops + ["repeat"])
            if name in ("repeat", "map") and len(node.args) == 1 and node.args[0].keyword is None:
                # "repeat:<count>", "map:<function>": the printer reads the source text
                text = cst.Module([]).code_for_node(node.args[0].value)
                elements = obj.elements if name == "repeat" else None  # a map may change the elements
                return replace(obj, ops=obj.ops + [f"{name}:{text}"], elements=elements)
            return Unknown(f"dataset.{name}()")
        if isinstance(obj, TapeObj) and name == "gradient":
            self._record_loop("gradient", self._current_stmt(), node)
            return Unknown("gradients")
        if isinstance(obj, keras_training.TrainingObj) and name == "apply_gradients":
            self._record_loop("apply_gradients", self._current_stmt(), node)
            return None
        if isinstance(obj, (ModelObj, ModelHandle)) and name in keras_training.TRAINING_METHODS:
            if isinstance(obj, ModelObj) and obj.user is not None and obj.graph is None:
                data = args[0] if args else kwargs.get("x")
                if isinstance(data, DatasetObj) and data.elements is not None:
                    els = data.elements
                    data = els[0] if isinstance(els, tuple) else els
                    data = ArrayVal("batch", (None, *data.shape), data.dtype)
                self._build_from_data(obj, data, self._span(node))
            return self._training_call(obj, name, args, kwargs, node)
        if isinstance(obj, ModelObj):
            if name == "add" and obj.kind == "sequential":
                layer = args[0]
                if isinstance(layer, TensorVal):  # Sequential.add(Input(...))
                    obj.input_shape = tuple(layer.value.shape[1:])
                    obj.input_dtype = layer.value.dtype
                    obj.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                    return None
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
            span = self._span(node)
            self.program.warn(span, keras_layers.adapt_note(obj.cls_name), self._line(span))
            return None
        return Unknown(f"layer.{name}()")

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
            elif isinstance(base, (keras_training.CallbackClass, ApiRef)) and (
                    not isinstance(base, ApiRef) or base.kind == "callback_base"):  # a training callback
                ref = keras_training.CallbackClass(stmt.name.value, stmt, base if isinstance(
                    base, keras_training.CallbackClass) else None)
                self.program.meta.setdefault("callback_classes", []).append(stmt.name.value)
                return ref
            if ref is not None:
                self.user_classes[stmt.name.value] = ref
                return ref
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

    def _unbuilt_subclass(self, model: ModelObj, where: cst.CSTNode) -> None:
        name = model.user.cls.node.name.value
        span = model.span or self._span(where)
        self.program.stub(span, f"{name}: the subclassed model's input shape is never given statically; "
                                "call model.build((None, ...)) or model(keras.Input(shape=...)) where it is "
                                "built", self._line(span))

    def _name_user(self, obj: UserObj, name: Any) -> None:
        """Keras names a layer when its ``__init__`` reaches Layer.__init__."""
        if not obj.keras_name:
            obj.keras_name = name if isinstance(name, str) else self._auto_name(obj.cls.node.name.value)

    def _run_method(self, obj: UserObj, fn: cst.FunctionDef, args, kwargs):
        """Run a method of a user Layer/Model with ``self`` bound to ``obj``."""
        saved_scope = self.scope_stack
        had = fn.name.value in self.inlined_helpers, fn.name.value in self.visited_functions
        self.self_stack.append(obj)
        self.scope_stack = []  # a method is not a helper function: no name prefix
        try:
            result, _ = self._call_function(FunctionRef(fn, obj.cls.env), [obj, *args], dict(kwargs),
                                            builder_probe=False)
        finally:
            self.self_stack.pop()
            self.scope_stack = saved_scope
            if not had[0]:
                self.inlined_helpers.discard(fn.name.value)
            if not had[1]:
                self.visited_functions.discard(fn.name.value)
        return result

    def _construct_user(self, cls: ClassRef, args, kwargs, span: Span):
        obj = UserObj(cls)
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

    def _store_attr(self, obj: UserObj, attr: str, value: Any) -> None:
        obj.attrs[attr] = value
        items = value if isinstance(value, (list, tuple)) else [value]
        for i, item in enumerate(items):
            suffix = attr if len(items) == 1 and not isinstance(value, (list, tuple)) else f"{attr}_{i}"
            if isinstance(item, ModelObj) and item.user is None and item.var is None:
                item.var = suffix  # a Functional/Sequential model held by a layer: named after it
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

    def _call_user(self, obj: UserObj, args, kwargs, span: Span):
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
        out.meta["layer"] = w.layer
        out.meta["stmt"] = self.stmt_stack[-1] if self.stmt_stack else None
        out.meta["scopes"] = tuple(self.module_stack)
        out.meta["owner_scope"] = owner.scope
        out.meta["seq"] = w.layer.seq
        out.meta["variable_of"] = (owner.keras_name, w.layer.attr)
        if w.initializer is not None:
            out.meta["initializers"] = {"initializer": w.initializer}
        infer_node(out)
        w.layer.nodes.append(out)
        return TensorVal(out.outputs[0])

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
                                doc=f"The Keras model ``{name}``, used as a layer.")
            model.scope = scope
        scope.calls += 1
        call_no = scope.calls
        scope.call_inputs[call_no] = [t.value for t in inputs]
        mapping = {id(gv): t.value for gv, t in zip(graph.inputs, inputs)}
        self.module_stack.append((scope, call_no))
        inner_calls: dict[tuple[int, int], int] = {}  # (scope, its call in the model) → this call's
        try:
            for node in graph.nodes:
                if "fused_into" in node.meta:
                    continue  # the layer call makes its activation again
                layer = node.meta["layer"]
                if layer.cls_name and layer.owner is None and layer.made_in is None:
                    layer.made_in = scope  # the submodule holds the model's layers
                ins = [TensorVal(mapping[id(v)]) for v in node.inputs]
                before = len(self.scratch.nodes)
                # the model's own sub-modules (a custom layer in it) run again, as calls of theirs
                inner = []
                chain_ = tuple(node.meta.get("scopes", ()))
                base = graph.meta.get("base_scopes", ())
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
                    self._call_layer(layer, [ins if len(ins) > 1 else ins[0]], {}, span)
                finally:
                    del self.module_stack[len(self.module_stack) - len(inner):]
                made = self.scratch.nodes[before:]
                originals = [node] + [n for n in graph.nodes if n.meta.get("fused_into") is node]
                for old, new in zip(originals, made):
                    if "tensor_op" in old.meta:
                        new.meta.setdefault("tensor_op", old.meta["tensor_op"])
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
            s_ = next(sc for sc, c in ((sc, c) for n in graph.nodes for sc, c in n.meta.get("scopes", ()))
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

    def _training_call(self, obj, method: str, args, kwargs, node):
        """Record ``model.compile/fit/...`` as a TrainingStatement (the printer replaces it)."""
        from transpiler.ir import training as T

        span = self._span(node)
        code = {}
        for i, arg in enumerate(node.args):
            key = arg.keyword.value if arg.keyword is not None else i
            code[key] = cst.Module([]).code_for_node(arg.value)
        receiver = cst.Module([]).code_for_node(node.func.value) if isinstance(node.func, cst.Attribute) else ""
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
        self.program.training.append(T.TrainingStatement(method, receiver, config, span, stmt, call=id(node),
                                                         source=cst.Module([]).code_for_node(node)))
        self.training_models[id(self.program.training[-1])] = obj
        return Unknown(f"model.{method}()")

    def _model_def_of(self, obj) -> ModelDef | None:
        if isinstance(obj, ModelObj):
            return self.model_defs.get(id(obj))
        if isinstance(obj, ModelHandle):
            if obj.builder is None and obj.model is not None:
                return self.model_defs.get(id(obj.model))
            return next((md for md in self.program.models if md.builder == obj.builder), None)
        return None

    def _record_object(self, var: str, value, stmt, node) -> None:
        """``optimizer = keras.optimizers.Adam(...)``, ``loss_fn = keras.losses.X(...)``,
        ``dataset = tf.data.Dataset...`` bound to a name: a custom loop will use them."""
        from transpiler.ir import training as T

        span = self._span(node)
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
                config, kind = None, "schedule_object"  # read where an optimizer takes it
            elif isinstance(value, list) and value and all(
                    isinstance(v, keras_training.TrainingObj) and v.kind == "callback" for v in value):
                config, kind = None, "callback_list"  # ``callbacks = [EarlyStopping(...), ...]``
            else:
                return
        except Unsupported as exc:
            self.program.stub(span, f"{var}: {exc}", self._line(span))
            return
        self.program.training.append(T.TrainingStatement(kind, var, config, span, id(stmt), call=id(node),
                                                         source=cst.Module([]).code_for_node(node)))

    def _current_stmt(self):
        return self._stmt_nodes[-1] if self._stmt_nodes else None

    def _record_loop(self, kind: str, stmt, node, value=None) -> None:
        """A custom training loop's statement (tape, gradient, apply_gradients)."""
        from transpiler.ir import training as T

        if any(ts.call == id(node) for ts in self.program.training):
            return  # a loop body read more than once
        span = self._span(node)
        self.program.training.append(T.TrainingStatement(
            kind, "", None, span, id(stmt) if stmt is not None else None, call=id(node),
            source=cst.Module([]).code_for_node(node)))

    def _load_model(self, node):
        """``keras.models.load_model(path)``: the script's one model class with saved weights."""
        from transpiler.ir import training as T

        span = self._span(node)
        entry = self.models[0] if len(self.models) == 1 else None
        if node.args and entry is None:
            # several models: the one the script saved to this path (model.save("m.keras"))
            path_code = cst.Module([]).code_for_node(node.args[0].value)
            saved = [self.training_models.get(id(st)) for st in self.program.training
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
        path = T.Code(cst.Module([]).code_for_node(node.args[0].value))
        self.program.training.append(T.TrainingStatement("load_model", "", path, span, stmt, call=id(node),
                                                         source=cst.Module([]).code_for_node(node)))
        self.training_models[id(self.program.training[-1])] = model
        return ModelHandle(builder, model)

    def _data_call(self, func: ApiRef, node):
        """``keras.datasets.X.load_data()`` / ``keras.utils.to_categorical(...)``: recorded so the
        printer can put framework-free numpy code in their place."""
        from transpiler.ir import training as T

        span = self._span(node)
        args = ", ".join(cst.Module([]).code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                         for a in node.args)
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        kind = "load_data" if func.kind == "dataset" else "to_categorical"
        config = func.name if kind == "load_data" else T.Code(args)
        self.program.training.append(T.TrainingStatement(kind, "", config, span, stmt, call=id(node),
                                                         source=cst.Module([]).code_for_node(node)))
        if kind == "load_data" and func.name in _DATASET_SHAPES and (not node.args or func.name == "cifar100"):
            (xs, ys), (xt, yt), dtype = _DATASET_SHAPES[func.name]
            return ((ArrayVal(kind, xs, dtype), ArrayVal(kind, ys, "uint8")),
                    (ArrayVal(kind, xt, dtype), ArrayVal(kind, yt, "uint8")))
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

        if any(ts.kind == "custom_code" and ts.stmt == id(node) for ts in self.program.training):
            return
        span = self._span(node)
        self.program.training.append(T.TrainingStatement(
            "custom_code", name, T.CustomCode(name, kind, cst.Module([]).code_for_node(node)), span, id(node),
            call=id(node), source=cst.Module([]).code_for_node(node)))

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
        if config.kind in keras_training.OBJECT_CALLBACKS:  # the object itself goes to fit()
            items = code_literals.list_items(codes.get("callbacks", ""))
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
        if isinstance(obj, ModelObj):
            # a subclassed model may be compiled before its first call builds it: one output
            graph = obj.graph if obj.user is not None else self._model_graph(obj)
        elif isinstance(obj, ModelHandle):
            for model, builder, _var, _args in self.models:
                if builder == obj.builder:
                    graph = self._model_graph(model)
        if graph is None:
            return ["output"], 1
        names = []
        for v in graph.outputs:
            producer = v.producer
            layer = producer.meta.get("fused_into", producer).meta.get("layer") if producer else None
            names.append(layer.keras_name if layer is not None and layer.keras_name else v.name)
        return names, len(graph.outputs)

    def _dot_layer(self, api: str, args, kwargs, span: Span):
        """``layers.Dot(axes, normalize=False, name=...)``; ``layers.dot([a, b], axes, ...)``
        builds it and calls it at once."""
        self._mark_keras()
        if api == "layers.dot":
            inputs = args[0] if args else kwargs.pop("inputs", None)
            args = list(args[1:])
        names = ("axes", "normalize")
        bound = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k in names}
        extra = set(kwargs) - set(names) - {"name", "dtype", "trainable"}
        if extra or len(args) > 2:
            raise Unsupported(f"layers.Dot: argument(s) {', '.join(sorted(extra)) or 'positional'} not supported")
        axes = bound.get("axes")
        ok = isinstance(axes, int) or (isinstance(axes, (tuple, list)) and len(axes) == 2 and
                                       all(isinstance(a, int) for a in axes))
        if not ok or not isinstance(bound.get("normalize", False), bool):
            raise Unsupported("layers.Dot: axes must be an int or a pair of ints known statically")
        layer = DotLayerObj(axes, bound.get("normalize", False), span)
        return self._call_dot(layer, [inputs], {}, span) if api == "layers.dot" else layer

    def _call_dot(self, layer: DotLayerObj, args, kwargs, span: Span):
        """Keras' batch_dot over one axis of each input, both of rank 2 or both of rank 3 (the
        batch axis first): ``(N, D)·(N, D) → (N, 1)``, ``(N, A, D)·(N, B, D) → (N, A, B)``."""
        inputs = args[0] if len(args) == 1 else None
        if kwargs or not isinstance(inputs, (list, tuple)) or len(inputs) != 2 or \
                not all(isinstance(t, TensorVal) for t in inputs):
            raise Unsupported("layers.Dot is called on a list of two tensors")
        a, b = inputs
        ranks = (len(a.value.shape), len(b.value.shape))
        if ranks not in ((2, 2), (3, 3)):
            raise Unsupported(f"layers.Dot of tensors of ranks {ranks} (only 2·2 and 3·3 are translated)")
        axes = [layer.axes, layer.axes] if isinstance(layer.axes, int) else list(layer.axes)
        axes = [ax % r for ax, r in zip(axes, ranks)]
        if 0 in axes:
            raise Unsupported("layers.Dot over the batch axis")
        if layer.normalize:  # Keras: x * min(rsqrt(sum(x ** 2)), 1 / 1e-7), as tf.l2_normalize(eps=1e-14)
            a = self._tensor_op("tf.l2_normalize", [a], {"axis": axes[0], "epsilon": 1e-14}, span)
            b = self._tensor_op("tf.l2_normalize", [b], {"axis": axes[1], "epsilon": 1e-14}, span)
        if ranks == (2, 2):
            dot = self._tensor_op("ops.einsum", ["nk,nk->n", a, b], {}, span)
            return self._tensor_op("ops.expand_dims", [dot, 1], {}, span)
        left = "n" + "".join("k" if i == axes[0] else "a" for i in (1, 2))
        right = "n" + "".join("k" if i == axes[1] else "b" for i in (1, 2))
        return self._tensor_op("ops.einsum", [f"{left},{right}->nab", a, b], {}, span)

    def _lambda_layer(self, args, kwargs, span: Span) -> LambdaLayerObj:
        """``layers.Lambda(function, output_shape=..., arguments={...}, name=...)``."""
        function = args[0] if args else kwargs.get("function")
        if not isinstance(function, (LambdaVal, FunctionRef)) or (isinstance(function, LambdaVal) and
                                                                  function.env is None):
            raise Unsupported("layers.Lambda of something other than a lambda or a function of the script")
        if kwargs.get("mask") is not None:
            raise Unsupported("layers.Lambda(mask=...) is not translated")
        arguments = kwargs.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise Unsupported("layers.Lambda(arguments=...) not known statically")
        self._mark_keras()
        return LambdaLayerObj(function, dict(arguments), span)

    def _call_lambda(self, layer: LambdaLayerObj, args, kwargs, span: Span):
        """The Lambda's function on its input: its ops go where the layer is called (a
        Lambda holds no weights, Keras saves nothing for it)."""
        if len(args) != 1 or set(kwargs) - {"training", "mask"} or kwargs.get("mask") is not None:
            raise Unsupported("a Lambda layer called with more than its input")
        fn = layer.function
        if isinstance(fn, FunctionRef):
            result, _ = self._call_function(fn, [args[0]], dict(layer.arguments), builder_probe=False)
            return result
        params = fn.node.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None or \
                params.kwonly_params or not params.params:
            raise Unsupported("a Lambda's lambda with *args, **kwargs or keyword-only parameters")
        env = Env(fn.env)
        extra = dict(layer.arguments)
        for i, param in enumerate(params.params):
            name = param.name.value
            if i == 0:
                value = args[0]
            elif name in extra:
                value = extra.pop(name)
            elif param.default is not None:
                value = self._eval(param.default, fn.env)
            else:
                raise Unsupported(f"a Lambda's lambda: no value for its parameter {name!r}")
            env.set(name, value)
        if extra:
            raise Unsupported(f"layers.Lambda(arguments=...): {', '.join(sorted(extra))} not a parameter")
        return self._eval(fn.node.body, env)

    def _call_function(self, fn: FunctionRef, args, kwargs, builder_probe: bool):
        """Interpret a user function with bound arguments; returns (result, bound args)."""
        params = fn.node.params
        env = Env(fn.env)
        bound: dict[str, Any] = {}
        positional = list(params.posonly_params) + list(params.params)
        for i, param in enumerate(positional):
            pname = param.name.value
            if i < len(args):
                value = args[i]
            elif pname in kwargs:
                value = kwargs.pop(pname)
            elif param.default is not None:
                value = self._eval(param.default, fn.env)
            else:
                raise self._err(fn.node, f"{fn.node.name.value}(): missing argument {pname!r}")
            bound[pname] = value
            env.set(pname, value)
        if params.star_arg is not None and isinstance(params.star_arg, cst.Param):
            env.set(params.star_arg.name.value, tuple(args[len(positional):]))
        for param in params.kwonly_params:
            pname = param.name.value
            value = kwargs.pop(pname) if pname in kwargs else self._eval(param.default, fn.env)
            bound[pname] = value
            env.set(pname, value)
        if params.star_kwarg is not None:
            env.set(params.star_kwarg.name.value, dict(kwargs))
        if builder_probe:  # sizes with provenance: the builder's parameters by name
            for pname, value in bound.items():
                bound[pname] = sizes.named(value, pname)
                env.set(pname, bound[pname])
        name = fn.node.name.value
        self.visited_functions.add(name)
        if not builder_probe and self.scope_stack:
            self.inlined_helpers.add(name)
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1
        self.scope_stack.append(name if builder_probe else f"{name}{self.scope_counts[name]}")
        saved_stmts, saved_sites = self.stmt_stack, self.call_sites
        self.stmt_stack = [] if builder_probe else saved_stmts
        if builder_probe:
            self.call_sites = []
        try:
            self._exec_block(fn.node.body.body, env)
            result = None
        except _Return as ret:
            result = ret.value
        finally:
            self.scope_stack.pop()
            self.stmt_stack, self.call_sites = saved_stmts, saved_sites
        return result, bound

    def _mark_keras(self) -> None:
        if self.stmt_stack:
            self.keras_statements.add(self.stmt_stack[-1])

    # -- layers -------------------------------------------------------------------
    def _construct_layer(self, cls_name: str, args, kwargs, span: Span) -> LayerObj:
        reg = keras_layers.lookup(cls_name)
        if reg is None:
            raise Unsupported(keras_layers.unsupported_reason(cls_name))
        names = reg.signature.names
        positional = [(names[i] if i < len(names) else f"#{i + 1}", a) for i, a in enumerate(args)]
        unknown = [k for k, v in positional + list(kwargs.items())
                   if _not_static(v) and k not in keras_layers.INITIALIZER_KWARGS
                   and k not in keras_layers.TRAINING_KWARGS]
        if unknown:
            raise FrontendError(f"{cls_name}: argument(s) {', '.join(unknown)} cannot be decided statically "
                                f"(computed at run time)", span)
        explicit = kwargs.get("name")
        input_shape = kwargs.get("input_shape")
        if input_shape is None and kwargs.get("batch_input_shape") is not None:
            input_shape = tuple(kwargs["batch_input_shape"])[1:]
        if input_shape is None and kwargs.get("input_dim") is not None and cls_name != "Embedding":
            input_shape = (kwargs["input_dim"],)
        declared = set(reg.signature.names)
        layer_kwargs = {k: v for k, v in kwargs.items() if k in declared or (
            k not in keras_layers.COMMON_KWARGS and k not in keras_layers.INITIALIZER_KWARGS
            and k not in keras_layers.TRAINING_KWARGS)}
        bound = BoundArgs(cls_name, reg.signature, list(args), layer_kwargs)
        try:
            spec = reg.fn(bound)
            spec.attrs = ops_table.get(spec.op).complete_attrs(spec.attrs)
        except TypeError as exc:  # an argument of the wrong kind, e.g. Dense("8")
            raise FrontendError(f"{cls_name}: {exc}", span) from None
        extra = [k for k in bound.unused() if bound.values[k] != reg.signature.defaults.get(k)
                 and k not in keras_layers.INITIALIZER_KWARGS  # (recorded below)
                 and not (k in keras_layers.TRAINING_KWARGS and k in kwargs)]  # (read or reported below)
        if extra:
            raise Unsupported(f"{cls_name}: argument(s) {', '.join(extra)} not supported")
        for key in sorted(set(bound.values) & keras_layers.INITIALIZER_KWARGS - set(kwargs)):
            if bound.values[key] != reg.signature.defaults.get(key):  # given by position
                spec.initializers[key] = bound.values[key]
        for key in sorted(set(kwargs) & keras_layers.TRAINING_KWARGS):
            factors = _regularizer_factors(kwargs[key]) if key.endswith("_regularizer") and \
                key != "activity_regularizer" else None
            if factors is not None:
                spec.regularizers[key] = factors  # added to the training loss (torch printer)
            elif kwargs[key] is not None:
                self.program.warn(span, f"{cls_name}: {key} is not translated (affects training only)",
                                  self._line(span))
        for key in sorted(set(kwargs) & keras_layers.INITIALIZER_KWARGS):
            spec.initializers[key] = kwargs[key]
        spec.attrs = ops_table.get(spec.op).complete_attrs(spec.attrs)
        if spec.inner is not None:
            spec.attrs["layer"]["attrs"] = ops_table.get(spec.inner.op).complete_attrs(spec.inner.attrs)
        if explicit is None:
            keras_name = self._auto_name(reg.canonical_class)
        else:
            keras_name = explicit
        layer = LayerObj(spec=spec, cls_name=cls_name, keras_name=keras_name, span=span,
                         explicit_name=explicit, input_shape=tuple(input_shape) if input_shape else None,
                         scope=self._scope())
        layer.stmt = self.stmt_stack[-1] if self.stmt_stack else None
        layer.made_in = self.module_stack[-1][0] if self.module_stack else None
        self.seq += 1
        layer.seq = self.seq
        return layer

    def _scope(self) -> str:
        """The outermost helper call under the builder (``residual_block3``), or ''."""
        return self.scope_stack[1] if len(self.scope_stack) > 1 else ""

    def _auto_name(self, cls_name: str) -> str:
        prefix = keras_layers.keras_auto_name(cls_name)
        n = self.uids.get(prefix, 0)
        self.uids[prefix] = n + 1
        return prefix if n == 0 else f"{prefix}_{n}"

    def _make_input(self, kind: str, args, kwargs, span: Span) -> TensorVal:
        shape = kwargs.get("shape", args[0] if args else None)
        if shape is None and kwargs.get("batch_shape") is not None:
            shape = tuple(kwargs["batch_shape"])[1:]
        if shape is None and kwargs.get("input_shape") is not None:
            shape = kwargs["input_shape"]
        if shape is None or isinstance(shape, Unknown):
            raise FrontendError("Input: the shape must be known statically", span)
        if isinstance(shape, int):
            shape = (shape,)
        shape = (None, *shape)
        dtype = kwargs.get("dtype") or "float32"
        value = self.scratch.new_value("input", shape=shape, dtype=str(dtype),
                                       layout=default_layout(len(shape)))
        value.var = kwargs.get("name")
        self.value_stmts[id(value)] = self.stmt_stack[-1] if self.stmt_stack else None
        self.scratch.inputs.append(value)
        return TensorVal(value)

    def _apply_anonymous(self, spec: LayerSpec, inputs, span: Span, hint: str):
        spec.attrs = ops_table.get(spec.op).complete_attrs(spec.attrs)
        layer = LayerObj(spec=spec, cls_name="", keras_name="", span=span, hint=hint,
                         scope=self._scope(), owner=self.self_stack[-1] if self.self_stack else None)
        return self._call_layer(layer, [inputs if len(inputs) > 1 else inputs[0]], {}, span)

    def _warn_fixed_mode(self, kwargs, what: str, span: Span) -> None:
        """``layer(x, training=False)``: Keras fixes the mode of that call; the torch module
        follows model.train()/eval(). Said, since training then differs."""
        fixed = kwargs.get("training")
        if isinstance(fixed, bool):
            differs = "predictions differ" if fixed else "training differs"
            self.program.warn(span, f"{what}(..., training={fixed}): the fixed mode is not translated (the "
                                    f"torch module follows model.train()/eval(): {differs} where it has "
                                    "dropout, noise or batch normalization)", self._line(span))

    def _call_layer(self, layer: LayerObj, args, kwargs, span: Span):
        self._warn_fixed_mode(kwargs, layer.cls_name or layer.spec.op, span)
        # the call's tensors (several for attention layers) and Keras' masks: keras_calls
        call = keras_calls.bind_call(layer.spec, layer.cls_name, list(args), dict(kwargs))
        inputs = call.tensors
        if not all(isinstance(t, TensorVal) for t in inputs):
            raise FrontendError(f"{layer.cls_name or layer.spec.op}: called on something that is not a tensor", span)
        spec = layer.spec
        attrs = {**spec.attrs, **call.attrs} if call.attrs else spec.attrs
        values = [t.value for t in inputs] + call.mask_inputs + self._initial_states(layer, call.states)
        for warning in call.warnings:
            self.program.warn(span, warning, self._line(span))
        if self.self_stack:  # a call() runs on tensors: a layer unsetting their masks is seen after it
            for t in call.clears:
                t.mask = None
        try:  # how many outputs: the op's shape rule says (an LSTM's states, a split's parts)
            n_out = self._probe_outputs(spec.op, attrs, values)
        except (IRError, TypeError, ValueError, IndexError) as exc:  # e.g. Conv1D on an image
            raise FrontendError(f"{layer.cls_name or spec.op}: {exc}", span) from None
        node = self.scratch.add_node(spec.op, layer.hint or spec.op, values, n_out,
                                     attrs=attrs, span=span, source_name=layer.keras_name or None)
        node.meta["layer"] = layer
        node.meta["stmt"] = self.stmt_stack[-1] if self.stmt_stack else None
        node.meta["scopes"] = tuple(self.module_stack)
        if layer.cls_name:
            node.meta["owner_scope"] = layer.owner.scope if layer.owner is not None else layer.made_in
            node.meta["seq"] = layer.seq
        node.meta["call_span"] = span
        if self.call_sites:
            node.meta["site"] = self.call_sites[0]  # the builder's line that led here
        if spec.initializers:
            node.meta["initializers"] = dict(spec.initializers)
        if spec.regularizers:
            node.meta["regularizers"] = dict(spec.regularizers)
        try:
            infer_node(node)
        except (IRError, TypeError, ValueError, IndexError) as exc:  # e.g. Conv1D on an image
            raise FrontendError(f"{layer.cls_name or spec.op}: {exc}", span) from None
        strides = node.attrs.get("strides")
        if node.attrs.get("padding") == "same" and isinstance(strides, tuple) and any(
                s > 1 and values[0].shape[ax] is None
                for s, ax in zip(strides, spatial_axes(values[0].layout or default_layout(len(values[0].shape))))):
            # TF's pads then depend on the length, known only at run time
            raise Unsupported(f"{layer.cls_name or spec.op}: padding='same' with strides > 1 on an axis "
                              "of unknown length is not translated yet")
        layer.nodes.append(node)
        masks = keras_calls.output_masks(spec, layer.cls_name, attrs, call, len(node.outputs))
        outputs = [TensorVal(v, m) for v, m in zip(node.outputs, masks)]
        if spec.activation is not None:
            act_op, act_attrs = spec.activation
            act = self.scratch.add_node(act_op, f"{layer.hint or spec.op}_act", [node.outputs[0]],
                                        attrs=act_attrs, span=span)
            act.meta["fused_into"] = node
            act.meta["scopes"] = node.meta["scopes"]
            infer_node(act)
            outputs[0] = TensorVal(act.outputs[0], masks[0])
        if len(outputs) == 1:
            return outputs[0]
        return outputs

    @staticmethod
    def _initial_states(layer: LayerObj, states: list) -> list:
        """The values of an RNN call's ``initial_state`` tensors (none: []); a state the same
        layer computed (a decoding loop feeding a layer its own state) is refused."""
        what = layer.cls_name or layer.spec.op
        if not all(isinstance(t, TensorVal) for t in states):
            raise Unsupported(f"{what}(initial_state=...): a state is not a tensor")
        for t in states:
            producer = t.value.producer
            if producer is not None and producer.meta.get("layer") is layer:
                raise Unsupported(f"{what}(initial_state=...) read back from the same layer's own state (a "
                                  "recurrent loop over layer calls) is not translated yet")
        return [t.value for t in states]

    @staticmethod
    def _probe_outputs(op: str, attrs: dict, inputs) -> int:
        from transpiler.ir.passes.shape_inference import _RULES

        probe = Node(op, "probe", inputs, [], attrs=attrs)
        layouts = [v.layout or default_layout(len(v.shape)) for v in inputs]
        return len(_RULES[op](probe, [v.shape for v in inputs], layouts))

    # -- models -------------------------------------------------------------------
    def _make_sequential(self, args, kwargs, span: Span) -> ModelObj:
        layers = list(args[0]) if args else list(kwargs.get("layers") or [])
        model = ModelObj("sequential", span, name=kwargs.get("name"))
        model.construct_statement = self.stmt_stack[-1] if self.stmt_stack else None
        for item in layers:
            if isinstance(item, TensorVal):
                model.input_shape = tuple(item.value.shape[1:])
                model.input_dtype = item.value.dtype
                model.input_name = item.value.var
            elif isinstance(item, (LayerObj, UserObj, LambdaLayerObj)) or isinstance(item, ModelObj) and \
                    item is not model:
                model.layers.append(item)  # Keras layers, custom layers, models used as layers
            else:
                raise FrontendError("Sequential: an element is not a layer", span)
        self._register_model(model, builder=None, var=None, args={})
        return model

    def _make_functional(self, args, kwargs, span: Span, node) -> ModelObj:
        inputs = kwargs.get("inputs", args[0] if args else None)
        outputs = kwargs.get("outputs", args[1] if len(args) > 1 else None)
        if inputs is None or outputs is None:
            raise FrontendError("Model(...) needs inputs and outputs (subclassed models come later)", span)
        model = ModelObj("functional", span, name=kwargs.get("name"))
        model.construct_statement = self.stmt_stack[-1] if self.stmt_stack else None
        model.graph = self._extract_graph(inputs, outputs, span)
        # the statements that only built this graph go with it (the class replaces them)
        for node_ in model.graph.nodes:
            model.statements.add(node_.meta.get("stmt"))
            model.statements.add(getattr(node_.meta.get("layer"), "stmt", None))
        for value in model.graph.inputs:
            model.statements.add(self.value_stmts.get(id(value)))
        self._register_model(model, builder=None, var=None, args={})
        return model

    def _extract_graph(self, inputs, outputs, span: Span) -> Graph:
        def flat(x):
            if isinstance(x, dict):
                return [t for v in x.values() for t in flat(v)]
            if isinstance(x, (list, tuple)):
                return [t for v in x for t in flat(v)]
            if isinstance(x, TensorVal):
                return [x]
            raise FrontendError("Model(): inputs/outputs must be tensors", span)

        in_vals = [t.value for t in flat(inputs)]
        out_vals = [t.value for t in flat(outputs)]
        if any(t.mask is not None for t in flat(outputs)):
            self.program.warn(span, "a model output carries Keras' mask (Embedding(mask_zero=True)): Keras "
                              "leaves the padded steps out of the loss and metrics in fit(); the torch "
                              "training loop counts them (training only)", self._line(span))
        needed: set[int] = set()
        stack = list(out_vals)
        in_ids = {id(v) for v in in_vals}
        while stack:
            v = stack.pop()
            if id(v) in in_ids or v.producer is None:
                if id(v) not in in_ids:
                    raise FrontendError("Model(): output depends on an input not given to the model", span)
                continue
            if id(v.producer) in needed:
                continue
            needed.add(id(v.producer))
            stack.extend(v.producer.inputs)
        graph = Graph("model", span=span)
        graph.inputs = in_vals
        graph.outputs = out_vals
        graph.nodes = [n for n in self.scratch.nodes if id(n) in needed]
        graph.meta["base_scopes"] = tuple(self.module_stack)  # the scopes around where it was built
        if isinstance(outputs, dict) and all(isinstance(t, TensorVal) for t in outputs.values()):
            graph.meta["output_keys"] = list(outputs)  # Keras returns a dict keyed like this
        return graph

    def _model_graph(self, model: ModelObj, node=None) -> Graph:
        if model.graph is None:
            if model.input_shape is None:
                first = model.layers[0] if model.layers else None
                if first is None or getattr(first, "input_shape", None) is None:
                    raise FrontendError("Sequential model without a known input shape "
                                        "(give input_shape= or keras.Input)", model.span)
                model.input_shape = first.input_shape
            x = self._make_input("Input", [model.input_shape],
                                 {"dtype": model.input_dtype, "name": model.input_name}, model.span)
            start = x
            for layer in model.layers:
                if isinstance(layer, LayerObj):
                    x = self._call_layer(layer, [x], {}, layer.span)
                elif isinstance(layer, LambdaLayerObj):
                    x = self._call_lambda(layer, [x], {}, layer.span)
                elif isinstance(layer, UserObj):
                    x = self._call_user(layer, [x], {}, model.span)
                elif layer.user is not None:
                    x = self._call_subclass_model(layer, [x], {}, model.span)
                else:
                    x = self._call_model_as_layer(layer, [x], {}, model.span)
                if isinstance(x, list):
                    x = x[0]
            model.graph = self._extract_graph(start, x, model.span)
        return model.graph

    def _register_model(self, model: ModelObj, builder, var, args) -> None:
        for i, (m, b, v, a) in enumerate(self.models):
            if m is model:
                self.models[i] = (m, builder or b, var or v, args or a)
                return
        self.models.append((model, builder, var, args))

    def _finish_model(self, model: ModelObj, builder, var, args) -> None:
        graph = self._model_graph(model)
        var_name = None
        if builder is None:
            var_name = model.var
            for name, value in self._all_bindings():
                if var_name is None and value is model:
                    var_name = name
                    break
        base = model.name or builder or var_name or "model"
        if model.user is not None:
            base = model.user.keras_name or base
        graph.name = base
        graph.span = model.span
        class_name = _camel(model.name or (builder[len("build_"):] if builder and builder.startswith("build_")
                                           and len(builder) > 6 else builder) or var_name or "Model")
        if class_name in ("Model", ""):
            class_name = "Net"
        used = _user_classes_in(graph)
        if used:
            graph.meta["user_classes"] = sorted(used)
            self.program.meta.setdefault("translated_classes", set()).update(used)
        if model.user is not None:
            # the user's own class name: the generated module takes the subclass's place
            class_name = model.user.cls.node.name.value
            self.program.meta.setdefault("translated_classes", set()).add(class_name)
        else:
            class_name = self._unique_class_name(class_name)
        for node in graph.nodes:
            # layers of subclass instances are named after their attribute path (block1_conv)
            layer = node.meta.get("layer")
            owner = getattr(layer, "owner", None)
            if layer is not None and owner is not None and owner.path and not layer.scope:
                layer.scope = owner.path
        self._name_nodes(graph)
        if model.user is not None:
            graph.meta["root_scope"] = model.user.scope
            for hook in ("predict_step", "compute_metrics", "compile"):
                fn = model.user.cls.method(hook)
                if fn is not None:  # Keras calls these from fit/evaluate/predict: not translated
                    span = self._span(fn)
                    self.program.stub(span, f"{class_name}.{hook}(): overriding Keras' {hook} is not translated "
                                            "yet (the generated loop does what Keras' own does)", self._line(span))
            step = _custom_step(model.user)
            if step:
                step["spans"] = {name: self._span(fn) for name, fn in step.pop("nodes").items()}
                graph.meta["custom_step"] = step
        if model.kind == "sequential" and all(isinstance(layer, LayerObj) for layer in model.layers):
            graph.meta["keras_layers"] = [layer.keras_name for layer in model.layers]  # model.layers, in order
        _local_names(graph, graph.meta.get("root_scope"))
        self._attach_comments(graph)
        md = ModelDef(graph=graph, class_name=class_name, builder=builder, builder_args=args,
                      var=var_name, statements={s for s in model.statements if s is not None},
                      construct_statement=model.construct_statement)
        self.program.models.append(md)
        self.model_defs[id(model)] = md

    def _unique_class_name(self, name: str) -> str:
        """``name``, or ``name2``, ``name3``... when a model or a module-level name has it."""
        taken = {md.class_name for md in self.program.models} | set(self.globals.vars)
        # the module classes of earlier models too (a model used as a layer in a builder)
        taken |= {sc.class_name for md in self.program.models for node in md.graph.nodes
                  for sc, _call in node.meta.get("scopes", ())}
        sep = "_" if name[-1:].isdigit() else ""
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name}{sep}{n}"
        return candidate

    def _all_bindings(self):
        yield from self.globals.vars.items()

    def _name_nodes(self, graph: Graph) -> None:
        """Give each layer a unique, legal, readable attribute name."""
        taken: dict[str, int] = {}
        auto_counts: dict[str, int] = {}
        by_layer: dict[int, str] = {}
        for node in graph.nodes:
            layer = node.meta.get("layer")
            key = id(layer) if layer is not None else id(node)
            if key in by_layer:
                node.name = by_layer[key]
                continue
            hint = None
            if layer is not None:
                hint = layer.hint or layer.explicit_name
                if layer.explicit_name and hint == f"{layer.explicit_name}_layer":
                    # ``dense_layer = layers.Dense(..., name="dense")``, as the Keras printer
                    # spells a layer called more than once: the name is the layer's
                    hint = layer.explicit_name
            auto = hint is None
            hint = _identifier(hint or _default_hint(node))
            if layer is not None and layer.scope and (layer.explicit_name is None or layer.hint):
                # the user's name= is unique already; a helper's made-up names are not
                hint = f"{layer.scope}_{hint}"
            if hint in ("x", "self", "input", "inputs", "outputs", "model", "forward", "training"):
                hint = f"{hint}_layer"
            if auto:
                # unnamed layers are numbered like a hand-written module: conv1, conv2, ...
                auto_counts[hint] = auto_counts.get(hint, 0) + 1
                name = f"{hint}{auto_counts[hint]}"
            else:
                name = hint
            n = 0
            while name in taken:
                n += 1
                name = f"{hint}_{n}"
            taken[name] = 1
            by_layer[key] = name
            node.name = name

    def _attach_comments(self, graph: Graph) -> None:
        """Attach each comment of the model's source to the node it precedes, ends or sits in.

        A node is found at its own source lines and, when a helper function built it, at
        the line that called the helper: ``# stem`` above ``x = conv_bn(x, 8)`` belongs to
        the helper's first layer, not to whatever layer the builder makes next.
        """
        entries = []  # (first line, last line, graph order, node or module scope)
        root = graph.meta.get("root_scope")
        scopes_seen: set[int] = set()
        for i, node in enumerate(graph.nodes):
            owner = node.meta.get("fused_into", node)
            layer = node.meta.get("layer")
            built = layer.span if root is not None and layer is not None and layer.cls_name else None
            for span in (node.span, node.meta.get("site"), built):
                if span is not None and span.line > 0:
                    entries.append((span.line, span.end_line or span.line, i, owner))
            for scope, _ in node.meta.get("scopes", ()):
                # a Layer subclass constructed in __init__: comments above ``self.block = ...``
                if scope is not root and scope.kind == "class" and scope.span is not None \
                        and id(scope) not in scopes_seen:
                    scopes_seen.add(id(scope))
                    entries.append((scope.span.line, scope.span.end_line or scope.span.line, i, scope))
        if not entries:
            return
        entries.sort(key=lambda e: (e[0], e[2]))
        last_line = max(e[1] for e in entries)
        used = self.program.meta.setdefault("used_comments", set())
        for line, (text, full) in sorted(self.comments.items()):
            if line in used or line > last_line:
                continue
            inside = [e for e in entries if e[0] <= line <= e[1]]
            if inside:
                # the innermost call holding the comment (the one that starts last)
                target = max(inside, key=lambda e: (e[0], -e[2]))[3]
            elif full:
                below = next((e for e in entries if e[0] > line), None)
                if below is None or not (below[0] - line <= 3 or self._only_comments(line, below[0])):
                    continue
                target = below[3]
            else:
                continue
            target.comments.append(text)
            if isinstance(target, Node) and not span_holds(target.span, line):
                # found at the line that called the helper, not in the helper
                target.meta.setdefault("site_comments", []).append(text)
            used.add(line)

    def _only_comments(self, after: int, before: int) -> bool:
        """True when the lines strictly between ``after`` and ``before`` are blank or comments."""
        for ln in range(after + 1, before):
            text = self.lines[ln - 1].strip() if ln <= len(self.lines) else ""
            if text and not text.startswith("#"):
                return False
        return True


_ASTROID_UNKNOWN = object()


#: modules whose values are never static constants for the translation (and whose
#: sources astroid would otherwise parse, for seconds, to find that out)
_FRAMEWORK_MODULES = {"keras", "tensorflow", "tf_keras", "torch", "jax"}


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
        out = self.frontend._apply_anonymous(LayerSpec(op, attrs), [TensorVal(v) for v in inputs], self.span, hint)
        values = [t.value for t in (out if isinstance(out, list) else [out])]
        node = values[0].producer
        node.meta["tensor_op"] = self.what
        for v in inputs:
            if v.producer is not None and v.producer.op == "constant":
                v.producer.meta.setdefault("fused_into", node)  # reported and commented with its reader
        return values

    def constant(self, value) -> Value:
        fe = self.frontend
        node = fe.scratch.add_node("constant", "constant", [], attrs={"value": value}, span=self.span)
        node.meta["stmt"] = fe.stmt_stack[-1] if fe.stmt_stack else None
        node.meta["scopes"] = tuple(fe.module_stack)
        infer_node(node)
        return node.outputs[0]

    def warn(self, message: str) -> None:
        self.frontend.program.warn(self.span, message, self.frontend._line(self.span))


def _tensor_arg(value: Any) -> Any:
    """An argument as keras_tensor_ops reads it: tensors as IR Values, module paths as ApiPath."""
    if isinstance(value, TensorVal):
        return value.value
    if isinstance(value, ModuleRef):
        return keras_tensor_ops.ApiPath(value.path)
    if isinstance(value, (list, tuple)):
        return type(value)(_tensor_arg(v) for v in value)
    if isinstance(value, dict):
        return {k: _tensor_arg(v) for k, v in value.items()}
    return value


def _wrap_tensors(value: Any) -> Any:
    if isinstance(value, Value):
        return TensorVal(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap_tensors(v) for v in value)
    return value


def _run_time(value: Any) -> bool:
    """True when ``value`` holds something only the running program knows (data, a model's
    output outside the graph), at any depth."""
    if isinstance(value, (Unknown, ModelObj, ModelHandle, DatasetObj, TapeObj)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_run_time(v) for v in value)
    if isinstance(value, dict):
        return any(_run_time(v) for v in value.values())
    return False


def _has_tensor(value: Any) -> bool:
    if isinstance(value, TensorVal):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_has_tensor(v) for v in value.values())
    return False


def _astroid_static(assigned: Any, astroid: Any) -> bool:
    """Whether an assignment can bind a constant worth asking astroid about: no calls but
    to safe builtins, nothing imported from a framework."""
    stmt = assigned.statement()
    if isinstance(stmt, (astroid.Import, astroid.ImportFrom)):
        modname = getattr(stmt, "modname", None) or stmt.names[0][0]
        return modname.split(".")[0] not in _FRAMEWORK_MODULES
    value = getattr(stmt, "value", None)
    if value is None:
        return True
    for call in value.nodes_of_class(astroid.Call):
        if not (isinstance(call.func, astroid.Name) and call.func.name in _SAFE_BUILTINS):
            return False
    return True


def _astroid_constant(inferred: Any, astroid: Any) -> Any:
    """A Python value for an astroid constant, list or tuple of constants."""
    if isinstance(inferred, astroid.Const):
        return inferred.value
    if isinstance(inferred, (astroid.List, astroid.Tuple)):
        values = [_astroid_constant(e, astroid) for e in inferred.elts]
        if any(v is _ASTROID_UNKNOWN for v in values):
            return _ASTROID_UNKNOWN
        return values if isinstance(inferred, astroid.List) else tuple(values)
    return _ASTROID_UNKNOWN


def _not_static(value: Any) -> bool:
    """True for a value only the running program knows (``sys.argv[1]``, an imported
    constant of another module), at any depth of a tuple, list or dict."""
    if isinstance(value, (Unknown, ModuleRef, FunctionRef, TensorVal, ModelObj)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_not_static(v) for v in value)
    if isinstance(value, dict):
        return any(_not_static(v) for v in value.values())
    return False


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
    return {"methods": [(m.name.value, code(m.with_changes(leading_lines=()))) for m in props + steps],
            "trackers": trackers, "nodes": {m.name.value: m for m in steps},
            # Keras' own train_step/test_step around the model's compute_loss: written out
            "default_steps": [n for n in ("train_step", "test_step") if loss is not None and cls.method(n) is None],
            "loss_params": [p.name.value for p in loss.params.params[1:]] if loss is not None else []}


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


class _BoundMethod:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name


#: keras.datasets shapes: (train x, train y), (test x, test y), x dtype
_DATASET_SHAPES = {
    "mnist": (((60000, 28, 28), (60000,)), ((10000, 28, 28), (10000,)), "uint8"),
    "fashion_mnist": (((60000, 28, 28), (60000,)), ((10000, 28, 28), (10000,)), "uint8"),
    "cifar10": (((50000, 32, 32, 3), (50000, 1)), ((10000, 32, 32, 3), (10000, 1)), "uint8"),
    "cifar100": (((50000, 32, 32, 3), (50000, 1)), ((10000, 32, 32, 3), (10000, 1)), "uint8"),
    "boston_housing": (((404, 13), (404,)), ((102, 13), (102,)), "float64"),
}
_ARRAY_METHODS = {"astype", "reshape", "copy", "squeeze"}


@dataclass(eq=False)
class _Rng:
    """``np.random.default_rng(seed)`` / ``np.random.RandomState(seed)``."""


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
_SUPER = object()
#: base classes of a custom layer, as keras_api_name spells them
_LAYER_BASES = {"layers.Layer", "Layer", "layers.layer.Layer", "engine.base_layer.Layer",
                "engine.Layer"}


def _user_classes_in(graph: Graph) -> set[str]:
    """The user Layer classes whose instances built nodes of ``graph``."""
    out = set()
    for node in graph.nodes:
        owner = getattr(node.meta.get("layer"), "owner", None)
        while owner is not None:
            out.add(owner.cls.node.name.value)
            base = owner.cls.base
            while base is not None:
                out.add(base.node.name.value)
                base = base.base
            owner = owner.owner
    return out


_RESERVED_ATTRS = {"training", "forward", "modules", "parameters", "children", "apply", "eval", "train", "to",
                   "type", "float", "half", "double", "cuda", "cpu", "state_dict", "buffers", "zero_grad",
                   "register_buffer", "add_module", "extra_repr", "reset_parameters", "x", "self"}


def _local_names(graph: Graph, root: ModuleScope | None) -> None:
    """The attribute names inside their own module: a layer's ``node.meta["local"] =
    (attr, index in a list attribute or None)``; a helper-function scope's ``attr``
    (numbered among siblings: ``conv_bn1``, ``conv_bn2``)."""
    scopes: list[ModuleScope] = []
    seen: set[int] = set()
    for node in graph.nodes:
        for sc, _ in node.meta.get("scopes", ()):
            if sc is not root and id(sc) not in seen:
                seen.add(id(sc))
                scopes.append(sc)
    def owned_by_root(n: Node) -> bool:
        layer = n.meta.get("layer")
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
        layer = node.meta.get("layer")
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
        layer = node.meta.get("layer")
        if layer is not None and layer.cls_name and id(layer) not in layers and id(layer) not in counted \
                and not (layer.explicit_name or layer.hint):
            counted.add(id(layer))
            owner = layer.owner.scope if layer.owner is not None else layer.made_in
            k = (key(owner), _default_hint(node))
            totals[k] = totals.get(k, 0) + 1
    auto: dict[tuple, int] = {}
    for node in graph.nodes:
        layer = node.meta.get("layer")
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
        node.meta["local"] = layers[id(layer)]


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


def read_keras(source: str, path: str = "<string>") -> Program:
    """Parse Keras ``source`` into an ir.Program (no framework is imported)."""
    return KerasFrontend(source, path).run()


def _walk_names(node) -> list:
    """Every Name inside ``node``."""
    found: list = []

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(V())
    return found
