"""Binding a model's sizes from a Keras checkpoint's shapes (issue 17 item 2).

A generated module takes the builder's parameters (``Net(num_features, num_classes)``), so a
checkpoint saved from ``build_model(num_classes=5)`` belongs to the same translation: its
tensor shapes say which arguments it was built with. :func:`checkpoint_builder_args` solves
them from the sizes' source expressions (``ir.sizes.bind_shapes``).
"""

from __future__ import annotations

from typing import Any

from transpiler.ir import sizes
from transpiler.ir.params import expected_shapes, param_names
from transpiler.ir.program import ModelDef
from transpiler.weights.errors import CheckpointError
from transpiler.weights.keras_files import KerasCheckpoint
from transpiler.weights.mapping import source_layers


def checkpoint_builder_args(md: ModelDef, ckpt_path: str) -> dict[str, Any] | None:
    """The builder arguments ``md``'s Keras checkpoint was saved with, when they differ from
    the ones the model was transpiled for; None when they are the same (or the checkpoint's
    layers are not ``md``'s: the conversion then reports that). Raises ``CheckpointError``
    when a shape differs in a way no argument explains."""
    from transpiler.weights.convert import match_layers

    if not md.builder or not any(sizes.symbol_of(v) is not None for v in md.builder_args.values()):
        return None
    pairs = []
    with KerasCheckpoint(ckpt_path) as ck:
        try:
            matched, _ = match_layers(md.graph, ck.layers | ck.variables, ckpt_path)
        except CheckpointError:
            return None
        layers = source_layers(md.graph)
        for name, layer in matched.items():
            node = layers[name]
            names = param_names(node)
            if len(layer.tensors) != len(names):
                return None
            shapes = expected_shapes(node)
            pairs += [(shapes[p], tuple(int(s) for s in t.shape)) for p, t in zip(names, layer.tensors)]
    try:
        env = sizes.bind_shapes(pairs)
    except ValueError as exc:
        raise CheckpointError(f"{ckpt_path}: {exc}") from None
    args: dict[str, Any] = {}
    for pname, value in md.builder_args.items():
        if isinstance(value, tuple) and sizes.symbol_of(value) is not None:
            args[pname] = tuple(env.get((pname, i), int.__int__(v)) for i, v in enumerate(value))
        elif sizes.symbol_of(value) is not None:
            args[pname] = env.get((pname, None), int.__int__(value))
        else:
            args[pname] = value
    same = all(args[n] == (tuple(int.__int__(x) for x in v) if isinstance(v, tuple) else v)
               for n, v in md.builder_args.items())
    return None if same else args


def torch_checkpoint_args(md: ModelDef, state: dict[str, Any], ckpt_path: str) -> dict[str, Any] | None:
    """The constructor arguments a PyTorch checkpoint of ``md``'s class was saved with, when the
    class was read for placeholder sizes (a library module's ``Net(n_in, n_out)``, built for
    sizes named after its parameters): the names solved from the checkpoint tensors' shapes
    (``ir.sizes.bind_shapes``: ``upscale_factor ** 2`` output channels give upscale_factor).
    None when ``md`` has no such sizes or the checkpoint has the same ones; ``CheckpointError``
    when a shape differs in a way no argument explains."""
    import numpy as np

    if not any(not isinstance(v, tuple) and sizes.symbol_of(v) is not None
               for v in (md.builder_args or {}).values()):
        return None
    plan = md.graph.weight_plan.source_state
    if plan is None or plan.error:
        return None
    pairs = []
    for entry in plan:
        if entry.constant is not None or entry.key not in state:
            continue
        have = tuple(int(d) for d in np.shape(state[entry.key]))
        for dim, size in zip(have, _torch_dims(entry)):
            if size is not None:
                pairs.append(((size,), (dim,)))
    try:
        env = sizes.bind_shapes(pairs)
    except ValueError as exc:
        raise CheckpointError(f"{ckpt_path}: {exc}") from None
    args = {name: env.get((name, None), int.__int__(v)) if not isinstance(v, tuple) and
            sizes.symbol_of(v) is not None else v for name, v in md.builder_args.items()}
    same = all(args[n] == v for n, v in md.builder_args.items() if not isinstance(v, tuple))
    return None if same else args


#: distinct probe sizes, one per canonical dim of a plan entry (primes: no two products meet)
_PROBES = (7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)


def _torch_dims(entry) -> list:
    """The torch tensor's dims of a plan entry as the model's sizes (``Size`` expressions or
    ints; None where the transform merges canonical dims). The transform is run on probe
    shapes, each canonical dim a distinct prime, and each torch dim traced back to its own."""
    from transpiler.weights.mapping import torch_shape

    canonical = expected_shapes(entry.node)
    probes, back = {}, {}
    it = iter(_PROBES)
    try:
        for param, shape in canonical.items():
            probes[param] = tuple(next(it) for _ in shape)
            back.update(zip(probes[param], shape))
    except StopIteration:
        return []
    try:
        shape = torch_shape(entry, probes)
    except Exception:  # noqa: BLE001 - a transform that needs the real sizes: nothing bound from it
        return []
    return [back.get(int(d)) for d in shape]
