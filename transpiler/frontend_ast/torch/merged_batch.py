"""A view merging the batch axis with the axes after it around a layer of the last axis.

snli's ``Bottle`` mixin (``class Linear(Bottle, nn.Linear)``) applies a torch layer to a
(T, N, F) sequence as ``out = layer(x.view(T * N, -1)); out.view(T, N, -1)``: two axes merged
into one batch of rows and split back. A Keras graph keeps its batch axis whole, and needs no
merge: ``nn.Linear`` (Keras ``Dense``) and ``nn.Dropout`` act on the last axis of a tensor of any
rank, so the layer applied to the unmerged tensor gives the same numbers. The reader follows that:
the product of the batch size with other leading sizes is a :class:`MergedDims`; the view is a
:class:`Merged` (the tensor, how many leading axes the view merged); a last-axis layer on it
acts on the tensor; a view splitting the same sizes back is the tensor again. Anything else
done with the merged view is refused by name (``Unsupported``), as before.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.interp import PASS, BatchDim
from transpiler.frontend_ast.torch.modules import Unsupported

#: the IR ops of torch layers acting on the last axis alone (or element-wise)
LAST_AXIS_OPS = frozenset({"dense", "dropout"})
_MERGED = ("a view merging the batch axis with the axes after it (x.view(T * N, -1)) is read only around a "
           "layer acting on the last axis (nn.Linear, nn.Dropout) and a view splitting the same sizes back")


class MergedDims:
    """The batch size times other sizes (``size[0] * size[1]`` of ``x.size()[:2]``)."""

    def __init__(self, factors):
        self.factors = tuple(factors)


class Merged:
    """``x.view(T * N, -1)``: ``tensor`` (the reader's Tensor) with its first ``lead`` axes merged."""

    def __init__(self, tensor, lead: int, factors):
        self.tensor, self.lead, self.factors = tensor, lead, tuple(factors)


def _factors(value):
    if isinstance(value, MergedDims):
        return value.factors
    if isinstance(value, BatchDim) or isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None


def merged_dims(op, left, right):
    """``a * b`` of the batch size and sizes: a :class:`MergedDims`; PASS for anything else."""
    a, b = _factors(left), _factors(right)
    if op is not cst.Multiply or a is None or b is None:
        return PASS
    return MergedDims(a + b)


def _same(factor, size) -> bool:
    return size is None if isinstance(factor, BatchDim) else (size is not None and size == factor)


def merge_view(t, shape: list):
    """``x.view(MergedDims, -1)`` of a tensor whose leading axes are the merged sizes: a
    :class:`Merged`; None when the shape holds no MergedDims."""
    if not shape or not any(isinstance(s, MergedDims) for s in shape):
        return None
    x = t.value
    lead = shape[0].factors if isinstance(shape[0], MergedDims) else ()
    if len(shape) != 2 or len(x.shape) != len(lead) + 1 or not any(isinstance(f, BatchDim) for f in lead) \
            or shape[1] not in (-1, x.shape[-1]) or not all(_same(f, s) for f, s in zip(lead, x.shape)):
        raise Unsupported(_MERGED)
    return Merged(t, len(lead), lead)


def merged_method(merged: Merged, name: str, args, kwargs):
    """A method of the merged view: only the view splitting the merged sizes back."""
    shape = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
    if name in ("view", "reshape") and not kwargs and len(shape) == merged.lead + 1 and \
            all(a is f or (not isinstance(f, BatchDim) and a == f) or (isinstance(f, BatchDim) and isinstance(a, BatchDim))
                for a, f in zip(shape, merged.factors)) and shape[-1] in (-1, merged.tensor.value.shape[-1]):
        return merged.tensor
    raise Unsupported(f".{name}() of {_MERGED.split(' (')[0]}: {_MERGED}")


def call_layer(fe, mod, merged: Merged, rest, kwargs, span):
    """A torch layer called on the merged view: a last-axis layer acts on the tensor itself."""
    op = getattr(mod.layer, "op", None)
    if op not in LAST_AXIS_OPS or rest or kwargs:
        raise Unsupported(f"nn.{mod.cls_name} on {_MERGED.split(' (')[0]}: {_MERGED}")
    out = fe._call_module(mod, [merged.tensor], {}, span)
    return Merged(out, merged.lead, merged.factors)
