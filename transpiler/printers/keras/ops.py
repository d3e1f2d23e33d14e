"""Keras emitters: one per op family, registered by decorator.

An emitter turns an IR node (after the Keras passes: channels-last, Keras paddings) into
a ``KerasEmission``: the ``layers.X(...)`` constructor (named after the source module,
``name="conv1"``), or, for an op Keras has as a function only, the ``keras.ops``
expression over the input expressions. Arguments equal to Keras' defaults are left out;
torch defaults that differ from Keras' are written out (BatchNormalization momentum and
epsilon, LeakyReLU slope, LayerNormalization epsilon).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from transpiler.ir import ops as ops_table
from transpiler.ir.registry import OpRegistry
from transpiler.ir import sizes
from transpiler.ir.graph import Node
from transpiler.ir.params import param_names
from transpiler.printers import differences, runtime_source
from transpiler.printers.keras.array_spelling import numpy_text
from transpiler.printers.code import lit as code_lit  # (a Scalar too: -math.log(1e4) / d_model)
from transpiler.printers.torch.ops import new_axis_dim, subscript_text  # (the same in both frameworks)


@dataclass
class KerasEmission:
    """``layer`` is a constructor expression (the layer is called on the inputs), or
    ``call(ins)`` gives an expression over the input expressions (a ``keras.ops`` call).
    ``helpers`` names the module-level initializer helpers the layer uses."""

    layer: str | None = None
    call: Callable[[list[str]], str] | None = None
    merge: bool = False  # the layer takes a list of inputs
    helpers: tuple[str, ...] = ()
    #: the call's arguments from the input expressions, for a layer called on several
    #: tensors (``mha(query, value, key=key)``)
    args: Callable[[list[str]], str] | None = None
    #: its first input while training, its second at inference: a model holding it is a
    #: ``keras.Model`` subclass whose ``call()`` branches on ``training`` (keras_subclass)
    mode_select: bool = False
    #: import lines the emitted code needs (``import numpy as np`` for a computed constant)
    imports: tuple[str, ...] = ()


#: module-level helpers reproducing PyTorch's default initialisation and layers Keras lacks
#: (the generated script copies the ones its layers use from transpiler/runtime/keras/layers.py)
INIT_HELPERS = ("torch_kernel_init", "torch_uniform_init", "ModelWeight", "PaddingEmbedding", "TrainingSelect",
                "NormalNoise", "PixelShuffle", "set_items", "TorchMaskAttention")


def init_helper_source(name: str) -> str:
    return runtime_source.source("keras.layers", name)


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _torch_inits(node: Node, fan_in: int, kernel: str = "kernel", depthwise: bool = False) -> dict:
    """Initializer arguments giving a layer what the script's initialisation code drew
    (``node.from_torch.param_inits``), and under ``--exact`` PyTorch's default initial weights
    for the others (without it Keras' own defaults stand); none for weights loaded from a
    model file (``weights_given``)."""
    if node.from_onnx.weights_given:
        return {}
    kw = {f"{kernel}_initializer": f"torch_uniform_init({lit(fan_in)})" if depthwise else "torch_kernel_init()"}
    if node.attrs.get("use_bias"):
        kw["bias_initializer"] = f"torch_uniform_init({lit(fan_in)})"
    drawn = _drawn_inits(node, (kernel if kernel != "depthwise" else "depthwise_kernel", "bias"), kernel)
    if differences.exact():
        return {**kw, **drawn}
    if len(drawn) < len(kw):  # a weight the script left to torch's default: Keras' default now
        differences.replaced("initializers")
    return drawn


def _drawn_inits(node: Node, params: tuple[str, ...], first: str | None = None) -> dict:
    """``<param>_initializer`` arguments for the weights the script's initialisation code
    drew (``nn.init.normal_(m.weight, 0.0, 0.02)``: ``torch_params``' inits by Keras weight
    name); ``first`` renames the first weight's argument (``depthwise_initializer``)."""
    drawn = node.from_torch.param_inits or {}
    out = {}
    for i, p in enumerate(params):
        if p in drawn:
            out[f"{first if i == 0 and first else p}_initializer"] = keras_initializer(drawn[p])
    return out


def _helpers(kwargs: dict) -> tuple[str, ...]:
    return tuple(sorted({name for name in INIT_HELPERS for v in kwargs.values() if v and v.startswith(name)}))


Emitter = Callable[[Node], KerasEmission]
_EMITTERS = OpRegistry("keras emitter")
emitter = _EMITTERS.register  # (decorator: ``@emitter("dense")``)


def ops_call(fn: str, args: Callable[[], str] | None = None) -> KerasEmission:
    """``keras.ops.<fn>(x, ...)`` on the node's first input ``x``: the emission of an op Keras has
    as a function only. ``args()`` gives the other arguments' text when the call is printed."""
    return KerasEmission(call=lambda ins: f"keras.ops.{fn}({', '.join([ins[0], args()] if args else [ins[0]])})")


def has_emitter(op: str) -> bool:
    return op in _EMITTERS


def emit(node: Node) -> KerasEmission:
    return _EMITTERS[node.op](node)


def keras_class_of(node: Node) -> str | None:
    """The Keras layer class ``node`` is printed as (None for a ``keras.ops`` call)."""
    em = emit(node)
    if em.layer is None:
        return None
    return em.layer.removeprefix("layers.").split("(", 1)[0]


#: the Keras operation a Python operator on Keras tensors makes (named after its class)
_OPERATOR_OPS = {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide", "**": "power", "@": "matmul",
                 ">": "greater", ">=": "greater_equal", "<": "less", "<=": "less_equal"}


def clear_auto_names(graph) -> None:
    """Keras names each operation a ``keras.ops`` call or an operator makes after its class
    with a per-process counter ("mean", "mean_1", ...; "add" for ``a + w``), blind to explicit
    names: a layer explicitly named like one (a pooling ``mean``, a merge ``add_1``) clashes
    when the Functional model is built, at once or when the builder runs again. Such layers
    without weights (the checkpoint plan holds the others' names) are renamed
    ``<name>_layer``, in place, before anything is printed."""
    auto = set()
    for node in graph.nodes:
        em = emit(node)
        if em.call is None:
            continue
        text = em.call([f"v{i}" for i in range(len(node.inputs))])
        auto.update(re.findall(r"keras\.ops\.(\w+)\(", text))
        auto.update(op for sym, op in _OPERATOR_OPS.items() if f" {sym} " in text)
        if "[" in text:
            auto.add("get_item")
        if text.startswith("-"):
            auto.add("negative")
    if not auto:
        return
    pattern = re.compile(rf"(?:{'|'.join(sorted(auto))})(?:_\d+)?")
    taken = {n.name for n in graph.nodes}
    for node in graph.nodes:
        if pattern.fullmatch(node.name) and emit(node).layer is not None and not param_names(node):
            name = f"{node.name}_layer"
            while name in taken:
                name += "_"
            taken.add(name)
            node.name = name


def lit(value) -> str:
    if isinstance(value, (sizes.Size, sizes.SymbolicSize, sizes.Scalar)):
        return sizes.render(value)  # its source expression where the printed code can see it
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):  # (repr gives a bare name: inf)
            return f'float("{value}")'
        return repr(value)
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({lit(value[0])},)"
        return "(" + ", ".join(lit(v) for v in value) + ")"
    return repr(value)


def size(value: tuple) -> str:
    """A per-axis size tuple, as one int when all are equal (Keras' idiom)."""
    if len(set(value)) == 1:
        return lit(value[0])
    return lit(tuple(value))


def layer(cls: str, node: Node, *args: str, **kwargs) -> str:
    parts = list(args)
    for key, value in kwargs.items():
        if value is not None:
            parts.append(f"{key}={value}")
    if node.from_onnx.frozen:  # fixed weights, not trained
        parts.append("trainable=False")
    parts.append(f'name="{node.name}"')
    return f"layers.{cls}({', '.join(parts)})"


# ---------------------------------------------------------------------------------
# Dense and convolutions
# ---------------------------------------------------------------------------------
@emitter("dense")
def emit_dense_keras(node: Node) -> KerasEmission:
    a = node.attrs
    # (F.linear over a module's own parameters: drawn their way, ``param_inits``)
    inits = _torch_inits(node, node.inputs[0].shape[-1])
    return KerasEmission(layer("Dense", node, lit(a["units"]), use_bias=None if a["use_bias"] else "False", **inits),
                         helpers=_helpers(inits))


def _pad(p) -> str | None:
    return None if p == "valid" else lit(p)


def _dilation(a) -> str | None:
    return None if set(a["dilation"]) == {1} else size(a["dilation"])


def _strides(a) -> str | None:
    return None if set(a["strides"]) == {1} else size(a["strides"])


@emitter("conv1d", "conv2d", "conv3d")
def emit_conv_keras(node: Node) -> KerasEmission:
    a = node.attrs
    cls = f"Conv{node.op[4]}D"
    x = node.inputs[0]
    inits = _torch_inits(node, x.shape[-1] // a["groups"] * _prod(a["kernel_size"]))
    return KerasEmission(layer(cls, node, lit(a["filters"]), size(a["kernel_size"]), strides=_strides(a),
                               padding=_pad(a["padding"]), dilation_rate=_dilation(a),
                               groups=None if a["groups"] == 1 else lit(a["groups"]),
                               use_bias=None if a["use_bias"] else "False", **inits), helpers=_helpers(inits))


@emitter("depthwise_conv2d")
def emit_depthwise_keras(node: Node) -> KerasEmission:
    a = node.attrs
    # torch's fan_in of a grouped conv weight (C*M, 1, kh, kw) is kh*kw; Keras' would be kh*kw*C
    inits = _torch_inits(node, _prod(a["kernel_size"]), kernel="depthwise", depthwise=True)
    return KerasEmission(layer("DepthwiseConv2D", node, size(a["kernel_size"]), strides=_strides(a),
                               padding=_pad(a["padding"]),
                               depth_multiplier=None if a["depth_multiplier"] == 1 else lit(a["depth_multiplier"]),
                               dilation_rate=_dilation(a), use_bias=None if a["use_bias"] else "False", **inits),
                         helpers=_helpers(inits))


@emitter("conv_transpose1d", "conv_transpose2d")
def emit_conv_transpose_keras(node: Node) -> KerasEmission:
    a = node.attrs
    cls = f"Conv{node.op[-2]}DTranspose"
    # torch computes fan_in from weight (in, out, *k) as out * prod(k), as Keras does for (*k, out, in)
    inits = _torch_inits(node, a["filters"] * _prod(a["kernel_size"]))
    return KerasEmission(layer(cls, node, lit(a["filters"]), size(a["kernel_size"]), strides=_strides(a),
                               padding=_pad(a["padding"]),
                               output_padding=None if a["output_padding"] is None else size(a["output_padding"]),
                               dilation_rate=_dilation(a), use_bias=None if a["use_bias"] else "False", **inits),
                         helpers=_helpers(inits))


# ---------------------------------------------------------------------------------
# Pooling, padding, resampling
# ---------------------------------------------------------------------------------
@emitter("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d")
def emit_pool_keras(node: Node) -> KerasEmission:
    a = node.attrs
    kind = "Max" if node.op.startswith("max") else "Average"
    cls = f"{kind}Pooling{node.op[-2]}D"
    strides = None if a["strides"] == a["pool_size"] else size(a["strides"])
    return KerasEmission(layer(cls, node, size(a["pool_size"]), strides=strides, padding=_pad(a["padding"])))


@emitter("global_avg_pool1d", "global_avg_pool2d", "global_avg_pool3d",
         "global_max_pool1d", "global_max_pool2d", "global_max_pool3d")
def emit_global_pool_keras(node: Node) -> KerasEmission:
    kind = "Average" if "avg" in node.op else "Max"
    cls = f"Global{kind}Pooling{node.op[-2]}D"
    return KerasEmission(layer(cls, node, keepdims="True" if node.attrs["keepdims"] else None))


def _pairs(pairs) -> str:
    if len(pairs) == 1:
        return lit(tuple(pairs[0]))
    return lit(tuple(tuple(p) for p in pairs))


@emitter("pad1d", "pad2d", "pad3d")
def emit_pad_keras(node: Node) -> KerasEmission:
    a = node.attrs
    mode, value = a.get("mode", "constant"), a.get("value", 0.0)
    if mode == "constant" and value == 0.0:
        return KerasEmission(layer(f"ZeroPadding{node.op[-2]}D", node, _pairs(a["pads"])))
    # reflection (or a constant other than 0): keras.ops.pad, the pads on the spatial axes of
    # the (channels-last) input
    x = node.inputs[0]
    widths = [[0, 0] for _ in x.shape]
    spatial = [i for i, letter in enumerate(x.layout or "") if letter not in "NC"]
    for axis, (b, e) in zip(spatial, a["pads"]):
        widths[axis] = [b, e]
    extra = f', mode="{mode}"' if mode != "constant" else f", constant_values={lit(value)}"
    text = "[" + ", ".join(f"[{lit(b)}, {lit(e)}]" for b, e in widths) + "]"  # (sizes: their expressions)
    return ops_call("pad", lambda: f"{text}{extra}")


@emitter("pixel_shuffle")
def emit_pixel_shuffle_keras(node: Node) -> KerasEmission:
    """torch's PixelShuffle → the generated ``PixelShuffle`` layer (torch's channel order,
    channels-last, any image size: transpiler/runtime/keras/layers.py)."""
    return KerasEmission(layer("PixelShuffle", node, lit(node.attrs["factor"])).removeprefix("layers."),
                         helpers=("PixelShuffle",))


@emitter("crop1d", "crop2d", "crop3d")
def emit_crop_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer(f"Cropping{node.op[-2]}D", node, _pairs(node.attrs["cropping"])))


@emitter("upsample1d", "upsample2d")
def emit_upsample_keras(node: Node) -> KerasEmission:
    a = node.attrs
    if node.op == "upsample1d":
        return KerasEmission(layer("UpSampling1D", node, lit(a["size"][0])))
    interp = None if a["interpolation"] == "nearest" else lit(a["interpolation"])
    return KerasEmission(layer("UpSampling2D", node, size(a["size"]), interpolation=interp))


# ---------------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------------
@emitter("flatten")
def emit_flatten_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer("Flatten", node))


@emitter("reshape")
def emit_reshape_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer("Reshape", node, lit(tuple(node.attrs["shape"]))))


@emitter("transpose")
def emit_transpose_keras(node: Node) -> KerasEmission:
    perm = node.attrs["perm"]
    if perm[0] % len(perm) != 0:  # (a Permute keeps the batch axis first: a graph without one)
        return KerasEmission(call=lambda ins: f"keras.ops.transpose({ins[0]}, {lit(tuple(perm))})")
    return KerasEmission(layer("Permute", node, lit(tuple(p for p in perm[1:]))))


@emitter("repeat_vector")
def emit_repeat_vector_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer("RepeatVector", node, lit(node.attrs["n"])))


@emitter("identity")
def emit_identity_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer("Identity", node))


# ---------------------------------------------------------------------------------
# Regularisation and normalisation
# ---------------------------------------------------------------------------------
@emitter("dropout")
def emit_dropout_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer("Dropout", node, lit(node.attrs["rate"])))


@emitter("spatial_dropout")
def emit_spatial_dropout_keras(node: Node) -> KerasEmission:
    rank = len(node.inputs[0].shape) - 2
    return KerasEmission(layer(f"SpatialDropout{rank}D", node, lit(node.attrs["rate"])))


def _round(x: float) -> float:
    return float(f"{x:.10g}")


@emitter("batch_norm")
def emit_batch_norm_keras(node: Node) -> KerasEmission:
    a = node.attrs
    return KerasEmission(layer("BatchNormalization", node, axis=None if a["axis"] == -1 else lit(a["axis"]),
                               momentum=lit(_round(a["momentum"])), epsilon=lit(a["epsilon"]),
                               center=None if a["center"] else "False", scale=None if a["scale"] else "False",
                               **_drawn_inits(node, ("gamma", "beta"))))


@emitter("layer_norm")
def emit_layer_norm_keras(node: Node) -> KerasEmission:
    a = node.attrs
    axis = a["axis"]
    axis_text = None if tuple(axis) == (-1,) else lit(list(axis)).replace("(", "[").replace(")", "]")
    return KerasEmission(layer("LayerNormalization", node, axis=axis_text, epsilon=lit(a["epsilon"]),
                               center=None if a["center"] else "False", scale=None if a["scale"] else "False",
                               **_drawn_inits(node, ("gamma", "beta"))))


@emitter("rescaling")
def emit_rescaling_keras(node: Node) -> KerasEmission:
    a = node.attrs
    return KerasEmission(layer("Rescaling", node, lit(a["scale"]), offset=None if not a["offset"] else lit(a["offset"])))


# ---------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------
@emitter("relu")
def emit_relu_keras(node: Node) -> KerasEmission:
    a = node.attrs
    return KerasEmission(layer("ReLU", node, max_value=None if a["max_value"] is None else lit(a["max_value"]),
                               negative_slope=None if not a["negative_slope"] else lit(a["negative_slope"]),
                               threshold=None if not a["threshold"] else lit(a["threshold"])))


for _op in ("sigmoid", "hard_sigmoid", "hard_silu", "tanh", "selu", "silu", "softplus", "softsign"):
    emitter(_op)((lambda name: lambda node: KerasEmission(layer("Activation", node, repr(name))))(_op))


@emitter("gelu")
def emit_gelu_keras(node: Node) -> KerasEmission:
    if node.attrs["approximate"]:
        return ops_call("gelu", lambda: "approximate=True")
    return KerasEmission(layer("Activation", node, '"gelu"'))


@emitter("elu")
def emit_elu_keras(node: Node) -> KerasEmission:
    alpha = node.attrs["alpha"]
    return KerasEmission(layer("ELU", node, alpha=None if alpha == 1.0 else lit(alpha)))


@emitter("leaky_relu")
def emit_leaky_relu_keras(node: Node) -> KerasEmission:
    return KerasEmission(layer("LeakyReLU", node, negative_slope=lit(node.attrs["negative_slope"])))


@emitter("prelu")
def emit_prelu_keras(node: Node) -> KerasEmission:
    shared = node.attrs["shared_axes"]
    init = node.from_torch.alpha_init
    return KerasEmission(layer("PReLU", node,
                               alpha_initializer=None if init is None else f"keras.initializers.Constant({init!r})",
                               shared_axes=None if shared is None else repr(list(shared))))


@emitter("softmax")
def emit_softmax_keras(node: Node) -> KerasEmission:
    axis = node.attrs["axis"] % len(node.inputs[0].shape)
    last = len(node.inputs[0].shape) - 1
    return KerasEmission(layer("Softmax", node, axis=None if axis == last else lit(axis)))


@emitter("log_softmax")
def emit_log_softmax_keras(node: Node) -> KerasEmission:
    axis = node.attrs["axis"] % len(node.inputs[0].shape)
    last = len(node.inputs[0].shape) - 1
    return ops_call("log_softmax", lambda: f"axis={-1 if axis == last else axis}")


# ---------------------------------------------------------------------------------
# Merges
# ---------------------------------------------------------------------------------
def _reads_constant(node: Node) -> bool:
    """A number, or a value without the batch axis (a model's own weight, what is computed
    from it), is an operand: a merge layer takes batched tensors of one shape only, the
    operator broadcasts."""
    return any((v.producer is not None and v.producer.op == "constant") or not v.shape or v.shape[0] is not None
               for v in node.inputs)


_NUMBER_FORMS = {"add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
                 "maximum": "keras.ops.maximum({0}, {1})", "minimum": "keras.ops.minimum({0}, {1})"}


def _merge_layer(op: str, cls: str) -> Emitter:
    def emit_merge_keras(node: Node) -> KerasEmission:
        if _reads_constant(node) and len(node.inputs) == 2:  # a merge layer takes tensors only
            return KerasEmission(call=lambda ins: _NUMBER_FORMS[op].format(*ins))
        return KerasEmission(layer(cls, node), merge=True)

    return emit_merge_keras


for _op, _cls in (("add", "Add"), ("subtract", "Subtract"), ("multiply", "Multiply"), ("average", "Average"),
                  ("maximum", "Maximum"), ("minimum", "Minimum")):
    emitter(_op)(_merge_layer(_op, _cls))


@emitter("concat")
def emit_concat_keras(node: Node) -> KerasEmission:
    rank = len(node.inputs[0].shape)
    axis = node.attrs["axis"] % rank
    return KerasEmission(layer("Concatenate", node, axis=None if axis == rank - 1 else lit(axis)), merge=True)


# ---------------------------------------------------------------------------------
# Embedding and recurrent layers
# ---------------------------------------------------------------------------------
@emitter("embedding")
def emit_embedding_keras(node: Node) -> KerasEmission:
    a = node.attrs
    pad = node.from_torch.padding_idx
    # torch draws embeddings from N(0, 1); Keras from U(-0.05, 0.05) (--exact: torch's)
    init = "keras.initializers.RandomNormal(stddev=1.0)" if differences.exact() else None
    init = _drawn_inits(node, ("embeddings",)).get("embeddings_initializer", init)
    if init is None:
        differences.replaced("initializers")
    if pad is None:
        return KerasEmission(layer("Embedding", node, lit(a["input_dim"]), lit(a["output_dim"]),
                                   embeddings_initializer=init))
    return KerasEmission(layer("PaddingEmbedding", node, lit(a["input_dim"]), lit(a["output_dim"]),
                               padding_idx=lit(pad), embeddings_initializer=init).removeprefix("layers."),
                         helpers=("PaddingEmbedding",))


_RNN_CLASS = {"lstm": "LSTM", "gru": "GRU", "simple_rnn": "SimpleRNN"}


def _rnn_args(op: str, a: dict) -> dict:
    # --exact: torch draws every RNN weight from U(±1/sqrt(units)) (its two biases are summed:
    # the folded Keras bias starts narrower-tailed than torch's sum of two uniforms)
    inits = {}
    differences.replaced("initializers")
    if differences.exact():
        init = f"torch_uniform_init({lit(a['units'])})"  # (a size: its expression)
        inits = {"kernel_initializer": init, "recurrent_initializer": init,
                 "bias_initializer": init if a["use_bias"] else None}
        if op == "lstm":
            inits["unit_forget_bias"] = "False"  # Keras adds 1 to the forget gate's bias by default
    return {**inits, "use_bias": None if a["use_bias"] else "False",
            "return_sequences": "True" if a["return_sequences"] else None,
            "return_state": "True" if a["return_state"] else None,
            "go_backwards": "True" if a["go_backwards"] else None}


@emitter("simple_rnn", "lstm", "gru")
def emit_rnn_keras(node: Node) -> KerasEmission:
    a = node.attrs
    if a["masked"]:
        raise NotImplementedError(f"{_RNN_CLASS[node.op]} over a masked sequence from a PyTorch source")

    def args(ins):  # the states after x, each (N, units) as Keras takes them
        return f"{ins[0]}, initial_state=[{', '.join(ins[1:])}]"

    kwargs = _rnn_args(node.op, a)
    return KerasEmission(layer(_RNN_CLASS[node.op], node, lit(a["units"]), **kwargs),
                         helpers=_helpers(kwargs), args=args if a["initial_state"] else None)


@emitter("conv_lstm2d")
def emit_conv_lstm2d_keras(node: Node) -> KerasEmission:
    a = node.attrs
    return KerasEmission(layer("ConvLSTM2D", node, lit(a["filters"]), size(a["kernel_size"]), strides=_strides(a),
                               padding=_pad(a["padding"]), dilation_rate=_dilation(a),
                               activation=None if a["activation"] == "tanh" else repr(a["activation"]),
                               use_bias=None if a["use_bias"] else "False",
                               unit_forget_bias=None if a["unit_forget_bias"] else "False",
                               return_sequences="True" if a["return_sequences"] else None,
                               go_backwards="True" if a["go_backwards"] else None))


@emitter("bidirectional")
def emit_bidirectional_keras(node: Node) -> KerasEmission:
    inner = node.attrs["layer"]
    a = inner["attrs"]
    args = _rnn_args(inner["op"], a)
    parts = [lit(a["units"])] + [f"{k}={v}" for k, v in args.items() if v is not None]
    inner_text = f"layers.{_RNN_CLASS[inner['op']]}({', '.join(parts)})"
    mode = node.attrs["merge_mode"]
    return KerasEmission(layer("Bidirectional", node, inner_text,
                               merge_mode=None if mode == "concat" else ("None" if mode == "none" else repr(mode))),
                         helpers=_helpers(args))


# ---------------------------------------------------------------------------------
# Attention and more normalisation
# ---------------------------------------------------------------------------------
@emitter("multi_head_attention")
def emit_multi_head_attention_keras(node: Node) -> KerasEmission:
    a = node.attrs
    roles = a["extra_inputs"]
    torch_masks = set(roles) & set(TORCH_MASK_ROLES)
    if set(roles) - {"key", *TORCH_MASK_ROLES} or a["use_causal_mask"]:
        raise NotImplementedError("MultiHeadAttention with Keras masks from a PyTorch source")
    # (initial weights: Keras' glorot on the einsum kernels, not torch's xavier on in_proj_weight)

    def args(ins):
        # (torch's masks by their names: the TorchMaskAttention helper reads them torch's way)
        return ", ".join([ins[0], ins[1]] + [f"{role}={x}" for role, x in zip(roles, ins[2:])])

    text = layer("TorchMaskAttention" if torch_masks else "MultiHeadAttention", node, num_heads=lit(a["num_heads"]),
                 key_dim=lit(a["key_dim"]), value_dim=None if a["value_dim"] is None else lit(a["value_dim"]),
                 output_shape=None if a["output_dim"] is None else lit(a["output_dim"]),
                 use_bias=None if a["use_bias"] else "False",
                 # (a rate the constructor takes prints as its name: no truth test of it)
                 dropout=lit(a["dropout"]) if hasattr(a["dropout"], "expr") or a["dropout"] else None)
    if torch_masks:
        return KerasEmission(text.removeprefix("layers."), helpers=("TorchMaskAttention",), args=args)
    return KerasEmission(text, args=args)


#: ``extra_inputs`` roles of multi_head_attention holding PyTorch's masks (ir/ops.py)
TORCH_MASK_ROLES = ("attn_mask", "key_padding_mask")


@emitter("rms_norm")
def emit_rms_norm_keras(node: Node) -> KerasEmission:
    a = node.attrs
    axis = a["axis"]
    axis_text = None if tuple(axis) == (-1,) else lit(list(axis)).replace("(", "[").replace(")", "]")
    return KerasEmission(layer("RMSNormalization", node, axis=axis_text, epsilon=lit(a["epsilon"])))


@emitter("group_norm")
def emit_group_norm_keras(node: Node) -> KerasEmission:
    a = node.attrs
    rank = len(node.inputs[0].shape)
    axis = a["axis"] % rank
    return KerasEmission(layer("GroupNormalization", node, groups=lit(a["groups"]),
                               axis=None if axis == rank - 1 else lit(axis), epsilon=lit(a["epsilon"]),
                               center=None if a["center"] else "False", scale=None if a["scale"] else "False",
                               **_drawn_inits(node, ("gamma", "beta"))))


@emitter("random_normal")
def emit_random_normal_keras(node: Node) -> KerasEmission:
    """Noise (torch.randn_like) → a ``NormalNoise`` layer with its own seed generator
    (``keras.random.normal`` takes a static shape, the batch size is the input's)."""
    a = node.attrs
    return KerasEmission(layer("NormalNoise", node, lit(tuple(a["shape"])), mean=lit(a["mean"]) if a["mean"] else None,
                               stddev=None if a["stddev"] == 1.0 else lit(a["stddev"])).removeprefix("layers."),
                         helpers=("NormalNoise",))


@emitter("training_select")
def emit_training_select_keras(node: Node) -> KerasEmission:
    """``if self.training:`` in forward → a ``TrainingSelect`` layer over both branches'
    results (a functional graph has no branches; the layer reads Keras' ``training``)."""
    return KerasEmission(layer("TrainingSelect", node).removeprefix("layers."), merge=True,
                         helpers=("TrainingSelect",), mode_select=True)


@emitter("variable")
def emit_variable_keras(node: Node) -> KerasEmission:
    """A module's own nn.Parameter or buffer → a ``ModelWeight`` layer (``add_weight``),
    initialised as torch initialised it."""
    a = node.attrs
    init = node.from_torch.init
    computed = init is not None and init[0] == "computed"  # (a constant of __init__: numpy code)
    return KerasEmission(f"ModelWeight({lit(tuple(a['shape']))}, "
                         f"initializer={keras_initializer(init)}"
                         f"{'' if a['trainable'] else ', trainable=False'}, name=\"{node.name}\")",
                         helpers=("ModelWeight", "set_items") if computed and init[2] else ("ModelWeight",),
                         imports=("import numpy as np",) if computed else ())


def keras_initializer(init: tuple | None) -> str:
    """The Keras initializer drawing what torch drew (``torch_params``' ``init``)."""
    if init is None or init[0] == "zeros":
        return '"zeros"'
    kind = init[0]
    if kind == "computed":  # ("computed", tokens, uses set_items): the torch code's numbers, in numpy
        text = numpy_text("".join(t if isinstance(t, str) else code_lit(t) for t in init[1]))
        return f"keras.initializers.Constant({text})"
    if kind == "ones":
        return '"ones"'
    if kind == "constant":
        return f"keras.initializers.Constant({lit(init[1])})"
    if kind == "uniform":
        return f"keras.initializers.RandomUniform({lit(init[1])}, {lit(init[2])})"
    cls = "RandomNormal" if kind == "normal" else "TruncatedNormal"
    return f"keras.initializers.{cls}(mean={lit(init[1])}, stddev={lit(init[2])})"


# Tensor math: keras.ops expressions (and Python operators)
# ---------------------------------------------------------------------------------
@emitter("constant")
def emit_constant_keras(node: Node) -> KerasEmission:
    value = node.attrs["value"]
    text = lit(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        text = f"({text})"
    return KerasEmission(call=lambda ins: text)


for _op, _form in (("divide", "{0} / {1}"), ("power", "{0} ** {1}"), ("matmul", "{0} @ {1}"),
                   ("greater", "{0} > {1}"), ("greater_equal", "{0} >= {1}"), ("less", "{0} < {1}"),
                   ("less_equal", "{0} <= {1}"), ("equal", "keras.ops.equal({0}, {1})"),
                   ("not_equal", "keras.ops.not_equal({0}, {1})"), ("negative", "-{0}"),
                   ("abs", "keras.ops.abs({0})"), ("square", "keras.ops.square({0})"),
                   ("sqrt", "keras.ops.sqrt({0})"), ("rsqrt", "keras.ops.rsqrt({0})"), ("exp", "keras.ops.exp({0})"),
                   ("log", "keras.ops.log({0})"), ("sin", "keras.ops.sin({0})"), ("cos", "keras.ops.cos({0})"),
                   ("where", "keras.ops.where({0}, {1}, {2})")):
    emitter(_op)((lambda form: lambda node: KerasEmission(call=lambda ins: form.format(*ins)))(_form))


@emitter("clip")
def emit_clip_keras(node: Node) -> KerasEmission:
    lo, hi = node.attrs["min"], node.attrs["max"]
    if lo is not None and hi is not None:
        return ops_call("clip", lambda: f"{lit(lo)}, {lit(hi)}")
    if lo is not None:
        return ops_call("maximum", lambda: lit(lo))
    if hi is not None:
        return ops_call("minimum", lambda: lit(hi))
    return KerasEmission(call=lambda ins: ins[0])


@emitter("full_like")
def emit_full_like_keras(node: Node) -> KerasEmission:
    a = node.attrs
    dtype = f'dtype="{a["dtype"]}"' if a["dtype"] else ""
    if a["value"] in (0.0, 1.0):
        return ops_call("zeros_like" if a["value"] == 0.0 else "ones_like", (lambda: dtype) if dtype else None)
    return ops_call("full_like", lambda: ", ".join([lit(a["value"])] + ([dtype] if dtype else [])))


@emitter("einsum")
def emit_einsum_keras(node: Node) -> KerasEmission:
    # the operands arrive in the source (torch) layout: the same equation holds
    return KerasEmission(call=lambda ins: f"keras.ops.einsum({lit(node.attrs['equation'])}, {', '.join(ins)})")


@emitter("cast")
def emit_cast_keras(node: Node) -> KerasEmission:
    return ops_call("cast", lambda: f'"{node.attrs["dtype"]}"')


def _axis_text(node: Node, axes) -> str:
    """Axes for keras.ops, the last one as -1."""
    rank = len(node.inputs[0].shape)
    items = tuple(-1 if a % rank == rank - 1 else a % rank for a in ((axes,) if isinstance(axes, int) else axes))
    return lit(items[0]) if len(items) == 1 else lit(items)


_KERAS_REDUCTIONS = {"reduce_mean": "mean", "reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min",
                     "argmax": "argmax", "argmin": "argmin"}


@emitter("reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "argmax", "argmin")
def emit_reduce_keras(node: Node) -> KerasEmission:
    fn = _KERAS_REDUCTIONS[node.op]
    axis = _axis_text(node, node.attrs["axis"])
    keep = ", keepdims=True" if node.attrs["keepdims"] else ""
    return ops_call(fn, lambda: f"axis={axis}{keep}")


def _new_axis_text(node: Node) -> str:
    return lit(new_axis_dim(node))


@emitter("expand_dims")
def emit_expand_dims_keras(node: Node) -> KerasEmission:
    return ops_call("expand_dims", lambda: _new_axis_text(node))


@emitter("squeeze")
def emit_squeeze_keras(node: Node) -> KerasEmission:
    return ops_call("squeeze", lambda: f"axis={_axis_text(node, node.attrs['axis'])}")


@emitter("stack")
def emit_stack_keras(node: Node) -> KerasEmission:
    return KerasEmission(call=lambda ins: f"keras.ops.stack([{', '.join(ins)}], axis={_new_axis_text(node)})")


@emitter("split")
def emit_split_keras(node: Node) -> KerasEmission:
    sizes = node.attrs["sizes"]
    axis = _axis_text(node, node.attrs["axis"])
    if len(set(sizes)) == 1:
        pieces = lit(len(sizes))
    else:  # keras.ops.split takes the indices where pieces start (numpy's convention)
        starts, total = [], 0
        for n in sizes[:-1]:
            total += n
            starts.append(total)
        pieces = repr(starts)
    return ops_call("split", lambda: f"{pieces}, axis={axis}")


@emitter("take")
def emit_take_keras(node: Node) -> KerasEmission:
    indices = node.attrs["indices"]
    text = lit(indices) if isinstance(indices, int) else repr(list(indices))
    return ops_call("take", lambda: f"{text}, axis={_axis_text(node, node.attrs['axis'])}")


@emitter("resizing")
def emit_resizing_keras(node: Node) -> KerasEmission:
    a = node.attrs
    height, width = a["size"]
    return KerasEmission(layer("Resizing", node, lit(height), lit(width),
                               interpolation=None if a["interpolation"] == "bilinear" else f'"{a["interpolation"]}"',
                               antialias="True" if a["antialias"] else None))


@emitter("extract_patches")
def emit_extract_patches_keras(node: Node) -> KerasEmission:
    a = node.attrs
    if not isinstance(a["padding"], str):
        raise NotImplementedError("extract_patches with explicit padding (keras_selection pads it first)")
    parts = [size(a["kernel_size"])]
    if a["strides"] != a["kernel_size"]:
        parts.append(f"strides={size(a['strides'])}")
    if set(a["dilation"]) != {1}:
        parts.append(f"dilation_rate={size(a['dilation'])}")
    if a["padding"] != "valid":
        parts.append(f'padding="{a["padding"]}"')
    return ops_call("image.extract_patches", lambda: ", ".join(parts))


@emitter("slice")
def emit_slice_keras(node: Node) -> KerasEmission:
    index = subscript_text(node)
    rank = len(node.inputs[0].shape)
    last = max(ax % rank for ax in node.attrs["axes"])
    if index.startswith("...") and last != rank - 1:
        # ``...`` stands for the axes before the last one only: an inner axis is spelled out
        index = ", ".join([":"] * last + [index[len("..., "):]])
    if "," not in index:  # (a KerasTensor takes a tuple key, not one slice: x[:3, ...])
        index += ", ..."
    return KerasEmission(call=lambda ins: f"{ins[0]}[{index}]")


from transpiler.printers.keras import ops_tensors  # noqa: E402,F401  (registers its emitters)
