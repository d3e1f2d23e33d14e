"""What the torch training reader's variables hold (``V`` kinds, beside the interpreter's
``FunctionRef`` and the torch reader's ``Ref``), its tables of torch names, its scopes, and the
syntax helpers its parts share (``frontend_ast/torch/training``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.frontend_ast.interp import Env, FunctionRef, code_of
from transpiler.frontend_ast.keras.frontend import _names_in
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.values import Ref
from transpiler.ir import training as T
from transpiler.ir.code_literals import dotted_name as _dotted
from transpiler.ir.program import ModelDef


# ---------------------------------------------------------------------------------
# What a variable holds
# ---------------------------------------------------------------------------------
class V:
    """Base of the abstract values (a value without fields is a plain subclass; one with
    fields an ``eq=False`` dataclass: every value is hashed by identity)."""


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
    #: what the program appended to the list otherwise (tensors of a loss: frontend_ast/torch/episodes)
    items: list = field(default_factory=list)


@dataclass(eq=False)
class DictV(Other):
    """A dict literal with string keys (``{"train": train_loader, "val": val_loader}``): what
    each key holds, for ``d["train"]``."""

    items: dict = field(default_factory=dict)
    var: str | None = None
    stmt: cst.CSTNode | None = None


#: a dotted path in torch (``torch.optim.Adam``): the torch reader's value for an imported name
TorchRef = Ref


class Arr(V):
    """Array data: a torch tensor outside the model (a numpy array in the target)."""


def tensor_template(reader, node, first, permuted: bool):
    """``(p, done)`` for writing a tensor method of a training step as a template: ``p(expr)``
    adds an operand and returns its ``{i}`` slot (``first`` is slot 0), ``done(template)``
    records the template for ``node`` and returns the step's new tensor (``LiveV``, permuted
    as the receiver was, unless ``result`` says otherwise)."""
    parts = [first]

    def p(n) -> str:
        parts.append(n)
        return "{%d}" % (len(parts) - 1)

    def done(template: str, result=None):
        reader.array(node, template, parts, tensors=True)
        return LiveV(permuted) if result is None else result

    return p, done


@dataclass(eq=False)
class LiveV(V):
    """A tensor in a training step (a model output gradients flow through): a Keras
    tensor, in the Keras model's layout (``permuted`` when that is not torch's)."""

    permuted: bool = False
    #: (permuted) the permutation that gives it torch's layout back, where known
    perm: tuple | None = None


@dataclass(eq=False)
class ScalarV(LiveV):
    """A 0-d Keras tensor of the step (a reduced loss): ``item()`` is ``float()`` of it."""


@dataclass(eq=False)
class SampleV(LiveV):
    """Class indices a distribution sampled (integers: ``.item()`` is a Python int)."""


class DistributionV(V):
    """A ``torch.distributions`` object (the generated ``Categorical``: frontend_ast/torch/episodes)."""


@dataclass(eq=False)
class ModelV(V):
    name: str
    md: ModelDef | None
    training: bool = True
    var: str | None = None
    #: the module's own Python lists (``self.rewards = []``) and what the program put in them
    attributes: dict = field(default_factory=dict)
    #: the call that built it and its arguments (the Keras model gets those attributes there)
    built_by: Any = None
    #: (md None) where its class is translated (frontend_ast/torch/untranslated_models)
    elsewhere: str | None = None


@dataclass(eq=False)
class ModelFactory(V):
    """A builder function or a model class: calling it builds a model."""

    name: str
    md: ModelDef | None
    elsewhere: str | None = None  # (md None) where its class is translated


@dataclass(eq=False)
class ParamsV(V):
    model: ModelV
    text: str = ""  # the model's expression (``netD`` in ``netD.parameters()``)


class ParamV(V):
    """A parameter of a translated model (``p`` of ``for p in model.parameters()``)."""


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


class LossValueV(V):
    """What a loss object's call returned (a scalar loss: ``backward()`` of it is the step's)."""


@dataclass(eq=False)
class SchedulerV(V):
    optimizer: OptimizerV
    node: cst.Call
    schedule: T.Schedule | None = None
    plateau: T.Callback | None = None
    var: str | None = None
    stmt: cst.CSTNode | None = None  # the assignment that binds it
    #: the program saves or restores its state (``scheduler.state_dict()``): the Keras object
    #: is the StepSchedule the program steps itself, never a fit callback
    state_read: bool = False


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


def tensor_item(value) -> V:
    """An item of ``value`` beyond the ones the reader knows (a list appended to in a loop,
    whose body was read once: ``res.append(correct_k)``) when every known item is a tensor
    of the same kind: one more such tensor (a Keras tensor of the step, or array data);
    else OTHER."""
    items = value.items if isinstance(value, (TupleV, GroupV)) else []
    if items and all(type(i) in (LiveV, ScalarV) for i in items):
        return LiveV(any(i.permuted for i in items))
    if items and all(type(i) is Arr for i in items):
        return Arr()
    return OTHER


@dataclass(eq=False)
class DatasetClassV(V):
    """A user's map-style ``Dataset`` subclass (kept, with numpy items: ``torch_data``)."""

    name: str
    arity: int


@dataclass(eq=False)
class MapDatasetV(V):
    """A map-style dataset: an instance of a user's Dataset class, a ``random_split`` part
    or a ``Subset``; an item is ``arity`` arrays (0: not known, a dataset the file was given)."""

    arity: int


@dataclass(eq=False)
class MapLoaderV(V):
    """A DataLoader over a map-style dataset (a ``DatasetLoader``: stacked items)."""

    dataset: MapDatasetV


#: a function of the script (the interpreter's value)
FuncV = FunctionRef


class NoGradV(V):
    """``torch.no_grad()`` (a ``with`` block of it runs as plain code)."""


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
#: torch's element-wise functions → the array function (ir/array_functions.py) computing each
NUMPY_UNARY = {"abs": "$abs", "exp": "$exp", "log": "$log", "sqrt": "$sqrt", "sin": "$sin",
               "cos": "$cos", "tanh": "$tanh", "floor": "$floor", "ceil": "$ceil", "sign": "$sign",
               "log1p": "$log1p", "expm1": "$expm1", "neg": "$negative", "isnan": "$isnan",
               "isfinite": "$isfinite", "square": "$square", "log2": "$log2", "log10": "$log10"}
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
    "Adamax": ("adamax", ("params", "lr", "betas", "eps", "weight_decay"),
               {"lr": 0.002, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}),
    "NAdam": ("nadam", ("params", "lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay"),
              {"lr": 0.002, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0, "momentum_decay": 0.004,
               "decoupled_weight_decay": False}),
}
#: torch.optim optimizers Keras has no counterpart of (marked stubs naming them)
OPTIMIZERS_WITHOUT_KERAS = {
    "LBFGS": "a quasi-Newton method re-evaluating the loss through a closure",
    "Rprop": "sign-based steps with per-weight step sizes",
    "ASGD": "averaged SGD",
    "SparseAdam": "Adam over sparse gradients only",
    "RAdam": "rectified Adam",
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

SCHEDULERS = {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR", "ReduceLROnPlateau",
              "LinearLR", "OneCycleLR", "SequentialLR", "ConstantLR"}

DATA_PATHS = {"torch.utils.data.DataLoader": "loader", "torch.utils.data.dataloader.DataLoader": "loader",
              "torch.utils.data.TensorDataset": "dataset", "torch.utils.data.dataset.TensorDataset": "dataset"}
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".pkl", ".bin", ".ckpt", ".tar")


_code = code_of


class Scope(Env):
    """The interpreter's scope, collecting what a function returns; ``lookup`` answers None
    for a name no scope binds (what the reader's parts ask: "does it hold one of mine?")."""

    __slots__ = ("returns",)

    def __init__(self, parent: "Scope | None" = None):
        super().__init__(parent)
        self.returns: list[V] = []

    def lookup(self, name: str) -> V | None:
        return self.find(name)


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


class _Enumerated(V):
    """``enumerate(items)``: (index, item) pairs of what ``inner`` holds."""

    def __init__(self, inner: V):
        self.inner = inner


class _Zipped(V):
    """``zip(a, b, ...)``: tuples of what each of ``inners`` holds."""

    def __init__(self, inners: list):
        self.inners = inners


def keras_children(md: ModelDef | None) -> list[str]:
    """The names of a torch model's children (``model.named_children()``), each the name of
    the one Keras layer it became (``model.get_layer(name)``). Raises Unsupported when a child
    became no layer or several (a Sequential of layers, a ConvTranspose with its crop) or a
    layer of another name: the Keras model has no layer to hand out for it."""
    children = md.graph.from_torch.torch_children if md is not None else None
    if not children:
        raise Unsupported("model.named_children() of a model that is not translated")
    for child in children:
        names = {n.name for n in md.graph.nodes if str(n.from_torch.path or "").split(".")[0] == child}
        if names != {child}:
            raise Unsupported(f"model.named_children(): the child {child!r} is not one Keras layer of its name")
    return list(children)


def _variable_text(variable: tuple[str, int]) -> str:
    layer, index = variable
    return f'.get_layer("{layer}").weights[{index}]'


def _combine(left: V, right: V) -> V:
    if isinstance(left, LiveV) or isinstance(right, LiveV):
        permuted = [v for v in (left, right) if getattr(v, "permuted", False)]
        if permuted and any(isinstance(v, Arr) for v in (left, right)):
            # (array data is in torch's layout: elementwise, the axes would pair up wrongly)
            raise Unsupported("arithmetic between array data and a feature map the Keras model returns "
                              "channels-last")
        if all(isinstance(v, (ScalarV, LossValueV, int, float)) and not isinstance(v, bool) for v in (left, right)):
            return ScalarV()  # (of 0-d losses and numbers: ``loss_real + loss_fake``)
        return LiveV(bool(permuted), permuted[0].perm if len(permuted) == 1 else None)
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


#: the nodes of a string literal (``"m.pt"``, ``"m" ".pt"``)
STRING_LITERALS = (cst.SimpleString, cst.ConcatenatedString)


def _literal_quotes(literal) -> tuple[str, str]:
    """The prefix and quote of a string literal (of its first part: ``"m" ".pt"``)."""
    first = literal
    while isinstance(first, cst.ConcatenatedString):
        first = first.left
    if not isinstance(first, cst.SimpleString):
        return "", '"'
    return first.prefix.replace("f", "").replace("F", ""), first.quote


def _literal_text(literal, value: str) -> str:
    """``value`` as a string literal in the quotes ``literal`` uses."""
    prefix, quote = _literal_quotes(literal)
    return f"{prefix}{quote}{value}{quote}"


def _find_literal(node):
    """The string literal naming a checkpoint file inside ``node``."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_SimpleString(self, n: cst.SimpleString) -> None:
            self.literal(n)

        def visit_ConcatenatedString(self, n: cst.ConcatenatedString) -> bool:
            self.literal(n)
            return False  # (its parts are not literals of their own)

        def literal(self, n) -> None:
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


def transforms_batch(stmt, names) -> bool:
    """Does ``stmt`` assign one of the batch arrays ``names`` something other than itself moved
    to a device (``images = images.reshape(-1, 784)``, not ``data = data.to(device)``)?"""
    assigns = [s for s in getattr(stmt, "body", [stmt]) if isinstance(s, cst.Assign)] if \
        isinstance(stmt, cst.SimpleStatementLine) else []
    for small in assigns:
        bound = {n.value for t in small.targets for n in _bound_names(t.target)}
        if not bound & set(names):
            continue
        for call in _calls_in(small.value):
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in IDENTITY_METHODS):
                return True
        if not _calls_in(small.value) and not isinstance(small.value, (cst.Name, cst.Tuple)):
            return True
    return False


def _bound_names(target) -> list:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _bound_names(el.value)]
    return []


def _calls_in(node) -> list:
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call):
            found.append(call)

    node.visit(Calls())
    return found
