"""Equivalence checks: run the Keras model and the generated torch module side by side.

The only part of the package that imports both frameworks (lazily, inside the
functions). Keras weights are read layer by layer into canonical params, mapped
through the ops table and the torch emitters to the generated module's state_dict,
and both models run on the same random inputs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph
from transpiler.ir.params import param_names
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.weights.mapping import torch_state_dict


def keras_canonical_params(graph: Graph, keras_model: Any) -> dict[str, dict[str, np.ndarray]]:
    """``{layer name: {canonical param: array}}`` for every layer of ``graph`` with params.

    Keras lists a layer's weights in the order the ops table declares its params.
    """
    out: dict[str, dict[str, np.ndarray]] = {}
    for node in graph.nodes:
        source = node.source_name
        if source is None or source in out:
            continue
        names = param_names(node)  # (a node split by a pass: its source layer's)
        if not names or node.layer is not None and node.layer.constant_call:
            continue  # (called on constants only: Keras' model holds its result, not its weights)
        if node.from_keras.variable_of is not None:  # a custom layer's add_weight: its attribute
            owner, attr = node.from_keras.variable_of
            value = getattr(find_layer(keras_model, owner), attr)
            out[source] = {names[0]: np.asarray(value.numpy() if hasattr(value, "numpy") else value)}
            continue
        layer = find_layer(keras_model, source)
        weights = [np.asarray(w.numpy() if hasattr(w, "numpy") else w) for w in layer.weights]
        if len(weights) != len(names):
            raise ValueError(f"layer {source!r}: Keras has {len(weights)} weights, the ops table "
                             f"expects {len(names)} ({', '.join(names)})")
        out[source] = dict(zip(names, weights))
    return out


def find_layer(keras_model: Any, name: str) -> Any:
    """The layer called ``name``, also inside subclassed layers and nested models (or the model
    itself: a subclassed model's own ``tf.Variable``)."""
    if getattr(keras_model, "name", None) == name:
        return keras_model
    try:
        return keras_model.get_layer(name)
    except ValueError:
        for layer in keras_model._flatten_layers(include_self=False, recursive=True):
            if layer.name == name:
                return layer
        raise


def ensure_built(keras_model: Any, graph: Graph) -> None:
    """A subclassed Keras model creates its weights on its first call: make it. Layers that
    only a training branch calls (``if training: ...``) are built by a call in training mode."""
    def built() -> bool:
        return bool(keras_model.weights) and all(getattr(layer, "built", True)
                                                 for layer in keras_model._flatten_layers(include_self=False))

    if built():
        return  # (drawing inputs needs what a run-time vocabulary only has when the program runs)
    inputs = random_inputs(graph, 1, 0)
    for training in (False, True):
        if built() or (training and not any(n.op == "training_select" for n in graph.nodes)):
            return
        keras_model(inputs if len(inputs) > 1 else inputs[0], training=training)


def load_generated(text: str, name: str = "transpiled_module"):
    """Import generated source text as a fresh module (written to a temp file)."""
    fd, path = tempfile.mkstemp(suffix=".py", prefix=name + "_")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        os.unlink(path)  # (the caller never learns the path: nothing else removes it)
        raise
    module.__transpiled_path__ = path
    return module


def to_target_layout(array: np.ndarray, layout: str | None) -> np.ndarray:
    """A channels-last array permuted into ``layout`` (no-op unless channels-first)."""
    if layout is not None and is_channels_first(layout):
        return np.ascontiguousarray(array.transpose(Layout(channels_last_of(layout), layout).perm))
    return array


def to_source_layout(array: np.ndarray, layout: str | None) -> np.ndarray:
    """A target-layout array permuted back to channels-last."""
    if layout is not None and is_channels_first(layout):
        return np.ascontiguousarray(array.transpose(Layout(layout, channels_last_of(layout)).perm))
    return array


@dataclass
class Comparison:
    """Per-output agreement between source and target."""

    max_abs: float
    mean_rel: float
    top1: float | None = None
    top5: float | None = None
    #: how many numbers were compared, and how many of them were NaN on both sides (agreement,
    #: but an output that is NaN everywhere proves nothing)
    size: int = 0
    both_nan: int = 0

    @property
    def vacuous(self) -> bool:
        """Every number NaN on both sides: nothing was compared."""
        return self.size > 0 and self.both_nan == self.size

    def ok(self, tol: float = 1e-4) -> bool:
        return self.max_abs <= tol and not self.vacuous


_FREE_SIZE = 32


def random_inputs(graph: Graph, batch: int, seed: int = 0) -> list[np.ndarray]:
    """Channels-last random inputs for ``graph`` (token ids for inputs read by an Embedding)."""
    rng = np.random.RandomState(seed)
    out = []
    for v in graph.inputs:
        # a free size (``Input(shape=(None,))``, a variable-length sequence) gets a length
        # long enough for a few strided convolutions or poolings
        shape = [batch] + [_FREE_SIZE if s is None else s for s in _source_shape(v)[1:]]
        high = _vocab_for(graph, v)
        tokens = _lookup_tokens(graph, v)
        if tokens is not None:  # read by a StringLookup / IntegerLookup: its tokens and an unknown one
            array = np.empty(shape, dtype=object if v.dtype == "string" else v.dtype)
            array.reshape(-1)[:] = [tokens[i] for i in rng.randint(0, len(tokens), size=int(np.prod(shape)))]
            out.append(array)
        elif v.dtype.startswith(("int", "uint")) or high is not None:
            dtype = v.dtype if v.dtype.startswith("int") else "float32"
            out.append(rng.randint(0, high or 10, size=shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype("float32"))
    return out


def _source_shape(v) -> tuple:
    if v.layout and is_channels_first(v.layout):
        return Layout(v.layout, channels_last_of(v.layout)).shape(v.shape)
    return v.shape


#: token ids drawn for an Embedding sized at run time (``Embedding(vectorizer.vocabulary_size())``:
#: its stand-in number is no size): ids every such vocabulary holds (a text layer's mask and OOV)
_RUNTIME_VOCAB = 2


def _lookup_tokens(graph: Graph, value) -> list | None:
    """The tokens to draw for an input an op looks up in a vocabulary (the ops table's
    ``vocabulary_attr``: a StringLookup / IntegerLookup): its vocabulary and one token out of
    it (the OOV slot is used too)."""
    for n in graph.nodes:
        attr = ops_table.get(n.op).vocabulary_attr
        if attr and n.inputs and n.inputs[0] is value:
            vocabulary = (n.attrs[attr] or {}).get("vocabulary") or []
            if not isinstance(vocabulary, (list, tuple)):
                return None  # (a vocabulary the program computes when it runs: not known here)
            vocabulary = list(vocabulary)
            unknown = "<unknown>" if value.dtype == "string" else max([0, *vocabulary]) + 1
            return vocabulary + [unknown]
    return None


def _vocab_for(graph: Graph, value) -> int | None:
    from transpiler.ir import sizes

    bounds = [n.attrs[ops_table.get(n.op).ids_below] for n in graph.nodes
              if ops_table.get(n.op).ids_below and n.inputs and n.inputs[0] is value]
    highs = [_RUNTIME_VOCAB if sizes.runtime_symbol(b) is not None else b for b in bounds]
    return min(highs) if highs else None


def compare_arrays(a: np.ndarray, b: np.ndarray) -> Comparison:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"output shapes differ: {a.shape} vs {b.shape}")
    # a NaN (0/0: Keras' mean over a fully masked sequence) or an infinity on both sides at
    # the same place is agreement; on one side only, the difference stays NaN/inf
    same = (np.isnan(a) & np.isnan(b)) | (a == b)
    with np.errstate(invalid="ignore"):  # (inf - inf where both are inf: masked by ``same``)
        diff = np.where(same, 0.0, np.abs(a - b))
    rel = diff / np.maximum(np.abs(np.nan_to_num(a)), 1e-6)
    top1 = top5 = None
    if a.ndim == 2 and a.shape[1] > 1:
        top1 = float(np.mean(a.argmax(1) == b.argmax(1)))
        k = min(5, a.shape[1])
        ta = np.argsort(-a, axis=1)[:, :k]
        tb = np.argsort(-b, axis=1)[:, :k]
        top5 = float(np.mean([set(x) == set(y) for x, y in zip(ta, tb)]))
    return Comparison(float(diff.max()) if diff.size else 0.0, float(rel.mean()) if rel.size else 0.0, top1, top5,
                      size=int(a.size), both_nan=int(np.count_nonzero(np.isnan(a) & np.isnan(b))))


def torch_input(x: np.ndarray, layout):
    """One channels-last input as the torch module takes it: a tensor in its layout, or, for
    strings (a StringLookup in the model reads them), the numpy array of str itself."""
    import torch

    if x.dtype == object:
        return x
    return torch.from_numpy(to_target_layout(x, layout))


def run_both(keras_model, torch_module, graph: Graph, inputs: list[np.ndarray],
             training: bool = False) -> list[Comparison]:
    """Run both models on channels-last ``inputs`` (in inference mode, or in training mode for
    models whose training-time computation is deterministic); compare every output."""
    import torch

    k_out = keras_model(inputs if len(inputs) > 1 else inputs[0], training=training)
    if isinstance(k_out, dict):  # outputs={"a": ..., "b": ...}: torch returns them in this order
        keys = graph.from_keras.output_keys
        k_out = [k_out[k] for k in (list(k_out) if keys is None else keys)]
    if not isinstance(k_out, (list, tuple)):
        k_out = [k_out]
    k_out = [np.asarray(o) for o in k_out]
    t_in = [torch_input(x, v.layout) for x, v in zip(inputs, graph.inputs)]
    torch_module.train(training)
    with torch.no_grad():
        t_out = torch_module(*t_in)
    if not isinstance(t_out, (list, tuple)):
        t_out = [t_out]
    layouts = output_layouts(graph)
    t_out = [to_source_layout(o.numpy(), lay) for o, lay in zip(t_out, layouts)]
    return [compare_arrays(a, b) for a, b in zip(k_out, t_out)]


def output_layouts(graph: Graph) -> list[str | None]:
    """The layout each model output is in (the layout pass records it, as
    ``target_output_layouts``: a value's tag alone cannot say after an identity permute
    was removed)."""
    recorded = graph.layouts.target_outputs
    if recorded and len(recorded) == len(graph.outputs):
        return list(recorded)
    return [v.layout for v in graph.outputs]


def keras_param_count(model) -> int:
    return int(sum(int(np.prod(w.shape)) for w in model.weights))


def torch_param_count(module) -> int:
    """Parameters plus buffers (BatchNorm running statistics), as Keras counts weights; a
    non-persistent buffer (position ids: a constant, no state_dict entry) is no weight."""
    buffers = sum(b.numel() for mod in module.modules() for n, b in mod.named_buffers(recurse=False)
                  if n != "num_batches_tracked" and n not in mod._non_persistent_buffers_set)
    return int(sum(p.numel() for p in module.parameters()) + buffers)


def lstm_extra_bias(graph: Graph) -> int:
    """torch's second recurrent bias (bias_hh) that Keras does not have: LSTM 4u, RNN u."""
    extra = 0
    seen: set = set()
    for node in graph.nodes:
        layer = node.name  # a layer called several times has one module, one bias
        if layer in seen:
            continue
        seen.add(layer)
        op, attrs, dirs = node.op, node.attrs, 1
        if op == "bidirectional":
            op, attrs, dirs = attrs["layer"]["op"], attrs["layer"]["attrs"], 2
        if op in ("lstm", "simple_rnn") and attrs["use_bias"]:
            extra += dirs * attrs["units"] * (4 if op == "lstm" else 1)
    return extra


def map_keras_weights(graph: Graph, keras_model) -> dict[str, Any]:
    """The generated module's state_dict (torch tensors) from a live Keras model."""
    import torch

    ensure_built(keras_model, graph)
    state = torch_state_dict(graph, keras_canonical_params(graph, keras_model))
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}
