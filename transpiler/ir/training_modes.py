"""What a model does when it is called without saying whether it trains.

Keras resolves a layer's ``training`` flag per layer: the flag passed to the call, else the one
of the call around it, else the default of the layer's own ``call`` signature. Called on data
with no flag at all (``augmented = data_augmentation(images)`` at module level, ``logits =
model(x)`` in a loop), most layers run as at inference (``Dropout``, ``BatchNormalization``,
``GaussianNoise``, a custom ``call(self, x, training=None)``), but Keras' image preprocessing
layers (``RandomFlip``, ``RandomRotation``, ``RandomZoom``, ``RandomTranslation``,
``RandomContrast``, ``RandomCrop``: ``call(self, data, training=True)``) augment.

A target with one mode flag per model (torch's ``model.train()``/``eval()``) reproduces that
when the model's mode-dependent nodes all share one default: :func:`default_mode` says which.
"""

from __future__ import annotations

from transpiler.ir import ops
from transpiler.ir.graph import Graph, Node

#: ``random_augmentation`` kinds whose Keras ``call`` defaults ``training`` to False (noise
#: regularisers); every other kind is an image preprocessing layer (default True)
_INFERENCE_DEFAULT_KINDS = ("GaussianNoise", "GaussianDropout")

#: attributes that make a node random in training when they are positive (an RNN's or an
#: attention layer's dropout)
_DROPOUT_ATTRS = ("dropout", "recurrent_dropout")


def node_default(node: Node) -> bool | None:
    """The mode a node runs in when no call says (True: as in training, False: as at
    inference), or None when it runs the same in both."""
    try:
        default = ops.get(node.op).training_default
    except KeyError:  # (a graph-level pseudo op, not in the table)
        default = None
    if node.op == "random_augmentation" and node.attrs.get("kind") in _INFERENCE_DEFAULT_KINDS:
        return False if _noisy(node) else None  # (one op for every augmentation layer: its kind decides)
    if default is not None:
        return default
    if any(_positive(node.attrs.get(a)) for a in _DROPOUT_ATTRS):
        return False
    return None


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _noisy(node: Node) -> bool:
    config = node.attrs.get("config") or {}
    if node.attrs.get("kind") == "GaussianDropout":
        return 0 < float(config.get("rate") or 0.0) < 1
    return True


def default_mode(graph: Graph | None) -> str:
    """How a call of the model without a ``training`` flag runs: ``"infer"`` (every mode-dependent
    node at inference, or none at all), ``"train"`` (every mode-dependent node trains by
    default: a model of image augmentations) or ``"mixed"`` (some of each: augmentations beside
    dropout or batch normalization). An unknown graph counts as ``"infer"``."""
    defaults = {node_default(n) for n in (graph.nodes if graph is not None else ())} - {None}
    if defaults == {True}:
        return "train"
    if defaults == {True, False}:
        return "mixed"
    return "infer"
