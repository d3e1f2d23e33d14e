"""The torch model reader's values (modules, tensors, parameters, bound methods, RNN states, ...)
and its tables of torch names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.frontend_ast.torch import params as torch_params
from transpiler.frontend_ast.torch.modules import TorchLayer, Unsupported
from transpiler.frontend_ast.interp import SAFE_BUILTINS, ClassRef, Return
from transpiler.ir.graph import LayerRef, Span, Value


# ---------------------------------------------------------------------------------
# Abstract values
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An imported module or a dotted path inside one (``torch.nn.Conv2d``)."""

    path: str


@dataclass(eq=False)
class Mod:
    """A module object: a leaf ``nn`` layer, a container, or a user ``nn.Module``."""

    kind: str  # "leaf", "sequential", "module_list", "module_dict", "user"
    span: Span
    layer: TorchLayer | None = None
    cls_name: str = ""
    items: Any = None  # list (sequential, module_list) or dict (module_dict)
    cls: ClassRef | None = None
    attrs: dict = field(default_factory=dict)
    path: str | None = None
    #: what initialisation code drew for a leaf module's weights: torch name → init
    #: (``torch_params.init_of``), read by ``nn.init.*_(m.weight)`` and ``m.bias.data.zero_()``
    inits: dict = field(default_factory=dict)
    #: a leaf made by a subclass of its torch class (``class Linear(Bottle, nn.Linear)``):
    #: the subclass, whose ``forward`` calls run (frontend_ast/torch/module_inherit.py)
    forward_cls: ClassRef | None = None

    def children(self) -> list[tuple[str, "Mod"]]:
        if self.kind in ("sequential", "module_list"):
            return [(str(i), m) for i, m in enumerate(self.items)]
        if self.kind == "module_dict":
            return list(self.items.items())
        if self.kind == "user":
            return [(k, v) for k, v in self.attrs.items() if isinstance(v, Mod)]
        return []


#: identifies one Keras layer (``Node.layer``) across the nodes that call it: the IR's LayerRef
LayerToken = LayerRef


@dataclass(eq=False)
class ParamObj:
    """``nn.Parameter(torch.zeros(shape))`` or ``self.register_buffer(name, tensor)``: a
    tensor of a user module's own (a Keras weight; a buffer is a non-trainable one).
    ``init`` is torch's initial value (``torch_params``: the tensor's, or what an ``nn.init``
    call in ``reset_parameters`` drew; None when it cannot be reproduced)."""

    shape: tuple
    span: Span
    path: str | None = None
    init: tuple | None = None
    trainable: bool = True
    buffer: bool = False


@dataclass(eq=False)
class OfValue:
    """What the forward computes of one graph value (``value``): the tensor itself, its shape."""

    value: Value


class Tensor(OfValue):
    """A tensor the forward computes: a value of the graph being built."""


class Shape(OfValue):
    """``x.shape`` / ``x.size()``."""

    def __len__(self) -> int:  # (``len(x.size())``: the rank)
        return len(self.value.shape)


@dataclass(eq=False)
class RNNStates:
    """torch's ``h_n`` (or ``c_n``): one state per layer and direction, stacked."""

    values: list


@dataclass(eq=False)
class Bound:
    """A method bound to an object (``x.view``, ``self.layers.append``)."""

    obj: Any
    name: str


@dataclass(eq=False)
class LayerParam:
    """``m.weight``/``m.bias`` of a leaf module, in initialisation code (``nn.init`` on it
    sets the Keras weight's initializer)."""

    mod: Mod
    name: str
    shape: tuple
    part: bool = False  # a slice of it (``bias_ih_l0[32:64]``): an initializer draws the whole weight


@dataclass(eq=False)
class _ClassOf:
    """``m.__class__`` of a module (its ``__name__`` is the class name)."""

    mod: Mod


class _IsInstance:
    """The builtin ``isinstance``, on modules (``isinstance(m, nn.Conv2d)``) and plain values."""


class _Type:
    """The builtin ``type``, on modules (``type(m).__name__``)."""


_ISINSTANCE, _TYPE = _IsInstance(), _Type()
#: names that are no plain builtin for the torch reader
_SPECIAL_NAMES = {"super": Ref("builtins.super"), "isinstance": _ISINSTANCE, "type": _TYPE,
                  "print": Ref("builtins.print")}


@dataclass(eq=False)
class _MaxResult:
    """``torch.max(x, dim)``: (values, indices); only the values are a layer."""

    values: "Tensor"

    def __getitem__(self, i):
        if i == 0:
            return self.values
        raise Unsupported("the indices of torch.max are not supported")


@dataclass(eq=False)
class _Reversed:
    """``seq.flip(1)``: a sequence read backwards; an RNN called on it runs ``go_backwards``."""

    tensor: "Tensor"


@dataclass(eq=False)
class _ZeroState:
    """``torch.zeros(num_layers, x.size(0), hidden)`` made in forward: read only as an RNN's
    initial state, where it is what the RNN starts from anyway (Keras' RNNs start at zeros)."""


#: tensor methods that leave a zero state what it is (where it lives, whether it is tracked)
_ZERO_STATE_METHODS = ("to", "cuda", "cpu", "detach", "contiguous", "requires_grad_", "float")


@dataclass(eq=False)
class _StackedState:
    """``h.unsqueeze(0)`` / ``h.view(1, N, H)`` of a (N, H) tensor: torch's (1, N, H) stack of
    one layer's RNN state; read only as an RNN's initial state (Keras' ``initial_state``
    takes the (N, H) tensor itself)."""

    tensor: "Tensor"


#: tensor methods that leave a stacked state what it is
_STACKED_STATE_METHODS = ("to", "cuda", "cpu", "contiguous", "float")


def _tensor_values(path: str, items) -> list:
    """The graph values of ``torch.cat``'s (``torch.add``'s, ...) tensors, all tensors."""
    if not all(isinstance(t, Tensor) for t in items):
        raise Unsupported(f"{path} of something that is not a tensor")
    return [t.value for t in items]


def _zero_state(value) -> bool:
    """``h0``, ``(h0, c0)`` of zeros, or no state at all."""
    if isinstance(value, (tuple, list)):
        return bool(value) and all(isinstance(v, _ZeroState) for v in value)
    return value is None or isinstance(value, _ZeroState)


class _Super:
    """``super()`` inside a module method: ``obj`` the module, ``base`` the class after the one
    defining the running method (None: ``nn.Module``, whose ``__init__`` means nothing here);
    ``super().__init__(...)`` / ``super().<method>(...)`` run the base's method on ``obj``."""

    def __init__(self, obj=None, base=None):
        self.obj, self.base = obj, base


_Return = Return
_SAFE_BUILTINS = {k: v for k, v in SAFE_BUILTINS.items() if k != "isinstance"}
_AUG = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.DivideAssign: cst.Divide}
_TENSOR_MERGES = {cst.Add: "add", cst.Subtract: "subtract", cst.Multiply: "multiply", cst.Divide: "divide",
                  cst.Power: "power", cst.MatrixMultiply: "matmul"}
#: torch functions and tensor methods of one tensor → element-wise ops
_UNARY_FUNCTIONS = {"exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "abs": "abs", "square": "square",
                    "neg": "negative", "negative": "negative"}
_TENSOR_COMPARISONS = {cst.GreaterThan: "greater", cst.GreaterThanEqual: "greater_equal", cst.LessThan: "less",
                       cst.LessThanEqual: "less_equal", cst.Equal: "equal", cst.NotEqual: "not_equal"}
#: tensor methods reducing over ``dim`` → reduce ops
_REDUCTIONS = {"mean": "reduce_mean", "sum": "reduce_sum", "amax": "reduce_max", "amin": "reduce_min"}
#: torch.* / tensor-method spellings of functional recognisers (F.relu == torch.relu == x.relu())
_FUNCTION_ALIASES = {"torch.relu": "relu", "torch.sigmoid": "sigmoid", "torch.tanh": "tanh",
                     "torch.selu": "selu", "torch.softmax": "softmax", "torch.log_softmax": "log_softmax",
                     "torch.nn.functional.sigmoid": "sigmoid", "torch.nn.functional.tanh": "tanh"}
#: torch.X_like functions → the value they fill with (None: the fill_value argument)
_FILLED_LIKE = {"torch.zeros_like": 0.0, "torch.ones_like": 1.0, "torch.full_like": None}
_TORCH_DTYPES = {f"torch.{k}": v for k, v in {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64", "float16": "float16",
    "half": "float16", "bfloat16": "bfloat16", "int8": "int8", "int16": "int16", "int32": "int32",
    "int": "int32", "int64": "int64", "long": "int64", "uint8": "uint8", "bool": "bool"}.items()}
_METHOD_FUNCTIONS = {"relu", "sigmoid", "tanh", "softmax", "log_softmax"}
_MERGE_FUNCTIONS = {"torch.add": "add", "torch.sub": "subtract", "torch.mul": "multiply",
                    "torch.maximum": "maximum", "torch.minimum": "minimum"}
#: functions that make a data array of a literal shape: where the shape is (``"varargs"``: the
#: positional arguments or one tuple; an int: that positional argument; ``size=`` always counts)
#: and whether the array holds integers (token ids for an Embedding)
_DATA_MAKERS = {
    **{f"torch.{n}": ("varargs", False) for n in ("randn", "rand", "zeros", "ones", "empty")},
    "torch.randint": ("last_tuple", True),
    **{f"numpy.{n}": (0, False) for n in ("zeros", "ones", "empty")},
    **{f"numpy.random.{n}": ("varargs", False) for n in ("randn", "rand")},
    **{f"numpy.random.{n}": (0, False) for n in ("standard_normal", "random", "random_sample")},
    **{f"numpy.random.{n}": (2, False) for n in ("normal", "uniform")},
    "numpy.random.randint": (2, True),
}
#: the same functions as methods of a ``np.random.RandomState``/``default_rng()`` generator
_GENERATOR_METHODS = {
    "randn": ("varargs", False), "rand": ("varargs", False), "standard_normal": (0, False),
    "random": (0, False), "normal": (2, False), "uniform": (2, False), "randint": (2, True),
    "integers": (2, True),
}
#: tensor constructors read in ``__init__`` (the value of a parameter or buffer)
_TENSOR_MAKERS = {"torch.zeros", "torch.ones", "torch.empty", "torch.randn", "torch.rand", "torch.full",
                  "torch.tensor"}


def torch_api(path: str) -> str | None:
    """``torch.nn.Conv2d`` → ``nn.Conv2d``; ``torch.nn.functional.relu`` → ``F.relu``."""
    if path.startswith("torch.nn.functional."):
        return "F." + path[len("torch.nn.functional."):]
    if path.startswith("torch.nn.modules.") and "." in path[len("torch.nn.modules."):]:
        return "nn." + path.rsplit(".", 1)[1]
    if path.startswith("torch.nn."):
        return "nn." + path[len("torch.nn."):]
    return None
