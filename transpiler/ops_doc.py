"""Render the op support table (docs/ops.md) from the ops table and the registries.

A documentation tool on top of the layers (it reads the frontend and printer registries), so it
sits beside the drivers, not in ``ir/``.

``python -m transpiler.ops_doc > docs/ops.md``; a test fails when the file drifts.
"""

from __future__ import annotations

from transpiler.frontend_ast.keras import layers as keras_layers
from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
from transpiler.ir import ops as ops_table
from transpiler.ir.passes import torch_selection
from transpiler.printers.onnx import export as onnx_export
from transpiler.printers.torch import ops as torch_ops


def _attrs(spec: ops_table.OpSpec) -> str:
    parts = []
    for attr in spec.attrs.values():
        if attr.default is ops_table.REQUIRED:
            parts.append(f"`{attr.name}: {attr.type}`")
        else:
            parts.append(f"`{attr.name}: {attr.type} = {attr.default!r}`")
    return ", ".join(parts) or "—"


def _params(spec: ops_table.OpSpec) -> str:
    if spec.wraps:
        return "the wrapped layer's, twice (`forward.*`, `backward.*`)"
    parts = []
    for p in spec.params:
        text = f"`{p.name}: {p.layout}`"
        if p.when:
            text += f" if {p.when}"
        if not p.trainable:
            text += " (buffer)"
        parts.append(text)
    return ", ".join(parts) or "—"


def render_ops_table() -> str:
    """The markdown support table, one row per canonical op."""
    keras_by_op: dict[str, list[str]] = {}
    for cls, reg in sorted(keras_layers.registered_classes().items()):
        for op in reg.ops:
            keras_by_op.setdefault(op, []).append(cls)
    for key, entry in sorted(keras_tensor_ops.registered_functions().items()):
        if entry.ops:  # a function is listed with the op it stands for (its first)
            keras_by_op.setdefault(entry.ops[0], []).append(key)
    lines = [
        "# Supported ops",
        "",
        "Generated from `transpiler/ir/ops.py` and the frontend/printer registries by",
        "`python -m transpiler.ops_doc > docs/ops.md`; `tests/test_docs.py` fails when it drifts.",
        "Layout classes: *implicit* (channel axis implied, e.g. conv), *transparent* (element-wise),",
        "*attribute* (axis attributes rewritten), *terminate* (needs the source layout).",
        "Param layouts use letters: H/W/D spatial, I/O in/out channels, M depth multiplier,",
        "C channels, G gates × units, U units, V vocabulary, E embedding size, B bias rows, A any.",
        "",
        f"{len(ops_table.all_ops())} ops.",
        "",
        "| op | layout | attributes | params | Keras | PyTorch | ONNX out |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, spec in ops_table.all_ops().items():
        keras = ", ".join(f"`{c}`" for c in keras_by_op.get(name, [])) or "—"
        if torch_ops.has_emitter(name):
            torch = "emitted"
        elif name in torch_selection._RULES:
            torch = "decomposed"
        else:
            torch = "—"
        onnx = "emitted" if onnx_export.emitter_for(name) is not None else "—"
        lines.append(f"| `{name}` | {spec.layout} | {_attrs(spec)} | {_params(spec)} | {keras} | {torch} | {onnx} |")
    activations = ", ".join(f"`{a}`" for a in keras_layers.ACTIVATIONS)
    lines += ["", f"`activation=` strings: {activations}.", "",
              "Functions: `ops.X` is `keras.ops.X` (also `keras.ops.numpy.X`, `keras.ops.nn.X`, ...),",
              "`random.X` is `keras.random.X`, `tf.X` is `tf.X`, `tf.math.X` or `tf.linalg.X`. The activations",
              "above are also functions (`keras.activations.X`, `keras.ops.X`, `tf.nn.X`), with their",
              "arguments (`axis=`, `negative_slope=`/`alpha=`, `approximate=`: `keras.ops.gelu` approximates).",
              "Python operators on tensors: " + ", ".join(f"`{o}`" for o in keras_tensor_ops.PYTHON_OPERATORS)
              + "; a number operand is a `rescaling` (affine) or a `constant`.",
              "`keras.ops.shape`/`tf.shape` give the static shape (the batch size is read at run time).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render_ops_table(), end="")
