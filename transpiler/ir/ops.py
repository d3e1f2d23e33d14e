"""The ops table: every canonical op declared once.

Each entry gives the op's inputs, its typed attributes with defaults in one syntax
(``"name: type = default"``), its params with their canonical layouts (letters, as in
``"kernel: HWIO"``; ``"bias: O if use_bias"`` exists only when ``use_bias`` holds), and its
layout class (the letters are resolved to shapes in ``ir/params.py``):

* ``implicit``: computes on a feature map whose channel axis the layout tag says
  (conv, pooling, padding); the target may require channels-first.
* ``transparent``: element-wise, any layout in, the same layout out (relu, add).
* ``attribute``: like transparent, but attributes name axes (``axis_attrs``) and are
  rewritten when the layout changes (concat axis, softmax axis, batch-norm axis).
* ``terminate``: needs the tensor in the source layout (reshape, flatten, RNNs, dense
  on a feature map).

Attribute spellings are unified across frameworks (MMdnn): ``momentum`` is always the
fraction of the old running value kept, spatial sizes are tuples of length rank, axes
count the batch axis as 0 in the layout of the value they apply to, ``padding`` is
``"valid"``, ``"same"`` or explicit ``((before, after), ...)`` per spatial axis.
Passes read these facts from the table; they do not branch on op names
(``tests/test_layout_pass.py`` checks it). Besides the layout class, an entry may say:
``shape="same"`` (output shaped like the input), ``dtype`` (a fixed output dtype),
``states``/``gates`` (a recurrent layer's state tensors and gate blocks per unit),
``per_channel_attrs`` (attributes holding one value per channel), ``element_order`` (reads
only the order of its input's numbers), ``features_in_params`` (a permutation of the
input or output features can move into the params), ``pooling`` (max or avg),
``non_negative`` (True or a condition on the attributes), ``literal``, ``perm_attr``,
``probabilities`` (softmax/sigmoid: what a cross-entropy may read as logits) and
``sparse_gradient`` (an embedding lookup's per-row gradient slices), ``ids_below`` and
``vocabulary_attr`` (what the first input of a lookup holds: ids below an attribute, tokens of
a vocabulary).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import Enum
from typing import Any

IMPLICIT = "implicit"
TRANSPARENT = "transparent"
ATTRIBUTE = "attribute"
TERMINATE = "terminate"
LAYOUT_CLASSES = (IMPLICIT, TRANSPARENT, ATTRIBUTE, TERMINATE)

ATTR_TYPES = ("int", "float", "bool", "str", "ints", "sizes", "floats", "axis", "axes", "pads", "any")


class _Required(Enum):
    REQUIRED = "required"


REQUIRED = _Required.REQUIRED


@dataclass(frozen=True)
class Attr:
    """A typed attribute; ``default`` is REQUIRED when the frontend must supply it."""

    name: str
    type: str
    default: Any = REQUIRED

    def check(self, value: Any, rank: int | None = None) -> Any:
        """Normalise ``value`` to this attribute's type or raise TypeError.

        ``sizes`` are per-spatial-axis ints: a single int is repeated ``rank`` times.
        """
        t = self.type
        if t == "sizes" and value is not None:
            value = Attr(self.name, "ints").check(value)
            if rank is not None and len(value) == 1:
                value = value * rank
            if rank is not None and len(value) != rank:
                raise TypeError(f"attribute {self.name} wants {rank} sizes, got {value!r}")
            return value
        if value is None:
            if self.default is None or t == "any":
                return None
            raise TypeError(f"attribute {self.name} may not be None")
        if t == "int" or t == "axis":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"attribute {self.name} wants an int, got {value!r}")
            return value
        if t == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"attribute {self.name} wants a float, got {value!r}")
            # (a number with provenance, sizes.Scalar, keeps its name: a rate the constructor takes)
            return value if isinstance(value, float) and type(value) is not float and hasattr(value, "expr") \
                else float(value)
        if t == "bool":
            if not isinstance(value, bool):
                raise TypeError(f"attribute {self.name} wants a bool, got {value!r}")
            return value
        if t == "str":
            if not isinstance(value, str):
                raise TypeError(f"attribute {self.name} wants a str, got {value!r}")
            return value
        if t in ("ints", "axes"):
            if isinstance(value, int) and not isinstance(value, bool):
                return (value,)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                raise TypeError(f"attribute {self.name} wants ints, got {value!r}")
            return tuple(value)
        if t == "floats":
            if isinstance(value, (int, float)):
                return (float(value),)
            return tuple(float(v) for v in value)
        if t == "pads":
            if isinstance(value, str):
                return value
            # (an int stays itself: a size with provenance keeps its name)
            return tuple(tuple(x if isinstance(x, int) and not isinstance(x, bool) else int(x) for x in pair)
                         for pair in value)
        return value


@dataclass(frozen=True)
class Param:
    """A parameter tensor in its canonical layout; ``when`` names a bool attr gating it."""

    name: str
    layout: str
    when: str | None = None
    trainable: bool = True


@dataclass(frozen=True)
class OpSpec:
    """One canonical op."""

    name: str
    inputs: tuple[str, ...]
    variadic: bool
    attrs: dict[str, Attr]
    params: tuple[Param, ...]
    layout: str
    axis_attrs: tuple[str, ...] = ()
    doc: str = ""
    wraps: bool = False
    rank: int | None = None
    #: an implicit op that computes as well on a channels-last input (its rule and emitters
    #: read the layout tag): the layout pass leaves such an input as it arrives
    any_layout: bool = False
    #: "same": the output has the input's shape and layout (the shape rule is ``_same``)
    shape: str = ""
    #: the dtype of every output whatever the inputs' ("" = the rule decides)
    dtype: str = ""
    #: a recurrent layer: state tensors it carries (h; h and c) and gate blocks per unit
    states: int = 0
    gates: int = 0
    #: attributes that may hold one value per channel (the source layout's last axis):
    #: such an op is element-wise only per channel, so a permutation of that axis (a
    #: Flatten's order) may not pass through it
    per_channel_attrs: tuple[str, ...] = ()
    #: a terminate op that reads only the order of its input's numbers (flatten, reshape):
    #: a permutation of that order can move into a neighbouring op's params or attributes
    element_order: bool = False
    #: y = x @ kernel over the last axis: params whose layout letter ``I`` indexes the input
    #: features and ``O`` the output features, so a fixed permutation of either axis is
    #: applied to those params once instead of to the tensor at run time
    features_in_params: bool = False
    #: the window reduction of a pooling op ("max" pads with -inf, "avg" leaves pads out)
    pooling: str = ""
    #: the output is never negative: True, or a condition on the attributes (as a param's ``when``)
    non_negative: bool | str = False
    #: a Python literal operand (no inputs, no params): printers write it inline at its reader
    literal: bool = False
    #: the attribute holding an axis permutation (out = x.permute(perm)) of a pure permute op
    perm_attr: str = ""
    #: the output is probabilities made from logits: "categorical" (normalised over the axes
    #: of ``axis_attrs``) or "binary" (element-wise); a cross-entropy loss expecting that kind
    #: (``ir.training.CROSS_ENTROPY``) may read the logits instead (ir/passes/training_analyses.py)
    probabilities: str = ""
    #: the params' gradient is a gather of rows: Keras' TensorFlow backend hands it to the
    #: optimizer one slice per row looked up (tf.IndexedSlices), repeats not summed
    sparse_gradient: bool = False
    #: what the op does with its operands' numbers: "computes" (arithmetic; a boolean operand,
    #: or an integer one for a float result, is promoted to the result's dtype first, as both
    #: frameworks promote), "moves" (only moves, selects or copies them: an output dtype other
    #: than the input's is a cast after), "" (neither fact is declared)
    numbers: str = ""
    #: the attribute below whose value the integer ids of the op's first input lie (an
    #: embedding's ``input_dim``): the ids a test input for it may hold
    ids_below: str = ""
    #: the op's first input holds tokens (strings, or integers) of a vocabulary: the attribute
    #: whose config lists it (``attrs[name]["vocabulary"]``; None or absent when computed from
    #: data): the tokens a test input for it may hold
    vocabulary_attr: str = ""
    #: the op runs differently in training: the mode it runs in when no call says (Keras'
    #: default of the layer's ``training`` flag: True for image augmentation, False for
    #: dropout or batch statistics); None: the same in both modes (ir/training_modes.py)
    training_default: bool | None = None

    def holds(self, condition: bool | str, attrs: dict[str, Any]) -> bool:
        """A fact that is True, False or a condition on ``attrs`` (``non_negative``)."""
        return condition if isinstance(condition, bool) else _holds(condition, attrs)

    def complete_attrs(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` checked against the table, with defaults filled in."""
        unknown = set(given) - set(self.attrs)
        if unknown:
            raise TypeError(f"{self.name}: unknown attributes {sorted(unknown)}")
        out: dict[str, Any] = {}
        for name, attr in self.attrs.items():
            if name in given:
                out[name] = attr.check(given[name], self.rank)
            elif attr.default is REQUIRED:
                raise TypeError(f"{self.name}: attribute {name} is required")
            else:
                out[name] = attr.check(attr.default, self.rank) if attr.default is not None else None
        return out

    def active_params(self, attrs: dict[str, Any]) -> tuple[Param, ...]:
        """The params a node with ``attrs`` holds, in the table's order.

        A wrapper op (``wraps``) holds its inner layer's params twice, prefixed
        ``forward.`` and ``backward.``.
        """
        if self.wraps:
            inner = attrs["layer"]
            spec = get(inner["op"])
            return tuple(
                Param(f"{direction}.{p.name}", p.layout, None, p.trainable)
                for direction in ("forward", "backward")
                for p in spec.active_params(inner["attrs"])
            )
        return tuple(p for p in self.params if p.when is None or _holds(p.when, attrs))


_TABLE: dict[str, OpSpec] = {}


def _holds(condition: str, attrs: dict[str, Any]) -> bool:
    """A param's condition: ``attr`` (truthy) or ``attr == literal`` / ``attr != literal`` /
    ``attr >= literal``; conditions joined by `` and `` must all hold."""
    if " and " in condition:
        return all(_holds(part, attrs) for part in condition.split(" and "))
    if ">=" in condition:
        name, _, literal = condition.partition(">=")
        value = attrs.get(name.strip())
        return value is not None and value >= ast.literal_eval(literal.strip())
    for sym, want in (("==", True), ("!=", False)):
        if sym in condition:
            name, _, literal = condition.partition(sym)
            return (attrs.get(name.strip()) == ast.literal_eval(literal.strip())) is want
    return bool(attrs.get(condition))


def _parse_attrs(text: str) -> dict[str, Attr]:
    attrs: dict[str, Attr] = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        decl, _, default_text = item.partition("=")
        name, _, type_name = decl.partition(":")
        name, type_name = name.strip(), type_name.strip()
        if type_name not in ATTR_TYPES:
            raise ValueError(f"attr {name}: unknown type {type_name!r}")
        default = ast.literal_eval(default_text.strip()) if default_text else REQUIRED
        attrs[name] = Attr(name, type_name, default)
    return attrs


def _parse_params(text: str) -> tuple[Param, ...]:
    params = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        decl, _, cond = item.partition(" if ")
        name, _, layout = decl.partition(":")
        trainable = not name.strip().startswith("~")
        params.append(Param(name.strip().lstrip("~"), layout.strip(), cond.strip() or None, trainable))
    return tuple(params)


def op(
    name: str,
    *,
    inputs: str = "x",
    attrs: str = "",
    params: str = "",
    layout: str,
    axis_attrs: tuple[str, ...] = (),
    doc: str = "",
    wraps: bool = False,
    rank: int | None = None,
    any_layout: bool = False,
    **facts: Any,
) -> OpSpec:
    """Declare one op. ``inputs="*xs"`` means any number of inputs; ``~name`` is a
    non-trainable param (a buffer). ``facts`` are the further ``OpSpec`` fields the passes
    read (``shape``, ``states``, ``per_channel_attrs``, ...)."""
    if name in _TABLE:
        raise ValueError(f"op {name!r} declared twice")
    if layout not in LAYOUT_CLASSES:
        raise ValueError(f"op {name!r}: unknown layout class {layout!r}")
    names = tuple(i.strip() for i in inputs.split(",") if i.strip())
    variadic = any(n.startswith("*") for n in names)
    spec = OpSpec(
        name=name,
        inputs=tuple(n.lstrip("*") for n in names),
        variadic=variadic,
        attrs=_parse_attrs(attrs),
        params=_parse_params(params),
        layout=layout,
        axis_attrs=axis_attrs,
        doc=doc,
        wraps=wraps,
        rank=rank,
        any_layout=any_layout,
        **facts,
    )
    if spec.numbers not in ("", "computes", "moves"):
        raise ValueError(f"op {name!r}: numbers={spec.numbers!r} is not 'computes' or 'moves'")
    for a in (*axis_attrs, *spec.per_channel_attrs, *filter(None, [spec.perm_attr, spec.ids_below,
                                                                    spec.vocabulary_attr])):
        if a not in spec.attrs:
            raise ValueError(f"op {name!r}: attr {a!r} named by a fact is not declared")
    _TABLE[name] = spec
    return spec


def get(name: str) -> OpSpec:
    """The spec of op ``name``; KeyError if it is not in the table."""
    return _TABLE[name]


def all_ops() -> dict[str, OpSpec]:
    """The whole table, in declaration order."""
    return dict(_TABLE)


# ---------------------------------------------------------------------------------
# Dense and convolutions. Spatial attrs are tuples of length rank.
# ---------------------------------------------------------------------------------
op("dense", attrs="units: int; use_bias: bool = True",
   params="kernel: IO; bias: O if use_bias", layout=TERMINATE, features_in_params=True,
   doc="y = x @ kernel + bias over the last axis.")

_CONV = ("filters: int; kernel_size: sizes; strides: sizes = 1; padding: pads = 'valid'; "
         "dilation: sizes = 1; groups: int = 1; use_bias: bool = True")
for _rank, _sp in ((1, "W"), (2, "HW"), (3, "DHW")):
    op(f"conv{_rank}d", attrs=_CONV, params=f"kernel: {_sp}IO; bias: O if use_bias",
       layout=IMPLICIT, rank=_rank, doc=f"{_rank}-D convolution; kernel in = in_channels / groups.")
for _rank, _sp in ((1, "W"), (2, "HW")):
    op(f"conv_transpose{_rank}d",
       attrs="filters: int; kernel_size: sizes; strides: sizes = 1; padding: pads = 'valid'; "
             "dilation: sizes = 1; output_padding: sizes = None; use_bias: bool = True",
       params=f"kernel: {_sp}OI; bias: O if use_bias", layout=IMPLICIT, rank=_rank,
       doc=f"{_rank}-D transposed convolution (the gradient of conv{_rank}d).")
op("depthwise_conv2d",
   attrs="kernel_size: sizes; strides: sizes = 1; padding: pads = 'valid'; dilation: sizes = 1; "
         "depth_multiplier: int = 1; use_bias: bool = True",
   params="kernel: HWIM; bias: O if use_bias", layout=IMPLICIT, rank=2,
   doc="Per-channel convolution; output channel i*M + m comes from input channel i.")
op("separable_conv2d",
   attrs="filters: int; kernel_size: sizes; strides: sizes = 1; padding: pads = 'valid'; "
         "dilation: sizes = 1; depth_multiplier: int = 1; use_bias: bool = True",
   params="depthwise_kernel: HWIM; pointwise_kernel: 11KO; bias: O if use_bias", layout=IMPLICIT,
   rank=2,
   doc="depthwise_conv2d (no bias) then a 1x1 conv2d with bias.")

# ---------------------------------------------------------------------------------
# Pooling, padding, cropping, resampling.
# ---------------------------------------------------------------------------------
for _rank in (1, 2, 3):
    for _kind in ("max", "avg"):
        op(f"{_kind}_pool{_rank}d",
           attrs="pool_size: sizes; strides: sizes; padding: pads = 'valid'; ceil_mode: bool = False",
           layout=IMPLICIT, rank=_rank, pooling=_kind,
           doc=f"{_rank}-D {_kind} pooling; 'same' pads like conv; explicit padding is never "
               "counted in an average; ceil_mode keeps a last partial window.")
        if _rank == 1 and _kind == "avg":
            # Keras' GlobalAveragePooling1D honours an Embedding's mask (mask_zero=True)
            op("global_avg_pool1d", inputs="x, *mask", attrs="keepdims: bool = False; masked: bool = False",
               layout=IMPLICIT, rank=1, any_layout=True, pooling=_kind,
               doc="avg over the steps; ``masked``: a second input holds the token ids of an "
                   "Embedding(mask_zero=True), steps whose id is 0 are left out of the mean.")
            continue
        op(f"global_{_kind}_pool{_rank}d", attrs="keepdims: bool = False", layout=IMPLICIT, rank=_rank,
           any_layout=True, pooling=_kind,
           doc=f"{_kind} over all spatial axes.")
    op(f"pad{_rank}d", attrs="pads: pads; value: float = 0.0; mode: str = 'constant'", layout=IMPLICIT, rank=_rank,
       doc="Padding, ((before, after), ...) per spatial axis: constant (value), or 'reflect' (mirrored "
           "without repeating the edge: torch's ReflectionPad, numpy's 'reflect').")
    op(f"crop{_rank}d", attrs="cropping: pads", layout=IMPLICIT, rank=_rank,
       doc="Remove ((before, after), ...) per spatial axis.")
for _rank in (1, 2):
    op(f"upsample{_rank}d", attrs="size: sizes; interpolation: str = 'nearest'", layout=IMPLICIT,
       rank=_rank,
       doc="Repeat (nearest) or interpolate (bilinear, half-pixel centres) by an integer factor.")

# ---------------------------------------------------------------------------------
# Shape ops.
# ---------------------------------------------------------------------------------
op("flatten", numbers="moves", layout=TERMINATE, element_order=True, doc="Collapse all axes but the batch axis (source order).")
op("reshape", numbers="moves", attrs="shape: ints", layout=TERMINATE, element_order=True,
   doc="Reshape the non-batch axes to ``shape`` (in the source layout; -1 allowed).")
op("transpose", numbers="moves", attrs="perm: ints", layout=TERMINATE, perm_attr="perm",
   doc="Permute all axes, batch included: out = x.permute(perm).")
op("repeat_vector", numbers="moves", attrs="n: int", layout=TERMINATE, doc="(N, F) -> (N, n, F).")
op("identity", numbers="moves", layout=TRANSPARENT, shape="same", doc="Returns its input.")
op("variable", inputs="", attrs="shape: ints; trainable: bool = True", params="value: S", layout=TERMINATE,
   doc="A weight of a custom layer (Keras' ``add_weight``): its value, shape ``shape`` (no batch axis).")

# ---------------------------------------------------------------------------------
# Regularisation and normalisation.
# ---------------------------------------------------------------------------------
op("dropout", training_default=False, numbers="moves", attrs="rate: float", layout=TRANSPARENT, shape="same", doc="Element-wise dropout in training.")
op("spatial_dropout", training_default=False, attrs="rate: float", layout=IMPLICIT, shape="same",
   doc="Drops whole channels (one mask value per sample and channel).")
op("batch_norm", training_default=False,
   attrs="axis: axis = -1; momentum: float = 0.99; epsilon: float = 0.001; center: bool = True; "
         "scale: bool = True",
   params="gamma: C if scale; beta: C if center; ~moving_mean: C; ~moving_variance: C",
   layout=ATTRIBUTE, axis_attrs=("axis",), shape="same",
   doc="momentum = fraction of the old running statistic kept at each update.")
op("layer_norm",
   attrs="axis: axes = (-1,); epsilon: float = 0.001; center: bool = True; scale: bool = True",
   params="gamma: C if scale; beta: C if center", layout=ATTRIBUTE, axis_attrs=("axis",), shape="same",
   doc="Normalise over ``axis`` per sample.")
op("rescaling", attrs="scale: any; offset: any = 0.0", layout=TRANSPARENT, shape="same",
   per_channel_attrs=("scale", "offset"),
   doc="x * scale + offset; a tuple scale/offset holds one value per channel.")

# ---------------------------------------------------------------------------------
# Activations.
# ---------------------------------------------------------------------------------
op("relu", attrs="max_value: float = None; negative_slope: float = 0.0; threshold: float = 0.0",
   layout=TRANSPARENT, shape="same", non_negative="negative_slope == 0.0 and threshold >= 0.0",
   doc="Keras ReLU: slope below threshold, clipped at max_value.")
for _name in ("sigmoid", "hard_sigmoid", "tanh", "selu", "silu", "softplus", "softsign"):
    op(_name, layout=TRANSPARENT, shape="same", non_negative=_name in ("sigmoid", "softplus"),
       probabilities="binary" if _name == "sigmoid" else "")
op("hard_silu", layout=TRANSPARENT, shape="same", doc="x * hard_sigmoid(x) = x * relu6(x + 3) / 6 (torch's hardswish).")
op("gelu", attrs="approximate: bool = False", layout=TRANSPARENT, shape="same", doc="approximate=True is tanh.")
op("elu", attrs="alpha: float = 1.0", layout=TRANSPARENT, shape="same")
op("leaky_relu", attrs="negative_slope: float", layout=TRANSPARENT, shape="same")
op("prelu", attrs="shared_axes: axes = None", params="alpha: A", layout=ATTRIBUTE,
   axis_attrs=("shared_axes",), shape="same", doc="alpha has the input's non-batch shape (1 on shared axes).")
op("softmax", attrs="axis: axis = -1", layout=ATTRIBUTE, axis_attrs=("axis",), shape="same", non_negative=True,
   probabilities="categorical")
op("log_softmax", attrs="axis: axis = -1", layout=ATTRIBUTE, axis_attrs=("axis",), shape="same")

# ---------------------------------------------------------------------------------
# Merges.
# ---------------------------------------------------------------------------------
for _name, _doc in (("add", "sum"), ("subtract", "x0 - x1"), ("multiply", "product"),
                    ("average", "mean"), ("maximum", "max"), ("minimum", "min")):
    op(_name, inputs="*xs", layout=TRANSPARENT, numbers="computes", doc=f"Element-wise {_doc} of the inputs.")
op("concat", numbers="moves", inputs="*xs", attrs="axis: axis = -1", layout=ATTRIBUTE, axis_attrs=("axis",))

# ---------------------------------------------------------------------------------
# Embedding and recurrent layers (inputs (N, T, F) in every framework).
# ---------------------------------------------------------------------------------
op("embedding", attrs="input_dim: int; output_dim: int; mask_zero: bool = False",
   params="embeddings: VE", layout=TERMINATE, sparse_gradient=True, ids_below="input_dim")
op("index_lookup", attrs="kind: str; config: any = None; depth: int = None", layout=TERMINATE,
   vocabulary_attr="config",
   doc="Keras' StringLookup / IntegerLookup inside a model (``kind``), with the constructor's static "
       "arguments (``config``: a vocabulary given in the source): tokens (strings or integers) → ids "
       "(``output_mode='int'``, int64, the input's shape) or one_hot / multi_hot / count encodings of "
       "``depth`` slots (float32; one_hot replaces a last axis of 1).")
_RNN = ("units: int; return_sequences: bool = False; return_state: bool = False; "
        "go_backwards: bool = False; use_bias: bool = True; masked: bool = False; initial_state: bool = False; "
        "dropout: float = 0.0")
_MASKED = (" ``masked``: a second input holds the token ids of an Embedding(mask_zero=True); a step "
           "whose id is 0 is skipped (state carried over, the previous output repeated). "
           "``initial_state`` (never with ``masked``): the inputs after x are the states the "
           "recurrence starts from instead of zeros, each (N, units), Keras' order (h, and c for lstm). "
           "``dropout`` (training only): Keras' input dropout, one mask per sequence and input feature "
           "(the same at every step), scaled by 1 / (1 - dropout).")
op("simple_rnn", inputs="x, *extra", attrs=_RNN + "; activation: str = 'tanh'",
   params="kernel: IG; recurrent_kernel: UG; bias: G if use_bias", layout=TERMINATE, states=1, gates=1,
   doc="Gates G = units." + _MASKED)
op("lstm", inputs="x, *extra", attrs=_RNN + "; activation: str = 'tanh'; recurrent_activation: str = 'sigmoid'; "
                        "unit_forget_bias: bool = True",
   params="kernel: IG; recurrent_kernel: UG; bias: G if use_bias", layout=TERMINATE, states=2, gates=4,
   doc="Gates G = 4 units in the order i, f, c, o." + _MASKED)
op("gru", inputs="x, *extra", attrs=_RNN + "; activation: str = 'tanh'; recurrent_activation: str = 'sigmoid'; "
                       "reset_after: bool = True",
   params="kernel: IG; recurrent_kernel: UG; bias: BG if use_bias", layout=TERMINATE, states=1, gates=3,
   doc="Gates G = 3 units in the order z, r, h; bias rows (input, recurrent) with reset_after." + _MASKED)
op("conv_lstm2d", attrs="filters: int; kernel_size: sizes; strides: sizes = 1; padding: str = 'valid'; "
                        "dilation: sizes = 1; return_sequences: bool = False; go_backwards: bool = False; "
                        "use_bias: bool = True; activation: str = 'tanh'; recurrent_activation: str = 'sigmoid'; "
                        "unit_forget_bias: bool = True",
   params="kernel: HWIG; recurrent_kernel: HWUG; bias: G if use_bias", layout=IMPLICIT, rank=2, states=2, gates=4,
   doc="Keras' ConvLSTM2D: an LSTM whose gates are 2-D convolutions, over a sequence of feature maps "
       "(N, T, H, W, C) channels-last, (N, C, T, H, W) channels-first (time where Conv3D has depth). "
       "Gates G = 4 filters in the order i, f, c, o (U = filters); the input convolution has "
       "``strides``/``padding``/``dilation``, the recurrent one stride 1 and 'same' padding. Output "
       "(N, T, H', W', filters) with ``return_sequences``, else the last step's (N, H', W', filters); "
       "``go_backwards`` runs over the reversed sequence (outputs in that order).")
op("bidirectional", attrs="merge_mode: str = 'concat'; layer: any", layout=TERMINATE, wraps=True,
   doc="Runs ``layer`` (an rnn spec {'op', 'attrs'}) forwards and backwards; params are the "
       "layer's, prefixed 'forward.' and 'backward.'.")

# ---------------------------------------------------------------------------------
# Attention (inputs (N, T, F) in every framework). ``extra_inputs`` names the inputs after
# the first two, in order: "key" (a key tensor apart from the value), "attention_mask"
# (a (N, T, S) tensor, nonzero = attend), "query_mask"/"value_mask"/"key_mask" (the token
# ids of an Embedding(mask_zero=True): id 0 = padding), "attn_mask" / "key_padding_mask"
# (PyTorch's, read a PyTorch source only: boolean True = may NOT attend (-inf on the score),
# float = added to the scores; attn_mask (T, S) or (N * heads, T, S), key_padding_mask (N, S);
# a fully masked row is NaN, as in torch; the Keras printer's TorchMaskAttention helper).
# ---------------------------------------------------------------------------------
op("multi_head_attention", inputs="query, value, *extra",
   attrs="num_heads: int; key_dim: int; value_dim: int = None; output_dim: int = None; "
         "use_bias: bool = True; dropout: float = 0.0; use_causal_mask: bool = False; "
         "extra_inputs: any = ()",
   params="query_kernel: QNJ; query_bias: NJ if use_bias; key_kernel: YNJ; key_bias: NJ if use_bias; "
          "value_kernel: ZNL; value_bias: NL if use_bias; output_kernel: NLP; output_bias: P if use_bias",
   layout=TERMINATE,
   doc="Keras MultiHeadAttention over the sequence axis: per-head projections (einsum kernels "
       "(features, heads, size)), softmax(q k^T / sqrt(key_dim)) with masked scores set to a "
       "large negative number (a fully masked row attends uniformly), the heads joined by the "
       "output projection. value_dim None = key_dim, output_dim None = the query's features.")
op("attention", inputs="query, value, *extra",
   attrs="use_scale: bool = False; score_mode: str = 'dot'; dropout: float = 0.0; "
         "use_causal_mask: bool = False; extra_inputs: any = ()",
   params="scale:  if use_scale; concat_score_weight:  if score_mode == 'concat'", layout=TERMINATE,
   doc="Keras Attention (Luong): scores q k^T ('dot', times a scalar scale) or "
       "w * sum(tanh(scale * (q + k))) ('concat'); padded value steps get -1e9; a padded "
       "query step outputs 0. Scalar params.")
op("additive_attention", inputs="query, value, *extra",
   attrs="use_scale: bool = True; dropout: float = 0.0; use_causal_mask: bool = False; extra_inputs: any = ()",
   params="scale: I if use_scale", layout=TERMINATE,
   doc="Keras AdditiveAttention (Bahdanau): scores sum(scale * tanh(q + k)) over the features.")

# ---------------------------------------------------------------------------------
# More normalisation and preprocessing.
# ---------------------------------------------------------------------------------
op("rms_norm", attrs="axis: axes = (-1,); epsilon: float = 1e-06; scale: bool = True",
   params="gamma: C if scale", layout=ATTRIBUTE, axis_attrs=("axis",), shape="same",
   doc="x / sqrt(mean(x^2 over axis) + epsilon) * gamma (Keras RMSNormalization; "
       "LayerNormalization(rms_scaling=True)).")
op("group_norm",
   attrs="groups: int; axis: axis = -1; epsilon: float = 0.001; center: bool = True; scale: bool = True",
   params="gamma: C if scale; beta: C if center", layout=ATTRIBUTE, axis_attrs=("axis",), shape="same",
   doc="Normalise each group of consecutive channels over the channels and all non-batch axes.")
op("normalization",
   attrs="axis: axes = (-1,); mean: any = None; variance: any = None; invert: bool = False",
   params="~mean: X if mean == None; ~variance: X if mean == None; ~count:  if mean == None",
   layout=ATTRIBUTE, axis_attrs=("axis",), shape="same",
   doc="(x - mean) / max(sqrt(variance), 1e-7) with one statistic per index of the kept "
       "``axis`` (none = scalar); ``invert`` undoes it. mean/variance given in the source are "
       "constants; otherwise they are buffers set by adapt() (``count`` kept for Keras).")
op("random_augmentation", training_default=True, attrs="kind: str; config: any = None", layout=TRANSPARENT, shape="same",
   doc="A Keras preprocessing augmentation (RandomFlip, RandomRotation, ...): the identity "
       "at inference; in training the transformation ``kind`` with Keras' ``config``, or "
       "the identity with a diagnostic where no faithful form exists.")
op("resizing", attrs="size: sizes; interpolation: str = 'bilinear'; antialias: bool = False", layout=IMPLICIT,
   rank=2,
   doc="Resize the spatial axes to ``size`` (Keras Resizing, tf.image.resize: half-pixel centres; "
       "'nearest' rounds like TF; 'bicubic' only with antialias, TF's kernel).")
op("center_crop", attrs="size: sizes", layout=IMPLICIT, rank=2,
   doc="Crop the central ``size`` window of the spatial axes ((H - h) // 2 from the top).")

# ---------------------------------------------------------------------------------
# Tensor math: keras.ops / tf.* functions and Python operators on tensors.
# Scalars are attributes or ``constant`` operands, never params. Axes count the batch
# axis as 0, in the layout of the value they apply to (the layout pass rewrites them).
# ---------------------------------------------------------------------------------
op("constant", inputs="", attrs="value: any", layout=TRANSPARENT, literal=True,
   doc="A Python number used as an operand (rank 0; its reader broadcasts it).")
for _name, _doc in (("divide", "x / y"), ("power", "x ** y"), ("greater", "x > y"),
                    ("greater_equal", "x >= y"), ("less", "x < y"), ("less_equal", "x <= y"),
                    ("equal", "x == y"), ("not_equal", "x != y")):
    op(_name, inputs="x, y", layout=TRANSPARENT, numbers="computes" if _name in ("divide", "power") else "",
       doc=f"Element-wise {_doc}, broadcast (numpy rules).")
op("matmul", inputs="x, y", layout=TERMINATE, numbers="computes",
   doc="Matrix product over the last two axes, leading axes broadcast (numpy's matmul).")
for _name, _doc in (("negative", "-x"), ("abs", "|x|"), ("square", "x * x"), ("sqrt", "√x"),
                    ("rsqrt", "1 / √x"), ("exp", "e ** x"), ("log", "natural logarithm")):
    op(_name, layout=TRANSPARENT, doc=f"Element-wise {_doc}.")
op("clip", attrs="min: float = None; max: float = None", layout=TRANSPARENT,
   doc="Element-wise clamp to [min, max] (None: unbounded on that side).")
op("where", inputs="condition, x, y", layout=TRANSPARENT,
   doc="x where condition holds, else y (all three broadcast).")
op("training_select", training_default=False, inputs="train, infer", layout=TRANSPARENT,
   doc="``train`` while training, ``infer`` at inference: a branch on ``training`` in a Keras "
       "call() (``self.training`` in torch). The printers put each input's own computation "
       "inside its branch.")
op("cast", attrs="dtype: str", layout=TRANSPARENT,
   doc="Convert to ``dtype`` (float32, int64, bool, ...); float to int truncates toward zero.")
for _kind in ("mean", "sum", "max", "min"):
    op(f"reduce_{_kind}", attrs="axis: axes; keepdims: bool = False", layout=ATTRIBUTE, axis_attrs=("axis",),
       doc=f"{_kind.capitalize()} over ``axis`` (never the batch axis); keepdims leaves size-1 axes.")
for _kind in ("argmax", "argmin"):
    op(_kind, attrs="axis: axis; keepdims: bool = False", layout=ATTRIBUTE, axis_attrs=("axis",), dtype="int64",
       doc="Index (int64) of the first extreme value along ``axis``.")
op("expand_dims", numbers="moves", attrs="axis: axis; unbatched: bool = False", layout=TERMINATE,
   doc="Insert a size-1 axis at output position ``axis``; a channels-first input stays so "
       "when the new axis is a spatial one. ``unbatched``: the input has no batch axis (a mask "
       "made from ``ops.arange`` of a run-time length), so a new axis 0 is allowed before an "
       "axis of unknown size.")
op("squeeze", numbers="moves", attrs="axis: axes", layout=ATTRIBUTE, axis_attrs=("axis",),
   doc="Remove the size-1 axes ``axis``.")
op("stack", numbers="moves", inputs="*xs", attrs="axis: axis", layout=TERMINATE,
   doc="Stack equal-shaped inputs along a new output axis ``axis``.")
op("split", attrs="sizes: ints; axis: axis", layout=ATTRIBUTE, axis_attrs=("axis",),
   doc="One output per piece of ``sizes`` along ``axis`` (sizes add up to the axis).")
op("take", numbers="moves", attrs="indices: any; axis: axis", layout=ATTRIBUTE, axis_attrs=("axis",),
   doc="Static ``indices`` along ``axis``: an int drops the axis, a tuple keeps it.")
op("slice", numbers="moves", attrs="axes: axes; starts: ints; stops: ints; steps: ints", layout=ATTRIBUTE, axis_attrs=("axes",),
   doc="``x[..., start:stop:step, ...]``: per entry of ``axes``, static bounds (step > 0).")
op("random_normal", inputs="like", attrs="shape: ints; mean: float = 0.0; stddev: float = 1.0",
   layout=TERMINATE,
   doc="Normal noise of shape (batch of ``like``, *shape); each framework draws its own numbers.")
op("random_uniform", inputs="like", attrs="shape: ints; minval: float = 0.0; maxval: float = 1.0",
   layout=TERMINATE,
   doc="Uniform noise in [minval, maxval) of shape (batch of ``like``, *shape).")
op("full_like", attrs="value: float; dtype: str = ''", layout=TRANSPARENT,
   doc="A tensor of x's shape (and layout) filled with ``value``; dtype '' keeps x's dtype.")
op("full", inputs="like", attrs="shape: ints; value: float; dtype: str = 'float32'", layout=TERMINATE,
   doc="A tensor of shape (batch of ``like``, *shape) filled with ``value``.")
op("einsum", inputs="*operands", attrs="equation: str", layout=TERMINATE,
   doc="Einstein summation ``equation`` (explicit ``->``, no ellipsis) over the operands in the "
       "source layout; the batch axis is the first of every batched operand and of the output.")
op("extract_patches",
   attrs="kernel_size: sizes; strides: sizes; dilation: sizes = 1; padding: pads = 'valid'",
   layout=IMPLICIT, rank=2,
   doc="Each output position holds its (kh, kw, C) input window flattened on the channel axis.")

# ---------------------------------------------------------------------------------
# Ops real keras.io models use (issue 18 item 4). A value with no batch axis (``arange``,
# what an Embedding or arithmetic makes of it) broadcasts against the batched tensors.
# ---------------------------------------------------------------------------------
op("arange", inputs="", attrs="start: int = 0; stop: int; step: int = 1; dtype: str = 'int32'", layout=TERMINATE,
   doc="The numbers start, start + step, ... below stop (``ops.arange``, ``tf.range``): a rank-1 tensor "
       "with NO batch axis (position ids; an Embedding of it is a position embedding that broadcasts "
       "over the batch). A constant of the model, never a param.")
op("stop_gradient", layout=TRANSPARENT, shape="same",
   doc="The input's value; no gradient flows back through it (``ops.stop_gradient``, ``tf.stop_gradient``).")
op("broadcast_to", numbers="moves", inputs="x, like", attrs="shape: ints", layout=TERMINATE,
   doc="``x`` (no batch axis, or a batch of 1) broadcast to (batch of ``like``, *shape), numpy's rules "
       "(``ops.broadcast_to(position_embeddings, ops.shape(inputs))``); a size -1 keeps x's size on "
       "that axis (a causal mask of a run-time length tiled over the batch).")
op("slice_like", inputs="x, like", attrs="axis: int; like_axis: int", layout=TERMINATE,
   doc="``x[..., :like.shape[like_axis], ...]`` on ``axis`` of ``x``: the first positions of a weight or "
       "constant, as many as an axis of ``like`` has when the program runs (``self.pos_emb[:, :t]`` with "
       "``t = idx.size(1)``).")
op("fft2", inputs="real, imag", layout=TERMINATE,
   doc="The 2-D discrete Fourier transform over the last two axes of the complex tensor real + i imag "
       "(``keras.ops.fft2((real, imag))``): two outputs, its real and imaginary parts.")
op("pixel_shuffle", attrs="factor: int", layout=IMPLICIT, rank=2,
   doc="Sub-pixel upsampling (torch's PixelShuffle): C*r*r channels become C channels of r x r "
       "blocks; output channel c, block position (i, j) is input channel c*r*r + i*r + j, in "
       "either layout.")

op("random_crop", training_default=True, attrs="size: sizes", layout=IMPLICIT, rank=2,
   doc="Keras RandomCrop to ``size``: in training one random window of that size per batch where the "
       "image is larger on both spatial axes, otherwise the window at Keras' centred offsets, resized "
       "(bilinear) to ``size`` where it is smaller; at inference the centred window of the target's "
       "aspect ratio resized to ``size`` (smart_resize, as Keras documents it).")

op("floor", layout=TRANSPARENT, shape="same",
   doc="Element-wise largest integer not above x, in x's float dtype (``ops.floor``, ``tf.floor``); "
       "no gradient flows through it (zero almost everywhere).")

for _name, _doc in (("sin", "sine"), ("cos", "cosine")):
    op(_name, layout=TRANSPARENT, shape="same",
       doc=f"Element-wise {_doc} of x in radians, in x's float dtype (``ops.{_name}``, ``tf.{_name}``, "
           f"``tf.math.{_name}``): sinusoidal time and position embeddings.")

# ---------------------------------------------------------------------------------
# A custom layer whose call() the frontend could not read (issue 18 item 3): ONE opaque node
# stands for each of its calls, so the model around it is still translated.
# ---------------------------------------------------------------------------------
op("opaque_layer", inputs="*xs",
   attrs="class_name: str; reason: str; output_shapes: any; shape_from: str = 'compute_output_shape'; "
         "config: any = None",
   layout=TERMINATE,
   doc="A user layer (class ``class_name``) whose computation was not translated: a marked stub module "
       "whose forward raises NotImplementedError(``reason``). ``output_shapes`` (one per output, source "
       "layout, None = a size known at run time) come from the layer's compute_output_shape, or are "
       "assumed (``shape_from`` says which); ``config`` holds the constructor's static arguments.")

# ---------------------------------------------------------------------------------
# Sizes known only when the program runs (issue 18 item 1)
# ---------------------------------------------------------------------------------
op("arange_like", inputs="like", attrs="axis: int; start: int = 0; step: int = 1; dtype: str = 'int32'",
   layout=TERMINATE,
   doc="The numbers start, start + step, ... below ``like.shape[axis]`` (``ops.arange(ops.shape(x)[-1])`` "
       "on a sequence of any length): a rank-1 tensor with NO batch axis, its length known only when the "
       "program runs; ``like`` gives the length, never values. Position ids of a variable-length sequence.")
op("tile", numbers="moves", attrs="repeats: ints", layout=TERMINATE,
   doc="Each axis after the batch axis repeated ``repeats[i]`` times, whole copies one after another "
       "(``ops.tile(x, [1, n, 1])``, ``tf.tile``; the batch axis is not repeated). A repeat may be a size "
       "known only when the program runs (a constructor argument).")

# ---------------------------------------------------------------------------------
# Ops inside custom layers' call() (issue 18, keras.io programs)
# ---------------------------------------------------------------------------------
op("eye", inputs="like", attrs="shape: ints; rows: int; columns: int; dtype: str = 'float32'", layout=TERMINATE,
   doc="Identity matrices (``rows`` x ``columns``, ones on the main diagonal) for every sample: shape "
       "(batch of ``like``, *shape, rows, columns) (``tf.eye(3, batch_shape=[tf.shape(x)[0], 1])``); "
       "``like`` gives the batch size, never values.")
op("unit_normalize", attrs="axis: axes = (-1,)", layout=ATTRIBUTE, axis_attrs=("axis",), shape="same",
   doc="x * min(rsqrt(sum(x ** 2 over axis)), 1e12) = x / max(||x||, 1e-12): each vector over ``axis`` scaled "
       "to unit L2 length (Keras UnitNormalization; torch F.normalize with eps=1e-12).")
