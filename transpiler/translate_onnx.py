"""The translation path for ONNX model files: ``.onnx`` → ir.Program → target source + weights.

Imports ``onnx`` (through the ONNX reader) and no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transpiler.ir.program import Diagnostic, Program

WEIGHTS_SUFFIX = {"pytorch": ".safetensors", "keras": ".weights.h5"}

#: dtypes a target holds but cannot compute with (torch: no CPU kernels for add, max, ... on
#: the unsigned types wider than uint8; it converts them)
NO_ARITHMETIC = {"pytorch": ("uint16", "uint32", "uint64"), "keras": ()}
#: of those, the ones int64 holds every value of: an input is widened, an output cast back
WIDENED = {"pytorch": ("uint16", "uint32"), "keras": ()}


def widen_unsigned(graph, target: str) -> None:
    """Inputs of a type the target holds but has no arithmetic for, and int64 holds exactly
    (torch's uint16/uint32), are read as int64 (a ``cast`` after the input); an output of such
    a type is cast back (int64's low bits: ONNX's wrap-around of add, sub, mul)."""
    from transpiler.ir.shapes import infer_shapes

    wide = [v for v in graph.inputs if v.dtype in WIDENED[target]]
    if not wide:
        return
    before = graph.origin.output_types or [v.dtype for v in graph.outputs]
    first = graph.nodes[0] if graph.nodes else None
    for v in wide:
        cast = graph.add_node("cast", f"{v.var or 'x'}_wide", [v], attrs={"dtype": "int64"}, before=first)
        graph.replace_uses(v, cast.outputs[0], after=cast)
        if any(o is v for o in graph.outputs):
            graph.outputs = [cast.outputs[0] if o is v else o for o in graph.outputs]
    infer_shapes(graph)
    outputs = []
    for v, dtype in zip(graph.outputs, before):
        if dtype in WIDENED[target]:
            v = graph.add_node("cast", f"{v.var or 'y'}_{dtype}", [v], attrs={"dtype": dtype}).outputs[0]
        outputs.append(v)
    graph.outputs = outputs
    infer_shapes(graph)


def _without_arithmetic(graph, target: str) -> list:
    """The values of a type ``target`` cannot compute with that a node other than a conversion
    makes or reads (holding and converting them is fine)."""
    casts = {id(n) for n in graph.nodes if n.op == "cast"}
    found = []
    for v in (*graph.inputs, *(o for n in graph.nodes for o in n.outputs)):
        if v.dtype not in NO_ARITHMETIC[target]:
            continue
        if (v.producer is not None and id(v.producer) not in casts) or any(
                id(n) not in casts for n in graph.consumers(v)):
            found.append(v)
    return found


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
    if graph.unsupported:
        return
    widen_unsigned(graph, target)
    lacking = _without_arithmetic(graph, target)
    if lacking:
        message = (f"{lacking[0].var or lacking[0].name!r} has type {lacking[0].dtype}, which {target} "
                   "holds but does not compute with")
        graph.unsupported = [(None, message)]
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
    for span, message in graph.unsupported or ():  # (what the passes found the target cannot express)
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
    if weights_out and not graph.unsupported:
        write = onnx_params.write_torch if target == "pytorch" else onnx_params.write_keras
        result.weights_bytes = write(graph, weights_out)
        result.weights_path = weights_out
    return result
