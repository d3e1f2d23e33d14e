"""IR passes and the order they run in, per target.

For PyTorch: shape inference (static, every size known) → the layout pass (channels-last →
channels-first by propagation, ``layout_pass``) → transpose folding → operator selection (torch
forms: explicit padding, decompositions) → shape inference again. For Keras: the same layout
pass the other way (channels-first → channels-last) and the same transpose folding, then Keras
selection (Keras forms of paddings; what Keras cannot express is recorded). ``lint`` after
each pass.
"""

from __future__ import annotations

from typing import Callable

from transpiler.ir.graph import Graph
from transpiler.ir.layout import KERAS_TO_TORCH, TORCH_TO_KERAS
from transpiler.ir.passes.keras_selection import select_keras_ops
from transpiler.ir.passes.layout_pass import fold_transposes, layout_step
from transpiler.ir.shapes import infer_shapes
from transpiler.ir.passes.torch_selection import select_torch_ops

Pipeline = tuple[tuple[str, Callable[[Graph], Graph]], ...]

TORCH_PIPELINE: Pipeline = (
    ("shape_inference", infer_shapes),
    ("layout", layout_step(KERAS_TO_TORCH)),
    ("fold_transposes", fold_transposes),
    ("torch_selection", select_torch_ops),
    ("shape_inference", infer_shapes),
)

KERAS_PIPELINE: Pipeline = (
    ("layout", layout_step(TORCH_TO_KERAS)),
    ("fold_transposes", fold_transposes),
    ("keras_selection", select_keras_ops),
)

#: every target's pipeline (tests/test_layout_pass.py: each holds the one layout pass once)
PIPELINES: dict[str, Pipeline] = {"pytorch": TORCH_PIPELINE, "keras": KERAS_PIPELINE}


def run_pipeline(graph: Graph, pipeline=TORCH_PIPELINE, lint: bool = True) -> Graph:
    """Run ``pipeline`` over ``graph`` in place, linting after every pass."""
    if lint:
        graph.lint()
    for _name, fn in pipeline:
        graph = fn(graph)
        if lint:
            graph.lint()
    return graph
