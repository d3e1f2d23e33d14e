"""The translation path for ONNX model files: ``.onnx`` → ir.Program → target source + weights.

Imports ``onnx`` (through the ONNX reader) and no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transpiler.ir.program import Diagnostic, Program

WEIGHTS_SUFFIX = {"pytorch": ".safetensors", "keras": ".weights.h5"}

#: dtypes a target holds but cannot compute with (torch: no CPU kernels for add, max, ... on
#: the unsigned types wider than uint8)
NO_ARITHMETIC = {"pytorch": ("uint16", "uint32", "uint64"), "keras": ()}


@dataclass
class OnnxTranslation:
    """The result of translating one ONNX file (``weights_bytes``: None when none were written)."""

    program: Program
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    weights_path: str | None = None
    weights_bytes: int | None = None

    @property
    def stubs(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "stub"]


def default_weights_path(output: str, target: str) -> str:
    """The checkpoint beside ``output`` under its name (``model.py`` → ``model.safetensors``)."""
    base = output[:-3] if output.endswith(".py") else output
    return base + WEIGHTS_SUFFIX[target]


def prepare(program, target: str, lint: bool = True) -> None:
    """Run the target's passes over the ONNX model's graph (before printing): the torch
    passes for a graph that is channels-first already; for Keras, average pooling with
    padding left out of the mean decomposed first, then the Keras pipeline (layout to
    channels-last and operator selection)."""
    from transpiler.ir.passes import run_pipeline
    from transpiler.ir.passes import pool_padding
    from transpiler.ir.shapes import infer_shapes

    graph = program.models[0].graph
    if graph.meta.get("unsupported"):
        return
    lacking = [v for v in (*graph.inputs, *(o for n in graph.nodes for o in n.outputs))
               if v.dtype in NO_ARITHMETIC[target]]
    if lacking:
        message = (f"{lacking[0].var or lacking[0].name!r} has type {lacking[0].dtype}, which {target} "
                   "holds but does not compute with")
        graph.meta["unsupported"] = [(None, message)]
        program.stub(None, message)
        return
    if target == "pytorch":
        from transpiler.ir.passes.torch_selection import select_torch_ops

        pipeline = (("shape_inference", infer_shapes), ("pool_padding", pool_padding.decompose_wide_pool_padding),
                    ("torch_selection", select_torch_ops), ("shape_inference", infer_shapes))
    else:
        from transpiler.ir.passes import KERAS_PIPELINE
        from transpiler.weight_plan import record_source_state

        pipeline = (("pool_padding", pool_padding.decompose_uncounted_pool_padding),
                    ("record_source_state", record_source_state)) + tuple(KERAS_PIPELINE)
    run_pipeline(graph, pipeline, lint=lint)
    for span, message in graph.meta.get("unsupported") or ():  # (what the passes found the target cannot express)
        program.stub(span, message)


def translate_onnx(path: str, target: str = "pytorch", weights_out: str | None = None,
                   lint: bool = True) -> OnnxTranslation:
    """Read the ONNX model at ``path``, print it for ``target`` and, with ``weights_out``,
    write its weights for the printed model (safetensors / ``.pt`` for PyTorch, a Keras 3
    ``.weights.h5`` for Keras)."""
    from transpiler.frontend_onnx import read_onnx
    from transpiler.printers.onnx_models import print_keras_model, print_torch_model
    from transpiler.weights import onnx_params

    if target not in WEIGHTS_SUFFIX:
        raise ValueError(f"unknown target {target!r} (choose from {', '.join(WEIGHTS_SUFFIX)})")
    program = read_onnx(path)
    prepare(program, target, lint=lint)
    text = (print_torch_model if target == "pytorch" else print_keras_model)(program)
    from transpiler import weight_plan

    for md in program.models:  # (what the weights writers read: ir/state_plan.py)
        if target == "pytorch":
            weight_plan.record_torch_state(md.graph)
        else:
            weight_plan.record_keras_printed_layers(md.graph)
    result = OnnxTranslation(program, text, list(program.diagnostics))  # (after printing: its stubs too)
    graph = program.models[0].graph
    if weights_out and not graph.meta.get("unsupported"):
        write = onnx_params.write_torch if target == "pytorch" else onnx_params.write_keras
        result.weights_bytes = write(graph, weights_out)
        result.weights_path = weights_out
    return result
