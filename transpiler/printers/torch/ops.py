"""PyTorch emitters: the registry (one emitter per op family, registered by decorator in
the ``ops_<family>`` modules this module imports at its end) and the helpers they share.

An emitter turns an IR node (after the torch passes: channels-first, explicit
padding) into an ``Emission``: the ``nn`` module built in ``__init__`` (if any), the
code ``forward`` runs, the state_dict entries with the transform from each canonical
param, and the statements that reproduce Keras' default initializers.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Callable

from transpiler.ir import ops as ops_table
from transpiler.ir.registry import OpRegistry
from transpiler.ir.graph import Node
from transpiler.ir.initializers import Initializer
from transpiler.ir.params import expected_shapes
from transpiler.ir.shapes import channel_axis
from transpiler.printers import differences
from transpiler.printers.code import lit, size_arg
from transpiler.printers.torch import print_notes
from transpiler.ir.transforms import Transform


@dataclass(frozen=True)
class StateEntry:
    """One torch state_dict tensor: ``key`` under the module, from canonical ``source``.

    ``source`` is None for a torch buffer with no source counterpart; it holds
    ``constant`` (BatchNorm's ``num_batches_tracked``).
    """

    key: str
    source: str | None
    transform: Transform
    constant: int | float | None = None


@dataclass
class Emission:
    """What one node becomes in the generated module.

    ``call(ins)`` gives the output expression from the input expressions; ``statements
    (ins, outs)`` is used instead for nodes with several outputs. ``unary`` marks a
    one-input function that may wrap an inlined expression (``F.relu(self.conv(x))``).
    ``parameter`` is set when the attribute is a bare ``nn.Parameter``.
    """

    module: str | None = None
    call: Callable[[list[str]], str] | None = None
    statements: Callable[[list[str], list[str]], list[str]] | None = None
    state: list[StateEntry] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    unary: bool = False
    inline_anywhere: bool = False
    parameter: bool = False
    imports: set[str] = field(default_factory=set)
    #: extra bare parameters next to the module: (suffix, canonical param, size, init)
    extra_params: list[tuple[str, str, int, str]] = field(default_factory=list)
    #: statements for ``__init__`` right after the module is built
    setup: list[str] = field(default_factory=list)
    #: buffers registered on the model itself: (suffix, canonical param, initial value); a
    #: canonical param None is a constant of the model, kept out of the state_dict
    buffers: list[tuple[str, str | None, str]] = field(default_factory=list)
    #: a Python infix operator over its inputs (``a * b``): a single-use operand computed just
    #: before may be written into it (the emitter parenthesises by precedence)
    infix: bool = False
    #: ``train if self.training else infer``: the forward writer prints an ``if self.training:``
    #: block with each input's own statements inside its branch
    mode_select: bool = False


def buffer_line(attr: str, source: str | None, value: str) -> str:
    """``__init__``'s statement registering one of ``Emission.buffers`` as ``attr``."""
    persistent = "" if source is not None else ", persistent=False"
    return f'self.register_buffer("{attr}", {value}{persistent})'


Emitter = Callable[[Node, str], Emission]
_EMITTERS = OpRegistry("torch emitter")
emitter = _EMITTERS.register  # (decorator: ``@emitter("dense")``)


def has_emitter(op: str) -> bool:
    return op in _EMITTERS


def emit(node: Node) -> Emission:
    """The emission for ``node``; ``self.<name>`` refers to its module."""
    return _layer_state(node, _idiomatic(node, _EMITTERS[node.op](node, f"self.{node.name}")), f"self.{node.name}")


def emit_as(node: Node, ref: str) -> Emission:
    """The emission for ``node`` whose module the code reaches as ``ref`` (``self.blocks[0]``)."""
    return _layer_state(node, _idiomatic(node, _EMITTERS[node.op](node, ref)), ref)


#: ops whose emitter reads the layer's run-time state itself (a Normalization's adapted buffers)
_OWN_STATE = frozenset({"normalization"})


def _layer_state(node: Node, em: Emission, ref: str) -> Emission:
    """The source layer's facts about its module's parameters, right after the module is built:
    ``trainable=False`` → ``requires_grad_(False)``; weights the program sets when it runs
    (``layer.set_weights([matrix])`` before the model is built: ``adapt_key``) → the module
    starts from them (runtime/torch/preprocessing.py ``adapted_state``)."""
    layer = node.layer
    if layer is None or em.module is None:
        return em
    setup = []
    if layer.adapt_key is not None and node.op not in _OWN_STATE:
        setup.append(f"adapted_state(self, {ref.split('.', 1)[1]!r}, {layer.adapt_key!r})")
    if layer.constant_call:
        # Keras runs the call once while building the model and keeps its result: the layer's
        # weights are constants, not the model's weights (not in its state_dict nor its files)
        em.state = []
        setup += ["# called on constants only: Keras keeps the call's result, its weights are none of the model's",
                  f"for module in {ref}.modules():",
                  "    for name, weight in list(module.named_parameters(recurse=False)):",
                  "        delattr(module, name)",
                  "        module.register_buffer(name, weight.detach(), persistent=False)"]
    elif layer.frozen:
        setup.append(f"{ref}.requires_grad_(False)")
    if setup:
        em.setup = list(em.setup) + setup
    return em


def _idiomatic(node: Node, em: Emission) -> Emission:
    """Without --exact a module keeps torch's default initialisation: its ``reset_parameters``
    lines reproducing Keras' defaults go, unless the program chose an initializer for the layer
    (``node.from_keras.initializers``: then the layer is initialised as a whole, as Keras would) or
    the weight is a bare ``nn.Parameter`` that has no initialisation of its own."""
    if em.init and not differences.exact() and not em.parameter and not node.from_keras.initializers:
        differences.replaced("initializers")
        em.init = []
    return em


def state_entries(node: Node) -> list[StateEntry]:
    return emit(node).state


# ---------------------------------------------------------------------------------
# Initializers: Keras' defaults (or the user's) reproduced with torch.nn.init.
# ---------------------------------------------------------------------------------
_INIT = {
    "glorot_uniform": "nn.init.xavier_uniform_({t})",
    "he_uniform": 'nn.init.kaiming_uniform_({t}, nonlinearity="relu")',
    "lecun_uniform": 'nn.init.kaiming_uniform_({t}, nonlinearity="linear")',
    "zeros": "nn.init.zeros_({t})",
    "ones": "nn.init.ones_({t})",
    "orthogonal": "nn.init.orthogonal_({t})",
    "uniform": "nn.init.uniform_({t}, -0.05, 0.05)",  # Keras' RandomUniform() defaults
}


def init_line(node: Node, key: str, tensor: str, default: str) -> str:
    """The init statement for ``tensor`` from the user's ``key`` initializer or ``default``."""
    chosen = node.from_keras.initializers.get(key, default)
    drawn = _drawn(chosen, tensor)
    if drawn is not None:
        return drawn
    name = chosen.snake_name() if _named(chosen) else chosen if isinstance(chosen, str) else None
    if name is not None:
        name = {"GlorotUniform": "glorot_uniform", "HeUniform": "he_uniform", "Zeros": "zeros",
                "Ones": "ones", "Orthogonal": "orthogonal", "LecunUniform": "lecun_uniform",
                "RandomUniform": "uniform",
                "zero": "zeros", "one": "ones"}.get(name, name)
    if name is None and isinstance(chosen, Initializer) and chosen.variance_scaling() is not None:
        name = chosen.variance_scaling()  # (scale, fan mode, distribution)
    if name not in _INIT:
        scaled = _variance_scaling_line(node, key, tensor, name)
        if scaled is not None:
            return scaled
        print_notes.notes(node).init_warnings.append(f"{key}={chosen!r} not reproduced; "
                                                         f"{default} used")
        name = default
    return _INIT[name].format(t=tensor)


#: the canonical param each ``*_initializer`` argument initialises
_INITIALIZED_PARAM = {"kernel_initializer": "kernel", "recurrent_initializer": "recurrent_kernel",
                      "embeddings_initializer": "embeddings"}


def _variance_scaling_line(node: Node, key: str, tensor: str, name) -> str | None:
    """``he_normal``, ``glorot_normal``, ``lecun_normal`` (and the uniform ones): Keras'
    variance scaling with the fans of the Keras weight (torch's fans differ for some
    layouts); None when the weight's shape is not known here."""
    spec = name if isinstance(name, tuple) else _VARIANCE_SCALING.get(name)
    if spec is None:
        return None
    try:
        shape = expected_shapes(node).get(_INITIALIZED_PARAM.get(key, ""))
    except (KeyError, ValueError, TypeError, IndexError):  # shapes not resolvable: the warning path
        shape = None
    if not shape:
        return None
    scale, mode, dist = spec
    fan_in, fan_out = _keras_fans(shape)
    fan = max(1.0, {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[mode])
    if dist == "uniform":
        limit = math.sqrt(3.0 * scale / fan)
        return f"nn.init.uniform_({tensor}, {lit(-limit)}, {lit(limit)})"
    if dist == "untruncated_normal":  # (VarianceScaling(distribution="untruncated_normal"))
        return f"nn.init.normal_({tensor}, 0.0, {lit(math.sqrt(scale / fan))})"
    std = math.sqrt(scale / fan) / 0.87962566103423978  # Keras' normal truncated at 2 std, rescaled
    return f"nn.init.trunc_normal_({tensor}, 0.0, {lit(std)}, {lit(-2 * std)}, {lit(2 * std)})"


def _named(chosen) -> bool:
    """An initializer object without arguments (but a seed): the same as its string alias."""
    return isinstance(chosen, Initializer) and not set(chosen.params) - {"seed"}


def _drawn(chosen, tensor: str) -> str | None:
    """The init statement for an initializer object with its own arguments
    (``RandomNormal(stddev=0.02)``); None for other initializers."""
    dist = chosen.distribution() if isinstance(chosen, Initializer) else None
    if dist is None:
        return None
    if dist[0] == "normal":
        return f"nn.init.normal_({tensor}, {lit(dist[1])}, {lit(dist[2])})"
    if dist[0] == "uniform":
        return f"nn.init.uniform_({tensor}, {lit(dist[1])}, {lit(dist[2])})"
    if dist[0] == "truncated_normal":  # Keras cuts at two standard deviations
        mean, std = dist[1], dist[2]
        return f"nn.init.trunc_normal_({tensor}, {lit(mean)}, {lit(std)}, {lit(mean - 2 * std)}, {lit(mean + 2 * std)})"
    return f"nn.init.constant_({tensor}, {lit(dist[1])})"


def _bias_inits(node: Node, m: str) -> list[str]:
    return [init_line(node, "bias_initializer", f"{m}.bias", "zeros")] if node.attrs.get("use_bias") else []


def atom(expr: str) -> str:
    """``expr`` safe to put in front of ``.method()``, ``[...]`` or an operator.

    An input expression may be an inlined binary expression (``a + b``); postfix
    syntax on it would bind to ``b`` only.
    """
    try:
        tree = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return f"({expr})"
    if isinstance(tree, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant)):
        return expr
    return f"({expr})"


def _channels(node: Node) -> int:
    x = node.inputs[0]
    return x.shape[channel_axis(x.layout)]


def _torch_padding(padding) -> dict:
    if padding == "valid":
        return {}
    if padding == "same":
        return {"padding": "same"}
    pads = tuple(b for b, _ in padding)
    return {"padding": size_arg(pads)} if any(pads) else {}


def _keras_fans(shape: tuple) -> tuple[int, int]:
    """Keras' ``compute_fans``: (fan_in, fan_out) of a weight of ``shape``."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2]) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


#: Keras' variance-scaling initializers: (scale, fan mode, distribution)
_VARIANCE_SCALING = {"glorot_uniform": (1.0, "avg", "uniform"), "glorot_normal": (1.0, "avg", "normal"),
                     "he_uniform": (2.0, "in", "uniform"), "he_normal": (2.0, "in", "normal"),
                     "lecun_uniform": (1.0, "in", "uniform"), "lecun_normal": (1.0, "in", "normal")}


# The emitters, one module per op family (each registers its own on import)
from transpiler.printers.torch import (  # noqa: E402,F401  (registration)
    ops_layers, ops_norm, ops_activations, ops_recurrent, ops_attention, ops_math, ops_tensors, ops_opaque,
    data_lookups)
from transpiler.printers.torch.ops_math import new_axis_dim, subscript_text  # noqa: E402,F401  (shared)
