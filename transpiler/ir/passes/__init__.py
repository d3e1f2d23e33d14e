"""IR passes and the order they run in, per target.

For PyTorch: shape inference (static, every size known) → layout amendment
(channels-last → channels-first by propagation) → transpose folding → operator selection (torch forms:
explicit padding, decompositions) → shape inference again. ``lint`` after each pass.
"""

from __future__ import annotations

from typing import Callable

from transpiler.ir.graph import Graph
from transpiler.ir.passes.layout_amendment import amend_layout, fold_transposes
from transpiler.ir.shapes import infer_shapes
from transpiler.ir.passes.torch_selection import select_torch_ops

TORCH_PIPELINE: tuple[tuple[str, Callable[[Graph], Graph]], ...] = (
    ("shape_inference", infer_shapes),
    ("layout_amendment", amend_layout),
    ("fold_transposes", fold_transposes),
    ("torch_selection", select_torch_ops),
    ("shape_inference", infer_shapes),
)


def run_pipeline(graph: Graph, pipeline=TORCH_PIPELINE, lint: bool = True) -> Graph:
    """Run ``pipeline`` over ``graph`` in place, linting after every pass."""
    if lint:
        graph.lint()
    for _name, fn in pipeline:
        graph = fn(graph)
        if lint:
            graph.lint()
    return graph
