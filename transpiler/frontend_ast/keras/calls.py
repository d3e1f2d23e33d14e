"""Keras layer *calls*: the call arguments a layer takes, and Keras' masks.

A layer call ``layer(x)`` has one tensor input for most layers; attention layers take
several (``mha(query, value, key=..., attention_mask=..., use_causal_mask=True)``,
``Attention()([q, v, k])``). ``bind_call`` turns a call's arguments into the node's
input values and the attributes that depend on the call.

Keras' masks: an ``Embedding(mask_zero=True)`` attaches a mask (token id != 0) to its
output; layers that support masking pass it on, a few consume it (recurrent layers skip
padded steps, GlobalAveragePooling1D leaves them out of the mean, attention layers do not
attend to them) and the rest drop it. A mask is carried on the frontend's tensor as the
token-id value it comes from; a consuming node gets those ids as an extra input (and
``masked=True`` or an ``extra_inputs`` role), so the printers compute ``ids != 0``. A
mask that cannot be written that way (two different masks merged, a mask concatenated
along time) is carried as a ``MaskNote``: harmless until a layer would use it, which
then is refused (a reported stub), never silently computed without its mask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.frontend_ast.keras.layers import LayerSpec, Unsupported
from transpiler.ir import ops as ops_table


@dataclass(frozen=True)
class MaskNote:
    """A Keras mask the IR cannot express; ``why`` says which."""

    why: str


@dataclass
class BoundCall:
    """A layer call: the tensors in the node's input order, call-dependent attrs, the
    masks of the tensors the layer reads, and training-only differences to report."""

    tensors: list
    attrs: dict[str, Any] = field(default_factory=dict)
    masks: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: token-id values appended to the node's inputs (after ``tensors``)
    mask_inputs: list = field(default_factory=list)
    #: an RNN's ``initial_state`` tensors (frontend tensors), the node's last inputs
    states: list = field(default_factory=list)
    #: tensors whose mask the layer deletes (MultiHeadAttention unsets the masks of its
    #: query, value and key): inside a subclassed layer's call() later readers of the same
    #: tensor see none; a Functional model keeps its masks apart and is not affected
    clears: list = field(default_factory=list)


#: Keras classes whose output carries their (first) input's mask unchanged
#: (``supports_masking`` with the default ``compute_mask``)
MASK_PASSING = {"Dense", "Activation", "ReLU", "LeakyReLU", "PReLU", "ELU", "Softmax", "Dropout",
                "AlphaDropout", "GaussianDropout", "GaussianNoise", "ActivityRegularization",
                "LayerNormalization", "BatchNormalization", "GroupNormalization", "UnitNormalization",
                "Rescaling", "Normalization", "Identity", "Masking"}
#: merge layers: the output mask is the AND of the inputs' masks
MERGES = {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"}
#: merge layers whose computation reads their inputs' masks in Keras 3 (layers/merging/):
#: not the plain element-wise op at the masked steps
MASK_READING_MERGES = {
    "Multiply": "masked steps multiply as 1, steps no input keeps are zeroed",
    "Maximum": "a masked step takes the other inputs' value",
    "Minimum": "a masked step takes the other inputs' value",
}
#: ops that read a mask through a ``masked`` attribute and a token-id input
MASKED_OPS = {"lstm", "gru", "simple_rnn", "global_avg_pool1d"}
#: recurrent ops that can start from a given state (``initial_state``)
RNN_OPS = ("lstm", "gru", "simple_rnn")
ATTENTION_OPS = {"multi_head_attention", "attention", "additive_attention"}
#: augmentation layers whose training-time transformation the torch module reproduces
FAITHFUL_AUGMENTATIONS = ("RandomFlip", "RandomContrast", "GaussianNoise", "GaussianDropout", "RandomRotation", "RandomZoom",
                          "RandomTranslation")


def mask_of(tensor: Any) -> Any:
    """The Keras mask a frontend tensor carries (None, a token-id Value or a MaskNote)."""
    return getattr(tensor, "mask", None)


def _ids(mask: Any, what: str):
    if isinstance(mask, MaskNote):
        raise Unsupported(f"{what}: {mask.why}")
    return mask


def _static_bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise Unsupported(f"{what} must be True or False when the model is built")
    return value


def _tensors(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def bind_call(spec: LayerSpec, cls_name: str, args: list, kwargs: dict[str, Any]) -> BoundCall:
    """The inputs and call attributes of ``layer(*args, **kwargs)`` for a layer of ``spec``."""
    if spec.op == "multi_head_attention":
        return _bind_multi_head_attention(args, kwargs, spec.options.get("attention_axes"))
    if spec.op in ("attention", "additive_attention"):
        return _bind_attention(spec, cls_name, args, kwargs)
    kwargs = dict(kwargs)
    if not args:
        if "inputs" not in kwargs:
            raise Unsupported(f"{cls_name or spec.op}: called without an input")
        args = [kwargs.pop("inputs")]
    states = _initial_state(spec, cls_name, args, kwargs)
    for key in ("mask", "initial_state", "constants"):
        if kwargs.get(key) is not None:
            raise Unsupported(f"{cls_name or spec.op}({key}=...) in a layer call is not translated yet")
    tensors = _tensors(args[0])
    call = BoundCall(tensors, masks=[mask_of(t) for t in tensors])
    if states:
        call.states = states
        call.attrs["initial_state"] = True
    if not cls_name:  # keras.ops / operators on tensors: Keras attaches no mask to them
        return call
    if spec.op == "random_augmentation" and spec.attrs["kind"] not in FAITHFUL_AUGMENTATIONS:
        call.warnings.append(f"{cls_name}: the training-time augmentation is dropped (the layer is the "
                             "identity in the torch model; no faithful torch form without torchvision); "
                             "augment in the data pipeline")
    if spec.op == "bidirectional" and (spec.attrs["layer"]["attrs"].get("dropout") or 0.0) > 0.0:
        call.warnings.append(f"{cls_name}: the RNN's dropout= draws one input mask for both directions in "
                             "torch's bidirectional module; Keras draws one per direction (training only)")
    if cls_name in MASK_READING_MERGES and any(m is not None for m in call.masks):
        raise Unsupported(f"{cls_name} over a masked sequence (Embedding(mask_zero=True)) is not translated "
                          f"yet: Keras uses the mask inside the merge ({MASK_READING_MERGES[cls_name]})")
    mask = call.masks[0] if len(tensors) == 1 else None
    if mask is None or call.states:
        # (Keras 3 hands a layer its input's mask only when the call has one tensor argument:
        # an RNN given initial_state runs over every step; the output still carries the mask)
        return call
    if spec.op in MASKED_OPS:
        call.mask_inputs.append(_ids(mask, f"{cls_name} reads the mask of its input"))
        call.attrs["masked"] = True
    elif spec.op == "bidirectional":
        raise Unsupported("Bidirectional over a masked sequence (Embedding(mask_zero=True)) is not "
                          "translated yet")
    elif cls_name == "Softmax":
        raise Unsupported("Softmax with a mask (from Embedding(mask_zero=True)) is not translated yet")
    elif cls_name == "BatchNormalization":
        call.warnings.append("BatchNormalization on a masked sequence: Keras computes the training "
                             "batch statistics over the unmasked steps only; torch over all steps "
                             "(training only)")
    return call


def _initial_state(spec: LayerSpec, cls_name: str, args: list, kwargs: dict[str, Any]) -> list:
    """An RNN call's ``initial_state`` (keyword or second positional argument), taken out of
    ``kwargs``/``args``: the state tensors in Keras' order (h, and c for an LSTM), or []."""
    what = cls_name or spec.op
    given = kwargs.pop("initial_state", None)
    if len(args) > 1 and spec.op in RNN_OPS + ("bidirectional",):
        if given is not None:
            raise Unsupported(f"{what}: initial_state given twice")
        given, args[1:] = args[1], args[2:]
    if given is None:
        return []
    if spec.op == "bidirectional":
        raise Unsupported("Bidirectional(...)(x, initial_state=...) is not translated yet (only a one-way "
                          "LSTM, GRU or SimpleRNN starts from a given state)")
    if spec.op not in RNN_OPS:
        kwargs["initial_state"] = given  # (refused below, as before)
        return []
    states = _tensors(given)
    want = ops_table.get(spec.op).states  # (h; h and c: the ops table's fact)
    if len(states) != want:
        raise Unsupported(f"{what}(initial_state=...) takes {want} state tensor(s), got {len(states)}")
    return states


def _bind_multi_head_attention(args: list, kwargs: dict[str, Any], axes: Any = None) -> BoundCall:
    names = ("query", "value", "key", "query_mask", "value_mask", "key_mask", "attention_mask",
             "return_attention_scores", "training", "use_causal_mask")
    if len(args) == 1 and isinstance(args[0], list) and 2 <= len(args[0]) <= 3 and "value" not in kwargs:
        # (a model used as a layer calls its layers again on the node's inputs, as one list:
        # query, value[, key])
        args = list(args[0])
    if len(args) > len(names):
        raise Unsupported("MultiHeadAttention: too many positional arguments")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise Unsupported(f"MultiHeadAttention: unknown call argument {key!r}")
        if key in bound:
            raise Unsupported(f"MultiHeadAttention: argument {key!r} given twice")
        bound[key] = value
    if "query" not in bound or "value" not in bound:
        raise Unsupported("MultiHeadAttention: a call needs query and value")
    for key in ("query_mask", "value_mask", "key_mask"):
        if bound.get(key) is not None:
            raise Unsupported(f"MultiHeadAttention({key}=...) given explicitly is not translated yet; "
                              "use attention_mask=")
    if _static_bool(bound.get("return_attention_scores", False), "return_attention_scores"):
        raise Unsupported("MultiHeadAttention(return_attention_scores=True) is not translated yet")
    query, value, key = bound["query"], bound["value"], bound.get("key")
    rank = len(getattr(getattr(query, "value", query), "shape", None) or ())
    if rank > 3:
        # Keras attends over every axis but the batch's and the features' (attention_axes=None):
        # the printers flatten those axes into one sequence; masks over several axes are not
        if axes is not None:
            raise Unsupported(f"MultiHeadAttention(attention_axes={axes!r}) on a rank-{rank} query: attention "
                              "over some of its axes is not translated yet")
        if bound.get("attention_mask") is not None or _static_bool(bound.get("use_causal_mask", False),
                                                                    "use_causal_mask"):
            raise Unsupported(f"MultiHeadAttention with a mask on a rank-{rank} query (attention over "
                              "several axes) is not translated yet")
    tensors, roles = [query, value], []
    if key is not None and key is not value:
        tensors.append(key)
        roles.append("key")
    if bound.get("attention_mask") is not None:
        tensors.append(bound["attention_mask"])
        roles.append("attention_mask")
    call = BoundCall(tensors, masks=[mask_of(t) for t in tensors])
    call.attrs["use_causal_mask"] = _static_bool(bound.get("use_causal_mask", False), "use_causal_mask")
    _attention_masks(call, "MultiHeadAttention", roles, query=query, value=value,
                     key=key if "key" in roles else None)
    call.clears = [t for t in (query, value, key) if t is not None]
    return call


def _attention_masks(call: BoundCall, cls_name: str, roles: list[str], **tensors) -> None:
    """The Embedding masks an attention layer reads: token ids appended as extra inputs,
    named by their role (``query_mask``, ...) in ``extra_inputs`` after ``roles``."""
    for what, tensor in tensors.items():
        mask = mask_of(tensor)
        if mask is not None:
            call.mask_inputs.append(_ids(mask, f"{cls_name} reads the {what} mask"))
            roles.append(f"{what}_mask")
    call.attrs["extra_inputs"] = tuple(roles)


def _bind_attention(spec: LayerSpec, cls_name: str, args: list, kwargs: dict[str, Any]) -> BoundCall:
    names = ("inputs", "mask", "training", "return_attention_scores", "use_causal_mask")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in bound:
            raise Unsupported(f"{cls_name}: call argument {key!r} not understood")
        bound[key] = value
    inputs = bound.get("inputs")
    if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
        raise Unsupported(f"{cls_name} is called on a list [query, value] or [query, value, key]")
    if bound.get("mask") is not None:
        raise Unsupported(f"{cls_name}(mask=...) given explicitly is not translated yet")
    if _static_bool(bound.get("return_attention_scores", False), "return_attention_scores"):
        raise Unsupported(f"{cls_name}(return_attention_scores=True) is not translated yet")
    tensors = list(inputs)
    roles = ["key"] if len(tensors) == 3 else []
    call = BoundCall(tensors, masks=[mask_of(t) for t in tensors])
    call.attrs["use_causal_mask"] = _static_bool(bound.get("use_causal_mask", False), "use_causal_mask")
    _attention_masks(call, cls_name, roles, query=tensors[0], value=tensors[1])
    return call


def output_masks(spec: LayerSpec, cls_name: str, attrs: dict[str, Any], call: BoundCall,
                 n_outputs: int) -> list:
    """The Keras mask of each output of the call (None where Keras attaches none)."""
    none = [None] * n_outputs
    if not cls_name:
        return none
    if spec.op == "embedding" and attrs.get("mask_zero"):
        return [call.tensors[0].value] + none[1:]
    masks = call.masks
    if spec.op in ATTENTION_OPS:
        return [masks[0]] + none[1:]
    if cls_name in MERGES:
        return [_merged(masks, attrs, len(getattr(call.tensors[0].value, "shape", ()) or ()))] + none[1:]
    if len(masks) != 1 or masks[0] is None:
        return none
    if spec.op in ("lstm", "gru", "simple_rnn"):
        return [masks[0] if attrs.get("return_sequences") else None] + none[1:]
    if cls_name in MASK_PASSING:
        return [masks[0]] + none[1:]
    return none


def _merged(masks: list, attrs: dict[str, Any], rank: int) -> Any:
    given = [m for m in masks if m is not None]
    if not given:
        return None
    axis = attrs.get("axis")
    if axis is not None and rank and axis % rank != rank - 1:
        return MaskNote("masks concatenated along the time axis are not translated yet")
    first = given[0]
    if all(m is first for m in given):
        return first
    return MaskNote("the AND of two different Embedding masks is not translated yet")
