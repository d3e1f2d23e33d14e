"""``adapt()`` of Keras preprocessing layers for generated PyTorch programs.

Keras computes a preprocessing layer's state from data when the program runs
(``Normalization().adapt(x_train)``: the mean and variance of each kept axis). The torch
module of a model holds that state as buffers (``<layer>_mean``, ``<layer>_variance``); a
Keras layer is one object, shared by every model that calls it, while the translation may
build several torch modules from it (the Sequential itself, and the model that uses it as a
layer). So the state is kept once per Keras layer here: ``adapt_normalization`` computes it
as Keras does and copies it into every module built from that layer so far, and a module
built later starts from it (``adapted_state`` in its ``__init__``). ``layer.set_weights(arrays)``
of a layer before the model using it is built (a pretrained embedding matrix) is kept the
same way (``set_layer_weights``), into the module's parameters. A StringLookup / IntegerLookup
adapted where the model is built (keras.io's structured data: a helper makes, adapts and calls
one per column) is kept the same way too (``adapt_lookup``): its vocabulary, set into the
runtime lookup object each module holds, and its encoding's width (``adapted_depth``), which
sizes the layers after it when the model is built.
"""

import weakref

import numpy as np
import torch

#: Keras layer (its name in the source program) → its adapted state, by buffer suffix
ADAPTED_STATE = {}
#: Keras layer → the torch modules holding its state: (weak reference, buffer prefix)
STATE_HOLDERS = {}


#: the state entry of an adapted lookup: (its vocabulary, its idf weights or None)
LOOKUP_STATE = "vocabulary"


def batch_inputs(batch):
    """One batch of an iterable dataset as a float32 array: its inputs (the first item of an
    (x, y) pair, as Keras' adapt() takes them)."""
    if isinstance(batch, (tuple, list)):
        batch = batch[0]
    if isinstance(batch, torch.Tensor):
        batch = batch.detach().cpu().numpy()
    return np.asarray(batch, dtype=np.float32)


def normalization_statistics(data, axis=(-1,)):
    """``keras.layers.Normalization(axis=axis).adapt(data)``: the mean and variance over every
    axis but ``axis`` (() for axis=None: one of each), as float32 arrays of the kept axes'
    sizes. An array is reduced at once in its own precision (numpy, as Keras does); an
    iterable of batches (a DataLoader, a list of arrays) by Keras' running update, batch after
    batch, in float32."""
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    if isinstance(data, np.ndarray):
        keep = sorted(d % data.ndim for d in axis)
        reduce = tuple(d for d in range(data.ndim) if d not in keep)
        return (np.asarray(np.mean(data, axis=reduce), np.float32),
                np.asarray(np.var(data, axis=reduce), np.float32))
    mean = variance = None
    total = 0
    for batch in data:
        batch = batch_inputs(batch)
        keep = sorted(d % batch.ndim for d in axis)
        reduce = tuple(d for d in range(batch.ndim) if d not in keep)
        if mean is None:
            shape = tuple(batch.shape[d] for d in keep)
            mean, variance = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        batch_mean = np.mean(batch, axis=reduce, dtype=np.float32)
        batch_var = np.var(batch, axis=reduce, dtype=np.float32)
        count = int(np.prod([batch.shape[d] for d in reduce])) if reduce else 1
        total += count
        weight = np.float32(float(count) / total)
        existing = np.float32(1.0) - weight
        new_mean = mean * existing + batch_mean * weight
        # (the lack-of-fit sum of squares, as Keras updates it)
        variance = (variance + (mean - new_mean) ** 2) * existing + (batch_var + (batch_mean - new_mean) ** 2) * weight
        mean = new_mean
    if mean is None:
        raise ValueError("adapt() received an empty iterable (no batches)")
    return mean.astype(np.float32), variance.astype(np.float32)


def _at_path(module, path):
    """The attribute of ``module`` at ``path`` (``embedding.weight``, ``blocks[0].fc``)."""
    target = module
    for part in path.split("."):
        name, _, index = part.partition("[")
        target = getattr(target, name)
        if index:
            target = target[int(index.rstrip("]"))]
    return target


def _state_tensor(module, prefix, suffix):
    """The tensor of ``module`` a state entry goes to: the buffer ``<prefix>_<suffix>``, or for
    a suffix ``.param`` the parameter ``param`` of the submodule at ``prefix`` (a path such as
    ``embedding`` or ``blocks[0].fc``)."""
    if not suffix.startswith("."):
        return getattr(module, f"{prefix}_{suffix}")
    return _at_path(module, f"{prefix}{suffix}")


def load_state(module, prefix, state):
    """Copy a layer's state into ``module``'s tensors (``_state_tensor``), checking shapes."""
    with torch.no_grad():
        for suffix, value in state.items():
            if suffix == LOOKUP_STATE:  # (an adapted lookup: the runtime object the module holds)
                _at_path(module, prefix).set_vocabulary(*value)
                continue
            tensor = _state_tensor(module, prefix, suffix)
            value = torch.as_tensor(np.asarray(value), dtype=tensor.dtype)
            if suffix.startswith(".") and tuple(value.shape) != tuple(tensor.shape):
                raise ValueError(f"set_weights(): a weight of shape {tuple(value.shape)} for "
                                 f"{prefix}{suffix} of shape {tuple(tensor.shape)}")
            tensor.copy_(value.reshape(tensor.shape))


def _share_state(layer, state):
    """Keep ``state`` as the Keras layer ``layer``'s and load it into every module built from
    that layer so far (the modules built later start from it: ``adapted_state``)."""
    ADAPTED_STATE[layer] = state
    holders = []
    for ref, prefix in STATE_HOLDERS.get(layer, []):
        module = ref()
        if module is not None:
            load_state(module, prefix, state)
            holders.append((ref, prefix))
    STATE_HOLDERS[layer] = holders


#: a Keras layer's weights (``get_weights()`` order) → its torch module's parameters:
#: (parameter, axes the Keras array is transposed by, or None)
KERAS_WEIGHTS = {
    "embedding": (("weight", None),),  # (input_dim, output_dim) in both
    "dense": (("weight", (1, 0)), ("bias", None)),  # Keras' kernel is (in, out), torch's (out, in)
}


def set_layer_weights(layer, weights, kind):
    """``layer.set_weights(weights)`` of the Keras layer named ``layer`` (a layer of kind
    ``kind``, see ``KERAS_WEIGHTS``), set before or after the torch modules that use it are
    built: the arrays in torch's layout, copied into every such module's parameters."""
    params = KERAS_WEIGHTS[kind]
    weights = list(weights)
    if len(weights) > len(params):
        raise ValueError(f"set_weights(): {len(weights)} arrays for a layer with {len(params)} weights")
    state = {}
    for (param, axes), array in zip(params, weights):
        array = np.asarray(array, dtype=np.float32)
        state[f".{param}"] = np.ascontiguousarray(array.transpose(axes) if axes else array)
    _share_state(layer, state)


def adapt_normalization(layer, data, axis=(-1,)):
    """``layer.adapt(data)`` of the Keras Normalization layer named ``layer``: its mean and
    variance, computed from ``data`` as Keras computes them, set in every torch module built
    from that layer (and in those built later)."""
    mean, variance = normalization_statistics(data, axis)
    _share_state(layer, {"mean": mean, "variance": variance})


#: Keras lookup layer → the width of its encoding once adapted (``adapted_depth``)
ADAPTED_DEPTH = {}


def adapt_lookup(layer, lookup, data):
    """``layer.adapt(data)`` of the Keras StringLookup / IntegerLookup named ``layer``, made as
    ``lookup`` (the runtime's object of the same arguments): its vocabulary, built from
    ``data`` as Keras builds it, set in every module's lookup built from that layer (and in
    those built later); returns ``lookup``."""
    lookup.adapt(data)
    tokens = lookup.get_vocabulary(include_special_tokens=False)
    if not tokens:
        raise ValueError(f"adapt() of {layer}: the data gave no tokens")
    weights = None
    if lookup.output_mode == "tf_idf":  # (the weights of the tokens alone, as set_vocabulary takes them)
        weights = lookup.idf_weights[lookup._token_start_index():][:len(tokens)]
    ADAPTED_DEPTH[layer] = lookup._depth()
    _share_state(layer, {LOOKUP_STATE: (tokens, weights)})
    return lookup


def adapted_depth(layer):
    """The width of the adapted Keras lookup ``layer``'s encoding (``one_hot``, ``multi_hot``,
    ``count``, ``tf_idf``): its vocabulary's size with the OOV (and mask) slots, as Keras'
    ``vocabulary_size()`` — a size of the model that only the data gives."""
    if layer not in ADAPTED_DEPTH:
        raise RuntimeError(f"the lookup layer {layer} is used before its adapt() ran")
    return ADAPTED_DEPTH[layer]


def adapted_state(module, prefix, layer):
    """In a module's ``__init__``, after its buffers ``<prefix>_*`` of the Keras layer named
    ``layer`` are registered: start them from the layer's adapted state (when adapt() ran
    already) and keep them in step with later adapt() calls."""
    STATE_HOLDERS.setdefault(layer, []).append((weakref.ref(module), prefix))
    if layer in ADAPTED_STATE:
        load_state(module, prefix, ADAPTED_STATE[layer])
