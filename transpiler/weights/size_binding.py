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
