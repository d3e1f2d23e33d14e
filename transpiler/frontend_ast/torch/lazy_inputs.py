"""The input of a module whose program never says its shape: what its first layer implies.

torch modules do not declare their input's shape, and a library file (``model.py``) or a
class built from command-line sizes never feeds one data the reader can size. The layers
still say much: a ``Conv2d(3, 32, ...)`` takes ``(N, 3, H, W)``, a ``Linear(784, 10)``
``(N, 784)``, an ``Embedding`` integer ids ``(N, L)``, a batch-first ``LSTM(16, ...)``
``(N, L, 16)``. The reader then traces ``forward`` with the sizes the layer does not fix
(``H``, ``W``, ``L``) unknown (``None``): Keras builds its layers from the channels or
features alone, so the model is translated with ``keras.Input(shape=(None, None, 3))``, and
only what needs an unknown size as a number (a ``view`` flattening the spatial axes into a
``Linear``) is refused, with a stub saying which size is missing.

The first layer is the first *informative* leaf the constructor makes (activations,
dropout, padding and pooling say nothing about the channels); a guess the forward does not
accept fails the trace like any wrong shape, and the model is a stub naming the reason.

Imports no deep-learning framework.
"""

from __future__ import annotations

import re

#: torch layer class → (what it implies: "channels" with a spatial rank, "features",
#: "ids", "sequence")
_RANKED = re.compile(r"^(Conv|ConvTranspose|LazyConv|BatchNorm|InstanceNorm|LazyBatchNorm)([123])d$")


def implied_input(leaf) -> tuple[tuple, str, str] | None:
    """``(shape without the batch axis, dtype, what implied it)`` for a leaf module
    (``values.Mod``) whose input the layer fixes up to unknown sizes, else None."""
    layer, cls = leaf.layer, leaf.cls_name
    if layer is None:
        return None
    feats = layer.in_features
    m = _RANKED.match(cls)
    if m and isinstance(feats, int):
        rank = int(m.group(2))
        if m.group(1).endswith("BatchNorm") and rank == 1:
            return (feats,), "float32", f"nn.{cls}({feats})"  # (N, C): the common use
        return (feats, *[None] * rank), "float32", f"nn.{cls}({feats}, ...)"
    if layer.op == "embedding":
        return (None,), "int64", f"nn.{cls}"
    if layer.kind == "rnn" and isinstance(feats, int):
        return (None, feats), "float32", f"nn.{cls}({feats}, ..., batch_first=True)"
    if layer.op == "dense" and isinstance(feats, int):
        return (feats,), "float32", f"nn.{cls}({feats}, ...)"
    shape = layer.extra.get("normalized_shape") if layer.op == "layer_norm" else None
    if shape and all(isinstance(s, int) for s in shape):
        return tuple(shape), "float32", f"nn.{cls}({', '.join(map(str, shape))})"
    return None


def first_layer_input(leaves) -> tuple[tuple, str, str] | None:
    """The input the first informative of ``leaves`` (in construction order) implies."""
    for leaf in leaves:
        found = implied_input(leaf)
        if found is not None:
            return found
    return None


def _axis_names(value) -> str:
    """``(N, 3, H, W)``-style text of ``value``'s shape, the unknown sizes named by their axis."""
    layout = value.layout or ""
    names = []
    for i, d in enumerate(value.shape):
        if i == 0:
            names.append("N")
        elif d is not None:
            names.append(str(int(d)))
        else:
            names.append(layout[i] if len(layout) == len(value.shape) and layout[i] not in "NC" else "?")
    return f"({', '.join(names)})"


def axis_size(value, index: int):
    """``x.size(i)`` / ``x.shape[i]``: the size, or an ``Unknown`` saying it is not fixed here
    (the model's input shape is unknown: any use of it as a number is refused there)."""
    from transpiler.frontend_ast.interp import Unknown

    size = value.shape[index]
    if size is None:
        return Unknown(f"axis {index % len(value.shape)} of a tensor of shape {_axis_names(value)}: a size this "
                       "file does not fix (the model's input shape is unknown here)")
    return size


def flatten_message(value, what: str) -> str:
    """Why ``what`` (a view/reshape/flatten) is refused on ``value`` of unknown sizes."""
    return (f"{what} of a tensor of shape {_axis_names(value)}: it needs the sizes this file does not fix "
            "(the model's input shape is unknown here: give it as INPUT_SHAPE, or translate the script "
            "that feeds the model data)")


def describe(shape: tuple, dtype: str) -> str:
    """``(N, 3, H, W) float32`` for an implied input shape (without the batch axis)."""
    letters = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}
    unknown = [i for i, d in enumerate(shape) if d is None]
    names = letters.get(len(unknown), [f"d{i}" for i in range(len(unknown))])
    if len(shape) == 2 and shape[0] is None:
        names = ["L"]
    it = iter(names)
    dims = ["N"] + [next(it) if d is None else str(d) for d in shape]
    return f"({', '.join(dims)}) {dtype}"
