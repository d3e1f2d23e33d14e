"""Tensor layouts as strings of axis letters, and the permutations between them.

A layout names each axis of a tensor with one letter: ``N`` batch, ``C`` channels,
``D``/``H``/``W`` spatial axes, ``T`` time. ``Layout("NHWC", "NCHW").perm`` is the
permutation that turns the first into the second (tflite2onnx's helper, re-derived).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from transpiler.ir import ops as ops_table

if TYPE_CHECKING:
    from transpiler.ir.graph import Graph, Node, Value

#: Channels-last layouts by tensor rank (Keras' convention for feature maps).
CHANNELS_LAST = {3: "NWC", 4: "NHWC", 5: "NDHWC"}
#: Channels-first layouts by tensor rank (PyTorch's convention).
CHANNELS_FIRST = {3: "NCW", 4: "NCHW", 5: "NCDHW"}


@dataclass(frozen=True)
class Layout:
    """A pair of layouts over the same axis letters."""

    source: str
    target: str

    def __post_init__(self) -> None:
        if sorted(self.source) != sorted(self.target):
            raise ValueError(f"layouts {self.source!r} and {self.target!r} name different axes")

    @property
    def perm(self) -> tuple[int, ...]:
        """``perm`` such that ``target_tensor = source_tensor.transpose(perm)``."""
        return tuple(self.source.index(axis) for axis in self.target)

    def axis(self, source_axis: int) -> int:
        """Where axis ``source_axis`` of the source layout sits in the target layout."""
        rank = len(self.source)
        if not -rank <= source_axis < rank:
            raise ValueError(f"axis {source_axis} out of range for rank {rank}")
        return self.target.index(self.source[source_axis % rank])

    def shape(self, source_shape: tuple) -> tuple:
        """The shape of the tensor once permuted into the target layout."""
        return tuple(source_shape[i] for i in self.perm)


def is_channels_last(layout: str | None) -> bool:
    """True for a channels-last feature-map layout (rank 3 to 5)."""
    return layout is not None and layout in CHANNELS_LAST.values()


def is_channels_first(layout: str | None) -> bool:
    """True for a channels-first feature-map layout (rank 3 to 5)."""
    return layout is not None and layout in CHANNELS_FIRST.values()


def default_layout(rank: int) -> str:
    """The source (channels-last) layout of a rank-``rank`` tensor built by Keras."""
    if rank in CHANNELS_LAST:
        return CHANNELS_LAST[rank]
    if rank <= 2:
        return "NC"[:rank]
    if rank <= 1 + len(_PLAIN_AXES):
        # (rank > 5: no feature-map meaning, so no target layout differs from it; the
        # letters only keep axes apart)
        return "N" + _PLAIN_AXES[:rank - 1]
    raise ValueError(f"no layout for rank {rank}")


#: axis letters of a tensor of rank above 5 (after N), none a feature-map letter
_PLAIN_AXES = "IJKLMOPQRS"


def channels_first_of(layout: str) -> str:
    """The channels-first twin of a channels-last layout."""
    return CHANNELS_FIRST[len(layout)]


def channels_last_of(layout: str) -> str:
    """The channels-last twin of a channels-first layout."""
    return CHANNELS_LAST[len(layout)]


@dataclass(frozen=True)
class Direction:
    """Where feature maps come from and where they go."""

    #: the feature-map layouts (by rank) the source framework builds, and the target's
    source: Mapping[int, str]
    target: Mapping[int, str]
    #: the source framework's name, for comments in the output
    source_name: str
    #: the target's emitters compute an ``any_layout`` op on either layout (torch's read
    #: the tag; Keras' global pooling has no channels-first form here)
    any_layout: bool


KERAS_TO_TORCH = Direction(CHANNELS_LAST, CHANNELS_FIRST, "Keras", any_layout=True)
TORCH_TO_KERAS = Direction(CHANNELS_FIRST, CHANNELS_LAST, "PyTorch", any_layout=False)


# ---------------------------------------------------------------------------------
# Graph questions the layout pass and the readers ask (facts of the table only)
# ---------------------------------------------------------------------------------
def layout_readers(graph: Graph, value: Value):
    """The implicit and terminate ops that read ``value``, through transparent and attribute ops."""
    frontier, seen = [value], set()
    while frontier:
        v = frontier.pop()
        for node in graph.consumers(v):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.spec.layout in (ops_table.TRANSPARENT, ops_table.ATTRIBUTE):
                frontier.extend(node.outputs)
            else:
                yield node


def needs_target(node: Node, direction: Direction) -> bool:
    """An implicit op that computes only on the target layout."""
    spec = node.spec
    return spec.layout == ops_table.IMPLICIT and not (spec.any_layout and direction.any_layout)


def feeds_implicit(graph: Graph, value: Value, direction: Direction) -> bool:
    """True when an op needing the target layout reads ``value`` (through transparent ops)."""
    return any(needs_target(node, direction) for node in layout_readers(graph, value))


def read_in_source_layout(graph: Graph, value: Value) -> bool:
    """True when a terminate op reads ``value`` (through transparent/attribute ops)."""
    return any(node.spec.layout == ops_table.TERMINATE for node in layout_readers(graph, value))
