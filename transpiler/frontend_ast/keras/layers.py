"""Keras layer recognisers: one per op family, registered by decorator.

A recogniser turns a Keras layer constructor call (its bound arguments) into a
canonical op with unified attributes. Every Keras spelling of a layer (current and
legacy class names, legacy argument names such as ``alpha=`` for LeakyReLU) is
declared here, next to the recogniser that handles it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from transpiler.frontend_ast.interp.values import Signature, Unsupported  # noqa: F401  (defined once, there)


@dataclass
class LayerSpec:
    """What a Keras layer constructor call means in the IR."""

    op: str
    attrs: dict[str, Any]
    activation: tuple[str, dict[str, Any]] | None = None
    inner: "LayerSpec | None" = None
    initializers: dict[str, Any] = field(default_factory=dict)
    #: weight regularizers: ``kernel_regularizer`` → (l1, l2) factors
    regularizers: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: constructor arguments the binding of a call checks against its inputs (not IR attrs)
    options: dict[str, Any] = field(default_factory=dict)


class BoundArgs:
    """A constructor call's arguments bound to a Keras signature."""

    def __init__(self, cls_name: str, sig: Signature, args: list, kwargs: dict[str, Any]):
        self.cls_name = cls_name
        self.values: dict[str, Any] = sig.bind(cls_name, args, kwargs)
        self.sig = sig
        self.used: set[str] = set()

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str, default: Any = None) -> Any:
        self.used.add(name)
        if name in self.values:
            return self.values[name]
        return self.sig.defaults.get(name, default)

    def require(self, name: str) -> Any:
        self.used.add(name)
        if name not in self.values:
            raise Unsupported(f"{self.cls_name}: missing required argument {name!r}")
        return self.values[name]

    def rename(self, legacy: str, current: str) -> None:
        """Accept the legacy keyword ``legacy`` as ``current``."""
        if legacy in self.values and current not in self.values:
            self.values[current] = self.values.pop(legacy)

    def unused(self) -> list[str]:
        return [k for k in self.values if k not in self.used]


Recognizer = Callable[[BoundArgs], LayerSpec]


@dataclass(frozen=True)
class Registration:
    fn: Recognizer
    signature: Signature
    canonical_class: str
    ops: tuple[str, ...] = ()


_REGISTRY: dict[str, Registration] = {}

#: keyword arguments every layer accepts and that do not change the computation.
COMMON_KWARGS = {"name", "dtype", "trainable", "input_shape", "batch_input_shape", "batch_size",
                 "input_dim", "autocast", "input_length"}
#: the warning for a ``BatchNormalization(trainable=False)`` (frozen only, in torch)
FROZEN_BATCH_NORM = ("{}(trainable=False): Keras also runs it in inference mode (its moving statistics); "
                     "the torch module is only frozen (requires_grad_(False))")
#: initializer keywords: recorded so the printer can reproduce them.
INITIALIZER_KWARGS = {"kernel_initializer", "bias_initializer", "recurrent_initializer",
                      "embeddings_initializer", "depthwise_initializer", "pointwise_initializer",
                      "beta_initializer", "gamma_initializer", "moving_mean_initializer",
                      "moving_variance_initializer", "alpha_initializer"}
#: keywords whose non-default value changes training and is not translated yet.
TRAINING_KWARGS = {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                   "recurrent_regularizer", "kernel_constraint", "bias_constraint",
                   "recurrent_constraint", "depthwise_regularizer", "pointwise_regularizer",
                   "depthwise_constraint", "pointwise_constraint", "embeddings_regularizer",
                   "embeddings_constraint", "beta_regularizer", "gamma_regularizer",
                   "beta_constraint", "gamma_constraint", "alpha_regularizer", "alpha_constraint",
                   "seed", "noise_shape"}


def recognizer(*class_names: str, signature: str, ops: tuple[str, ...] = ()) -> Callable[[Recognizer], Recognizer]:
    """Register ``fn`` for Keras layer classes ``class_names`` (first = canonical);
    ``ops`` declares the canonical ops it can produce (checked by the registry test)."""
    sig = Signature.parse(signature)

    def deco(fn: Recognizer) -> Recognizer:
        for name in class_names:
            if name in _REGISTRY:
                raise ValueError(f"Keras layer {name} registered twice")
            _REGISTRY[name] = Registration(fn, sig, class_names[0], tuple(ops))
        return fn

    return deco


def lookup(class_name: str) -> Registration | None:
    return _REGISTRY.get(class_name)


def registered_classes() -> dict[str, Registration]:
    return dict(_REGISTRY)


def keras_class_for(op: str) -> str:
    """The canonical Keras class that produces ``op`` (the first registered)."""
    for reg in _REGISTRY.values():
        if op in reg.ops:
            return reg.canonical_class
    raise KeyError(f"no Keras layer class produces op {op!r}")


# ---------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------
#: activation= strings and keras.activations.* names → (op, attrs); None = linear.
ACTIVATIONS: dict[str, tuple[str, dict[str, Any]] | None] = {
    "linear": None,
    "relu": ("relu", {}),
    "relu6": ("relu", {"max_value": 6.0}),
    "sigmoid": ("sigmoid", {}),
    "hard_sigmoid": ("hard_sigmoid", {}),
    "hard_silu": ("hard_silu", {}),
    "hard_swish": ("hard_silu", {}),
    "tanh": ("tanh", {}),
    "softmax": ("softmax", {"axis": -1}),
    "log_softmax": ("log_softmax", {"axis": -1}),
    "gelu": ("gelu", {"approximate": False}),
    "elu": ("elu", {"alpha": 1.0}),
    "selu": ("selu", {}),
    "swish": ("silu", {}),
    "silu": ("silu", {}),
    "softplus": ("softplus", {}),
    "softsign": ("softsign", {}),
    # keras.activations.leaky_relu defaults to 0.2; the LeakyReLU layer to 0.3.
    "leaky_relu": ("leaky_relu", {"negative_slope": 0.2}),
}


#: where a namespace's function defaults differ from ``keras.activations``' (``activation=ops.gelu``:
#: Keras calls ``ops.gelu(x)``, whose ``approximate`` defaults to True)
_NAMESPACE_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {("ops", "gelu"): {"approximate": True}}

#: the ops an activation string names: an activation layer object of one of them may be an
#: ``activation=`` too
_ACTIVATION_OPS = {entry[0] for entry in ACTIVATIONS.values() if entry is not None}


def activation_spec(value: Any) -> tuple[str, dict[str, Any]] | None:
    """The op for an ``activation=`` argument (a string or a resolved function name)."""
    if value is None:
        return None
    spec = getattr(value, "spec", None)  # a layer object (activation=LeakyReLU(0.1)): Keras calls it
    if spec is not None:
        if spec.activation is None and spec.op in _ACTIVATION_OPS:
            return spec.op, dict(spec.attrs)
        raise Unsupported(f"activation={getattr(value, 'cls_name', None) or spec.op}(...): only an "
                          "activation layer without weights can be an activation")
    name = value if isinstance(value, str) else getattr(value, "activation_name", None)
    if name is None:
        shown = repr(value) if isinstance(value, (int, float, bool)) else type(value).__name__
        raise Unsupported(f"activation {shown} is not a known Keras activation")
    if name not in ACTIVATIONS:
        raise Unsupported(f"activation {name!r} is not supported")
    entry = ACTIVATIONS[name]
    override = _NAMESPACE_DEFAULTS.get((getattr(value, "source", ""), name))
    if entry is not None and override:
        return entry[0], {**entry[1], **override}
    return entry


# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------
def _check_channels_last(b: BoundArgs) -> None:
    fmt = b.get("data_format")
    if fmt not in (None, "channels_last"):
        raise Unsupported(f"{b.cls_name}: data_format={fmt!r} is not supported (channels_last only)")


def _padding(b: BoundArgs) -> str:
    pad = b.get("padding")
    if not isinstance(pad, str) or pad.lower() not in ("valid", "same"):
        raise Unsupported(f"{b.cls_name}: padding={pad!r} is not supported")
    return pad.lower()


def _causal_pads(b: BoundArgs) -> tuple:
    """Conv1D(padding="causal"): Keras pads (kernel_size - 1) * dilation_rate zeros before the
    sequence and none after, so no output step sees a later input step."""
    k, d = (v if isinstance(v, int) else v[0] for v in (b.require("kernel_size"), b.get("dilation_rate")))
    return (((k - 1) * d, 0),)


def _conv_family(rank: int, op: str, transposed: bool = False):
    def fn(b: BoundArgs) -> LayerSpec:
        _check_channels_last(b)
        pad = b.get("padding")
        attrs = {
            "filters": b.require("filters"),
            "kernel_size": b.require("kernel_size"),
            "strides": b.get("strides"),
            "padding": _causal_pads(b) if rank == 1 and not transposed and isinstance(pad, str)
            and pad.lower() == "causal" else _padding(b),
            "dilation": b.get("dilation_rate"),
            "use_bias": b.get("use_bias"),
        }
        if transposed:
            attrs["output_padding"] = b.get("output_padding")
        else:
            attrs["groups"] = b.get("groups")
        return LayerSpec(op, attrs, activation_spec(b.get("activation")))

    return fn


_CONV_SIG = ("filters; kernel_size; strides=1; padding='valid'; data_format=None; dilation_rate=1; "
             "groups=1; activation=None; use_bias=True")
_CONVT_SIG = ("filters; kernel_size; strides=1; padding='valid'; output_padding=None; "
              "data_format=None; dilation_rate=1; activation=None; use_bias=True")

recognizer("Conv1D", "Convolution1D", signature=_CONV_SIG, ops=("conv1d",))(_conv_family(1, "conv1d"))
recognizer("Conv2D", "Convolution2D", signature=_CONV_SIG, ops=("conv2d",))(_conv_family(2, "conv2d"))
recognizer("Conv3D", "Convolution3D", signature=_CONV_SIG, ops=("conv3d",))(_conv_family(3, "conv3d"))
recognizer("Conv1DTranspose", "Convolution1DTranspose", signature=_CONVT_SIG, ops=("conv_transpose1d",))(
    _conv_family(1, "conv_transpose1d", transposed=True))
recognizer("Conv2DTranspose", "Convolution2DTranspose", "Deconvolution2D", signature=_CONVT_SIG,
           ops=("conv_transpose2d",))(
    _conv_family(2, "conv_transpose2d", transposed=True))


@recognizer("Dense", signature="units; activation=None; use_bias=True", ops=("dense",))
def recognize_dense(b: BoundArgs) -> LayerSpec:
    attrs = {"units": b.require("units"), "use_bias": b.get("use_bias")}
    return LayerSpec("dense", attrs, activation_spec(b.get("activation")))


@recognizer("DepthwiseConv2D", signature="kernel_size; strides=1; padding='valid'; depth_multiplier=1; "
            "data_format=None; dilation_rate=1; activation=None; use_bias=True", ops=("depthwise_conv2d",))
def recognize_depthwise_conv2d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    attrs = {"kernel_size": b.require("kernel_size"), "strides": b.get("strides"),
             "padding": _padding(b), "dilation": b.get("dilation_rate"),
             "depth_multiplier": b.get("depth_multiplier"), "use_bias": b.get("use_bias")}
    return LayerSpec("depthwise_conv2d", attrs, activation_spec(b.get("activation")))


@recognizer("SeparableConv2D", "SeparableConvolution2D",
            signature="filters; kernel_size; strides=1; padding='valid'; data_format=None; "
            "dilation_rate=1; depth_multiplier=1; activation=None; use_bias=True", ops=("separable_conv2d",))
def recognize_separable_conv2d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    attrs = {"filters": b.require("filters"), "kernel_size": b.require("kernel_size"),
             "strides": b.get("strides"), "padding": _padding(b),
             "dilation": b.get("dilation_rate"), "depth_multiplier": b.get("depth_multiplier"),
             "use_bias": b.get("use_bias")}
    return LayerSpec("separable_conv2d", attrs, activation_spec(b.get("activation")))


def _pool(op: str):
    def fn(b: BoundArgs) -> LayerSpec:
        _check_channels_last(b)
        pool = b.get("pool_size") if "pool_size" in b.sig.defaults else b.require("pool_size")
        strides = b.get("strides")
        return LayerSpec(op, {"pool_size": pool, "strides": pool if strides is None else strides,
                              "padding": _padding(b)})

    return fn


#: an LSTM's activation other than tanh the torch output computes (printers/torch/ops_recurrent.py
#: RNN_ACTIVATIONS, the runtime's ActivationLSTM)
LSTM_ACTIVATIONS = frozenset({"relu", "sigmoid", "elu", "selu", "gelu", "silu", "swish", "softplus", "softsign",
                              "linear"})

_POOL1 = "pool_size=2; strides=None; padding='valid'; data_format=None"
_POOL2 = "pool_size=(2, 2); strides=None; padding='valid'; data_format=None"
_POOL3 = "pool_size=(2, 2, 2); strides=None; padding='valid'; data_format=None"
_AVG_POOL = "pool_size; strides=None; padding='valid'; data_format=None"  # no default in Keras 3
recognizer("MaxPooling1D", "MaxPool1D", signature=_POOL1, ops=("max_pool1d",))(_pool("max_pool1d"))
recognizer("MaxPooling2D", "MaxPool2D", signature=_POOL2, ops=("max_pool2d",))(_pool("max_pool2d"))
recognizer("MaxPooling3D", "MaxPool3D", signature=_POOL3, ops=("max_pool3d",))(_pool("max_pool3d"))
recognizer("AveragePooling1D", "AvgPool1D", signature=_AVG_POOL, ops=("avg_pool1d",))(_pool("avg_pool1d"))
recognizer("AveragePooling2D", "AvgPool2D", signature=_AVG_POOL, ops=("avg_pool2d",))(_pool("avg_pool2d"))
recognizer("AveragePooling3D", "AvgPool3D", signature=_AVG_POOL, ops=("avg_pool3d",))(_pool("avg_pool3d"))


def _global_pool(op: str):
    def fn(b: BoundArgs) -> LayerSpec:
        _check_channels_last(b)
        return LayerSpec(op, {"keepdims": b.get("keepdims")})

    return fn


for _kind, _short in (("Average", "Avg"), ("Max", "Max")):
    for _r in (1, 2, 3):
        recognizer(f"Global{_kind}Pooling{_r}D", f"Global{_short}Pool{_r}D",
                   signature="data_format=None; keepdims=False", ops=(f"global_{_short.lower()}_pool{_r}d",))(
            _global_pool(f"global_{_short.lower()}_pool{_r}d"))


@recognizer("Flatten", signature="data_format=None", ops=("flatten",))
def recognize_flatten(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("flatten", {})


@recognizer("Reshape", signature="target_shape", ops=("reshape",))
def recognize_reshape(b: BoundArgs) -> LayerSpec:
    return LayerSpec("reshape", {"shape": tuple(b.require("target_shape"))})


@recognizer("Permute", signature="dims", ops=("transpose",))
def recognize_permute(b: BoundArgs) -> LayerSpec:
    dims = tuple(b.require("dims"))
    if sorted(dims) != list(range(1, len(dims) + 1)):
        raise Unsupported(f"Permute: dims {dims} is not a permutation of 1..{len(dims)}")
    return LayerSpec("transpose", {"perm": (0, *dims)})


@recognizer("RepeatVector", signature="n", ops=("repeat_vector",))
def recognize_repeat_vector(b: BoundArgs) -> LayerSpec:
    return LayerSpec("repeat_vector", {"n": b.require("n")})


@recognizer("Identity", signature="", ops=("identity",))
def recognize_identity(b: BoundArgs) -> LayerSpec:
    return LayerSpec("identity", {})


@recognizer("Dropout", signature="rate; noise_shape=None; seed=None", ops=("dropout",))
def recognize_dropout(b: BoundArgs) -> LayerSpec:
    if b.get("noise_shape") is not None:
        raise Unsupported("Dropout: noise_shape is not supported")
    return LayerSpec("dropout", {"rate": b.require("rate")})


@recognizer("SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", signature="rate; data_format=None; seed=None",
            ops=("spatial_dropout",))
def recognize_spatial_dropout(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("spatial_dropout", {"rate": b.require("rate")})


@recognizer("BatchNormalization", signature="axis=-1; momentum=0.99; epsilon=0.001; center=True; scale=True",
            ops=("batch_norm",))
def recognize_batch_norm(b: BoundArgs) -> LayerSpec:
    axis = b.get("axis")
    if isinstance(axis, (list, tuple)):
        if len(axis) != 1:
            raise Unsupported("BatchNormalization over several axes is not supported")
        axis = axis[0]
    return LayerSpec("batch_norm", {"axis": axis, "momentum": b.get("momentum"),
                                    "epsilon": b.get("epsilon"), "center": b.get("center"),
                                    "scale": b.get("scale")})


@recognizer("LayerNormalization", signature="axis=-1; epsilon=0.001; center=True; scale=True; rms_scaling=False",
            ops=("layer_norm",))
def recognize_layer_norm(b: BoundArgs) -> LayerSpec:
    if b.get("rms_scaling"):
        raise Unsupported("LayerNormalization(rms_scaling=True) is not supported")
    return LayerSpec("layer_norm", {"axis": b.get("axis"), "epsilon": b.get("epsilon"),
                                    "center": b.get("center"), "scale": b.get("scale")})


@recognizer("UnitNormalization", signature="axis=-1", ops=("unit_normalize",))
def recognize_unit_normalization(b: BoundArgs) -> LayerSpec:
    axis = b.get("axis")
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    if not axes or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise Unsupported(f"UnitNormalization(axis={axis!r}): the axes must be integers known statically")
    return LayerSpec("unit_normalize", {"axis": axes})


@recognizer("Rescaling", signature="scale; offset=0.0", ops=("rescaling",))
def recognize_rescaling(b: BoundArgs) -> LayerSpec:
    return LayerSpec("rescaling", {"scale": b.require("scale"), "offset": b.get("offset")})


@recognizer("Activation", signature="activation",
            ops=tuple(sorted({spec[0] for spec in ACTIVATIONS.values() if spec} | {"identity"})))
def recognize_activation(b: BoundArgs) -> LayerSpec:
    spec = activation_spec(b.require("activation"))
    return LayerSpec(*spec) if spec else LayerSpec("identity", {})


@recognizer("ReLU", signature="max_value=None; negative_slope=0.0; threshold=0.0", ops=("relu",))
def recognize_relu(b: BoundArgs) -> LayerSpec:
    return LayerSpec("relu", {"max_value": b.get("max_value"), "negative_slope": b.get("negative_slope"),
                              "threshold": b.get("threshold")})


@recognizer("LeakyReLU", signature="negative_slope=0.3", ops=("leaky_relu",))
def recognize_leaky_relu(b: BoundArgs) -> LayerSpec:
    b.rename("alpha", "negative_slope")
    return LayerSpec("leaky_relu", {"negative_slope": b.get("negative_slope")})


@recognizer("ELU", signature="alpha=1.0", ops=("elu",))
def recognize_elu(b: BoundArgs) -> LayerSpec:
    return LayerSpec("elu", {"alpha": b.get("alpha")})


@recognizer("PReLU", signature="alpha_initializer='zeros'; alpha_regularizer=None; alpha_constraint=None; shared_axes=None",
            ops=("prelu",))
def recognize_prelu(b: BoundArgs) -> LayerSpec:
    shared = b.get("shared_axes")
    return LayerSpec("prelu", {"shared_axes": None if shared is None else tuple(
        [shared] if isinstance(shared, int) else shared)})


@recognizer("Softmax", signature="axis=-1", ops=("softmax",))
def recognize_softmax(b: BoundArgs) -> LayerSpec:
    axis = b.get("axis")
    if isinstance(axis, (list, tuple)):
        raise Unsupported("Softmax over several axes is not supported")
    return LayerSpec("softmax", {"axis": axis})


def _merge(op: str):
    def fn(b: BoundArgs) -> LayerSpec:
        return LayerSpec(op, {})

    return fn


for _cls, _op in (("Add", "add"), ("Subtract", "subtract"), ("Multiply", "multiply"),
                  ("Average", "average"), ("Maximum", "maximum"), ("Minimum", "minimum")):
    recognizer(_cls, signature="", ops=(_op,))(_merge(_op))


@recognizer("Concatenate", signature="axis=-1", ops=("concat",))
def recognize_concat(b: BoundArgs) -> LayerSpec:
    return LayerSpec("concat", {"axis": b.get("axis")})


def _pairs(value: Any, rank: int, name: str) -> tuple:
    """Keras padding/cropping argument → ((before, after),) * rank."""
    if isinstance(value, int):
        return ((value, value),) * rank
    value = tuple(value)
    if rank == 1 and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (value,)
    if len(value) != rank:
        raise Unsupported(f"{name}: cannot read {value!r}")
    return tuple((v, v) if isinstance(v, int) else tuple(v) for v in value)


@recognizer("ZeroPadding1D", signature="padding=1", ops=("pad1d",))
def recognize_zero_pad1d(b: BoundArgs) -> LayerSpec:
    return LayerSpec("pad1d", {"pads": _pairs(b.get("padding"), 1, "ZeroPadding1D")})


@recognizer("ZeroPadding2D", signature="padding=(1, 1); data_format=None", ops=("pad2d",))
def recognize_zero_pad2d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("pad2d", {"pads": _pairs(b.get("padding"), 2, "ZeroPadding2D")})


@recognizer("ZeroPadding3D", signature="padding=((1, 1), (1, 1), (1, 1)); data_format=None", ops=("pad3d",))
def recognize_zero_pad3d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("pad3d", {"pads": _pairs(b.get("padding"), 3, "ZeroPadding3D")})


@recognizer("Cropping3D", signature="cropping=((1, 1), (1, 1), (1, 1)); data_format=None", ops=("crop3d",))
def recognize_crop3d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("crop3d", {"cropping": _pairs(b.get("cropping"), 3, "Cropping3D")})


@recognizer("Cropping1D", signature="cropping=(1, 1)", ops=("crop1d",))
def recognize_crop1d(b: BoundArgs) -> LayerSpec:
    return LayerSpec("crop1d", {"cropping": _pairs(b.get("cropping"), 1, "Cropping1D")})


@recognizer("Cropping2D", signature="cropping=((0, 0), (0, 0)); data_format=None", ops=("crop2d",))
def recognize_crop2d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("crop2d", {"cropping": _pairs(b.get("cropping"), 2, "Cropping2D")})


@recognizer("UpSampling1D", signature="size=2", ops=("upsample1d",))
def recognize_upsample1d(b: BoundArgs) -> LayerSpec:
    return LayerSpec("upsample1d", {"size": b.get("size")})


@recognizer("UpSampling2D", signature="size=(2, 2); data_format=None; interpolation='nearest'",
            ops=("upsample2d",))
def recognize_upsample2d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    mode = b.get("interpolation")
    if mode not in ("nearest", "bilinear"):
        raise Unsupported(f"UpSampling2D: interpolation={mode!r} is not supported")
    return LayerSpec("upsample2d", {"size": b.get("size"), "interpolation": mode})


@recognizer("Embedding", signature="input_dim; output_dim; embeddings_initializer='uniform'; "
            "embeddings_regularizer=None; embeddings_constraint=None; mask_zero=False", ops=("embedding",))
def recognize_embedding(b: BoundArgs) -> LayerSpec:
    # mask_zero=True: the layers reading the output honour the mask (keras_calls)
    return LayerSpec("embedding", {"input_dim": b.require("input_dim"),
                                   "output_dim": b.require("output_dim"),
                                   "mask_zero": bool(b.get("mask_zero"))})


def _rnn(op: str):
    def fn(b: BoundArgs) -> LayerSpec:
        for flag in ("stateful", "unroll"):
            if b.get(flag, False):
                raise Unsupported(f"{b.cls_name}({flag}=True) is not supported")
        if b.get("recurrent_dropout", 0.0):
            raise Unsupported(f"{b.cls_name}(recurrent_dropout=...) is not translated yet")
        dropout = b.get("dropout", 0.0)
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool):
            raise Unsupported(f"{b.cls_name}: dropout={dropout!r} is not a static number")
        act = b.get("activation")
        attrs = {"units": b.require("units"), "return_sequences": b.get("return_sequences"),
                 "return_state": b.get("return_state"), "go_backwards": b.get("go_backwards"),
                 "use_bias": b.get("use_bias"), "activation": act or "linear",
                 "dropout": min(1.0, max(0.0, float(dropout)))}  # (Keras clips it so)
        if act != "tanh" and not (op == "lstm" and act in LSTM_ACTIVATIONS):
            raise Unsupported(f"{b.cls_name}(activation={act!r}): torch RNNs use tanh only "
                              f"(an LSTM may use {', '.join(sorted(LSTM_ACTIVATIONS))})")
        if op != "simple_rnn":
            if b.get("recurrent_activation") != "sigmoid":
                raise Unsupported(f"{b.cls_name}: recurrent_activation must be 'sigmoid'")
            attrs["recurrent_activation"] = "sigmoid"
        if op == "lstm":
            attrs["unit_forget_bias"] = b.get("unit_forget_bias")
        if op == "gru":
            if not b.get("reset_after"):
                raise Unsupported("GRU(reset_after=False) has no torch layer")
            attrs["reset_after"] = True
        return LayerSpec(op, attrs)

    return fn


_RNN_SIG = ("units; activation='tanh'; recurrent_activation='sigmoid'; use_bias=True; "
            "dropout=0.0; recurrent_dropout=0.0; return_sequences=False; return_state=False; "
            "go_backwards=False; stateful=False; unroll=False; unit_forget_bias=True; reset_after=True")
recognizer("SimpleRNN", signature=_RNN_SIG.replace("recurrent_activation='sigmoid'; ", ""),
           ops=("simple_rnn",))(_rnn("simple_rnn"))
recognizer("LSTM", "CuDNNLSTM", signature=_RNN_SIG, ops=("lstm",))(_rnn("lstm"))
recognizer("GRU", "CuDNNGRU", signature=_RNN_SIG, ops=("gru",))(_rnn("gru"))


@recognizer("ConvLSTM2D", signature="filters; kernel_size; strides=1; padding='valid'; data_format=None; "
            "dilation_rate=1; activation='tanh'; recurrent_activation='sigmoid'; use_bias=True; "
            "unit_forget_bias=True; dropout=0.0; recurrent_dropout=0.0; return_sequences=False; "
            "return_state=False; go_backwards=False; stateful=False", ops=("conv_lstm2d",))
def recognize_conv_lstm2d(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    for flag in ("stateful", "return_state"):
        if b.get(flag, False):
            raise Unsupported(f"ConvLSTM2D({flag}=True) is not translated yet")
    for rate in ("dropout", "recurrent_dropout"):
        if b.get(rate, 0.0):
            raise Unsupported(f"ConvLSTM2D({rate}=...) is not translated yet")
    act = b.get("activation") or "linear"
    if act != "tanh" and act not in LSTM_ACTIVATIONS:
        raise Unsupported(f"ConvLSTM2D(activation={act!r}) is not supported "
                          f"(tanh, {', '.join(sorted(LSTM_ACTIVATIONS))})")
    if b.get("recurrent_activation") != "sigmoid":
        raise Unsupported("ConvLSTM2D: recurrent_activation must be 'sigmoid'")
    return LayerSpec("conv_lstm2d", {
        "filters": b.require("filters"), "kernel_size": b.require("kernel_size"), "strides": b.get("strides"),
        "padding": _padding(b), "dilation": b.get("dilation_rate"), "return_sequences": b.get("return_sequences"),
        "go_backwards": b.get("go_backwards"), "use_bias": b.get("use_bias"), "activation": act,
        "recurrent_activation": "sigmoid", "unit_forget_bias": b.get("unit_forget_bias")})


@recognizer("Bidirectional", signature="layer; merge_mode='concat'; weights=None; backward_layer=None",
            ops=("bidirectional",))
def recognize_bidirectional(b: BoundArgs) -> LayerSpec:
    inner = b.require("layer")
    if b.get("backward_layer") is not None:
        raise Unsupported("Bidirectional(backward_layer=...) is not supported")
    spec = getattr(inner, "spec", None)
    if spec is None or spec.op not in ("lstm", "gru", "simple_rnn"):
        raise Unsupported("Bidirectional wraps an LSTM, GRU or SimpleRNN layer only")
    if spec.attrs.get("go_backwards"):
        raise Unsupported("Bidirectional over a go_backwards=True layer is not supported")
    if spec.attrs.get("activation", "tanh") != "tanh":
        raise Unsupported(f"Bidirectional over an LSTM(activation={spec.attrs['activation']!r}) is not "
                          "translated yet (torch's bidirectional LSTM uses tanh only)")
    mode = b.get("merge_mode")
    if mode not in ("concat", "sum", "mul", "ave", None):
        raise Unsupported(f"Bidirectional: merge_mode={mode!r} is not supported")
    return LayerSpec("bidirectional",
                     {"merge_mode": mode if mode is not None else "none",
                      "layer": {"op": spec.op, "attrs": dict(spec.attrs)}}, inner=spec)


#: layers that act on the last axis alone: TimeDistributed over them is the layer itself
_PER_STEP_OPS = ("dense", "dropout")


@recognizer("TimeDistributed", signature="layer", ops=_PER_STEP_OPS)
def recognize_time_distributed(b: BoundArgs) -> LayerSpec:
    """``TimeDistributed(Dense(n))``: Keras applies the Dense to each step's features, which is
    what a Dense on the whole (batch, time, features) tensor does (weights under the wrapper's
    name, ``time_distributed/layer/vars``); wrappers of other layers are not translated."""
    spec = getattr(b.require("layer"), "spec", None)
    if spec is None or spec.op not in _PER_STEP_OPS:
        raise Unsupported("TimeDistributed wraps a Dense or Dropout layer only (other layers are not "
                          "translated yet)")
    return spec


# ---------------------------------------------------------------------------------
# Attention (call arguments and masks: keras_calls)
# ---------------------------------------------------------------------------------
@recognizer("MultiHeadAttention",
            signature="num_heads; key_dim; value_dim=None; dropout=0.0; use_bias=True; output_shape=None; "
                      "attention_axes=None; sliding_window=None; flash_attention=None; use_gate=False",
            ops=("multi_head_attention",))
def recognize_multi_head_attention(b: BoundArgs) -> LayerSpec:
    axes = b.get("attention_axes")
    if axes not in (None, 1, (1,), [1]):
        raise Unsupported(f"MultiHeadAttention(attention_axes={axes!r}): attention over other axes than "
                          "the sequence is not translated yet")
    for flag in ("sliding_window", "flash_attention"):
        if b.get(flag) not in (None, False):
            raise Unsupported(f"MultiHeadAttention({flag}=...) is not translated yet")
    if b.get("use_gate"):
        raise Unsupported("MultiHeadAttention(use_gate=True) is not translated yet")
    out = b.get("output_shape")
    if isinstance(out, (tuple, list)):
        if len(out) != 1:
            raise Unsupported(f"MultiHeadAttention(output_shape={out!r}): only one output axis is supported")
        out = out[0]
    return LayerSpec("multi_head_attention", {
        "num_heads": b.require("num_heads"), "key_dim": b.require("key_dim"), "value_dim": b.get("value_dim"),
        "output_dim": out, "use_bias": b.get("use_bias"), "dropout": float(b.get("dropout"))},
        options={"attention_axes": axes})


@recognizer("Attention", signature="use_scale=False; score_mode='dot'; dropout=0.0; seed=None", ops=("attention",))
def recognize_attention(b: BoundArgs) -> LayerSpec:
    mode = b.get("score_mode")
    if mode not in ("dot", "concat"):
        raise Unsupported(f"Attention(score_mode={mode!r}) is not a Keras score mode")
    return LayerSpec("attention", {"use_scale": bool(b.get("use_scale")), "score_mode": mode,
                                   "dropout": float(b.get("dropout"))})


@recognizer("AdditiveAttention", signature="use_scale=True; dropout=0.0; seed=None", ops=("additive_attention",))
def recognize_additive_attention(b: BoundArgs) -> LayerSpec:
    return LayerSpec("additive_attention", {"use_scale": bool(b.get("use_scale")), "dropout": float(b.get("dropout"))})


# ---------------------------------------------------------------------------------
# Normalisation and preprocessing
# ---------------------------------------------------------------------------------
def _axes(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


@recognizer("RMSNormalization", signature="axis=-1; epsilon=1e-06", ops=("rms_norm",))
def recognize_rms_norm(b: BoundArgs) -> LayerSpec:
    # Keras sorts the axes before it shapes the scale
    return LayerSpec("rms_norm", {"axis": tuple(sorted(_axes(b.get("axis")))), "epsilon": float(b.get("epsilon"))})


@recognizer("GroupNormalization", signature="groups=32; axis=-1; epsilon=0.001; center=True; scale=True",
            ops=("group_norm",))
def recognize_group_norm(b: BoundArgs) -> LayerSpec:
    axis = b.get("axis")
    if isinstance(axis, (list, tuple)):
        raise Unsupported("GroupNormalization over several axes is not a Keras option")
    return LayerSpec("group_norm", {"groups": b.get("groups"), "axis": axis, "epsilon": float(b.get("epsilon")),
                                    "center": b.get("center"), "scale": b.get("scale")})


def _floats(value: Any, what: str) -> Any:
    """A mean/variance argument as a float or a (nested) list of floats."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_floats(v, what) for v in value]
    raise Unsupported(f"Normalization: {what}={value!r} is not a static number or list")


@recognizer("Normalization", signature="axis=-1; mean=None; variance=None; invert=False", ops=("normalization",))
def recognize_normalization(b: BoundArgs) -> LayerSpec:
    axis = b.get("axis")
    mean, variance = b.get("mean"), b.get("variance")
    if (mean is None) != (variance is None):
        raise Unsupported("Normalization: give both mean and variance, or neither (adapt())")
    attrs = {"axis": () if axis is None else _axes(axis), "invert": bool(b.get("invert"))}
    if mean is not None:
        attrs["mean"], attrs["variance"] = _floats(mean, "mean"), _floats(variance, "variance")
    return LayerSpec("normalization", attrs)


#: augmentation layers: the identity at inference (see the torch emitter for training)
AUGMENTATIONS = {
    "RandomFlip": "mode='horizontal_and_vertical'; seed=None; data_format=None",
    "RandomRotation": "factor; fill_mode='reflect'; interpolation='bilinear'; seed=None; fill_value=0.0; "
                      "data_format=None",
    "RandomZoom": "height_factor; width_factor=None; fill_mode='reflect'; interpolation='bilinear'; seed=None; "
                  "fill_value=0.0; data_format=None",
    "RandomTranslation": "height_factor; width_factor; fill_mode='reflect'; interpolation='bilinear'; seed=None; "
                         "fill_value=0.0; data_format=None",
    "RandomContrast": "factor; value_range=(0, 255); seed=None",
    # regularisation noise, not image augmentation, but the same kind of layer: the
    # identity at inference, a random draw in training
    "GaussianNoise": "stddev; seed=None",
    "GaussianDropout": "rate; seed=None",
}


def _augmentation(cls: str):
    def fn(b: BoundArgs) -> LayerSpec:
        _check_channels_last(b)
        config = {name: b.get(name) for name in b.sig.names if name not in ("seed", "data_format")}
        if cls == "RandomFlip" and config["mode"] not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise Unsupported(f"RandomFlip(mode={config['mode']!r}) is not a Keras mode")
        return LayerSpec("random_augmentation", {"kind": cls, "config": config})

    return fn


for _cls, _sig in AUGMENTATIONS.items():
    recognizer(_cls, signature=_sig, ops=("random_augmentation",))(_augmentation(_cls))


@recognizer("Resizing", signature="height; width; interpolation='bilinear'; crop_to_aspect_ratio=False; "
            "pad_to_aspect_ratio=False; fill_mode='constant'; fill_value=0.0; antialias=False; data_format=None",
            ops=("resizing",))
def recognize_resizing(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    for flag in ("crop_to_aspect_ratio", "pad_to_aspect_ratio", "antialias"):
        if b.get(flag):
            raise Unsupported(f"Resizing({flag}=True) is not translated yet")
    mode = b.get("interpolation")
    if mode not in ("bilinear", "nearest"):
        # (bicubic: TensorFlow's kernel has a = -0.5, torch's a = -0.75)
        raise Unsupported(f"Resizing(interpolation={mode!r}) is not translated yet")
    return LayerSpec("resizing", {"size": (b.require("height"), b.require("width")), "interpolation": mode})


@recognizer("CenterCrop", signature="height; width; data_format=None", ops=("center_crop",))
def recognize_center_crop(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("center_crop", {"size": (b.require("height"), b.require("width"))})


@recognizer("RandomCrop", signature="height; width; seed=None; data_format=None", ops=("random_crop",))
def recognize_random_crop(b: BoundArgs) -> LayerSpec:
    _check_channels_last(b)
    return LayerSpec("random_crop", {"size": (b.require("height"), b.require("width"))})


#: Keras layers with no faithful torch form, and why (the stub's message)
UNSUPPORTED_LAYERS = {
    "TextVectorization": "TextVectorization maps strings to token ids with a vocabulary built by "
                         "adapt(): torch has no such layer; tokenize in the data pipeline and feed ids",
    "StringLookup": "StringLookup maps strings to ids with a vocabulary: tokenize in the data pipeline",
}


def unsupported_reason(class_name: str) -> str:
    """Why Keras layer ``class_name`` (which has no recogniser) is not translated."""
    return UNSUPPORTED_LAYERS.get(class_name, f"layer {class_name} is not supported")


def adapt_note(class_name: str) -> str:
    """The diagnostic for ``layer.adapt(data)`` (statistics computed from data at run time)."""
    if class_name == "Normalization":
        return ("Normalization.adapt(): Keras computes mean and variance from the data when the script "
                "runs; the torch module holds them as buffers (<layer>_mean, <layer>_variance) that start "
                "at 0 and 1: convert the adapted Keras weights (--weights), or set the buffers from the "
                "data's mean and variance")
    return f"{class_name}.adapt() is not translated: the layer's state comes from data at run time"
