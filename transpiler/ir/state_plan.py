"""How checkpoint tensors map to a model's layers: plain data on ``Graph.weight_plan``.

The printers decide each generated tensor's name (the torch emitters' state_dict keys with
their ``Transform``; the Keras layers' classes and attributes); the checkpoint converters
(``transpiler/weights``) and the training reader must name the same tensors. The driver
computes the plan once, from the printers, and stores it here; everything after reads this
data and never the printers (tests/test_layering.py: weights import only the IR).

- ``torch_state``: the generated PyTorch module's ``state_dict()`` (a model read from Keras),
  every tensor in its order with the canonical param(s) it is made of.
- ``source_state``: the user's own PyTorch module's ``state_dict()`` (a model read from
  PyTorch), recorded while the graph is still channels-first, keys as the user's module
  names them (``features.0.weight``).
- ``keras_layers``: per node name, the Keras class of its layer (the source Keras layer for a
  model read from Keras, the printed one for a model printed as Keras) and the class of the
  layer a wrapper holds (Bidirectional's RNN, TimeDistributed's Dense).
- ``layer_attributes`` / ``subclass``: a model printed as Keras: the attribute holding each
  layer (``__init__``'s order) and whether it is printed as a ``keras.Model`` subclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from transpiler.ir.transforms import Transform

if TYPE_CHECKING:
    from transpiler.ir.graph import Graph, Node


@dataclass(eq=False)
class PlanEntry:
    """One state_dict tensor: ``key`` ← layer ``layer``'s canonical ``param``.

    A packed tensor (nn.MultiheadAttention's ``in_proj_weight``) has a tuple of params:
    each is transformed and the results are stacked along axis 0.
    """

    key: str
    layer: str
    param: str | tuple[str, ...] | None
    node: "Node"
    #: the passes' param transforms applied before ``transform`` (``Node.param_transforms``)
    param_steps: list = field(default_factory=list)
    transform: Transform = Transform.IDENTITY
    #: a torch buffer with no source counterpart holds this value (``param`` is None)
    constant: int | float | None = None

    @property
    def packed(self) -> bool:
        return isinstance(self.param, tuple)

    @property
    def parts(self) -> tuple[str, ...]:
        """The canonical params this tensor is made of (one unless packed)."""
        return self.param if isinstance(self.param, tuple) else (self.param,)


@dataclass
class StatePlan:
    """A module's state_dict, in order; ``error`` says why a checkpoint of it cannot be mapped."""

    entries: list[PlanEntry] = field(default_factory=list)
    error: str | None = None

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True)
class KerasLayer:
    """The Keras classes of a node's layer. None: no Keras class (a ``keras.ops`` call, an op
    no Keras layer produces)."""

    #: the layer's own class (``TimeDistributed`` for a Dense inside one)
    cls: str | None
    #: the class that produces the node's (source) op (``Dense`` for the Dense inside a
    #: TimeDistributed; a model read from Keras only)
    op_cls: str | None = None
    #: the class of the layer a wrapper op holds (Bidirectional's LSTM)
    wrapped: str | None = None


@dataclass
class KerasBlocks:
    """Where the layers of the block calls live in a printed Keras subclass that holds blocks of
    their own classes (printers/keras/subclass.py ``record_blocks``; the weights code reads it:
    ``model.res1.conv1_conv2d`` holds the node ``res1_conv1_conv2d``)."""

    #: node name → (the block's attribute, the block graph's node name)
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the block's attribute → its graph
    graphs: dict[str, Graph] = field(default_factory=dict)
    #: ``__init__``'s order of the model's own layers (``("layer", node name)``) and blocks
    #: (``("block", attribute, class)``)
    order: list[tuple] = field(default_factory=list)
    #: a repeated block's list (``blocks``, items ``blocks.0`` ..) → its printed attribute
    #: (``layers_``: ``layers`` is a keras.Model property); the weights read ``model.layers_[0]``
    lists: dict[str, str] = field(default_factory=dict)


@dataclass
class WeightPlan:
    """``Graph.weight_plan``: see the module docstring. A field is None until computed."""

    torch_state: StatePlan | None = None
    source_state: StatePlan | None = None
    keras_layers: dict[str, KerasLayer] | None = None
    layer_attributes: dict[str, str] | None = None
    subclass: bool = False
    #: the printed Keras subclass holds blocks of their own classes (None: it holds none)
    keras_blocks: KerasBlocks | None = None
