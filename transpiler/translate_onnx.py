"""The translation path for ONNX model files: ``.onnx`` → ir.Program → target source + weights.

Imports ``onnx`` (through the ONNX reader) and no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transpiler.ir.program import Diagnostic, Program

WEIGHTS_SUFFIX = {"pytorch": ".safetensors", "keras": ".weights.h5"}


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
    text = (print_torch_model if target == "pytorch" else print_keras_model)(program, lint=lint)
    result = OnnxTranslation(program, text, list(program.diagnostics))  # (after printing: its stubs too)
    graph = program.models[0].graph
    if weights_out and not graph.meta.get("unsupported"):
        write = onnx_params.write_torch if target == "pytorch" else onnx_params.write_keras
        result.weights_bytes = write(graph, weights_out)
        result.weights_path = weights_out
    return result
