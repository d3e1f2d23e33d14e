"""PyTorch module and function recognisers: one per family, registered by decorator.

A recogniser turns a ``torch.nn`` constructor call (its arguments bound to the torch
signature) or a functional call (``F.relu``, ``torch.cat``, ...) into a canonical op
with attributes in the IR's unified spelling: BatchNorm ``momentum`` is the fraction of
the old running value *kept* (torch's ``momentum=m`` ↔ ``1 - m``), spatial sizes are
tuples of length rank, padding is ``"valid"``, ``"same"`` or explicit
``((before, after), ...)``, axes count the batch axis as 0 in the channels-first layout
the graph is built in. Torch defaults are written out here (BatchNorm ``eps=1e-5``,
LeakyReLU ``0.01``, LayerNorm ``eps=1e-5``) so no Keras default is ever assumed.

Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from transpiler.frontend_ast.interp.values import Signature, Unsupported  # noqa: F401  (defined once, there)
from transpiler.ir import sizes as ir_sizes


@dataclass
class TorchLayer:
    """What an ``nn`` constructor call means in the IR.

    ``op``/``attrs`` for single-op modules; ``kind`` is ``"op"``, ``"rnn"`` (expanded per
    layer and direction by the frontend, ``extra`` holds num_layers, bidirectional,
    dropout), ``"sequential"``/``"module_list"`` (containers) or ``"flatten"``.
    ``in_features`` is the size the module expects on its input's feature axis (checked
    against the inferred shape); ``warnings`` are training-only differences to report.
    """

    op: str | None
    attrs: dict[str, Any] = field(default_factory=dict)
    kind: str = "op"
    extra: dict[str, Any] = field(default_factory=dict)
    in_features: int | None = None
    warnings: list[str] = field(default_factory=list)


class Bound:
    """Call arguments bound to a torch signature; unknown keywords are refused."""

    def __init__(self, name: str, sig: Signature, args: list, kwargs: dict[str, Any]):
        self.name = name
        self.values: dict[str, Any] = sig.bind(name, args, kwargs, known_only=True)
        self.sig = sig

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        if key in self.sig.defaults:
            return self.sig.defaults[key]
        raise Unsupported(f"{self.name}: missing required argument {key!r}")

    def given(self, key: str) -> bool:
        return key in self.values


Recognizer = Callable[[Bound], TorchLayer]


@dataclass(frozen=True)
class Registration:
    fn: Recognizer
    signature: Signature
    ops: tuple[str, ...]


_MODULES: dict[str, Registration] = {}
_FUNCTIONS: dict[str, Registration] = {}


def _registrar(table: dict[str, Registration], what: str, names: tuple[str, ...], signature: str,
               ops: tuple[str, ...]) -> Callable[[Recognizer], Recognizer]:
    """A decorator registering ``fn`` in ``table`` under ``names`` (``what`` names one in the
    error a second registration raises)."""
    sig = Signature.parse(signature)

    def deco(fn: Recognizer) -> Recognizer:
        for name in names:
            if name in table:
                raise ValueError(f"{what.format(name)} registered twice")
            table[name] = Registration(fn, sig, ops)
        return fn

    return deco


def module(*names: str, signature: str, ops: tuple[str, ...] = ()) -> Callable[[Recognizer], Recognizer]:
    """Register ``fn`` for ``torch.nn`` classes ``names``; refuses duplicates."""
    return _registrar(_MODULES, "nn.{}", names, signature, ops)


def function(*names: str, signature: str, ops: tuple[str, ...] = ()) -> Callable[[Recognizer], Recognizer]:
    """Register ``fn`` for functional spellings (``F.relu``, ``torch.relu``, ``relu`` method)."""
    return _registrar(_FUNCTIONS, "function {}", names, signature, ops)


def lookup_module(name: str) -> Registration | None:
    return _MODULES.get(name)


def lookup_function(name: str) -> Registration | None:
    return _FUNCTIONS.get(name)


def registered_modules() -> dict[str, Registration]:
    return dict(_MODULES)


def registered_functions() -> dict[str, Registration]:
    return dict(_FUNCTIONS)


def recognize(name: str, args: list, kwargs: dict[str, Any]) -> TorchLayer:
    """The TorchLayer of ``nn.<name>(*args, **kwargs)``; Unsupported if not in the table."""
    reg = _MODULES.get(name)
    if reg is None:
        raise Unsupported(f"nn.{name} is not supported yet")
    return reg.fn(Bound(f"nn.{name}", reg.signature, args, kwargs))


def constructor_arguments(name: str, args: list, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``nn.<name>(*args, **kwargs)`` by parameter name, defaults included
    (what ``layer.in_features`` / ``conv.out_channels`` read back)."""
    reg = _MODULES.get(name)
    if reg is None:
        return {}
    bound = Bound(f"nn.{name}", reg.signature, args, kwargs)
    return {**reg.signature.defaults, **bound.values}


def recognize_function(name: str, args: list, kwargs: dict[str, Any]) -> TorchLayer:
    reg = _FUNCTIONS.get(name)
    if reg is None:
        raise Unsupported(f"{name} is not supported yet")
    return reg.fn(Bound(name, reg.signature, args, kwargs))


# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------
def sizes(value: Any, rank: int, what: str) -> tuple[int, ...]:
    if isinstance(value, bool):
        raise Unsupported(f"{what}: {value!r} is not a size")
    if isinstance(value, int):
        return (value,) * rank
    if isinstance(value, (tuple, list)) and len(value) == rank and all(isinstance(v, int) for v in value):
        return tuple(value)
    raise Unsupported(f"{what}: cannot read {value!r} as {rank} sizes")


def torch_padding(value: Any, rank: int, what: str):
    """torch ``padding=`` (int, tuple, 'same', 'valid') → the IR's padding."""
    if isinstance(value, str):
        if value in ("same", "valid"):
            return value
        raise Unsupported(f"{what}: padding={value!r}")
    p = sizes(value, rank, what)
    if not any(p):
        return "valid"
    return tuple((v, v) for v in p)


def _rank_of(name: str) -> int:
    return int(name[-2]) if name[-1] == "d" and name[-2].isdigit() else 2


# ---------------------------------------------------------------------------------
# Dense and convolutions
# ---------------------------------------------------------------------------------
@module("Linear", signature="in_features; out_features; bias=True; device=None; dtype=None", ops=("dense",))
def recognize_linear(b: Bound) -> TorchLayer:
    return TorchLayer("dense", {"units": b.get("out_features"), "use_bias": bool(b.get("bias"))},
                      in_features=b.get("in_features"))


_CONV_SIG = ("in_channels; out_channels; kernel_size; stride=1; padding=0; dilation=1; groups=1; "
             "bias=True; padding_mode='zeros'; device=None; dtype=None")


def _conv(rank: int):
    def fn(b: Bound) -> TorchLayer:
        if b.get("padding_mode") != "zeros":
            raise Unsupported(f"{b.name}(padding_mode={b.get('padding_mode')!r}) is not supported")
        cin, cout, groups = b.get("in_channels"), b.get("out_channels"), b.get("groups")
        attrs = {"kernel_size": sizes(b.get("kernel_size"), rank, b.name),
                 "strides": sizes(b.get("stride"), rank, b.name),
                 "padding": torch_padding(b.get("padding"), rank, b.name),
                 "dilation": sizes(b.get("dilation"), rank, b.name),
                 "use_bias": bool(b.get("bias"))}
        if rank == 2 and groups > 1 and groups == cin and cout % cin == 0:
            attrs["depth_multiplier"] = cout // cin
            return TorchLayer("depthwise_conv2d", attrs, in_features=cin)
        attrs.update(filters=cout, groups=groups)
        return TorchLayer(f"conv{rank}d", attrs, in_features=cin)

    return fn


module("Conv1d", signature=_CONV_SIG, ops=("conv1d",))(_conv(1))
module("Conv2d", signature=_CONV_SIG, ops=("conv2d", "depthwise_conv2d"))(_conv(2))
module("Conv3d", signature=_CONV_SIG, ops=("conv3d",))(_conv(3))


def _conv_transpose(rank: int):
    def fn(b: Bound) -> TorchLayer:
        if b.get("groups") != 1:
            raise Unsupported(f"{b.name}(groups={b.get('groups')}) is not supported")
        if b.get("padding_mode") != "zeros":
            raise Unsupported(f"{b.name}(padding_mode={b.get('padding_mode')!r}) is not supported")
        op_ = sizes(b.get("output_padding"), rank, b.name)
        pad = torch_padding(b.get("padding"), rank, b.name)
        attrs = {"filters": b.get("out_channels"), "kernel_size": sizes(b.get("kernel_size"), rank, b.name),
                 "strides": sizes(b.get("stride"), rank, b.name),
                 # torch's padding crops the full transposed output; keep it explicit
                 "padding": pad if pad != "valid" else tuple((0, 0) for _ in range(rank)),
                 "dilation": sizes(b.get("dilation"), rank, b.name),
                 "output_padding": op_, "use_bias": bool(b.get("bias"))}
        return TorchLayer(f"conv_transpose{rank}d", attrs, in_features=b.get("in_channels"))

    return fn


_CONVT_SIG = ("in_channels; out_channels; kernel_size; stride=1; padding=0; output_padding=0; groups=1; "
              "bias=True; dilation=1; padding_mode='zeros'; device=None; dtype=None")
module("ConvTranspose1d", signature=_CONVT_SIG, ops=("conv_transpose1d",))(_conv_transpose(1))
module("ConvTranspose2d", signature=_CONVT_SIG, ops=("conv_transpose2d",))(_conv_transpose(2))


# ---------------------------------------------------------------------------------
# Pooling, padding, resampling
# ---------------------------------------------------------------------------------
def pool_layer(kind: str, rank: int, b: Bound) -> TorchLayer:
    """Max/avg pooling; torch's explicit padding (−inf for max, zeros counted in the mean
    by default for avg) is kept explicit; the Keras pass decides what it becomes."""
    k = sizes(b.get("kernel_size"), rank, b.name)
    stride = b.get("stride")
    s = k if stride is None or stride == [] or stride == () else sizes(stride, rank, b.name)
    if kind == "max" and b.get("dilation") not in (1, (1,) * rank):
        raise Unsupported(f"{b.name}: dilation is not supported")
    if kind == "max" and b.get("return_indices"):
        raise Unsupported(f"{b.name}(return_indices=True) is not supported")
    pad = sizes(b.get("padding"), rank, b.name)
    attrs = {"pool_size": k, "strides": s, "ceil_mode": bool(b.get("ceil_mode")),
             "padding": "valid" if not any(pad) else tuple((p, p) for p in pad)}
    extra = {}
    if kind == "avg":
        if b.values.get("divisor_override") is not None:
            raise Unsupported(f"{b.name}(divisor_override=...) is not supported")
        extra["count_include_pad"] = bool(b.get("count_include_pad"))
    return TorchLayer(f"{kind}_pool{rank}d", attrs, extra=extra)


_MAXPOOL_SIG = "kernel_size; stride=None; padding=0; dilation=1; return_indices=False; ceil_mode=False"
_AVGPOOL_SIG = "kernel_size; stride=None; padding=0; ceil_mode=False; count_include_pad=True; divisor_override=None"
for _r in (1, 2, 3):
    module(f"MaxPool{_r}d", signature=_MAXPOOL_SIG, ops=(f"max_pool{_r}d",))(
        (lambda r: lambda b: pool_layer("max", r, b))(_r))
    module(f"AvgPool{_r}d", signature=_AVGPOOL_SIG.replace("; divisor_override=None", "")
           if _r == 1 else _AVGPOOL_SIG, ops=(f"avg_pool{_r}d",))(
        (lambda r: lambda b: pool_layer("avg", r, b))(_r))
    function(f"max_pool{_r}d", signature="input; " + _MAXPOOL_SIG, ops=(f"max_pool{_r}d",))(
        (lambda r: lambda b: pool_layer("max", r, b))(_r))
    function(f"avg_pool{_r}d", signature="input; " + (_AVGPOOL_SIG.replace("; divisor_override=None", "")
                                                      if _r == 1 else _AVGPOOL_SIG),
             ops=(f"avg_pool{_r}d",))((lambda r: lambda b: pool_layer("avg", r, b))(_r))


def adaptive_layer(kind: str, rank: int, b: Bound) -> TorchLayer:
    size = b.get("output_size")
    if size not in (1, (1,) * rank, [1] * rank):
        raise Unsupported(f"{b.name}(output_size={size!r}): only a global pool (output size 1) is supported")
    return TorchLayer(f"global_{kind}_pool{rank}d", {"keepdims": True})


for _r in (1, 2, 3):
    for _kind, _cls in (("avg", "Avg"), ("max", "Max")):
        module(f"Adaptive{_cls}Pool{_r}d", signature="output_size" + ("; return_indices=False" if _kind == "max" else ""),
               ops=(f"global_{_kind}_pool{_r}d",))((lambda k, r: lambda b: adaptive_layer(k, r, b))(_kind, _r))
        function(f"adaptive_{_kind}_pool{_r}d", signature="input; output_size" +
                 ("; return_indices=False" if _kind == "max" else ""), ops=(f"global_{_kind}_pool{_r}d",))(
            (lambda k, r: lambda b: adaptive_layer(k, r, b))(_kind, _r))


def _pairs_from_torch(pad: Any, rank: int, what: str) -> tuple:
    """torch pads (last axis first: (left, right, top, bottom, ...)) → ((before, after), ...)."""
    if isinstance(pad, int):
        return ((pad, pad),) * rank
    pad = tuple(pad)
    if len(pad) != 2 * rank or not all(isinstance(p, int) for p in pad):
        raise Unsupported(f"{what}: padding {pad!r} does not pad exactly the {rank} spatial axes")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(rank)]
    return tuple(reversed(pairs))


for _r in (1, 2, 3):
    module(f"ZeroPad{_r}d", signature="padding", ops=(f"pad{_r}d",))(
        (lambda r: lambda b: TorchLayer(f"pad{r}d", {"pads": _pairs_from_torch(b.get("padding"), r, b.name)}))(_r))
    module(f"ConstantPad{_r}d", signature="padding; value", ops=(f"pad{_r}d",))(
        (lambda r: lambda b: TorchLayer(f"pad{r}d", {"pads": _pairs_from_torch(b.get("padding"), r, b.name),
                                                      "value": float(b.get("value"))}))(_r))


for _r in (1, 2, 3):
    module(f"ReflectionPad{_r}d", signature="padding", ops=(f"pad{_r}d",))(
        (lambda r: lambda b: TorchLayer(f"pad{r}d", {"pads": _reflect_pads(b, r), "mode": "reflect"}))(_r))


def _reflect_pads(b: Bound, rank: int) -> tuple:
    pairs = _pairs_from_torch(b.get("padding"), rank, b.name)
    return pairs


@module("PixelShuffle", signature="upscale_factor", ops=("pixel_shuffle",))
def recognize_pixel_shuffle(b: Bound) -> TorchLayer:
    return TorchLayer("pixel_shuffle", {"factor": b.get("upscale_factor")})


def upsample_layer(b: Bound) -> TorchLayer:
    if b.get("size") is not None:
        raise Unsupported(f"{b.name}(size=...): give scale_factor (an integer factor)")
    factor = b.get("scale_factor")
    mode = b.get("mode")
    if isinstance(factor, float) and factor.is_integer():
        factor = int(factor)
    if isinstance(factor, (tuple, list)):
        factor = tuple(int(f) for f in factor)
    if mode not in ("nearest", "bilinear"):
        raise Unsupported(f"{b.name}(mode={mode!r}) is not supported")
    if mode == "bilinear" and b.get("align_corners"):
        raise Unsupported(f"{b.name}(align_corners=True) has no Keras equivalent")
    rank = len(factor) if isinstance(factor, tuple) else 2
    return TorchLayer(f"upsample{rank}d", {"size": sizes(factor, rank, b.name), "interpolation": mode},
                      extra={"rank_from_input": not isinstance(factor, tuple)})


module("Upsample", signature="size=None; scale_factor=None; mode='nearest'; align_corners=None; "
       "recompute_scale_factor=None", ops=("upsample1d", "upsample2d"))(upsample_layer)
function("interpolate", signature="input; size=None; scale_factor=None; mode='nearest'; align_corners=None; "
         "recompute_scale_factor=None; antialias=False", ops=("upsample1d", "upsample2d"))(upsample_layer)


@function("pad", signature="input; pad; mode='constant'; value=None", ops=("pad1d", "pad2d", "pad3d"))
def recognize_pad_function(b: Bound) -> TorchLayer:
    if b.get("mode") not in ("constant", "reflect"):
        raise Unsupported(f"F.pad(mode={b.get('mode')!r}) is not supported")
    pad = tuple(b.get("pad"))
    rank = len(pad) // 2
    value = b.get("value")
    if b.get("mode") == "reflect":
        return TorchLayer(f"pad{rank}d", {"pads": _pairs_from_torch(pad, rank, "F.pad"), "mode": "reflect"})
    return TorchLayer(f"pad{rank}d", {"pads": _pairs_from_torch(pad, rank, "F.pad"),
                                      "value": float(value or 0.0)})


# ---------------------------------------------------------------------------------
# Shape ops, regularisation, normalisation
# ---------------------------------------------------------------------------------
@module("Flatten", signature="start_dim=1; end_dim=-1", ops=("flatten",))
def recognize_flatten(b: Bound) -> TorchLayer:
    if b.get("start_dim") != 1 or b.get("end_dim") != -1:
        raise Unsupported("nn.Flatten: only start_dim=1, end_dim=-1 is supported")
    return TorchLayer("flatten", {})


@module("Unflatten", signature="dim; unflattened_size", ops=("reshape",))
def recognize_unflatten(b: Bound) -> TorchLayer:
    if b.get("dim") != 1:
        raise Unsupported("nn.Unflatten: only dim=1 is supported")
    return TorchLayer("reshape", {"shape": tuple(b.get("unflattened_size"))})


@module("Identity", signature="", ops=("identity",))
def recognize_identity(b: Bound) -> TorchLayer:
    return TorchLayer("identity", {})


def _dropout(op: str):
    def fn(b: Bound) -> TorchLayer:
        if b.get("inplace") not in (False, None):
            pass  # in-place changes memory use only
        return TorchLayer(op, {"rate": ir_sizes.as_float(b.get("p"))})  # (a rate the constructor takes: its name)

    return fn


module("Dropout", "AlphaDropout", signature="p=0.5; inplace=False", ops=("dropout",))(_dropout("dropout"))
module("Dropout1d", "Dropout2d", "Dropout3d", signature="p=0.5; inplace=False",
       ops=("spatial_dropout",))(_dropout("spatial_dropout"))
function("dropout", signature="input; p=0.5; training=True; inplace=False", ops=("dropout",))(_dropout("dropout"))
function("dropout2d", signature="input; p=0.5; training=True; inplace=False",
         ops=("spatial_dropout",))(_dropout("spatial_dropout"))


@module("BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
        signature="num_features; eps=1e-05; momentum=0.1; affine=True; track_running_stats=True; "
                  "device=None; dtype=None", ops=("batch_norm",))
def recognize_batch_norm(b: Bound) -> TorchLayer:
    momentum = b.get("momentum")
    if momentum is None:
        raise Unsupported(f"{b.name}(momentum=None) (a cumulative average) has no Keras equivalent")
    if not b.get("track_running_stats"):
        raise Unsupported(f"{b.name}(track_running_stats=False) is not supported")
    affine = bool(b.get("affine"))
    return TorchLayer("batch_norm", {"axis": 1, "momentum": 1.0 - float(momentum),
                                     "epsilon": float(b.get("eps")), "center": affine, "scale": affine},
                      in_features=b.get("num_features"),
                      warnings=["BatchNorm running variance: Keras updates it with the biased batch "
                                "variance, torch with the unbiased one (training only)"])


@module("LayerNorm", signature="normalized_shape; eps=1e-05; elementwise_affine=True; bias=True; "
        "device=None; dtype=None", ops=("layer_norm",))
def recognize_layer_norm(b: Bound) -> TorchLayer:
    shape = b.get("normalized_shape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    affine = bool(b.get("elementwise_affine"))
    axes = tuple(range(-len(shape), 0))
    return TorchLayer("layer_norm", {"axis": axes, "epsilon": float(b.get("eps")),
                                     "center": affine and bool(b.get("bias")), "scale": affine},
                      extra={"normalized_shape": shape})


# ---------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------
def _simple(op: str, attrs: dict | None = None):
    def fn(b: Bound) -> TorchLayer:
        return TorchLayer(op, dict(attrs or {}))

    return fn


for _cls, _fn, _op, _attrs in (
        ("ReLU", "relu", "relu", {}), ("ReLU6", "relu6", "relu", {"max_value": 6.0}),
        ("Sigmoid", "sigmoid", "sigmoid", {}), ("Tanh", "tanh", "tanh", {}),
        ("SELU", "selu", "selu", {}), ("SiLU", "silu", "silu", {}), ("Softsign", "softsign", "softsign", {}),
        ("Hardsigmoid", "hardsigmoid", "hard_sigmoid", {}), ("Hardswish", "hardswish", "hard_silu", {}),
        ("Mish", None, None, None)):
    if _op is None:
        continue
    module(_cls, signature="inplace=False", ops=(_op,))(_simple(_op, _attrs))
    function(_fn, signature="input; inplace=False", ops=(_op,))(_simple(_op, _attrs))


@module("LeakyReLU", signature="negative_slope=0.01; inplace=False", ops=("leaky_relu",))
def recognize_leaky_relu(b: Bound) -> TorchLayer:
    return TorchLayer("leaky_relu", {"negative_slope": float(b.get("negative_slope"))})


function("leaky_relu", signature="input; negative_slope=0.01; inplace=False", ops=("leaky_relu",))(
    recognize_leaky_relu)


@module("ELU", signature="alpha=1.0; inplace=False", ops=("elu",))
def recognize_elu(b: Bound) -> TorchLayer:
    return TorchLayer("elu", {"alpha": float(b.get("alpha"))})


function("elu", signature="input; alpha=1.0; inplace=False", ops=("elu",))(recognize_elu)


@module("GELU", signature="approximate='none'", ops=("gelu",))
def recognize_gelu(b: Bound) -> TorchLayer:
    mode = b.get("approximate")
    if mode not in ("none", "tanh"):
        raise Unsupported(f"GELU(approximate={mode!r})")
    return TorchLayer("gelu", {"approximate": mode == "tanh"})


function("gelu", signature="input; approximate='none'", ops=("gelu",))(recognize_gelu)


@module("Softplus", signature="beta=1.0; threshold=20.0", ops=("softplus",))
def recognize_softplus(b: Bound) -> TorchLayer:
    if b.get("beta") != 1:
        raise Unsupported("Softplus(beta != 1) is not supported")
    return TorchLayer("softplus", {})


function("softplus", signature="input; beta=1.0; threshold=20.0", ops=("softplus",))(recognize_softplus)


def _softmax(op: str):
    def fn(b: Bound) -> TorchLayer:
        dim = b.get("dim")
        if dim is None:
            raise Unsupported(f"{b.name}: give dim= explicitly (the implicit dim is deprecated)")
        return TorchLayer(op, {"axis": dim})

    return fn


module("Softmax", signature="dim=None", ops=("softmax",))(_softmax("softmax"))
module("LogSoftmax", signature="dim=None", ops=("log_softmax",))(_softmax("log_softmax"))
function("softmax", signature="input; dim=None; _stacklevel=3; dtype=None", ops=("softmax",))(_softmax("softmax"))
function("log_softmax", signature="input; dim=None; _stacklevel=3; dtype=None",
         ops=("log_softmax",))(_softmax("log_softmax"))


@module("PReLU", signature="num_parameters=1; init=0.25; device=None; dtype=None", ops=("prelu",))
def recognize_prelu(b: Bound) -> TorchLayer:
    # shared axes depend on the input's rank: the frontend completes them
    return TorchLayer("prelu", {}, extra={"num_parameters": b.get("num_parameters"), "init": float(b.get("init"))})


# ---------------------------------------------------------------------------------
# Embedding and recurrent layers
# ---------------------------------------------------------------------------------
@module("Embedding", signature="num_embeddings; embedding_dim; padding_idx=None; max_norm=None; "
        "norm_type=2.0; scale_grad_by_freq=False; sparse=False; _weight=None; _freeze=False; device=None; "
        "dtype=None", ops=("embedding",))
def recognize_embedding(b: Bound) -> TorchLayer:
    for flag in ("max_norm", "_weight"):
        if b.get(flag) is not None:
            raise Unsupported(f"nn.Embedding({flag}=...) is not supported")
    n, pad = b.get("num_embeddings"), b.get("padding_idx")
    if pad is not None and not (isinstance(pad, int) and -n <= pad < n):
        raise Unsupported(f"nn.Embedding(padding_idx={pad!r}) must be an index into the {n} rows")
    # the padding row starts at zero and gets no gradient: a training-only difference the
    # Keras printer keeps (node.from_torch.padding_idx)
    return TorchLayer("embedding", {"input_dim": n, "output_dim": b.get("embedding_dim")},
                      extra={"padding_idx": None if pad is None else pad % n})


def _recurrent_attrs(op: str, b: Bound, return_sequences: bool) -> dict:
    """The Keras attributes of torch's recurrent layer or cell ``b`` (torch's gates: sigmoid,
    GRU's reset after the matrix product)."""
    if op == "simple_rnn" and b.get("nonlinearity") != "tanh":
        raise Unsupported(f"{b.name}(nonlinearity={b.get('nonlinearity')!r}) is not supported")
    attrs = {"units": b.get("hidden_size"), "use_bias": bool(b.get("bias")), "return_sequences": return_sequences,
             "return_state": True}
    if op != "simple_rnn":
        attrs["recurrent_activation"] = "sigmoid"
    if op == "gru":
        attrs["reset_after"] = True
    return attrs


def _rnn(op: str):
    def fn(b: Bound) -> TorchLayer:
        if op == "lstm" and b.get("proj_size"):
            raise Unsupported("nn.LSTM(proj_size=...) is not supported")
        return TorchLayer(op, _recurrent_attrs(op, b, return_sequences=True), kind="rnn", in_features=b.get("input_size"),
                          extra={"num_layers": b.get("num_layers"), "bidirectional": bool(b.get("bidirectional")),
                                 "dropout": float(b.get("dropout")), "time_major": not b.get("batch_first")})

    return fn


def _rnn_cell(op: str):
    """``nn.LSTMCell`` / ``nn.GRUCell`` / ``nn.RNNCell``: one step of the recurrent layer. Read
    as that layer over a one-step sequence (graph_build ``_apply_cell``): the same equations,
    weights and gate order (no op of its own; the Keras layer is shared by every step)."""
    def fn(b: Bound) -> TorchLayer:
        return TorchLayer(op, _recurrent_attrs(op, b, return_sequences=False), kind="rnn_cell", in_features=b.get("input_size"),
                          extra={"num_layers": 1, "bidirectional": False, "dropout": 0.0})

    return fn


_CELL_SIG = "input_size; hidden_size; bias=True; device=None; dtype=None"
module("LSTMCell", signature=_CELL_SIG, ops=("lstm",))(_rnn_cell("lstm"))
module("GRUCell", signature=_CELL_SIG, ops=("gru",))(_rnn_cell("gru"))
module("RNNCell", signature="input_size; hidden_size; bias=True; nonlinearity='tanh'; device=None; dtype=None",
       ops=("simple_rnn",))(_rnn_cell("simple_rnn"))


_RNN_SIG = ("input_size; hidden_size; num_layers=1; bias=True; batch_first=False; dropout=0.0; "
            "bidirectional=False; proj_size=0; device=None; dtype=None")
module("LSTM", signature=_RNN_SIG, ops=("lstm",))(_rnn("lstm"))
module("GRU", signature=_RNN_SIG.replace("; proj_size=0", ""), ops=("gru",))(_rnn("gru"))
module("RNN", signature="input_size; hidden_size; num_layers=1; nonlinearity='tanh'; bias=True; "
       "batch_first=False; dropout=0.0; bidirectional=False; device=None; dtype=None",
       ops=("simple_rnn",))(_rnn("simple_rnn"))


# ---------------------------------------------------------------------------------
# Attention and more normalisation
# ---------------------------------------------------------------------------------
@module("MultiheadAttention", signature="embed_dim; num_heads; dropout=0.0; bias=True; add_bias_kv=False; "
        "add_zero_attn=False; kdim=None; vdim=None; batch_first=False; device=None; dtype=None",
        ops=("multi_head_attention",))
def recognize_multihead_attention(b: Bound) -> TorchLayer:
    e, n = b.get("embed_dim"), b.get("num_heads")
    for flag in ("add_bias_kv", "add_zero_attn"):
        if b.get(flag):
            raise Unsupported(f"nn.MultiheadAttention({flag}=True) has no Keras equivalent")
    key_dim = e // n
    if not (ir_sizes.is_placeholder(e) or ir_sizes.is_placeholder(n)) and e % n:
        raise Unsupported(f"nn.MultiheadAttention: embed_dim {e} is not a multiple of num_heads {n}")
    if int.__int__(key_dim) == 0:  # (made-up numbers for the caller's sizes: traced with one head size, printed e // n)
        key_dim = ir_sizes.Size(1, ir_sizes._expr_of(key_dim)) if isinstance(key_dim, ir_sizes.Size) else 1
    # Keras' MultiHeadAttention with key_dim = value_dim = embed_dim / heads and the
    # query's width as output: the same projections, heads and scaling
    return TorchLayer("multi_head_attention", {"num_heads": n, "key_dim": key_dim, "use_bias": bool(b.get("bias")),
                                               "dropout": ir_sizes.as_float(b.get("dropout"))},
                      kind="attention", in_features=e,
                      extra={"kdim": b.get("kdim") or e, "vdim": b.get("vdim") or e,
                             "time_major": not b.get("batch_first")})


_MHA_CALL = Signature.parse("query; key; value; key_padding_mask=None; need_weights=True; attn_mask=None; "
                            "average_attn_weights=True; is_causal=False")


def bind_multihead_call(layer: TorchLayer, args: list, kwargs: dict[str, Any]) -> tuple:
    """``attn(query, key, value, ...)``: (query, key, value, need_weights, masks), masks
    ``{"attn_mask": ..., "key_padding_mask": ...}`` as given (None where not), read torch's
    way by the Keras layer (ir/ops.py multi_head_attention's roles of the same names)."""
    b = Bound("nn.MultiheadAttention()", _MHA_CALL, list(args), dict(kwargs))
    if b.get("is_causal"):
        raise Unsupported("nn.MultiheadAttention(is_causal=True) is not translated yet")
    need = b.get("need_weights")
    if not isinstance(need, bool):
        raise Unsupported("nn.MultiheadAttention: need_weights must be True or False")
    masks = {key: b.get(key) for key in ("attn_mask", "key_padding_mask")}
    return b.get("query"), b.get("key"), b.get("value"), need, masks


def check_multihead_inputs(layer: TorchLayer, query: tuple, key: tuple, value: tuple) -> str | None:
    """Why the input shapes do not fit the module (None when they do)."""
    for what, shape, want in (("query", query, layer.in_features), ("key", key, layer.extra["kdim"]),
                              ("value", value, layer.extra["vdim"])):
        if len(shape) != 3:
            return f"nn.MultiheadAttention: the {what} must be (batch, sequence, features), got {shape}"
        if shape[-1] != want:
            return f"nn.MultiheadAttention: the {what} has {shape[-1]} features, the module expects {want}"
    return None


@module("RMSNorm", signature="normalized_shape; eps=None; elementwise_affine=True; device=None; dtype=None",
        ops=("rms_norm",))
def recognize_rms_norm(b: Bound) -> TorchLayer:
    shape = b.get("normalized_shape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not b.get("elementwise_affine"):
        raise Unsupported("nn.RMSNorm(elementwise_affine=False): Keras' RMSNormalization always has a scale")
    eps = b.get("eps")
    # eps=None: torch uses the float32 machine epsilon
    return TorchLayer("rms_norm", {"axis": tuple(range(-len(shape), 0)),
                                   "epsilon": 1.1920928955078125e-07 if eps is None else float(eps)},
                      extra={"normalized_shape": shape})


@module("GroupNorm", signature="num_groups; num_channels; eps=1e-05; affine=True; device=None; dtype=None",
        ops=("group_norm",))
def recognize_group_norm(b: Bound) -> TorchLayer:
    affine = bool(b.get("affine"))
    return TorchLayer("group_norm", {"groups": b.get("num_groups"), "axis": 1, "epsilon": float(b.get("eps")),
                                     "center": affine, "scale": affine}, in_features=b.get("num_channels"))


@module("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
        signature="num_features; eps=1e-05; momentum=0.1; affine=False; track_running_stats=False; "
                  "device=None; dtype=None", ops=("group_norm",))
def recognize_instance_norm(b: Bound) -> TorchLayer:
    """Instance normalisation is group normalisation with one channel per group: each
    example's channel over its spatial axes (the biased variance, as torch)."""
    if b.get("track_running_stats"):
        raise Unsupported(f"{b.name}(track_running_stats=True): running statistics at inference have no "
                          "Keras GroupNormalization equivalent")
    affine = bool(b.get("affine"))
    c = b.get("num_features")
    return TorchLayer("group_norm", {"groups": c, "axis": 1, "epsilon": float(b.get("eps")),
                                     "center": affine, "scale": affine}, in_features=c)


# ---------------------------------------------------------------------------------
# Parameters, for initialisation code
# ---------------------------------------------------------------------------------
#: torch parameter → the Keras weight it becomes, per op (``nn.init`` on it → that weight's
#: Keras initializer)
KERAS_PARAM = {
    **{op: {"weight": "kernel", "bias": "bias"}
       for op in ("dense", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d")},
    "depthwise_conv2d": {"weight": "depthwise_kernel", "bias": "bias"},
    **{op: {"weight": "gamma", "bias": "beta"} for op in ("batch_norm", "layer_norm", "group_norm")},
    "embedding": {"weight": "embeddings"},
}


def torch_param_shapes(layer: TorchLayer) -> dict[str, tuple]:
    """The shapes of a leaf module's ``weight``/``bias`` as torch holds them (what
    ``nn.init`` computes fans from); {} for modules whose initialisation is not read."""
    a, op, cin = layer.attrs, layer.op, layer.in_features
    # (whether the input size is known: a check of the transpiler's, not a truth test of the
    # program's, so a size named after a constructor argument stays free: ir/sizes)
    cin = cin if cin is not None and cin != 0 else None
    shapes: dict[str, tuple] = {}
    if op == "dense" and cin is not None:
        shapes["weight"] = (a["units"], cin)
    elif op in ("conv1d", "conv2d", "conv3d") and cin is not None:
        shapes["weight"] = (a["filters"], cin // a.get("groups", 1), *a["kernel_size"])
    elif op == "depthwise_conv2d" and cin is not None:
        shapes["weight"] = (cin * a["depth_multiplier"], 1, *a["kernel_size"])
    elif op in ("conv_transpose1d", "conv_transpose2d") and cin is not None:
        shapes["weight"] = (cin, a["filters"], *a["kernel_size"])
    elif op in ("batch_norm", "group_norm") and cin is not None:
        if a.get("scale"):
            shapes["weight"] = (cin,)
        if a.get("center"):
            shapes["bias"] = (cin,)
        return shapes
    elif op == "layer_norm":
        shape = tuple(layer.extra.get("normalized_shape", ()))
        if a.get("scale"):
            shapes["weight"] = shape
        if a.get("center"):
            shapes["bias"] = shape
        return shapes
    elif op == "embedding":
        return {"weight": (a["input_dim"], a["output_dim"])}
    else:
        return {}
    if a.get("use_bias") and "weight" in shapes:
        shapes["bias"] = (a["filters"] if "filters" in a else a.get("units", shapes["weight"][0]),)
    return shapes


# ---------------------------------------------------------------------------------
# Containers
# ---------------------------------------------------------------------------------
#: nn classes the frontend handles itself (containers) and nn classes known to be unsupported
CONTAINERS = {"Sequential", "ModuleList", "ModuleDict", "Module", "Parameter", "ParameterList"}


def render_support_table() -> str:
    """The Markdown table of what the torch frontend recognises (docs/torch_to_keras.md)."""
    rows = ["| PyTorch | canonical op(s) |", "| --- | --- |"]
    for name, reg in sorted(_MODULES.items()):
        rows.append(f"| `nn.{name}` | {', '.join(f'`{o}`' for o in reg.ops)} |")
    for name, reg in sorted(_FUNCTIONS.items()):
        rows.append(f"| `F.{name}` | {', '.join(f'`{o}`' for o in reg.ops)} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - regenerates the doc's table
    print(render_support_table(), end="")
