"""What a PyTorch module's own tensors start as: ``torch.zeros(n)``, ``torch.randn(3, 4) * 0.02``
and the ``nn.init`` calls of its ``reset_parameters``, read into one small description of
the initial distribution (``init``) that the Keras printer turns into an initializer.

An ``init`` is one of ``("zeros",)``, ``("ones",)``, ``("constant", c)``, ``("normal", mean,
std)``, ``("truncated_normal", mean, std)`` (cut at two standard deviations) and
``("uniform", low, high)``; ``None`` means torch's value cannot be reproduced (an
uninitialised ``torch.empty``, an orthogonal init, ...). Bounds that depend on the fan
(kaiming, xavier) are computed here with torch's fan rule on torch's shape (``(out, in,
*kernel)``), so the printed initializer does not depend on how Keras counts fans.

Imports no deep-learning framework.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import libcst as cst

from transpiler.frontend_ast.torch.modules import Unsupported


@dataclass(eq=False)
class TensorData:
    """A tensor made in ``__init__``: its shape and initial value (``init``)."""

    shape: tuple
    init: tuple | None


def _shape_of(args, kwargs, what: str) -> tuple:
    sizes = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    sizes = kwargs.get("size", sizes)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in sizes):
        raise Unsupported(f"{what}: the shape must be known statically")
    return tuple(sizes)


def tensor_data(path: str, args: list, kwargs: dict) -> TensorData:
    """``torch.zeros(3, 4)``, ``torch.ones(())``, ``torch.full((n,), 0.5)``, ``torch.tensor(1.0)``."""
    kwargs = {k: v for k, v in kwargs.items() if k not in ("dtype", "device", "requires_grad")}
    name = path.rsplit(".", 1)[1]
    if name == "tensor":
        value = args[0] if args else kwargs.get("data")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Unsupported("torch.tensor: only a number is read as a parameter's value")
        return TensorData((), ("constant", float(value)))
    if name == "full":
        if len(args) < 2 or not isinstance(args[1], (int, float)):
            raise Unsupported("torch.full: the fill value must be a number")
        return TensorData(_shape_of([args[0]], {}, path), ("constant", float(args[1])))
    shape = _shape_of(list(args), kwargs, path)
    init = {"zeros": ("zeros",), "ones": ("ones",), "randn": ("normal", 0.0, 1.0), "rand": ("uniform", 0.0, 1.0),
            "empty": None}[name]
    return TensorData(shape, init)


def scaled_data(op, left, right) -> TensorData:
    """``torch.randn(n) * 0.02``, ``torch.ones(n) * 0.5``: the initial value scaled."""
    data, number = (left, right) if isinstance(left, TensorData) else (right, left)
    if op is not cst.Multiply or isinstance(number, bool) or not isinstance(number, (int, float)) \
            or not isinstance(data, TensorData):
        raise Unsupported("arithmetic on a tensor made in __init__: only scaling by a number is read")
    s = float(number)
    init = data.init
    if init is None:
        return TensorData(data.shape, None)
    kind = init[0]
    if kind == "zeros":
        new = init
    elif kind == "ones":
        new = ("constant", s)
    elif kind == "constant":
        new = ("constant", init[1] * s)
    elif kind in ("normal", "truncated_normal"):
        new = (kind, init[1] * s, init[2] * abs(s))
    else:
        lo, hi = sorted((init[1] * s, init[2] * s))
        new = ("uniform", lo, hi)
    return TensorData(data.shape, new)


def torch_fans(shape: tuple) -> tuple[int, int] | None:
    """torch's ``_calculate_fan_in_and_fan_out`` (None below two dimensions, where torch refuses)."""
    if len(shape) < 2:
        return None
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, param) -> float | None:
    """torch's ``nn.init.calculate_gain``."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    return None


#: nn.init functions: their arguments after the tensor, with torch's defaults
_INIT_SIGNATURES = {
    "zeros_": (), "ones_": (), "constant_": (("val", None),),
    "normal_": (("mean", 0.0), ("std", 1.0)),
    "uniform_": (("a", 0.0), ("b", 1.0)),
    "trunc_normal_": (("mean", 0.0), ("std", 1.0), ("a", -2.0), ("b", 2.0)),
    "kaiming_uniform_": (("a", 0), ("mode", "fan_in"), ("nonlinearity", "leaky_relu")),
    "kaiming_normal_": (("a", 0), ("mode", "fan_in"), ("nonlinearity", "leaky_relu")),
    "xavier_uniform_": (("gain", 1.0),),
    "xavier_normal_": (("gain", 1.0),),
}


def init_of(fn: str, shape: tuple, args: list, kwargs: dict) -> tuple | None:
    """The initial value ``nn.init.<fn>(tensor, *args, **kwargs)`` draws on a tensor of
    ``shape`` (None: not one Keras can draw the same way)."""
    signature = _INIT_SIGNATURES.get(fn)
    if signature is None:
        return None
    kwargs = {k: v for k, v in kwargs.items() if k != "generator"}
    values = {name: default for name, default in signature}
    values.update(zip((n for n, _ in signature), args))
    values.update(kwargs)
    if set(values) - {n for n, _ in signature} or \
            not all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in values.values()):
        return None
    if fn in ("zeros_", "ones_"):
        return (fn[:-1],)
    if fn == "constant_":
        return ("constant", float(values["val"]))
    if fn == "normal_":
        return ("normal", float(values["mean"]), float(values["std"]))
    if fn == "uniform_":
        return ("uniform", float(values["a"]), float(values["b"]))
    if fn == "trunc_normal_":
        mean, std = float(values["mean"]), float(values["std"])
        if std <= 0 or not (math.isclose(values["a"], mean - 2 * std) and math.isclose(values["b"], mean + 2 * std)):
            return None  # Keras' TruncatedNormal cuts at two standard deviations only
        return ("truncated_normal", mean, std)
    fans = torch_fans(shape)
    if fans is None:
        return None
    fan_in, fan_out = fans
    if fn.startswith("kaiming"):
        gain = _gain(values["nonlinearity"], values["a"])
        fan = {"fan_in": fan_in, "fan_out": fan_out}.get(values["mode"])
        if gain is None or not fan:
            return None
        std = gain / math.sqrt(fan)
    else:
        std = float(values["gain"]) * math.sqrt(2.0 / (fan_in + fan_out))
    if fn.endswith("uniform_"):
        bound = math.sqrt(3.0) * std
        return ("uniform", -bound, bound)
    return ("normal", 0.0, std)


def is_linear_default(weight_init: tuple | None, bias_init: tuple | None, in_features: int, has_bias: bool) -> bool:
    """True when a hand-written linear layer starts as ``nn.Linear`` does (weight and bias
    from U(±1/sqrt(in_features)), kaiming_uniform(a=sqrt(5)) for the weight)."""
    bound = 1.0 / math.sqrt(in_features)

    def default(init):
        return init is not None and init[0] == "uniform" and math.isclose(init[1], -bound, rel_tol=1e-9) and \
            math.isclose(init[2], bound, rel_tol=1e-9)

    return default(weight_init) and (not has_bias or default(bias_init))


@dataclass(frozen=True)
class ParamTag:
    """One parameter of a model, by its state_dict key (static evaluation of parameter groups)."""

    key: str


class ParamSet:
    """A model (or a submodule) as the code grouping its parameters sees it: names and
    parameters (``named_parameters()``, ``parameters()``, ``model.scale.shift``)."""

    def __init__(self, keys: list[str], prefix: str = ""):
        self.keys = keys
        self.prefix = prefix

    def named_parameters(self):
        return [(k[len(self.prefix):], ParamTag(k)) for k in self.keys if k.startswith(self.prefix)]

    def parameters(self):
        return [tag for _, tag in self.named_parameters()]

    def __getitem__(self, index):  # an nn.Sequential's or nn.ModuleList's child: ``model[0]``
        if isinstance(index, bool) or not isinstance(index, int):
            raise Unsupported(f"{self.prefix}[{index!r}]: only an integer index is read")
        return self.attribute(str(index))

    def attribute(self, name: str):
        full = self.prefix + name
        if full in self.keys:
            return ParamTag(full)
        if any(k.startswith(full + ".") for k in self.keys):
            return ParamSet(self.keys, full + ".")
        raise Unsupported(f"{full}: not a parameter or submodule of the model (or not read statically)")
