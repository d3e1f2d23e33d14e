"""ONNX out of a script: ``transpile train.py --to onnx -o model.onnx [--weights W] [--dynamic-batch]``.

The script is read as for its usual translation (Keras → the PyTorch pipeline's channels-first
graph; PyTorch → the graph the torch frontend reads, its source plan recorded, through the same
pipeline), and ``printers/onnx`` prints the model graph with its weights as initializers: the
checkpoint's (``--weights``: a Keras checkpoint for a Keras script, the user's state_dict for a
PyTorch one) or, without one, the initial values the source framework's default initializers
would draw (seeded numpy), which the model's doc string says. Inputs are channels-first, as
ONNX models are.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from transpiler.printers.onnx.builder import Unsupported


@dataclass
class OnnxExport:
    model: Any  # onnx.ModelProto
    framework: str  # "keras" or "torch"
    name: str  # the builder or class exported
    found: list[str]  # every model the script builds
    warnings: list[str] = field(default_factory=list)


def read_script(source: str, path: str, framework: str):
    """The program with its model graphs channels-first (the PyTorch pipeline run on each)."""
    from transpiler.ir.passes import TORCH_PIPELINE, run_pipeline

    if framework == "keras":
        from transpiler.translate import translate

        return translate(source, path, "pytorch").program
    from transpiler import weight_plan
    from transpiler.frontend_ast.torch.frontend import run_torch_frontend

    def prepare(program) -> None:
        for md in program.models:
            run_pipeline(md.graph, (("record_source_state", weight_plan.record_source_state),) + TORCH_PIPELINE)

    return run_torch_frontend(source, path, prepare).program


def framework_of(source: str) -> str | None:
    from transpiler.source_imports import KERAS_MODULES, TORCH_MODULES, imports_keras

    keras, torch = imports_keras(source, KERAS_MODULES), imports_keras(source, TORCH_MODULES)
    if keras == torch:
        return None
    return "keras" if keras else "torch"


def _choose(program, wanted: str | None):
    models = list(program.models)
    names = [md.builder or md.class_name for md in models]
    if not models:
        stubs = [str(d) for d in program.diagnostics if d.severity == "stub"][:3]
        raise Unsupported("the script builds no model the transpiler reads" + (": " + "; ".join(stubs) if stubs else ""))
    if wanted is not None:
        for md, name in zip(models, names):
            if wanted in (md.builder, md.class_name):
                return md, names
        raise Unsupported(f"--model {wanted}: the script's models are {', '.join(names)}")
    return models[0], names


def export_script(source: str, path: str, *, weights: str | None = None, dynamic_batch: bool = False,
                  model: str | None = None, seed: int = 0) -> OnnxExport:
    """The ONNX model of the script's model (the first it builds, or ``model``)."""
    from transpiler.printers.onnx import initial
    from transpiler.printers.onnx.export import export_graph
    from transpiler.weights import canonical as canon

    framework = framework_of(source)
    if framework is None:
        raise Unsupported("the script imports neither Keras/TensorFlow nor PyTorch (or both): "
                          "which framework's model to export is unclear")
    program = read_script(source, path, framework)
    md, names = _choose(program, model)
    graph = md.graph
    for span, message in graph.unsupported:
        raise Unsupported(f"{span}: {message}")
    warnings: list[str] = []
    label = md.builder or md.class_name
    base = os.path.basename(path)
    if weights:
        if framework == "keras":
            params, warnings = canon.keras_canonical(graph, weights)
        else:
            params = canon.torch_canonical(graph, weights)
        origin = f"weights from {os.path.basename(weights)}"
    else:
        params = initial.draw(graph, framework, seed)
        origin = (f"initial weights drawn with numpy (seed {seed}) as "
                  f"{initial.KERAS_DOC if framework == 'keras' else initial.TORCH_DOC} would; "
                  "export with --weights for trained ones")
    doc = (f"{label} of {base} ({'Keras' if framework == 'keras' else 'PyTorch'}), exported by transpiler; "
           f"inputs channels-first; {origin}.")
    proto = export_graph(graph, canon.node_params(graph, params), dynamic_batch=dynamic_batch, doc=doc)
    return OnnxExport(proto, framework, label, names, warnings)


def check(model) -> None:
    """``onnx.checker`` with full shape inference: raises ``onnx.checker.ValidationError``."""
    import onnx

    onnx.checker.check_model(model, full_check=True)


def write_model(path: str, model) -> int:
    """Write atomically (a temp file in the same folder, then a rename); returns the bytes."""
    from transpiler.paths import atomic_write

    data = model.SerializeToString()
    atomic_write(path, data)
    return len(data)
