"""PyTorch training program → the framework-neutral training configuration (ir.training).

The code around the model is read by a small abstract interpretation over what each
variable holds: a model (from a builder), an optimizer, a loss object, a scheduler, a
``DataLoader`` over a ``TensorDataset``, a state_dict, or array data (a torch tensor
outside the model, which the target program holds as a numpy array). Statements run in
order, user functions are read when they are called, with the kinds of their arguments.

What is recognised becomes ``TrainingStatement``s keyed by the syntax node they replace:

* objects: ``torch.optim.*`` → ``optimizer_object`` (``ir.training.Optimizer`` with
  torch's algorithm variants: coupled ``weight_decay`` is ``l2``, SGD momentum on
  gradients, epsilon placements), ``nn.*Loss`` → ``loss_object``, ``lr_scheduler.*`` →
  ``schedule_object`` (a ``Schedule`` stepped per epoch or per step, as the loop does)
  or ``callback_object`` (ReduceLROnPlateau), ``DataLoader``/``TensorDataset`` →
  ``loader_object``/``dataset_object``;
* the usual training loop (``for epoch ...: for xb, yb in loader: zero_grad; loss =
  loss_fn(model(xb), yb); backward; [clip]; step``, with per-epoch evaluation, prints,
  schedulers and early stopping around it) → one ``training_loop`` (``TrainingLoop``:
  compile + fit);
* data code: tensor functions and methods → ``array_expr`` (numpy), ``model(x)``
  outside training → ``model_call``, ``loss_fn(out, y)`` → ``loss_call``,
  ``torch.save(model.state_dict(), p)``/``load_state_dict(torch.load(p))`` →
  ``save_weights``/``load_weights``, ``torch.manual_seed`` → ``seed``, ``print(model)``
  → ``summary``; ``model.eval()``/``model.train()`` statements → ``drop``, ``with
  torch.no_grad():`` → ``unwrap``.

A statement using PyTorch in a way none of this covers becomes a ``stub`` with a
diagnostic naming the construct (file:line). Imports no deep-learning framework.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.frontend_ast.keras.frontend import _names_in
from transpiler.frontend_ast.torch import param_groups as pg
from transpiler.frontend_ast.torch import data as torch_data
from transpiler.frontend_ast.torch import model_files as torch_model_files
from transpiler.frontend_ast.torch import plumbing as torch_plumbing
from transpiler.frontend_ast.torch import vision as torch_vision
from transpiler.frontend_ast.torch.helper_calls import HelperRefV
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.ir import training as T
from transpiler.ir.code_literals import dotted_name as _dotted
from transpiler.ir.program import ModelDef


# ---------------------------------------------------------------------------------
# What a variable holds
# ---------------------------------------------------------------------------------
class V:
    """Base of the abstract values."""


class Other(V):
    """Plain Python (numbers, strings, numpy objects the source made itself)."""


OTHER = Other()


@dataclass(eq=False)
class ModelAttrV(V):
    """``model.scale`` / ``model.scale.center``: a submodule of a translated model, or (``key``
    set) one of its own parameters or buffers, held in Keras by ``variable`` (layer, index)."""

    model: "ModelV"
    path: str
    root: cst.CSTNode  # the model's expression
    key: str | None = None
    variable: tuple[str, int] | None = None


@dataclass(eq=False)
class GroupV(Other):
    """A list of a model's parameters known statically (an optimizer's parameter group)."""

    group: Any = None  # torch_param_groups.Group


@dataclass(eq=False)
class DictV(Other):
    """A dict literal with string keys (``{"train": train_loader, "val": val_loader}``): what
    each key holds, for ``d["train"]``."""

    items: dict = field(default_factory=dict)
    var: str | None = None
    stmt: cst.CSTNode | None = None


@dataclass(eq=False)
class TorchRef(V):
    path: str


@dataclass(eq=False)
class Arr(V):
    """Array data: a torch tensor outside the model (a numpy array in the target)."""


@dataclass(eq=False)
class LiveV(V):
    """A tensor in a training step (a model output gradients flow through): a Keras
    tensor, in the Keras model's layout (``permuted`` when that is not torch's)."""

    permuted: bool = False


@dataclass(eq=False)
class ModelV(V):
    name: str
    md: ModelDef | None
    training: bool = True
    var: str | None = None


@dataclass(eq=False)
class ModelFactory(V):
    """A builder function or a model class: calling it builds a model."""

    name: str
    md: ModelDef | None


@dataclass(eq=False)
class ParamsV(V):
    model: ModelV
    text: str = ""  # the model's expression (``netD`` in ``netD.parameters()``)


@dataclass(eq=False)
class ParamV(V):
    pass


@dataclass(eq=False)
class ChildrenV(V):
    """``model.named_children()`` / ``model.children()``: the Keras layers the children became."""

    named: bool


@dataclass(eq=False)
class ChildV(V):
    """One child module of a model, as the Keras layer it became (its members are not translated)."""


@dataclass(eq=False)
class OptimizerV(V):
    config: T.Optimizer
    model: ModelV
    node: cst.Call
    var: str | None = None
    model_text: str = ""


@dataclass(eq=False)
class LossV(V):
    config: T.Loss
    node: cst.CSTNode
    var: str | None = None
    keras_order: bool = False  # called as (target, output), as a Keras loss object is


@dataclass(eq=False)
class LossValueV(V):
    pass


@dataclass(eq=False)
class SchedulerV(V):
    optimizer: OptimizerV
    node: cst.Call
    schedule: T.Schedule | None = None
    plateau: T.Callback | None = None
    var: str | None = None


@dataclass(eq=False)
class DatasetV(V):
    arrays: list
    node: cst.Call
    var: str | None = None
    stmt: cst.CSTNode | None = None
    #: what each name the arrays' code reads was bound to where the dataset was made (None:
    #: not known), so that code is only reused where the names still mean the same arrays
    bindings: dict | None = None
    vision: bool = False  # a torchvision dataset: its arrays are the generated object's (torch_vision)


@dataclass(eq=False)
class LoaderV(V):
    dataset: DatasetV
    node: cst.Call
    batch_size: Any = 1
    shuffle: Any = False
    drop_last: Any = False
    var: str | None = None
    stmt: cst.CSTNode | None = None


@dataclass(eq=False)
class StateV(V):
    """``model.state_dict()`` (live) or a copy of it (``snapshot``)."""

    model: ModelV
    snapshot: bool = False


@dataclass(eq=False)
class LoadedV(V):
    """``torch.load(path)`` of a state_dict this script saved from ``model``."""

    path: cst.CSTNode
    node: cst.Call
    model: "ModelV | None" = None


@dataclass(eq=False)
class CheckpointV(V):
    """``torch.load(path)`` of a dict of state_dicts this script saved: key → model."""

    entries: dict


@dataclass(eq=False)
class TupleV(V):
    items: list


@dataclass(eq=False)
class DatasetClassV(V):
    """A user's map-style ``Dataset`` subclass (kept, with numpy items: ``torch_data``)."""

    name: str
    arity: int


@dataclass(eq=False)
class MapDatasetV(V):
    """A map-style dataset: an instance of a user's Dataset class, a ``random_split`` part
    or a ``Subset``; an item is ``arity`` arrays."""

    arity: int


@dataclass(eq=False)
class MapLoaderV(V):
    """A DataLoader over a map-style dataset (a ``DatasetLoader``: stacked items)."""

    dataset: MapDatasetV


@dataclass(eq=False)
class FuncV(V):
    node: cst.FunctionDef


@dataclass(eq=False)
class NoGradV(V):
    pass


class NotStandard(Exception):
    """The loop is not of the usual shape (the reason says what differs)."""


# ---------------------------------------------------------------------------------
# torch spellings
# ---------------------------------------------------------------------------------
DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
          "float16": "float16", "half": "float16", "int64": "int64", "long": "int64", "int32": "int32",
          "int": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}
CAST_METHODS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                "bool": "bool", "short": "int16", "byte": "uint8"}
IDENTITY_METHODS = {"numpy", "detach", "cpu", "contiguous", "cuda", "to", "requires_grad_", "pin_memory"}
SAME_METHODS = {"item", "tolist", "squeeze", "copy", "nonzero", "round", "flatten", "ravel", "cumsum", "cumprod",
                "any", "all", "sort", "argsort"}
REDUCE_METHODS = {"sum", "mean", "prod", "std", "var", "amax", "amin", "all", "any", "argmax", "argmin",
                  "logsumexp", "norm", "median"}
NUMPY_UNARY = {"abs": "np.abs", "exp": "np.exp", "log": "np.log", "sqrt": "np.sqrt", "sin": "np.sin",
               "cos": "np.cos", "tanh": "np.tanh", "floor": "np.floor", "ceil": "np.ceil", "sign": "np.sign",
               "log1p": "np.log1p", "expm1": "np.expm1", "neg": "np.negative", "isnan": "np.isnan",
               "isfinite": "np.isfinite", "square": "np.square", "log2": "np.log2", "log10": "np.log10"}
COMPARE_METHODS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "add": "+", "sub": "-",
                   "mul": "*", "div": "/", "pow": "**"}
ACTIVATIONS = {"torch.sigmoid": "sigmoid", "torch.nn.functional.sigmoid": "sigmoid", "torch.softmax": "softmax",
               "torch.nn.functional.softmax": "softmax", "torch.log_softmax": "log_softmax",
               "torch.nn.functional.log_softmax": "log_softmax", "torch.special.expit": "sigmoid"}

OPTIMIZERS = {
    # torch name: (kind, torch positional order, torch defaults)
    "SGD": ("sgd", ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
            {"lr": 0.001, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False}),
    "Adam": ("adam", ("params", "lr", "betas", "eps", "weight_decay", "amsgrad"),
             {"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}),
    "AdamW": ("adamw", ("params", "lr", "betas", "eps", "weight_decay", "amsgrad"),
              {"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01, "amsgrad": False}),
    "RMSprop": ("rmsprop", ("params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered"),
                {"lr": 0.01, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0, "momentum": 0.0, "centered": False}),
    "Adagrad": ("adagrad", ("params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"),
                {"lr": 0.01, "lr_decay": 0.0, "weight_decay": 0.0, "initial_accumulator_value": 0.0, "eps": 1e-10}),
    # (Keras' Adadelta is torch's: epsilon inside both square roots, the step times lr)
    "Adadelta": ("adadelta", ("params", "lr", "rho", "eps", "weight_decay"),
                 {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0.0}),
}
#: arguments that do not change the numbers (or only the speed)
OPTIMIZER_IGNORED = {"foreach", "fused", "capturable", "differentiable", "maximize"}

LOSSES = {
    # torch class / functional: canonical kind, from_logits
    "CrossEntropyLoss": ("sparse_categorical_crossentropy", True), "cross_entropy": ("sparse_categorical_crossentropy", True),
    "BCEWithLogitsLoss": ("binary_crossentropy", True),
    "binary_cross_entropy_with_logits": ("binary_crossentropy", True),
    "BCELoss": ("binary_crossentropy", False), "binary_cross_entropy": ("binary_crossentropy", False),
    "MSELoss": ("mean_squared_error", False), "mse_loss": ("mean_squared_error", False),
    "L1Loss": ("mean_absolute_error", False), "l1_loss": ("mean_absolute_error", False),
    "HuberLoss": ("huber", False), "huber_loss": ("huber", False),
    "SmoothL1Loss": ("huber", False), "smooth_l1_loss": ("huber", False),
    "NLLLoss": ("nll", False), "nll_loss": ("nll", False),
    "KLDivLoss": ("kl_divergence", False), "kl_div": ("kl_divergence", False),
}
#: losses whose per-sample value is one number (a torch "sum" is a sum over the batch)
PER_SAMPLE_SCALAR = {"sparse_categorical_crossentropy", "nll", "kl_divergence"}

#: methods only a torch module has: a parameter they are called on holds a model
MODEL_METHODS = {"parameters", "named_parameters", "state_dict", "load_state_dict", "eval", "zero_grad"}

SCHEDULERS = {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR", "ReduceLROnPlateau"}

DATA_PATHS = {"torch.utils.data.DataLoader": "loader", "torch.utils.data.dataloader.DataLoader": "loader",
              "torch.utils.data.TensorDataset": "dataset", "torch.utils.data.dataset.TensorDataset": "dataset"}
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".pkl", ".bin", ".ckpt", ".tar")


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


class Scope:
    """Variables of one function (or the module), chained to the enclosing scope."""

    def __init__(self, parent: "Scope | None", function: str | None = None):
        self.parent = parent
        self.vars: dict[str, V] = {}
        self.function = function
        self.returns: list[V] = []

    def lookup(self, name: str) -> V | None:
        scope = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None


# ---------------------------------------------------------------------------------
# The reader
# ---------------------------------------------------------------------------------
class TrainingReader:
    """Reads the program around the models of one torch script (``TorchFrontend``)."""

    def __init__(self, frontend):
        self.fe = frontend
        self.program = frontend.program
        self.facts: dict[int, T.TrainingStatement] = {}  # by node id (expressions and statements)
        self.factories: dict[str, ModelFactory] = {}
        self.dataset_classes: dict[str, DatasetClassV] = {}
        for md in self.program.models:
            if md.builder:
                self.factories[md.builder] = ModelFactory(md.builder, md)
            else:
                self.factories[md.class_name] = ModelFactory(md.class_name, md)
        from transpiler.frontend_ast.torch.frontend import class_builders

        for cls, builder in class_builders(frontend).items():  # (Net() where build_model() is Net())
            self.factories.setdefault(cls, ModelFactory(cls, self.factories[builder].md))
        for info in self.program.meta.get("stubbed_models", []):
            name = info["builder"] or info["name"]
            self.factories.setdefault(name, ModelFactory(name, None))
        self.module = Scope(None)
        self.read_functions: dict[str, V] = {}
        self.reading: set[str] = set()
        self.no_grad = 0
        self.used_loaders: Counter = Counter()  # reads of each loader outside the recognised loops
        self.used_datasets: Counter = Counter()
        self.loaders: list[LoaderV] = []
        self.datasets: list[DatasetV] = []
        self.dicts: list[DictV] = []  # dicts of loaders or datasets held in a variable
        self.stmt_stack: list[cst.CSTNode] = []
        self.cur_function: cst.FunctionDef | None = None
        self.skip_defs: set[str] = set()
        self.quiet = 0
        self.live = 0  # inside a custom training step: model outputs are Keras tensors
        self.saved: dict[str, tuple] = {}  # checkpoint file name → ("state", model) | ("dict", entries)
        self.cur_scope: Scope = self.module
        self.handled: set[int] = set()  # statements a custom step replaced (backward, step...)
        self.live_blocks: set[int] = set()  # the for statements whose body is a training step
        self.custom_loops: set[int] = set()  # for statements read as code around a training step
        self.optimizer_args = 0  # inside an optimizer's parameter groups (read statically)
        self.guessing = 0  # inside a function nothing in the file calls (torch_plumbing.unknown_tensor_method)
        self.synthetic: list[cst.CSTNode] = self.program.meta.setdefault("synthetic_nodes", [])  # (torch_plumbing)
        from transpiler.frontend_ast.torch.helper_calls import HelperCalls

        self.helper_calls = HelperCalls(self)  # the training helpers (fit, evaluate, ...) and their calls

    def peek(self, node, scope: Scope) -> V:
        """What ``node`` holds, without recording facts or uses (for code that is replaced whole)."""
        used = (Counter(self.used_loaders), Counter(self.used_datasets))
        self.quiet += 1
        try:
            return self.expr(node, scope)
        finally:
            self.quiet -= 1
            self.used_loaders, self.used_datasets = used

    # -- facts ------------------------------------------------------------------------
    def fact(self, node: cst.CSTNode, kind: str, config: Any = None, model: str = "", source: str = "") -> None:
        if self.quiet:
            return
        ts = T.TrainingStatement(kind, model, config, span=self.fe._span(node), call=id(node),
                                 source=source or _code(node))
        self.facts[id(node)] = ts

    def array(self, node: cst.CSTNode, template: str, parts: list) -> None:
        self.fact(node, "array_expr", T.ArrayExpr(template, tuple(id(p) for p in parts)))

    def stub(self, stmt: cst.CSTNode, message: str) -> None:
        span = self.fe._span(stmt)
        line = self.fe.lines[span.line - 1].strip() if 0 < span.line <= len(self.fe.lines) else ""
        # inner facts of a stubbed statement are void: the statement is quoted as it was
        for node_id in _ids_under(stmt):
            self.facts.pop(node_id, None)
        for name in _names_in(stmt):  # whoever finishes the stub needs the data it reads
            self.count_use(self.cur_scope.lookup(name))
        self.fact(stmt, "stub", message)
        self.program.stub(span, f"{message}", line)

    # -- entry ------------------------------------------------------------------------
    def run(self, skip: set[int]) -> None:
        """Read every top-level statement not in ``skip`` (model classes, builders,
        imports), then the functions nothing called."""
        defs: list[cst.FunctionDef] = []
        for stmt in self.fe.module.body:
            if id(stmt) in skip:
                if isinstance(stmt, cst.FunctionDef):
                    self.skip_defs.add(stmt.name.value)
                continue
            if isinstance(stmt, cst.FunctionDef):
                defs.append(stmt)
                continue
            if isinstance(stmt, cst.ClassDef):
                if stmt.name.value in self.helper_calls.helpers:
                    continue  # read when its uses are known (below)
                self._class_statement(stmt)
                continue
            self.statement(stmt, self.module)
        init_only = self._model_helpers(skip, defs)
        helpers = self.helper_calls.helpers
        for fn in [d for d in defs if d.name.value not in helpers] + [None] + \
                [d for d in defs if d.name.value in helpers]:
            if fn is None:  # every caller was read: the helpers all of whose uses were recognised go
                kept = self.helper_calls.finish()
                for stmt in self.fe.module.body:
                    if isinstance(stmt, cst.ClassDef) and stmt.name.value in kept:
                        self._class_statement(stmt)
                continue
            if fn.name.value in helpers and fn.name.value not in kept:
                continue
            if fn.name.value in init_only and self.fe.init_functions.get(fn.name.value):
                # its draws are the layers' initializers now
                self.fact(fn, "drop", f"{fn.name.value}: translated into the layers' initializers")
                continue
            if fn.name.value in init_only:
                span = self.fe._span(fn)
                why = ("weight initialisation is not translated: the Keras model uses its own initialisers"
                       if fn.name.value in self.fe.init_functions else
                       "the layers it makes are written out in the Keras model's builder")
                self.fact(fn, "stub", f"{fn.name.value} only serves the model's construction ({why})")
                self.program.warn(span, f"{fn.name.value}: used only where the model is built; left as a stub")
                continue
            if fn.name.value not in self.read_functions:
                self.guessing += 1  # (nothing here calls it: its parameters' kinds are guesses)
                try:
                    self.read_function(fn, self._guess_params(fn), {})
                finally:
                    self.guessing -= 1
        self._drop_unused_data()

    def _class_statement(self, stmt: cst.ClassDef) -> None:
        if torch_data.is_dataset_class(stmt, self._resolve):
            try:
                arity = torch_data.item_arity(stmt)
                kept = torch_data.numpy_dataset_class(stmt, self.torch_names(), self._resolve)
            except Unsupported as exc:
                self.stub(stmt, str(exc))
                return
            self.dataset_classes[stmt.name.value] = DatasetClassV(stmt.name.value, arity)
            self.fact(stmt, "source", kept)
        elif _mentions(stmt, self.torch_names()):
            self.stub(stmt, f"class {stmt.name.value}: uses PyTorch outside the model (not translated)")

    def _model_helpers(self, skip: set[int], defs: list) -> set[str]:
        """Functions only the model code uses (``model.apply(weights_init)``) that use torch."""
        inside: set[str] = set()
        outside: set[str] = set()
        for stmt in self.fe.module.body:
            names = _names_in(stmt)
            if id(stmt) in skip and isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
                inside |= names
            elif isinstance(stmt, cst.FunctionDef):
                outside |= names - {stmt.name.value}
            elif id(stmt) not in skip:
                outside |= names
        return {fn.name.value for fn in defs if fn.name.value in inside and fn.name.value not in outside
                and _mentions(fn, self.torch_names())}

    def _guess_params(self, fn: cst.FunctionDef) -> list[V]:
        """Nothing called ``fn``: a parameter used as a model (``p.parameters()``,
        ``p.state_dict()``, ``p.eval()``) is taken for the script's model (its only one,
        else a model of unknown layout)."""
        used: set[str] = set()

        class Uses(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                if isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name) and \
                        n.func.attr.value in MODEL_METHODS:
                    used.add(n.func.value.value)

        fn.visit(Uses())
        only = self.program.models[0] if len(self.program.models) == 1 else None
        name = (only.builder or only.class_name) if only is not None else "model"
        return [ModelV(name, only, var=p.name.value) if p.name.value in used else OTHER
                for p in fn.params.params]

    def _resolve(self, dotted: str) -> str | None:
        """The full path of a dotted name through the module's imports (``Dataset`` →
        ``torch.utils.data.Dataset``); None when it is not imported."""
        head, _, rest = dotted.partition(".")
        g = self.fe.globals.vars.get(head)
        if g is None or type(g).__name__ != "Ref":
            return None
        return f"{g.path}.{rest}" if rest else g.path

    def torch_names(self) -> set[str]:
        return self.fe._torch_names()

    # -- statements -------------------------------------------------------------------
    def block(self, body, scope: Scope) -> None:
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt, scope: Scope) -> None:
        self.stmt_stack.append(stmt)
        outer, self.cur_scope = self.cur_scope, scope
        try:
            self._statement(stmt, scope)
        except Unsupported as exc:
            self.stub(stmt, str(exc))
        finally:
            self.stmt_stack.pop()
            self.cur_scope = outer

    def _statement(self, stmt, scope: Scope) -> None:
        if id(stmt) in self.handled:
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, stmt, scope)
        elif isinstance(stmt, cst.For):
            if _has_backward(stmt) and id(stmt) not in self.custom_loops:
                self.training_loop(stmt, scope)
                return
            if pg.iterates_parameters(stmt.iter) and isinstance(self.peek(stmt.iter.func.value, scope), ModelV):
                self.parameter_loop(stmt, scope)
                return
            items = self.expr(stmt.iter, scope)
            self.assign(stmt.target, self.element_of(items, stmt.iter), scope)
            live = id(stmt) in self.live_blocks
            self.live += live
            try:
                self.block(stmt.body.body, scope)
            finally:
                self.live -= live
            if stmt.orelse is not None:
                self.block(stmt.orelse.body.body, scope)
        elif isinstance(stmt, cst.While):
            if _has_backward(stmt):
                raise Unsupported("a training loop written as a while loop is not translated")
            self.expr(stmt.test, scope)
            self.block(stmt.body.body, scope)
        elif isinstance(stmt, cst.If):
            self.expr(stmt.test, scope)
            self.block(stmt.body.body, scope)
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                self.statement(orelse, scope)
            elif orelse is not None:
                self.block(orelse.body.body, scope)
        elif isinstance(stmt, cst.With):
            self.with_statement(stmt, scope)
        elif isinstance(stmt, cst.Try):
            self.block(stmt.body.body, scope)
            for handler in stmt.handlers:
                self.block(handler.body.body, scope)
            for part in (stmt.orelse, stmt.finalbody):
                if part is not None:
                    self.block(part.body.body, scope)
        elif isinstance(stmt, cst.FunctionDef):
            loss = self.helper_calls.loss_object_def(stmt)
            if loss is not None:  # Keras' loss object as the generated function: the object again
                scope.vars[stmt.name.value] = LossV(loss, stmt, var=stmt.name.value, keras_order=True)
                self.fact(stmt, "loss_def", loss)
            else:
                scope.vars[stmt.name.value] = FuncV(stmt)
        elif isinstance(stmt, cst.ClassDef):
            if _mentions(stmt, self.torch_names()):
                raise Unsupported(f"class {stmt.name.value} uses PyTorch (not translated)")
        else:
            if _mentions(stmt, self.torch_names()):
                raise Unsupported(f"{type(stmt).__name__} statement using PyTorch")

    def with_statement(self, stmt: cst.With, scope: Scope) -> None:
        grad_off = []
        for item in stmt.items:
            value = self.expr(item.item, scope)
            if isinstance(value, NoGradV):
                grad_off.append(item)
                continue
            if item.asname is not None:
                self.assign(item.asname.name, OTHER, scope)
        if grad_off:
            if len(grad_off) != len(stmt.items):
                raise Unsupported("torch.no_grad() together with other context managers")
            self.fact(stmt, "unwrap")
            self.no_grad += 1
            try:
                self.block(stmt.body.body, scope)
            finally:
                self.no_grad -= 1
            return
        self.block(stmt.body.body, scope)

    def small(self, small, line: cst.SimpleStatementLine, scope: Scope) -> None:
        if isinstance(small, cst.Assign) and self.parameter_list(small, scope):
            return
        if len(line.body) == 1 and torch_plumbing.statement(self, small, line, scope):
            return
        if isinstance(small, cst.Assign):
            value = self.expr(small.value, scope)
            for t in small.targets:
                self.assign(t.target, value, scope, line)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.assign(small.target, self.expr(small.value, scope), scope, line)
        elif isinstance(small, cst.AugAssign):
            left = self.expr(small.target, scope)
            right = self.expr(small.value, scope)
            if isinstance(small.target, cst.Name):
                scope.vars[small.target.value] = _combine(left, right)
        elif isinstance(small, cst.Expr):
            value = small.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in ("eval", "train") and not value.args:
                obj = self.expr(value.func.value, scope)
                if isinstance(obj, ModelV):
                    obj.training = value.func.attr.value == "train"
                    self.fact(line, "drop", f"{_code(value)}: Keras sets training/inference per call")
                    return
            self.expr(value, scope)
        elif isinstance(small, cst.Return):
            result = OTHER if small.value is None else self.expr(small.value, scope)
            scope.returns.append(result)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            roots = _import_roots(small)
            if roots & {"torch", "torchvision"}:
                if len(roots - {"torch", "torchvision"}) > 0:
                    raise Unsupported("an import of torch together with other modules")
                # the names it binds are torch's: a statement still using one is a stub
                self.program.meta.setdefault("local_torch_bindings", set()).update(torch_plumbing.bound_names(small))
                self.fact(line, "drop", "a torch import")
        elif isinstance(small, (cst.Assert, cst.Raise, cst.Del)):
            for child in _child_expressions(small):
                self.expr(child, scope)
        elif isinstance(small, (cst.Pass, cst.Break, cst.Continue, cst.Global, cst.Nonlocal)):
            return
        else:
            if _mentions(small, self.torch_names()):
                raise Unsupported(f"{type(small).__name__} using PyTorch")

    # -- a model's parameters read or written by the program --------------------------------
    def model_attribute(self, obj, name: str, node: cst.Attribute) -> V:
        """``model.scale.center``: a parameter or buffer (its value, as numpy, when read)."""
        model, root = (obj, node.value) if isinstance(obj, ModelV) else (obj.model, obj.root)
        path = name if isinstance(obj, ModelV) else f"{obj.path}.{name}"
        if model.md is None:
            raise Unsupported(f"{_code(node)}: an attribute of a model that is not translated")
        plan = {e.key: e for e in pg.source_plan(model.md)}
        if path in plan:
            (variable,) = pg.keras_variables(model.md, [path])
            self.array(node, f"keras.ops.convert_to_numpy({{0}}{_variable_text(variable)})", [root])
            return ModelAttrV(model, path, root, path, variable)
        if any(k.startswith(path + ".") for k in plan):
            return ModelAttrV(model, path, root)
        raise Unsupported(f"{_code(node)}: reading the model's submodules or attributes is not translated "
                          "(only its parameters and buffers)")

    def parameter_method(self, obj: ModelAttrV, name: str, node: cst.Call, args) -> V:
        """``model.scale.center.copy_(x)`` → ``.assign(x)``; any other method reads the value."""
        if obj.key is None:
            raise Unsupported(f"{_code(node.func)}(): a method of a submodule is not translated")
        recv = node.func.value
        if name in ("copy_", "fill_", "zero_"):
            if name == "copy_" and len(args) != 1:
                raise Unsupported("copy_() takes one tensor")
            self.array(recv, f"{{0}}{_variable_text(obj.variable)}", [obj.root])
            if name == "copy_":
                self.array(node, "{0}.assign({1})", [recv, args[0][0].value])
            elif name == "zero_":
                self.array(node, "{0}.assign(keras.ops.zeros_like({0}))", [recv])
            else:
                self.array(node, "{0}.assign(keras.ops.full_like({0}, {1}))", [recv, args[0][0].value])
            return OTHER
        return self.tensor_method(name, recv, node, args)

    # -- parameter groups (torch_param_groups) -----------------------------------------------
    def parameter_loop(self, stmt: cst.For, scope: Scope) -> None:
        """``for name, p in model.named_parameters(): (a if ... else b).append(p)``: the lists
        it fills are read statically, printed as the Keras variables they hold."""
        lists = pg.read_loop(self, stmt, scope, ModelV, GroupV)
        for name, group in lists.items():
            scope.vars[name] = GroupV(group)
        model = next(iter(lists.values())).model if lists else None
        self.fact(stmt, "param_groups", {name: pg.keras_variables(model.md, g.keys) for name, g in lists.items()},
                  model=model.var or "model")

    def parameter_list(self, small: cst.Assign, scope: Scope) -> bool:
        """``decay, no_decay = [], []`` and ``others = [p for n, p in model.named_parameters() if
        ...]``: lists of parameters (for parameter groups). True when ``small`` was one."""
        value = small.value
        empty = [] if isinstance(value, cst.List) and not value.elements else None
        if isinstance(value, cst.Tuple) and value.elements and all(
                isinstance(e.value, cst.List) and not e.value.elements for e in value.elements):
            empty = [None] * len(value.elements)
        if empty is not None:
            groups = [GroupV(pg.Group()) for _ in (empty or [None])]
            for t in small.targets:
                self.assign(t.target, TupleV(groups) if isinstance(value, cst.Tuple) else groups[0], scope)
            return True
        if not isinstance(value, (cst.ListComp, cst.GeneratorExp)) or \
                not pg.iterates_parameters(value.for_in.iter) or \
                not isinstance(self.peek(value.for_in.iter.func.value, scope), ModelV):
            return False
        group = pg.read_list(self, value, scope, ModelV, GroupV)
        self.fact(value, "keras_variables", pg.keras_variables(group.model.md, group.keys),
                  model=group.model.var or "model")
        for t in small.targets:
            self.assign(t.target, GroupV(group), scope)
        return True

    def assign(self, target, value: V, scope: Scope, stmt=None) -> None:
        if isinstance(target, cst.Name) and isinstance(value, LoadedV):
            if value.model is None:
                raise Unsupported("torch.load of a file this script did not save (Keras reads weights into a "
                                  "model built for them)")
            # read into memory now, as torch.load does: the file may be gone when it is used
            self.fact(value.node, "read_weights", {"factory": value.model.name, "path": id(value.path)})
            value = StateV(value.model, snapshot=True)
        if isinstance(target, cst.Name):
            scope.vars[target.value] = value
            if isinstance(value, ModelV) and value.var is None:
                value.var = target.value
            for obj in (value,):
                if isinstance(obj, (OptimizerV, LossV, SchedulerV, LoaderV, DatasetV)) and obj.var is None:
                    obj.var = target.value
                    if isinstance(obj, (LoaderV, DatasetV)):
                        obj.stmt = stmt
            if isinstance(value, DictV) and value.var is None and value.items and \
                    all(isinstance(v, (LoaderV, DatasetV)) for v in value.items.values()):
                value.var, value.stmt = target.value, stmt
                self.dicts.append(value)
            self.helper_calls.assigned(target, value, stmt)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.items if isinstance(value, TupleV) else None
            for i, el in enumerate(target.elements):
                item = items[i] if items is not None and i < len(items) else (
                    LiveV(value.permuted) if isinstance(value, LiveV) else Arr() if isinstance(value, Arr) else OTHER)
                self.assign(el.value, item, scope)
        elif isinstance(target, cst.Attribute) and self.helper_calls.own_optimizer(target, value, stmt):
            pass
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            self.expr(target.value, scope)
            if isinstance(target, cst.Subscript):
                for el in target.slice:
                    self._slice(el.slice, scope)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, OTHER, scope)

    def element_of(self, items: V, node) -> V:
        """What a ``for`` loop over ``items`` binds."""
        if isinstance(items, LoaderV):
            self.used_loaders[id(items)] += 1
            return TupleV([Arr() for _ in items.dataset.arrays])
        if isinstance(items, DatasetV):
            self.used_datasets[id(items)] += 1
            return TupleV([Arr() for _ in items.arrays])
        if isinstance(items, (MapLoaderV, MapDatasetV)):
            arity = (items.dataset if isinstance(items, MapLoaderV) else items).arity
            return TupleV([Arr() for _ in range(arity)]) if arity > 1 else Arr()
        if isinstance(items, Arr):
            return Arr()
        if isinstance(items, ParamsV):
            return ParamV()
        if isinstance(items, ChildrenV):
            return TupleV([OTHER, ChildV()]) if items.named else ChildV()
        if isinstance(items, TupleV) and items.items and all(type(i) is type(items.items[0]) for i in items.items):
            return items.items[0]
        if isinstance(items, _Enumerated):
            return TupleV([OTHER, self.element_of(items.inner, node)])
        if isinstance(items, _Zipped):
            return TupleV([self.element_of(i, node) for i in items.inners])
        return OTHER

    # -- functions --------------------------------------------------------------------
    def read_function(self, fn: cst.FunctionDef, args: list[V], kwargs: dict[str, V]) -> V:
        name = fn.name.value
        if name in self.read_functions:
            return self.read_functions[name]
        if name in self.reading:
            return OTHER
        self.reading.add(name)
        scope = Scope(self.module, name)
        params = fn.params.params
        for i, p in enumerate(params):
            value = args[i] if i < len(args) else kwargs.get(p.name.value)
            if value is None and p.default is not None:
                value = self.expr(p.default, self.module)
            scope.vars[p.name.value] = value if value is not None else OTHER
        for p in list(fn.params.kwonly_params):
            scope.vars[p.name.value] = kwargs.get(p.name.value, OTHER)
        for star in (fn.params.star_arg, fn.params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.vars[star.name.value] = OTHER
        outer, self.cur_function = self.cur_function, fn
        saved = self.no_grad
        for dec in fn.decorators:
            value = self._decorator(dec, scope)
            if isinstance(value, NoGradV):
                self.no_grad += 1
        try:
            self.block(fn.body.body, scope)
        finally:
            self.cur_function = outer
            self.no_grad = saved
            self.reading.discard(name)
        result = next((r for r in scope.returns if not isinstance(r, Other)), OTHER)
        self.read_functions[name] = result
        return result

    def _decorator(self, dec: cst.Decorator, scope: Scope) -> V:
        value = self.expr(dec.decorator, scope)
        if isinstance(value, NoGradV):
            self.fact(dec, "drop", "torch.no_grad(): Keras' predict() computes no gradients")
        elif _mentions(dec, self.torch_names()):
            raise Unsupported(f"decorator {_code(dec.decorator)}")
        return value

    # -- expressions ------------------------------------------------------------------
    def expr(self, node, scope: Scope) -> V:
        method = getattr(self, f"_e_{type(node).__name__}", None)
        if method is None:
            for child in _child_expressions(node):
                self.expr(child, scope)
            return OTHER
        return method(node, scope)

    def count_use(self, value) -> None:
        """A read of a loader or dataset (of each in a dict) outside the recognised loops."""
        if isinstance(value, LoaderV):
            self.used_loaders[id(value)] += 1
        elif isinstance(value, DatasetV):
            self.used_datasets[id(value)] += 1
        elif isinstance(value, DictV):
            for item in value.items.values():
                self.count_use(item)

    def _e_Name(self, node: cst.Name, scope: Scope) -> V:
        value = scope.lookup(node.value)
        if value is not None:
            self.count_use(value)
            return value
        if node.value in self.factories:
            return self.factories[node.value]
        if node.value in self.dataset_classes:
            return self.dataset_classes[node.value]
        ref = self.helper_calls.name(node)
        if ref is not None:
            return ref
        g = self.fe.globals.vars.get(node.value)
        if g is not None and type(g).__name__ == "Ref":
            return TorchRef(g.path) if g.path.split(".")[0] == "torch" else OTHER
        if node.value in self.fe.functions:
            return FuncV(self.fe.functions[node.value].node)
        return OTHER

    def _e_Attribute(self, node: cst.Attribute, scope: Scope) -> V:
        obj = self.expr(node.value, scope)
        name = node.attr.value
        if isinstance(obj, TorchRef):
            path = f"{obj.path}.{name}"
            return TorchRef(path)
        if isinstance(obj, Arr):
            if name in ("shape", "ndim"):
                return OTHER
            if name == "T":
                return Arr()
            if name == "data":
                self.array(node, "{0}", [node.value])
                return Arr()
            if name in ("dtype", "device", "grad", "requires_grad", "is_cuda"):
                raise Unsupported(f"tensor attribute .{name} of {_code(node.value)!r}")
            return OTHER
        if isinstance(obj, ModelV) or isinstance(obj, ModelAttrV) and obj.key is None:
            return self.model_attribute(obj, name, node)
        if isinstance(obj, LoaderV):
            if name == "dataset":
                return obj.dataset
            if name == "batch_size":
                return OTHER
            raise Unsupported(f"DataLoader attribute .{name}")
        if isinstance(obj, DatasetV):
            if name == "tensors":
                self.array(node, "{0}.arrays", [node.value])
                return TupleV([Arr() for _ in obj.arrays])
            raise Unsupported(f"TensorDataset attribute .{name}")
        if isinstance(obj, ParamV):
            if name == "requires_grad":
                self.array(node, "{0}.trainable", [node.value])
                return OTHER
            if name == "shape":
                return OTHER
            raise Unsupported(f"parameter attribute .{name}")
        if isinstance(obj, (OptimizerV, SchedulerV, StateV, LossV)):
            raise Unsupported(f"{_code(node)}: this attribute of a PyTorch object is not translated")
        if isinstance(obj, ChildV):
            raise Unsupported(f"{_code(node)}: a child module's attributes are not translated to its Keras layer")
        return OTHER

    def _e_Subscript(self, node: cst.Subscript, scope: Scope) -> V:
        held = scope.lookup(node.value.value) if isinstance(node.value, cst.Name) else None
        if isinstance(held, DictV) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and \
                isinstance(node.slice[0].slice.value, cst.SimpleString):  # d["train"]: a read of that item only
            item = held.items.get(node.slice[0].slice.value.evaluated_value, OTHER)
            self.count_use(item)
            return item
        obj = self.expr(node.value, scope)
        index = None
        for el in node.slice:
            self._slice(el.slice, scope)
            if isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Integer):
                index = int(el.slice.value.value)
        if isinstance(obj, Arr):
            return Arr()
        if isinstance(obj, TupleV):
            if index is not None and -len(obj.items) <= index < len(obj.items):
                return obj.items[index]
            return OTHER
        if isinstance(obj, DatasetV):
            return TupleV([Arr() for _ in obj.arrays])
        if isinstance(obj, CheckpointV):
            if isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.SimpleString):
                key = node.slice[0].slice.value.evaluated_value
                if key in obj.entries:
                    return StateV(obj.entries[key], snapshot=True)
            raise Unsupported(f"{_code(node)}: a key the checkpoint was not saved with")
        if isinstance(obj, ModelV) and self.optimizer_args:
            return OTHER  # a parameter group (``model[0].parameters()``): read statically
        if isinstance(obj, (StateV, LoadedV, ModelV, OptimizerV)):
            raise Unsupported(f"{_code(node)}: indexing a PyTorch object is not translated")
        return OTHER

    def _slice(self, s, scope: Scope) -> V:
        if isinstance(s, cst.Index):
            return self.expr(s.value, scope)
        for part in (s.lower, s.upper, s.step):
            if part is not None:
                self.expr(part, scope)
        return OTHER

    def _e_BinaryOperation(self, node, scope):
        return _combine(self.expr(node.left, scope), self.expr(node.right, scope))

    def _e_UnaryOperation(self, node, scope):
        return self.expr(node.expression, scope)

    def _e_BooleanOperation(self, node, scope):
        self.expr(node.left, scope)
        self.expr(node.right, scope)
        return OTHER

    def _e_Comparison(self, node, scope):
        kinds = [self.expr(node.left, scope)] + [self.expr(c.comparator, scope) for c in node.comparisons]
        return Arr() if any(isinstance(k, Arr) for k in kinds) else OTHER

    def _e_Tuple(self, node, scope):
        items = []
        for el in node.elements:
            value = self.expr(el.value, scope)
            items.append(OTHER if isinstance(el, cst.StarredElement) else value)
        return TupleV(items)

    _e_List = _e_Tuple

    def _e_Dict(self, node: cst.Dict, scope):
        items: dict | None = {}
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                self.expr(el.key, scope)
                value = self.expr(el.value, scope)
                if items is not None and isinstance(el.key, cst.SimpleString):
                    items[el.key.evaluated_value] = value
                    continue
            else:
                self.expr(el.value, scope)
            items = None
        return DictV(items) if items is not None else OTHER

    def _e_IfExp(self, node, scope):
        self.expr(node.test, scope)
        body = self.expr(node.body, scope)
        self.expr(node.orelse, scope)
        return body

    def _e_Lambda(self, node: cst.Lambda, scope: Scope):
        inner = Scope(scope)
        for p in node.params.params:
            inner.vars[p.name.value] = OTHER
        self.expr(node.body, inner)
        return OTHER

    def _comprehension(self, node, scope):
        if self._trainable_parameters(node, scope):
            return OTHER
        inner = Scope(scope)
        comp = node.for_in
        while comp is not None:
            items = self.expr(comp.iter, inner)
            self.assign(comp.target, self.element_of(items, comp.iter), inner)
            for cond in comp.ifs:
                self.expr(cond.test, inner)
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            self.expr(node.key, inner)
            self.expr(node.value, inner)
        else:
            self.expr(node.elt, inner)
        return OTHER

    _e_ListComp = _e_GeneratorExp = _e_SetComp = _e_DictComp = _comprehension

    def _trainable_parameters(self, node, scope) -> bool:
        """``[p for p in model.parameters() if p.requires_grad]`` → ``model.trainable_weights``
        (Keras' list of the weights that train)."""
        comp = node.for_in if isinstance(node, cst.ListComp) else None
        if comp is None or comp.inner_for_in is not None or len(comp.ifs) != 1 or \
                not isinstance(comp.target, cst.Name) or not isinstance(node.elt, cst.Name) or \
                node.elt.value != comp.target.value:
            return False
        test = comp.ifs[0].test
        call = comp.iter
        if not (isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and
                test.value.value == comp.target.value and test.attr.value == "requires_grad" and
                isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute) and
                call.func.attr.value == "parameters" and isinstance(call.func.value, cst.Name)):
            return False
        if not isinstance(self.expr(call.func.value, scope), ModelV):
            return False
        self.array(node, "{0}.trainable_weights", [call.func.value])
        return True

    def _count_params(self, node: cst.Call, scope) -> bool:
        """``sum(t.numel() for t in model.state_dict().values() if t.is_floating_point())`` →
        ``model.count_params()``: every weight, buffers such as BatchNorm statistics included
        (Keras counts those too; ``num_batches_tracked`` is an int)."""
        if not (isinstance(node.func, cst.Name) and node.func.value == "sum" and len(node.args) == 1
                and node.args[0].keyword is None and not node.args[0].star
                and isinstance(node.args[0].value, (cst.GeneratorExp, cst.ListComp))):
            return False
        comp = node.args[0].value
        loop = comp.for_in
        if loop.inner_for_in is not None or len(loop.ifs) != 1 or not isinstance(loop.target, cst.Name):
            return False
        var = loop.target.value

        def method_of(expr, method: str):
            """``x`` of ``x.method()``."""
            if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
                    and expr.func.attr.value == method:
                return expr.func.value
            return None

        def is_var(expr) -> bool:
            return isinstance(expr, cst.Name) and expr.value == var

        model = method_of(method_of(loop.iter, "values"), "state_dict")
        if not (is_var(method_of(comp.elt, "numel")) and is_var(method_of(loop.ifs[0].test, "is_floating_point"))
                and model is not None and isinstance(self.peek(model, scope), ModelV)):
            return False
        self.expr(model, scope)
        self.array(node, "{0}.count_params()", [model])
        return True

    def _e_FormattedString(self, node, scope):
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.expr(part.expression, scope)
                if part.format_spec:
                    for sub in part.format_spec:
                        if isinstance(sub, cst.FormattedStringExpression):
                            self.expr(sub.expression, scope)
        return OTHER

    def _e_Call(self, node: cst.Call, scope: Scope) -> V:
        func = node.func
        made = torch_vision.call(self, node, scope)
        if made is not None:
            return made
        if isinstance(func, cst.Attribute):
            obj = self.expr(func.value, scope)
            if not isinstance(obj, TorchRef):
                args = self.arguments(node, scope)
                return self.method(obj, func.attr.value, node, args, scope)
            target: V = TorchRef(f"{obj.path}.{func.attr.value}")
        else:
            target = self.expr(func, scope)
        if self._count_params(node, scope):
            return OTHER
        if isinstance(target, TorchRef) and target.path == "torch.device":
            # Keras places tensors on its device itself: nothing to choose
            self.array(node, "None", [])
            return OTHER
        # an optimizer's parameter groups are read statically (parameter_groups)
        groups = isinstance(target, TorchRef) and target.path.startswith("torch.optim.") and \
            ".lr_scheduler" not in target.path and node.args and isinstance(node.args[0].value, (cst.List, cst.Tuple))
        self.optimizer_args += groups
        try:
            args = self.arguments(node, scope)
        finally:
            self.optimizer_args -= groups
        if isinstance(target, TorchRef):
            return self.torch_call(target.path, node, args, scope)
        if isinstance(target, HelperRefV):
            made = self.helper_calls.construct(target, node, args)
            if made is not None:
                return made
            target = FuncV(target.helper.node) if isinstance(target.helper.node, cst.FunctionDef) else OTHER
        if isinstance(target, ModelFactory):
            return ModelV(target.name, target.md)
        if isinstance(target, DatasetClassV):
            return MapDatasetV(target.arity)
        if isinstance(target, FuncV):
            if target.node.name.value in self.skip_defs:
                return OTHER
            values = [v for a, v in args if a.keyword is None and not a.star]
            kw = {a.keyword.value: v for a, v in args if a.keyword is not None}
            made = self.helper_calls.call(target.node, node, args)
            if made is not None:
                return made
            if any(isinstance(v, LiveV) and v.permuted for v in list(values) + list(kw.values())):
                # its code is read once, for torch's layout: dims and indices would land on other axes
                raise Unsupported(f"{target.node.name.value}() gets a feature map the Keras model returns "
                                  "channels-last (its code indexes torch's channels-first layout)")
            return self.read_function(target.node, values, kw)
        if isinstance(target, ModelV):
            return self.model_call(target, node, args)
        if isinstance(target, LossV):
            return self.loss_call(target, node, args)
        if isinstance(func, cst.Name):
            return self.builtin_call(func.value, node, args, scope)
        return OTHER

    def arguments(self, node: cst.Call, scope: Scope) -> list[tuple[cst.Arg, V]]:
        out = []
        for arg in node.args:
            value = self.expr(arg.value, scope)
            if isinstance(value, TorchRef):
                value = self.torch_value(value, arg.value)
            out.append((arg, value))
        return out

    def torch_value(self, ref: TorchRef, node) -> V:
        """A torch name used as a value (not called): dtypes become numpy dtype names."""
        parts = ref.path.split(".")
        if len(parts) == 2 and parts[1] in DTYPES:
            self.fact(node, "array_expr", T.ArrayExpr(f'"{DTYPES[parts[1]]}"'))
            return OTHER
        return ref

    def same_binding(self, name: str, scope: Scope, dataset: "DatasetV | None") -> bool:
        """Whether ``name`` can be read here and means what it meant where ``dataset`` was made
        (a function given the loader may bind the same name to a batch: ``for x, y in loader``)."""
        here = scope.lookup(name)
        if here is None and name not in self.fe.globals.vars:
            return False
        if dataset is None or dataset.bindings is None or name not in dataset.bindings:
            return True
        return here is dataset.bindings[name]

    def builtin_call(self, name: str, node: cst.Call, args, scope) -> V:
        values = [v for _, v in args]
        if name == "list" and len(values) == 1 and isinstance(values[0], StateV) and values[0].model.md is not None:
            # a state_dict's keys: the names of the model's weights (Keras' own: "fc/kernel")
            self.array(node, f"[weight.path for weight in {values[0].model.name}().weights]", [])
            return OTHER
        if any(isinstance(v, (StateV, LoadedV, CheckpointV)) for v in values):
            raise Unsupported(f"{name}() of a state_dict (Keras keeps a model's weights as a list, without "
                              "names)")
        if name == "print" and len(args) == 1 and isinstance(values[0], ModelV):
            self.fact(node, "summary", model=_code(args[0][0].value))
            return OTHER
        if name == "len" and len(args) == 1:
            arg = args[0][0].value
            holder = None
            if isinstance(values[0], LoaderV):
                loader = values[0]
                holder = loader
                first = loader.dataset.arrays[0]
                if loader.batch_size is None:
                    template, parts = "len({0})", [first]
                elif loader.drop_last is not None and _code(loader.drop_last) != "False":
                    template, parts = "len({0}) // {1}", [first, loader.batch_size]
                else:
                    template, parts = "math.ceil(len({0}) / {1})", [first, loader.batch_size]
            elif isinstance(values[0], DatasetV):
                holder = values[0]
                template, parts = "len({0})", [values[0].arrays[0]]
                if isinstance(arg, cst.Attribute) and isinstance(arg.value, (cst.Name, cst.Subscript)):
                    owner = self.peek(arg.value, scope)  # (``loader.dataset``, ``loaders["val"].dataset``)
                    if isinstance(owner, LoaderV):
                        holder = owner
            dataset = holder.dataset if isinstance(holder, LoaderV) else holder
            visible = holder is not None and all(
                self.same_binding(n.value, scope, dataset) for part in parts for n in _root_names(part))
            if holder is not None and visible and all(
                    isinstance(p, (cst.Name, cst.Subscript, cst.Integer, cst.Attribute)) for p in parts):
                # (a function given the loader does not see the arrays it was made of: it keeps len())
                # the number is known from the arrays: the loader itself is not needed for it
                self.array(node, template, parts)
                counts = self.used_loaders if isinstance(holder, LoaderV) else self.used_datasets
                counts[id(holder)] -= 1
            return OTHER
        if name in ("enumerate",) and values:
            return _Enumerated(values[0])
        if name == "zip":
            return _Zipped(values)
        if name in ("list", "tuple", "iter", "reversed", "sorted") and values and \
                isinstance(values[0], (ParamsV, TupleV)):
            return values[0]
        if name == "next" and values and isinstance(values[0], LoaderV):
            return TupleV([Arr() for _ in values[0].dataset.arrays])
        return OTHER

    # -- calls of torch -------------------------------------------------------------
    def torch_call(self, path: str, node: cst.Call, args, scope: Scope) -> V:
        pos = [a.value for a, _ in args if a.keyword is None and not a.star]
        vals = [v for a, v in args if a.keyword is None and not a.star]
        kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}
        kwv = {a.keyword.value: v for a, v in args if a.keyword is not None}
        if DATA_PATHS.get(path) == "loader" and any(a.star == "**" for a, _ in args):
            return self.torch_call(path, node, torch_plumbing.unpacked_loader_options(self, args, scope), scope)
        if any(a.star for a, _ in args) and path not in ("torch.randn", "torch.rand", "torch.zeros", "torch.ones"):
            raise Unsupported(f"{path}(*...): unpacked arguments")
        short = path.split(".")[-1]
        if torch_plumbing.query(self, path, node) is not None:
            return OTHER
        if any(isinstance(v, LiveV) for v in vals + list(kwv.values())) and not path.startswith(
                ("torch.optim", "torch.utils.data", "torch.nn.utils")):
            from transpiler.frontend_ast.torch.steps import live_function

            return live_function(self, path, node, pos, vals, kw)
        if path in ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split",
                    "torch.utils.data.Subset", "torch.utils.data.dataset.Subset"):
            return self.map_dataset(short, node, pos, vals, kw, kwv)
        if path in DATA_PATHS:
            return self.data_object(DATA_PATHS[path], node, pos, vals, kw, kwv, scope)
        if path.startswith("torch.optim.lr_scheduler."):
            return self.scheduler(short, node, pos, vals, kw)
        if path.startswith("torch.optim.") and path.count(".") == 2:
            return self.optimizer(short, node, pos, vals, kw)
        if path.startswith("torch.nn.") and path.count(".") == 2 and short in LOSSES:
            loss = self.loss_config(short, {k: self.static(v, f"{short}({k}=...)") for k, v in kw.items()}, pos)
            self.fact(node, "loss_object", loss)
            return LossV(loss, node)
        if path.startswith("torch.nn.functional.") and short in LOSSES:
            return self.functional_loss(short, node, pos, vals, kw)
        if path in ("torch.no_grad", "torch.inference_mode", "torch.enable_grad") or \
                path == "torch.autograd.no_grad":
            if path == "torch.enable_grad":
                raise Unsupported("torch.enable_grad() is not translated")
            return NoGradV()
        if path == "torch.manual_seed" or path == "torch.random.manual_seed":
            self.fact(node, "seed", T.Code(_code(pos[0]), id(pos[0])) if pos else None)
            return OTHER
        if path in ("torch.set_grad_enabled", "torch.set_num_threads", "torch.use_deterministic_algorithms",
                    "torch.backends.cudnn.benchmark"):
            raise Unsupported(f"{path}() is not translated")
        if path == "torch.save":
            return self.torch_save(node, pos, vals)
        if path == "torch.load":
            if not pos:
                raise Unsupported("torch.load without a path")
            return self.torch_load(node, pos[0])
        if path in ACTIVATIONS:
            if vals and isinstance(vals[0], LiveV):
                from transpiler.frontend_ast.torch.steps import live_function

                return live_function(self, path, node, pos, vals, kw)
            if not vals or not isinstance(vals[0], Arr):
                raise Unsupported(f"{path} on something that is not array data")
            axis = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
            self.fact(node, "activation", {"op": ACTIVATIONS[path], "x": id(pos[0]),
                                           "axis": id(axis) if axis is not None else None})
            return Arr()
        return self.torch_function(path, short, node, pos, vals, kw)

    def static(self, node, what: str) -> Any:
        """The value of a constant expression (module constants included), else Code."""
        try:
            value = self.fe._eval(node, self.fe.globals)
        except Exception:  # noqa: BLE001 - anything the interpreter cannot decide stays code
            value = None
        if type(value).__name__ in ("Unknown", "Tensor", "Mod", "Ref", "NoneType", "FunctionRef", "ClassRef"):
            if isinstance(node, cst.Name) and node.value == "None":
                return None
            return T.Code(_code(node), id(node))
        if isinstance(value, (int, float, bool, str, tuple, list)):
            return value
        return T.Code(_code(node), id(node))

    def torch_function(self, path: str, short: str, node: cst.Call, pos, vals, kw) -> V:
        parts: list = []

        def p(n) -> str:
            parts.append(n)
            return "{%d}" % (len(parts) - 1)

        def shape_of() -> str:
            if "size" in kw:
                return p(kw["size"])
            sizes = [a for a in node.args if a.keyword is None]  # ``torch.randn(4, *SHAPE)`` too
            if len(sizes) == 1 and not sizes[0].star and not isinstance(sizes[0].value, cst.Integer):
                return p(sizes[0].value)
            texts = [("*" if a.star else "") + p(a.value) for a in sizes]
            return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"

        def dtype(default: str) -> str:
            if "dtype" in kw:
                return p(kw["dtype"])
            return f'"{default}"'

        if path in ("torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.Tensor", "torch.asarray"):
            if path == "torch.from_numpy":
                template = p(pos[0])
            else:
                template = f"np.asarray({p(pos[0])}" + (f", dtype={p(kw['dtype'])}" if "dtype" in kw else "") + ")"
            self.array(node, template, parts)
            return Arr()
        if path in ("torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty"):
            shape = shape_of()
            template = {"torch.randn": f"np.random.standard_normal({shape}).astype({dtype('float32')})",
                        "torch.rand": f"np.random.random_sample({shape}).astype({dtype('float32')})",
                        "torch.zeros": f"np.zeros({shape}, dtype={dtype('float32')})",
                        "torch.ones": f"np.ones({shape}, dtype={dtype('float32')})",
                        "torch.empty": f"np.empty({shape}, dtype={dtype('float32')})"}[path]
            self.array(node, template, parts)
            return Arr()
        if path == "torch.full":
            fill = pos[1] if len(pos) > 1 else kw["fill_value"]
            default = "float32" if isinstance(fill, cst.Float) or not isinstance(fill, cst.Integer) else "int64"
            self.array(node, f"np.full({p(pos[0] if pos else kw['size'])}, {p(fill)}, dtype={dtype(default)})",
                       parts)
            return Arr()
        if path == "torch.randint":
            if len(pos) == 2:
                low, high, size = None, pos[0], pos[1]
            elif len(pos) >= 3:
                low, high, size = pos[0], pos[1], pos[2]
            else:
                raise Unsupported("torch.randint with keyword sizes")
            template = f"np.random.randint({p(low) if low is not None else '0'}, {p(high)}, size={p(size)})"
            self.array(node, template, parts)
            return Arr()
        if path == "torch.randperm" and len(pos) == 1 and set(kw) <= {"dtype", "device"}:
            self.array(node, f"np.random.permutation({p(pos[0])})", parts)  # (torch's int64 too)
            return Arr()
        if path in ("torch.arange", "torch.linspace"):
            self.array(node, f"np.{short}(" + ", ".join(p(a) for a in pos) + ")", parts)
            return Arr()
        if path in ("torch.zeros_like", "torch.ones_like", "torch.randn_like", "torch.rand_like", "torch.full_like"):
            base = p(pos[0])
            template = {"torch.zeros_like": f"np.zeros_like({base})", "torch.ones_like": f"np.ones_like({base})",
                        "torch.randn_like": f"np.random.standard_normal({base}.shape).astype({base}.dtype)",
                        "torch.rand_like": f"np.random.random_sample({base}.shape).astype({base}.dtype)",
                        "torch.full_like": f"np.full_like({base}, {p(pos[1]) if len(pos) > 1 else ''})"}[path]
            self.array(node, template, parts)
            return Arr()
        if path in ("torch.cat", "torch.concat", "torch.stack"):
            dim = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
            fn = "np.stack" if short == "stack" else "np.concatenate"
            self.array(node, f"{fn}({p(pos[0])}" + (f", axis={p(dim)}" if dim is not None else "") + ")", parts)
            return Arr()
        if path in ("torch.allclose", "torch.isclose", "torch.equal"):
            fn = {"allclose": "np.allclose", "isclose": "np.isclose", "equal": "np.array_equal"}[short]
            extra = "".join(f", {k}={p(v)}" for k, v in kw.items() if k in ("rtol", "atol", "equal_nan"))
            self.array(node, f"{fn}({p(pos[0])}, {p(pos[1])}{extra})", parts)
            return OTHER if short != "isclose" else Arr()
        if path in ("torch.max", "torch.min") and len(pos) == 2 and not kw and isinstance(vals[1], Arr):
            self.array(node, f"np.{short}imum({p(pos[0])}, {p(pos[1])})", parts)  # elementwise
            return Arr()
        if path in ("torch.argmax", "torch.argmin", "torch.sum", "torch.mean", "torch.amax", "torch.amin",
                    "torch.std", "torch.var", "torch.prod", "torch.max", "torch.min"):
            return self.tensor_method(short, pos[0], node, [(cst.Arg(a), OTHER) for a in pos[1:]] +
                                      [(cst.Arg(v, keyword=cst.Name(k)), OTHER) for k, v in kw.items()],
                                      receiver_node=pos[0], parts=parts)
        if path.startswith("torch.") and path.count(".") == 1 and short in NUMPY_UNARY and len(pos) == 1 and not kw:
            self.array(node, f"{NUMPY_UNARY[short]}({p(pos[0])})", parts)
            return Arr()
        if path in ("torch.relu", "torch.nn.functional.relu"):
            self.array(node, f"np.maximum({p(pos[0])}, 0)", parts)
            return Arr()
        if path in ("torch.clamp", "torch.clip"):
            lo = kw.get("min") or (pos[1] if len(pos) > 1 else None)
            hi = kw.get("max") or (pos[2] if len(pos) > 2 else None)
            self.array(node, f"np.clip({p(pos[0])}, {p(lo) if lo is not None else 'None'}, "
                             f"{p(hi) if hi is not None else 'None'})", parts)
            return Arr()
        if path == "torch.where" and len(pos) == 3:
            self.array(node, f"np.where({p(pos[0])}, {p(pos[1])}, {p(pos[2])})", parts)
            return Arr()
        if path in ("torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss"):
            raise Unsupported(f"{path} on array data")  # handled in functional_loss
        raise Unsupported(f"{path}() is not translated to Keras yet")

    # -- methods ----------------------------------------------------------------------
    def method(self, obj: V, name: str, node: cst.Call, args, scope: Scope) -> V:
        recv = node.func.value
        if isinstance(obj, LiveV):
            from transpiler.frontend_ast.torch.steps import live_method

            return live_method(self, obj, name, node, args)
        if isinstance(obj, Arr):
            return self.tensor_method(name, recv, node, args)
        if isinstance(obj, ModelV):
            return self.model_method(obj, name, node, args)
        if isinstance(obj, ModelAttrV):
            return self.parameter_method(obj, name, node, args)
        if isinstance(obj, ParamV):
            if name == "numel":
                self.array(node, "int(np.prod({0}.shape))", [recv])
                return OTHER
            raise Unsupported(f"parameter method .{name}()")
        if isinstance(obj, ParamsV):
            raise Unsupported(f"parameters().{name}()")
        if isinstance(obj, ChildV):
            raise Unsupported(f"{_code(node.func)}(): a child module's methods are not translated to its Keras layer")
        if isinstance(obj, LossValueV):
            if name == "item":
                self.array(node, "float({0})", [recv])
                return OTHER
            if name in ("detach", "cpu"):
                self.array(node, "{0}", [recv])
                return LossValueV()
            if name == "backward":
                raise Unsupported("loss.backward() outside a recognised training loop")
            raise Unsupported(f"loss value method .{name}()")
        if isinstance(obj, OptimizerV):
            raise Unsupported(f"optimizer.{name}() outside a recognised training loop")
        if isinstance(obj, SchedulerV):
            if name == "get_last_lr":
                self.fact(node, "learning_rate", obj.optimizer.var or "optimizer")
                return OTHER
            if name == "step" and not args and obj.schedule is not None and obj.optimizer.var:
                # stepped by the program's own loop (a custom training loop): the Keras
                # object steps the same schedule and sets the optimizer's rate
                obj.schedule.per = "manual"
                obj.schedule.optimizer = obj.optimizer.var
                self.array(node, "{0}.step()", [recv])
                return OTHER
            raise Unsupported(f"scheduler.{name}() outside a recognised training loop")
        if isinstance(obj, (StateV, LoadedV)):
            raise Unsupported(f"state_dict.{name}() is not translated (Keras keeps weights as a list)")
        if isinstance(obj, LossV):
            if name == "forward":
                return self.loss_call(obj, node, args)
            raise Unsupported(f"loss object method .{name}()")
        if isinstance(obj, (LoaderV, DatasetV)):
            raise Unsupported(f"{type(obj).__name__[:-1]} method .{name}()")
        if isinstance(obj, TupleV) and name in ("index", "count"):
            return OTHER
        if isinstance(obj, Other) and name == "deepcopy" and _dotted(recv) == "copy" and args and \
                isinstance(args[0][1], StateV):
            arg = args[0][0].value
            if not (isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute)):
                raise Unsupported("a copy of a state_dict held in a variable")
            self.fact(node, "get_weights", T.ArrayExpr("", (id(arg.func.value),)))
            return StateV(args[0][1].model, snapshot=True)
        message = torch_plumbing.unknown_tensor_method(self, name, recv) if type(obj) is Other and \
            self.guessing else None
        if message is not None:
            raise Unsupported(message)
        return OTHER

    def model_method(self, model: ModelV, name: str, node: cst.Call, args) -> V:
        recv = node.func.value
        if name in ("eval", "train"):
            if args and _code(args[0][0].value) not in ("True", "False"):
                # the mode of every later call would be a guess (Keras takes training= per call)
                raise Unsupported(f"model.{name}({_code(args[0][0].value)}): a mode known only when the "
                                  "program runs is not translated")
            model.training = name == "train" and not (args and _code(args[0][0].value) == "False")
            self.array(node, "{0}", [recv])  # Keras sets training/inference per call
            return model
        if name == "parameters":
            self.array(node, "{0}.trainable_weights", [recv])
            return ParamsV(model, _code(recv))
        if name == "state_dict":
            return StateV(model)
        if name == "load_state_dict":
            src = args[0][1] if args else None
            if isinstance(src, LoadedV):
                self.fact(node, "load_weights", T.ArrayExpr("", (id(recv), id(src.path))), model=model.name)
                if src.model is None:
                    self.checkpoint_path(src.path)
                return OTHER
            if isinstance(src, StateV) and src.snapshot:
                self.fact(node, "set_weights", T.ArrayExpr("", (id(recv), id(args[0][0].value))), model=model.name)
                return OTHER
            raise Unsupported("load_state_dict() of something other than torch.load(path) or a saved copy")
        if name in ("to", "cpu", "cuda", "float", "double"):
            if name == "double":
                raise Unsupported("model.double() is not translated")
            self.array(node, "{0}", [recv])
            return model
        if name == "forward":
            return self.model_call(model, node, args)
        if name == "zero_grad":
            raise Unsupported("model.zero_grad() outside a recognised training loop")
        if name in ("children", "named_children") and not args:
            names = keras_children(model.md)
            var = "name" if _code(recv) != "name" else "child"
            listed = "(" + ", ".join(repr(n) for n in names) + ("," if len(names) == 1 else "") + ")"
            item = f"({var}, {{0}}.get_layer({var}))" if name == "named_children" else f"{{0}}.get_layer({var})"
            self.array(node, f"[{item} for {var} in {listed}]", [recv])
            return ChildrenV(name == "named_children")
        if name == "named_parameters" and self.optimizer_args:
            return OTHER  # in a parameter group: read statically (parameter_groups)
        if model.md is not None and name in model.md.methods:
            # the model's own method: a Keras model over its layers (keras_printer.method_function)
            self.program.meta.setdefault("called_methods", set()).add((id(model.md), name))
            return self.model_call(model, node, args, method=name)
        raise Unsupported(f"model.{name}() is not translated to Keras yet")

    def tensor_method(self, name: str, recv, node: cst.Call, args, receiver_node=None, parts=None) -> V:
        parts = [] if parts is None else parts
        pos = [a.value for a, _ in args if a.keyword is None]
        kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}

        def p(n) -> str:
            parts.append(n)
            return "{%d}" % (len(parts) - 1)

        r = p(recv)

        def done(template: str, result: V = None) -> V:
            self.array(node, template, parts)
            return Arr() if result is None else result

        if name in IDENTITY_METHODS:
            return done(r)
        if name in CAST_METHODS:
            return done(f'{r}.astype("{CAST_METHODS[name]}")')
        if name == "type" and pos:
            return done(f"{r}.astype({p(pos[0])})")
        if name == "clone":
            return done(f"{r}.copy()")
        if name == "size":
            return done(f"{r}.shape[{p(pos[0])}]" if pos else f"{r}.shape", OTHER)
        if name == "dim":
            return done(f"{r}.ndim", OTHER)
        if name in ("numel", "nelement"):
            return done(f"{r}.size", OTHER)
        if name in ("item", "tolist"):
            return done(f"{r}.{name}()", OTHER)
        if name in REDUCE_METHODS or name in ("max", "min"):
            # (torch takes numpy's spellings too: axis=, keepdims=)
            dim = kw.get("dim") or kw.get("axis") or (pos[0] if pos else None)
            keep = kw.get("keepdim") or kw.get("keepdims") or (pos[1] if len(pos) > 1 else None)
            if name in ("max", "min") and dim is not None:
                # torch returns (values, indices): .values / [0] is the numpy reduction
                parent = self._parent_attribute(node)
                if parent is None:  # the pair itself (``_, predicted = torch.max(out, 1)``)
                    keeps = f", keepdims={p(keep)}" if keep is not None else ""
                    axis = p(dim)
                    return done(f"({r}.{name}(axis={axis}{keeps}), {r}.arg{name}(axis={axis}{keeps}))",
                                TupleV([Arr(), Arr()]))
                attr, holder = parent
                fn = name if attr == "values" else f"arg{name}"
                self.array(holder, f"{r}.{fn}(axis={p(dim)}" + (f", keepdims={p(keep)}" if keep is not None
                                                                  else "") + ")", parts)
                return Arr()
            fn = name
            extra = ""
            if name in ("std", "var"):
                unbiased = kw.get("unbiased")
                correction = kw.get("correction")
                if correction is not None:
                    extra = f", ddof={p(correction)}"
                elif unbiased is None or _code(unbiased) != "False":
                    extra = ", ddof=1"  # torch's std/var are unbiased by default
            if name == "amax":
                fn = "max"
            if name == "amin":
                fn = "min"
            if name in ("logsumexp", "norm", "median"):
                raise Unsupported(f"tensor method .{name}()")
            args_text = []
            if dim is not None:
                args_text.append(f"axis={p(dim)}")
            if keep is not None:
                args_text.append(f"keepdims={p(keep)}")
            template = f"{r}.{fn}({', '.join(args_text)}{extra})" if args_text else f"{r}.{fn}({extra[2:]})"
            return done(template)
        if name in COMPARE_METHODS:
            return done(f"({r} {COMPARE_METHODS[name]} {p(pos[0])})")
        if name in NUMPY_UNARY:
            return done(f"{NUMPY_UNARY[name]}({r})")
        if name == "sigmoid":
            return done(f"1 / (1 + np.exp(-{r}))")
        if name == "relu":
            return done(f"np.maximum({r}, 0)")
        if name in ("clamp", "clip", "clamp_"):
            lo = kw.get("min") or (pos[0] if pos else None)
            hi = kw.get("max") or (pos[1] if len(pos) > 1 else None)
            return done(f"np.clip({r}, {p(lo) if lo is not None else 'None'}, {p(hi) if hi is not None else 'None'})")
        if name in ("view", "reshape"):
            shape = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
            return done(f"{r}.reshape({shape})")
        if name == "permute":
            dims = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
            return done(f"{r}.transpose({dims})")
        if name == "transpose":
            return done(f"np.swapaxes({r}, {p(pos[0])}, {p(pos[1])})")
        if name == "unsqueeze":
            return done(f"np.expand_dims({r}, {p(pos[0] if pos else kw['dim'])})")
        if name == "squeeze":
            return done(f"{r}.squeeze({p(pos[0] if pos else kw['dim'])})" if (pos or "dim" in kw) else f"{r}.squeeze()")
        if name == "flatten":
            if not pos and not kw:
                return done(f"{r}.reshape(-1)")
            start = pos[0] if pos else kw.get("start_dim")
            if _code(start) == "1" and len(pos) <= 1:
                return done(f"{r}.reshape(len({r}), -1)")
            raise Unsupported(f".flatten({', '.join(_code(a) for a in pos)}) is not translated")
        if name in ("fill_", "copy_", "zero_"):
            value = "0" if name == "zero_" else p(pos[0])
            return done(f"np.copyto({r}, {value})", OTHER)
        if name in ("add_", "sub_", "mul_", "div_"):
            op = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/"}[name]
            return done(f"np.copyto({r}, {r} {op} {p(pos[0])})", OTHER)
        if name in ("round", "cumsum", "nonzero", "sort", "argsort", "any", "all", "ravel"):
            return done(f"{r}.{name}(" + ", ".join(p(a) for a in pos) + ")")
        if name == "softmax" or name == "log_softmax":
            axis = kw.get("dim") or (pos[0] if pos else None)
            parts.clear()
            self.fact(node, "activation", {"op": name, "x": id(recv), "axis": id(axis) if axis is not None else None})
            return Arr()
        raise Unsupported(f"tensor method .{name}() is not translated to Keras yet")

    def _parent_attribute(self, call: cst.Call):
        """For ``x.max(dim=1).values`` (or ``[0]``): ('values' | 'indices', the outer node)."""
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        if stmt is None:
            return None
        found = []

        class Finder(cst.CSTVisitor):
            def visit_Attribute(self, n: cst.Attribute) -> None:
                if n.value is call and n.attr.value in ("values", "indices"):
                    found.append((n.attr.value, n))

            def visit_Subscript(self, n: cst.Subscript) -> None:
                if n.value is call and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index) and \
                        isinstance(n.slice[0].slice.value, cst.Integer):
                    found.append(("values" if n.slice[0].slice.value.value == "0" else "indices", n))

        stmt.visit(Finder())
        return found[0] if found else None

    # -- model and loss calls ---------------------------------------------------------
    def model_call(self, model: ModelV, node: cst.Call, args, method: str | None = None) -> V:
        """``model(x)``, or ``model.encode(x)`` (``method``: one of the model's own methods)."""
        if any(a.keyword is not None or a.star for a, _ in args):
            raise Unsupported("a model called with keyword or unpacked arguments")
        inputs = [a.value for a, _ in args]
        live = bool(self.live) and not self.no_grad
        md = model.md.methods[method] if method else model.md
        self.fact(node, "model_call", {"inputs": [id(i) for i in inputs],
                                       "model": id(node.func.value) if method else id(node.func),
                                       "method": method and (model.md, method),
                                       "training": model.training and not self.no_grad,
                                       "grad": not self.no_grad, "live": live,
                                       "keras_layout": [isinstance(v, LiveV) for _, v in args]},
                  model=model.name)
        if not self.quiet:
            self.facts[id(node)].model_def = md
        n_out = len(md.graph.outputs) if md is not None else 1
        if live:
            from transpiler.printers.keras.training import output_perm

            outs = [LiveV(output_perm(md, i) is not None) for i in range(n_out)]
        else:
            outs = [Arr() for _ in range(n_out)]
        return outs[0] if n_out == 1 else TupleV(outs)

    def loss_call(self, loss: LossV, node: cst.Call, args) -> V:
        pos = [a.value for a, _ in args if a.keyword is None]
        if len(pos) != 2 or len(args) != 2:
            raise Unsupported("a loss object called with other than (output, target)")
        output, target = (pos[1], pos[0]) if loss.keras_order else (pos[0], pos[1])
        self.fact(node, "loss_call", {"loss": id(node.func), "output": id(output), "target": id(target),
                                      "config": loss.config})
        return LiveV() if self.live and not self.no_grad else LossValueV()

    def functional_loss(self, short: str, node: cst.Call, pos, vals, kw) -> V:
        """``F.cross_entropy(out, y)`` in data code: the loss computed on arrays."""
        if len(pos) < 2:
            raise Unsupported(f"F.{short} without (output, target)")
        if short in ("mse_loss", "l1_loss"):  # elementwise: numpy says it directly
            reduction = kw.get("reduction")
            reduction = reduction.evaluated_value if isinstance(reduction, cst.SimpleString) else \
                ("mean" if reduction is None else None)
            if reduction not in ("mean", "sum", "none"):
                raise Unsupported(f"F.{short}(reduction={_code(kw['reduction'])})")
            diff = "np.abs({0} - {1})" if short == "l1_loss" else "({0} - {1}) ** 2"
            template = diff if reduction == "none" else f"({diff}).{reduction}()" if short != "l1_loss" \
                else f"{diff}.{reduction}()"
            self.array(node, template, [pos[0], pos[1]])
            return Arr()
        loss = self.loss_config(short, {k: self.static(v, k) for k, v in kw.items()}, [])
        self.fact(node, "loss_call", {"loss": None, "output": id(pos[0]), "target": id(pos[1]), "config": loss})
        return LossValueV()

    # -- objects ----------------------------------------------------------------------
    def loss_config(self, name: str, kw: dict, pos: list) -> T.Loss:
        if pos:
            raise Unsupported(f"{name}: positional arguments are not translated")
        kind, from_logits = LOSSES[name]
        reduction = kw.pop("reduction", "mean")
        for legacy in ("size_average", "reduce"):
            if kw.pop(legacy, None) is not None:
                raise Unsupported(f"{name}({legacy}=...) (deprecated) is not translated")
        params: dict[str, Any] = {}
        smoothing = kw.pop("label_smoothing", 0.0)
        if smoothing:
            params["label_smoothing"] = smoothing
        ignore = kw.pop("ignore_index", -100)
        if ignore != -100:
            raise Unsupported(f"{name}(ignore_index={ignore}) is not translated")
        if kind == "huber":
            delta = kw.pop("delta", 1.0)
            beta = kw.pop("beta", 1.0)
            if name in ("SmoothL1Loss", "smooth_l1_loss") and beta != 1.0:
                raise Unsupported(f"{name}(beta={beta}): smooth L1 with beta != 1 is Huber(delta=beta) / beta")
            params["delta"] = float(delta) if not isinstance(delta, T.Code) else delta
        if kind == "kl_divergence":
            log_target = kw.pop("log_target", False)
            if log_target:
                raise Unsupported(f"{name}(log_target=True) is not translated")
            params["log_input"] = True
            if reduction == "batchmean":
                reduction = "mean"
            elif reduction == "sum":
                pass
            else:
                raise Unsupported(f"{name}(reduction={reduction!r}) averages over the classes too; "
                                  "use reduction='batchmean' (the KL divergence per sample)")
        if kw:
            raise Unsupported(f"{name}: argument(s) {', '.join(sorted(kw))} not translated")
        if isinstance(reduction, T.Code) or reduction not in ("mean", "sum"):
            raise Unsupported(f"{name}(reduction={reduction!r}) is not translated (only 'mean' and 'sum')")
        if reduction == "sum" and kind not in PER_SAMPLE_SCALAR:
            raise Unsupported(f"{name}(reduction='sum') sums every element; Keras sums per-sample means")
        return T.Loss(kind, from_logits, params, reduction)

    def optimizer(self, name: str, node: cst.Call, pos, vals, kw) -> V:
        if name not in OPTIMIZERS:
            raise Unsupported(f"torch.optim.{name} is not translated to Keras yet")
        kind, order, defaults = OPTIMIZERS[name]
        if not vals:
            raise Unsupported(f"torch.optim.{name} without parameters")
        params = vals[0]
        per_group = {}
        given = dict(zip(order[1:], pos[1:]))
        given.update(kw)
        values = {k: self.static(v, f"{name}({k}=...)") for k, v in given.items()}
        if not isinstance(params, ParamsV):
            if not isinstance(pos[0], (cst.List, cst.Tuple)):
                raise Unsupported(f"torch.optim.{name}({_code(pos[0])}): only model.parameters() of a model "
                                  "built in this script is translated")
            params, shared, per_group = self.parameter_groups(name, pos[0], {**defaults, **values})
            values.update(shared)
        for key in list(values):
            if key in OPTIMIZER_IGNORED:
                if key == "maximize" and values[key]:
                    raise Unsupported(f"{name}(maximize=True) is not translated")
                values.pop(key)
        unknown = set(values) - set(defaults)
        if unknown:
            raise Unsupported(f"torch.optim.{name}: argument(s) {', '.join(sorted(unknown))} not translated")
        h = {**defaults, **values}
        hyper = dict(T.OPTIMIZER_DEFAULTS[kind])
        hyper["learning_rate"] = h["lr"]
        opt = T.Optimizer(kind, hyper, **per_group)
        if kind in ("adam", "adamw"):
            betas = h["betas"]
            if isinstance(betas, T.Code):
                raise Unsupported(f"{name}(betas=...) must be known statically")
            hyper["beta_1"], hyper["beta_2"] = float(betas[0]), float(betas[1])
            hyper["epsilon"] = h["eps"]
            hyper["amsgrad"] = h["amsgrad"]
            opt.epsilon_after_bias_correction = True
        if kind == "adamw":
            hyper["weight_decay"] = h["weight_decay"]
        elif h["weight_decay"]:
            opt.l2 = h["weight_decay"]
        if kind == "sgd":
            if h["dampening"]:
                raise Unsupported("SGD(dampening=...) is not translated")
            hyper["momentum"] = h["momentum"]
            hyper["nesterov"] = h["nesterov"]
            opt.momentum_on_gradients = bool(h["momentum"])
        if kind == "rmsprop":
            hyper["rho"] = h["alpha"]
            hyper["epsilon"] = h["eps"]
            hyper["momentum"] = h["momentum"]
            hyper["centered"] = h["centered"]
            opt.epsilon_outside_sqrt = True
            opt.momentum_on_gradients = bool(h["momentum"])
        if kind == "adadelta":
            if h["weight_decay"]:
                raise Unsupported("Adadelta(weight_decay=...) is not translated")
            hyper["rho"], hyper["epsilon"] = h["rho"], h["eps"]
        if kind == "adagrad":
            if h["lr_decay"]:
                raise Unsupported("Adagrad(lr_decay=...) is not translated")
            hyper["initial_accumulator_value"] = h["initial_accumulator_value"]
            hyper["epsilon"] = h["eps"]
            opt.epsilon_outside_sqrt = True
        self._lstm_bias_rate(opt, params)
        self.fact(node, "optimizer_object", opt, model=params.model.name)
        return OptimizerV(opt, params.model, node, model_text=params.text)

    def _lstm_bias_rate(self, opt: T.Optimizer, params) -> None:
        """torch's LSTM has two biases (``bias_ih``, ``bias_hh``) that always get the same
        gradient, so with the same optimizer state each moves by the same step and their sum
        (Keras' one bias) by twice it. Keras' bias steps at twice the rate, which reproduces
        that exactly for every optimizer here, as long as nothing treats the two biases apart:
        no weight decay (it decays each by its own value), no clipping, no parameter groups."""
        md = getattr(params.model, "md", None)
        if md is None or opt.group_learning_rates or opt.no_weight_decay is not None or opt.l2 or \
                opt.clip or opt.hyper.get("weight_decay"):
            return
        # (GRU: Keras has two too; an LSTM whose bias_hh is frozen has one bias, as Keras')
        lstm_layers = {n.source_name for n in md.graph.nodes if n.op == "lstm" and not n.meta.get("bias_hh_frozen")}
        if not lstm_layers:
            return
        keys = [k for k in pg.parameter_keys(md) if ".bias_ih_l" in k or ".bias_hh_l" in k]
        biases = [v for v in pg.keras_variables(md, keys) if v[0] in lstm_layers]
        if biases:
            opt.group_learning_rates = [(T.KerasVariables(None, params.model.var or "model", biases), 2.0)]
            opt.rate_note = ("torch's LSTM has two biases that get the same gradient, so their sum (Keras' "
                             "one bias) moves twice as far per step: the LSTM biases step at twice the rate")

    def parameter_groups(self, name: str, node, defaults: dict):
        """``[{"params": decay, "weight_decay": 0.01}, {"params": no_decay, ...}]``: the model the
        groups cover (every parameter exactly once), the settings they share, and the Keras
        variables (text, variables) weight decay skips."""
        scope = self.cur_scope
        groups, texts = [], []
        for el in node.elements:
            if not isinstance(el.value, cst.Dict):
                raise Unsupported(f"torch.optim.{name}: a parameter group that is not a dict literal")
            group = {}
            for item in el.value.elements:
                if not isinstance(item, cst.DictElement) or not isinstance(item.key, cst.SimpleString):
                    raise Unsupported(f"torch.optim.{name}: a parameter group's keys must be literal strings")
                key = item.key.evaluated_value
                if key == "params":
                    group[key] = pg.read_list(self, item.value, scope, ModelV, GroupV)
                    texts.append(_code(item.value))
                else:
                    group[key] = self.static(item.value, f"{name}(params=[{{{key!r}: ...}}])")
            if "params" not in group:
                raise Unsupported(f"torch.optim.{name}: a parameter group without params")
            groups.append(group)
        models = {id(g["params"].model): g["params"].model for g in groups}
        if len(models) != 1:
            raise Unsupported(f"torch.optim.{name}: parameter groups over several models")
        model = next(iter(models.values()))
        keys = [k for g in groups for k in g["params"].keys]
        if sorted(keys) != sorted(pg.parameter_keys(model.md)):
            raise Unsupported(f"torch.optim.{name}: the parameter groups do not hold every parameter of "
                              f"{model.var or 'the model'} exactly once (Keras' fit trains them all)")
        shared, excluded, scales = pg.optimizer_groups(name, groups, defaults)
        var = model.var or "model"

        def listed(keys: list[str]) -> T.KerasVariables:
            # the group's own list when it is one (``no_decay``), else the variables are listed
            text = next((t for g, t in zip(groups, texts) if g["params"].keys == keys and
                         isinstance(self.cur_scope.lookup(t), GroupV)), None)
            return T.KerasVariables(text, var, pg.keras_variables(model.md, keys))

        per_group = {"no_weight_decay": None if excluded is None else listed(excluded),
                     "group_learning_rates": [(listed(groups[i]["params"].keys), scale)
                                              for i, scale in sorted(scales.items())]}
        return ParamsV(model, var), shared, per_group

    def scheduler(self, name: str, node: cst.Call, pos, vals, kw) -> V:
        if name not in SCHEDULERS:
            raise Unsupported(f"torch.optim.lr_scheduler.{name} is not translated to Keras yet")
        if not vals or not isinstance(vals[0], OptimizerV):
            raise Unsupported(f"{name}: the first argument must be an optimizer of this script")
        opt = vals[0]
        orders = {"StepLR": ("step_size", "gamma"), "MultiStepLR": ("milestones", "gamma"),
                  "ExponentialLR": ("gamma",), "CosineAnnealingLR": ("T_max", "eta_min"),
                  "LambdaLR": ("lr_lambda",),
                  "ReduceLROnPlateau": ("mode", "factor", "patience", "threshold", "threshold_mode", "cooldown",
                                        "min_lr", "eps")}
        given = dict(zip(orders[name], pos[1:]))
        given.update(kw)
        if "last_epoch" in given or "verbose" in given:
            given.pop("verbose", None)
            if "last_epoch" in given and _code(given.pop("last_epoch")) != "-1":
                raise Unsupported(f"{name}(last_epoch=...) is not translated")
        lr0 = opt.config.hyper["learning_rate"]
        sched = SchedulerV(opt, node)
        if name == "LambdaLR":
            fn = given.pop("lr_lambda")
            if given:
                raise Unsupported(f"{name}: argument(s) {', '.join(sorted(given))} not translated")
            sched.schedule = T.Schedule("lambda", {"initial_learning_rate": lr0, "factor": T.Code(_code(fn), id(fn))},
                                        per="epoch")
            self.fact(node, "schedule_object", sched.schedule)
            return sched
        values = {k: self.static(v, f"{name}({k}=...)") for k, v in given.items()}
        if any(isinstance(v, T.Code) for k, v in values.items() if k not in ("step_size", "T_max", "patience")):
            raise Unsupported(f"{name}: arguments must be known statically")
        if name == "ReduceLROnPlateau":
            p = {"mode": "min", "factor": 0.1, "patience": 10, "threshold": 1e-4, "threshold_mode": "rel",
                 "cooldown": 0, "min_lr": 0.0, "eps": 1e-8, **values}
            patience = p["patience"]
            # torch reduces after `patience` bad epochs have passed (the next bad one); Keras
            # at the patience-th bad epoch
            patience = T.Code(f"{patience.text} + 1") if isinstance(patience, T.Code) else int(patience) + 1
            sched.plateau = T.Callback("reduce_lr_on_plateau", {
                "monitor": "val_loss", "factor": float(p["factor"]), "patience": patience, "mode": p["mode"],
                "min_delta": float(p["threshold"]), "cooldown": int(p["cooldown"]), "min_lr": float(p["min_lr"]),
                "relative_min_delta": p["threshold_mode"] == "rel"})
            self.fact(node, "callback_object", sched.plateau)
            return sched
        if name == "StepLR":
            schedule = T.Schedule("exponential_decay", {"initial_learning_rate": lr0,
                                                        "decay_steps": values["step_size"],
                                                        "decay_rate": float(values.get("gamma", 0.1)),
                                                        "staircase": True}, per="epoch")
        elif name == "MultiStepLR":
            gamma = float(values.get("gamma", 0.1))
            milestones = sorted(int(m) for m in values["milestones"])
            schedule = T.Schedule("piecewise_constant_decay", {
                "initial_learning_rate": lr0, "boundaries": [m - 1 for m in milestones],
                "values": [lr0 * gamma ** i if not isinstance(lr0, T.Code) else None
                           for i in range(len(milestones) + 1)], "gamma": gamma}, per="epoch")
        elif name == "ExponentialLR":
            schedule = T.Schedule("exponential_decay", {"initial_learning_rate": lr0, "decay_steps": 1,
                                                        "decay_rate": float(values["gamma"]), "staircase": False},
                                  per="epoch")
        else:
            schedule = T.Schedule("cosine_annealing", {"initial_learning_rate": lr0, "t_max": values["T_max"],
                                                       "eta_min": float(values.get("eta_min", 0.0))}, per="epoch")
        sched.schedule = schedule
        self.fact(node, "schedule_object", schedule)
        return sched

    def data_object(self, what: str, node: cst.Call, pos, vals, kw, kwv, scope: Scope) -> V:
        if what == "dataset":
            if kw:
                raise Unsupported("TensorDataset with keyword arguments")
            if not all(isinstance(v, (Arr, Other)) for v in vals):
                raise Unsupported("TensorDataset of something that is not array data")
            ds = DatasetV(list(pos), node, bindings={n.value: scope.lookup(n.value)
                                                     for p in pos for n in _root_names(p)})
            self.datasets.append(ds)
            self.fact(node, "dataset_object", T.ArrayExpr("", tuple(id(a) for a in pos)))
            return ds
        dataset = vals[0] if vals else kwv.get("dataset")
        if not isinstance(dataset, (DatasetV, MapDatasetV)):
            raise Unsupported("a DataLoader over something other than a TensorDataset or a map-style Dataset")
        order = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
                 "pin_memory", "drop_last")
        given = dict(zip(order, pos))
        given.update(kw)
        given.pop("dataset", None)
        for key in ("sampler", "batch_sampler", "collate_fn", "worker_init_fn", "generator"):
            if key in given and _code(given[key]) != "None":
                raise Unsupported(f"DataLoader({key}=...) is not translated")
        if isinstance(dataset, MapDatasetV):
            self.fact(node, "map_loader_object", {
                "dataset": id(pos[0] if pos else kw["dataset"]),
                **{key: id(given[key]) if key in given else None for key in ("batch_size", "shuffle", "drop_last")}})
            return MapLoaderV(dataset)
        loader = LoaderV(dataset, node, batch_size=given.get("batch_size"), shuffle=given.get("shuffle"),
                         drop_last=given.get("drop_last"))
        given_ds = pos[0] if pos else kw.get("dataset")
        if isinstance(given_ds, cst.Name) or (isinstance(given_ds, cst.Subscript) and isinstance(
                given_ds.value, cst.Name) and isinstance(scope.lookup(given_ds.value.value), DictV)):
            self.used_datasets[id(dataset)] -= 1  # read through the loader: used if the loader is
        self.loaders.append(loader)
        self.fact(node, "loader_object", {"dataset": id(pos[0] if pos else kw["dataset"]),
                                          "batch_size": id(loader.batch_size) if loader.batch_size is not None
                                          else None,
                                          "shuffle": id(loader.shuffle) if loader.shuffle is not None else None,
                                          "drop_last": id(loader.drop_last) if loader.drop_last is not None
                                          else None})
        return loader

    def map_dataset(self, short: str, node: cst.Call, pos, vals, kw, kwv) -> V:
        """``random_split(dataset, lengths)`` and ``Subset(dataset, indices)`` of a map-style
        dataset or a TensorDataset: the generated helpers of the same names."""
        names = ("dataset", "lengths") if short == "random_split" else ("dataset", "indices")
        args = dict(zip(names, pos))
        args.update(kw)
        values = dict(zip(names, vals))
        values.update(kwv)
        extra = set(args) - set(names)
        if extra:
            raise Unsupported(f"{short}({', '.join(sorted(extra))}=...) is not translated")
        dataset = values.get("dataset")
        if isinstance(dataset, DatasetV):
            self.used_datasets[id(dataset)] += 1  # read item by item
            arity = len(dataset.arrays)
        elif isinstance(dataset, MapDatasetV):
            arity = dataset.arity
        else:
            raise Unsupported(f"{short} of something that is not a dataset")
        self.fact(node, "split_object", {"helper": short, "args": [id(args[n]) for n in names]})
        if short == "Subset":
            return MapDatasetV(arity)
        lengths = args.get("lengths")
        if not isinstance(lengths, (cst.List, cst.Tuple)):
            raise Unsupported("random_split: give the lengths as a list")
        return TupleV([MapDatasetV(arity) for _ in lengths.elements])

    def torch_save(self, node: cst.Call, pos, vals) -> V:
        if len(pos) < 2:
            raise Unsupported("torch.save without (object, path)")
        obj, path = vals[0], pos[1]
        literal = self.path_literal(path)
        if isinstance(pos[0], cst.Dict):
            return self.save_checkpoint(node, pos[0], path)
        if isinstance(obj, StateV) and literal is not None:
            self.saved[literal.evaluated_value] = ("state", obj.model)
        if isinstance(obj, StateV) and not obj.snapshot:
            model_node = pos[0].func.value if isinstance(pos[0], cst.Call) and \
                isinstance(pos[0].func, cst.Attribute) else None
            if model_node is None:
                raise Unsupported("torch.save of a state_dict held in a variable")
            self.fact(node, "save_weights", T.ArrayExpr("", (id(model_node), id(path))), model=obj.model.name)
            self.checkpoint_path(path)
            return OTHER
        if isinstance(obj, StateV):
            if obj.model.var is None:
                raise Unsupported("torch.save of a copied state_dict of a model not held in a variable")
            self.fact(node, "save_snapshot", T.ArrayExpr("", (id(pos[0]), id(path))), model=obj.model.var)
            self.facts[id(node)].model_def = obj.model.md
            self.checkpoint_path(path)
            return OTHER
        if isinstance(obj, ModelV) and obj.md is not None:
            return torch_model_files.save_model(self, node, obj, pos[0], path) or OTHER
        raise Unsupported("torch.save of something other than a model's state_dict (or a dict of them)")

    def torch_load(self, node: cst.Call, path) -> V:
        literal = self.path_literal(path)
        saved = self.saved.get(literal.evaluated_value) if literal is not None else None
        if saved is None:
            return LoadedV(path, node)  # only load_state_dict(torch.load(path)) can read it
        if saved[0] == "state":
            self.rename_literal(literal)
            return LoadedV(path, node, saved[1])
        if saved[0] == "model":
            return torch_model_files.load_model(self, node, path, literal, saved[1])
        entries = saved[1]
        self.fact(node, "load_checkpoint", {"path": id(path), "literal": id(literal),
                                            "entries": [(key, model.name, new) for key, (model, new)
                                                        in entries.items()]})
        return CheckpointV({key: model for key, (model, _new) in entries.items()})

    def path_literal(self, path):
        if isinstance(path, cst.SimpleString):
            return path
        if isinstance(path, cst.Name):
            return self._path_literal(path.value)
        if isinstance(path, cst.Call):
            return _find_literal(path)
        return None

    def rename_literal(self, literal) -> None:
        if id(literal) in self.facts:
            return
        new = _weights_name(literal.evaluated_value)
        if new != literal.evaluated_value:
            self.fact(literal, "array_expr", T.ArrayExpr(f"{literal.prefix}{literal.quote}{new}{literal.quote}"))

    def save_checkpoint(self, node: cst.Call, mapping: cst.Dict, path) -> V:
        """``torch.save({"netG": netG.state_dict(), ...}, path)``: one weights file per model."""
        line = self.stmt_stack[-1] if self.stmt_stack else None
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and
                isinstance(line.body[0], cst.Expr) and line.body[0].value is node):
            raise Unsupported("torch.save of a checkpoint dict inside an expression")
        literal = self.path_literal(path)
        if literal is None:
            raise Unsupported("torch.save of a checkpoint dict to a path without a file name literal")
        base = _weights_name(literal.evaluated_value)[: -len(".weights.h5")]
        entries, out = {}, []
        for el in mapping.elements:
            value = el.value if isinstance(el, cst.DictElement) else None
            if not (isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) and
                    isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
                    value.func.attr.value == "state_dict"):
                raise Unsupported("torch.save of a dict holding other than model.state_dict() values")
            model = self.peek(value.func.value, self.cur_scope)
            if not isinstance(model, ModelV):
                raise Unsupported("torch.save of a dict holding the state of something that is not a model")
            key = el.key.evaluated_value
            new = f"{base}_{key}.weights.h5"
            entries[key] = (model, new)
            out.append((key, id(value.func.value), new))
        self.saved[literal.evaluated_value] = ("dict", entries)
        self.fact(line, "save_checkpoint", {"path": id(path), "literal": id(literal), "entries": out})
        return OTHER

    def checkpoint_path(self, path) -> None:
        """Keras' save_weights wants a ``.weights.h5`` name: rename the literal that made the
        path (``os.path.join(tmp, "m.pt")``), where the path variable was assigned."""
        literal = None
        if isinstance(path, cst.SimpleString):
            literal = path
        elif isinstance(path, cst.Name):
            literal = self._path_literal(path.value)
        elif isinstance(path, cst.Call):
            literal = _find_literal(path)
        if literal is None:
            self.program.warn(self.fe._span(path), f"Keras saves weights to a file ending in .weights.h5: "
                                                   f"make sure {_code(path)} does")
            return
        self.rename_literal(literal)

    def _path_literal(self, name: str):
        """The string literal that made ``name`` in the function being read (its last assignment)."""
        holder = self.cur_function if self.cur_function is not None else self.fe.module
        found = []

        class Finder(cst.CSTVisitor):
            def visit_Assign(self, n: cst.Assign) -> None:
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets):
                    lit = _find_literal(n.value)
                    if lit is not None:
                        found.append(lit)

        holder.visit(Finder())
        return found[-1] if found else None

    # -- what the training loop left unused -------------------------------------------
    def _drop_unused_data(self) -> None:
        """A DataLoader (and its TensorDataset) only the recognised loop read: fit() takes
        the arrays, so the statement that made it goes."""
        for loader in self.loaders:
            if self.used_loaders[id(loader)] <= 0 and loader.stmt is not None and _assigns_only(loader.stmt,
                                                                                                   loader.var):
                self.fact(loader.stmt, "drop", f"{loader.var}: fit() batches the arrays itself")
        for ds in self.datasets:
            if self.used_datasets[id(ds)] <= 0 and ds.stmt is not None and _assigns_only(ds.stmt, ds.var) and \
                    not any(id(ds) == id(lo.dataset) and self.used_loaders[id(lo)] > 0 for lo in self.loaders):
                self.fact(ds.stmt, "drop", f"{ds.var}: fit() batches the arrays itself")
        for d in self.dicts:
            if _assigns_only(d.stmt, d.var) and all(
                    (self.used_loaders if isinstance(v, LoaderV) else self.used_datasets)[id(v)] <= 0 and
                    not any(lo.dataset is v and self.used_loaders[id(lo)] > 0 for lo in self.loaders)
                    for v in d.items.values()):
                self.fact(d.stmt, "drop", f"{d.var}: fit() batches the arrays itself")

    # -- the training loop ------------------------------------------------------------
    def training_loop(self, loop: cst.For, scope: Scope) -> None:
        from transpiler.frontend_ast.torch.loops import LoopReader

        loop_reader = LoopReader(self, loop, scope)
        try:
            result = loop_reader.read()
        except (NotStandard, Unsupported) as exc:  # not fit's loop: maybe a custom step
            from transpiler.frontend_ast.torch.steps import read_custom_loop

            if loop_reader.phases is not None:  # a loop over phases: no custom step holds it either
                names = ", ".join(repr(p) for p in loop_reader.phases.names)
                raise Unsupported(f"a training loop over the phases {names} (fit's shape: the first phase trains, "
                                  f"the second only evaluates): {exc}") from None

            read_custom_loop(self, loop, scope, str(exc))
            return
        self.fact(loop, "training_loop", result, model=result.model)
        self.facts[id(loop)].model_def = scope.lookup(result.model).md if isinstance(
            scope.lookup(result.model), ModelV) else None


def _root_names(node) -> list[cst.Name]:
    """The names an expression reads at its roots (``x`` of ``x[:48]``, ``ds`` of ``ds.arrays``;
    not attribute names)."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Attribute):
        return _root_names(node.value)
    if isinstance(node, cst.Subscript):
        return _root_names(node.value) + [n for el in node.slice for n in _slice_names(el.slice)]
    return []


def _slice_names(sl) -> list[cst.Name]:
    if isinstance(sl, cst.Index):
        return _root_names(sl.value)
    return [n for part in (sl.lower, sl.upper, sl.step) if part is not None for n in _root_names(part)]


@dataclass(eq=False)
class _Enumerated(V):
    inner: V


@dataclass(eq=False)
class _Zipped(V):
    inners: list


def keras_children(md: ModelDef | None) -> list[str]:
    """The names of a torch model's children (``model.named_children()``), each the name of
    the one Keras layer it became (``model.get_layer(name)``). Raises Unsupported when a child
    became no layer or several (a Sequential of layers, a ConvTranspose with its crop) or a
    layer of another name: the Keras model has no layer to hand out for it."""
    children = md.graph.meta.get("torch_children") if md is not None else None
    if not children:
        raise Unsupported("model.named_children() of a model that is not translated")
    for child in children:
        names = {n.name for n in md.graph.nodes if str(n.meta.get("torch_path") or "").split(".")[0] == child}
        if names != {child}:
            raise Unsupported(f"model.named_children(): the child {child!r} is not one Keras layer of its name")
    return list(children)


def _variable_text(variable: tuple[str, int]) -> str:
    layer, index = variable
    return f'.get_layer("{layer}").weights[{index}]'


def _combine(left: V, right: V) -> V:
    if isinstance(left, LiveV) or isinstance(right, LiveV):
        return LiveV(getattr(left, "permuted", False) or getattr(right, "permuted", False))
    if isinstance(left, Arr) or isinstance(right, Arr):
        return Arr()
    if isinstance(left, LossValueV) or isinstance(right, LossValueV):
        return LossValueV()
    return OTHER


def _child_expressions(node) -> list:
    out = []
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            out.append(child)
        elif isinstance(child, (cst.Arg, cst.Element, cst.DictElement, cst.StarredDictElement, cst.Index,
                                cst.SubscriptElement, cst.AssignTarget)):
            out.extend(_child_expressions(child))
    return out


def _mentions(node, names: set[str]) -> bool:
    return bool(_names_in(node) & names)


def _ids_under(node) -> list[int]:
    out = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            out.append(id(n))
            return True

    node.visit(Collect())
    return out


def _has_backward(node) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> None:
            nonlocal found
            if n.attr.value == "backward":
                found = True

        def visit_FunctionDef(self, n) -> bool:
            return False

    node.visit(Finder())
    return found


def _import_roots(small) -> set[str]:
    if isinstance(small, cst.Import):
        return {_dotted(a.name).split(".")[0] for a in small.names}
    if small.module is None:
        return {""}
    return {_dotted(small.module).split(".")[0]}


def _find_literal(node):
    """The string literal naming a checkpoint file inside ``node``."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_SimpleString(self, n: cst.SimpleString) -> None:
            value = n.evaluated_value
            if isinstance(value, str) and (value.endswith(CHECKPOINT_SUFFIXES) or "." not in value):
                found.append(n)

    node.visit(Finder())
    suffixed = [n for n in found if n.evaluated_value.endswith(CHECKPOINT_SUFFIXES)]
    return (suffixed or found or [None])[-1]


def _weights_name(value: str) -> str:
    """``m.pt`` → ``m.weights.h5`` (the name Keras' save_weights requires)."""
    base = value
    for suffix in CHECKPOINT_SUFFIXES:
        if value.endswith(suffix):
            base = value[: -len(suffix)]
            break
    if base.endswith(".weights"):
        base = base[: -len(".weights")]
    if base.endswith(".weights.h5"):
        return base
    return f"{base}.weights.h5"


def _assigns_only(stmt, var: str | None) -> bool:
    """``stmt`` is ``var = <call>`` and nothing else."""
    return var is not None and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 and \
        isinstance(stmt.body[0].targets[0].target, cst.Name) and stmt.body[0].targets[0].target.value == var


def read_training(frontend, skip: set[int]) -> dict[int, T.TrainingStatement]:
    """Recognise the training program of ``frontend``'s script; returns the facts by node id
    (also appended to ``program.training`` in source order)."""
    reader = TrainingReader(frontend)
    reader.run(skip)
    frontend.program.training.extend(reader.facts.values())
    return reader.facts


__all__ = ["read_training", "TrainingReader"]
