"""Print a model read from an ONNX file as the source a person would write.

PyTorch: an ``nn.Module`` subclass (layers in ``__init__``, a ``forward``) and
``build_model()`` returning it; the graph is already channels-first, so only the torch
operator selection runs (no layout change). Keras: ``build_model()`` returning a
``keras.Sequential`` or functional ``keras.Model`` over channels-last inputs, through the
same passes the PyTorch → Keras direction uses (the layout pass moves feature maps to
channels-last and permutes the weights; a Flatten before a Dense is absorbed into the
Dense's kernel). Both are black-formatted; a model with ops the table lacks becomes a
``build_model`` that raises ``NotImplementedError`` naming each of them.
"""

from __future__ import annotations

import os
import re

from transpiler.ir.layout import is_channels_first
from transpiler.ir.program import ModelDef, Program
from transpiler.printers import code
from transpiler.printers.formatter import format_python


def _header(program: Program, target: str) -> list[str]:
    md = program.models[0]
    g = md.graph
    name = os.path.basename(program.path)
    # the graph, file and producer names come from the model file: printed through the
    # escaping helpers, they cannot end the docstring or the comment
    doc = [f"{g.name}: the ONNX model {name} as {target} source.", ""]
    if g.origin.producer:
        doc.append(f"Exported by {g.origin.producer}, opset {g.origin.opset}.")
    doc.append("The weights are in the checkpoint written beside this file; build_model() builds the model")
    doc.append("with the layers' default initial values.")
    return [code.comment_text(f"# Transpiled from {name} (ONNX) to {target} by transpiler; review before use."),
            code.docstring_lines(doc, "")]


def _stub(program: Program, md: ModelDef) -> list[str]:
    problems = md.graph.unsupported or []
    lines = ["", "", "def build_model():"]
    lines.append(code.docstring_lines([f"The model of {os.path.basename(program.path)}: not translated (see below)."], "    "))
    for span, message in problems:
        lines.append(code.comment_text(f"    # transpiler: not translated: {span.line if span else '?'}: {message}"))
    first = problems[0][1] if problems else "the model could not be translated"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    lines.append(f"    raise NotImplementedError({code.lit(f'transpiler: {first}{more}')})")
    return lines


def print_torch_model(program: Program) -> str:
    """The PyTorch module source for the ONNX model of ``program`` (its graph has had the
    torch passes: ``translate_onnx.prepare``)."""
    from transpiler.printers.torch.printer import print_model_class

    md = program.models[0]
    out = _header(program, "PyTorch")
    if md.graph.unsupported:
        out += ["", "import torch", "from torch import nn"] + _stub(program, md)
        return format_python("\n".join(out) + "\n")
    printed = print_model_class(md, os.path.basename(program.path))
    imports = ["import torch", "from torch import nn"]
    if printed.uses_functional:
        imports.append("import torch.nn.functional as F")
    imports += sorted(i for i in printed.imports if i not in imports)
    if "math." in printed.text and "import math" not in imports:
        imports.insert(0, "import math")
    out += [""] + imports + ["", ""]
    for child in printed.classes:
        out += [child.text, ""]
    out.append(printed.text)
    out += ["", "", "def build_model():",
            code.docstring_lines([f"The {md.class_name} module (load the converted weights into it)."], "    "),
            f"    return {md.class_name}()"]
    return format_python("\n".join(out) + "\n")


def print_keras_model(program: Program) -> str:
    """The Keras source for the ONNX model of ``program`` (its graph has had the Keras
    passes: ``translate_onnx.prepare``)."""
    from transpiler.printers.keras import ops as keras_ops
    from transpiler.printers.keras.printer import model_body

    md = program.models[0]
    out = _header(program, "Keras")
    if md.graph.unsupported:
        out += ["", "import keras"] + _stub(program, md)
        return format_python("\n".join(out) + "\n")
    keras_ops.clear_auto_names(md.graph)
    body = model_body(md, {"keras", "layers", "ops"})
    helpers = sorted({h for n in md.graph.nodes for h in keras_ops.emit(n).helpers})
    imports = ["import keras", "from keras import layers"]
    text = "\n".join(body)
    if re.search(r"(?<![.\w])ops\.", text):
        imports.append("from keras import ops")
    helper_texts = [keras_ops.init_helper_source(h) for h in helpers]
    if any("math." in t for t in helper_texts):
        imports.insert(0, "import math")
    out += [""] + imports
    for text in helper_texts:
        out += ["", "", text]
    plain = md.graph.origin.no_batch
    inputs = ", ".join(f"{v.var} {tuple(v.shape if plain else v.shape[1:])}" for v in md.graph.inputs)
    moved = [tuple(v.shape) != tuple(src) for v, src in zip(md.graph.inputs, md.graph.origin.input_shapes)]
    note = "channels-last (the ONNX model's are channels-first)" if any(moved) else "as in the ONNX model"
    where = "(the model has no batch axis: every size is fixed)" if plain else "without the batch axis"
    lines = [f'The {md.graph.name} model; input{"s" if len(md.graph.inputs) > 1 else ""} '
             f'{inputs} {where}, {note}.']
    if any(moved):  # (a feature map the last layers leave channels-first stays so)
        kept = [v for v in md.graph.outputs if len(v.shape) >= 3 and is_channels_first(v.layout)]
        if kept:
            lines.append(f'Output{"s" if len(kept) > 1 else ""} {", ".join(str(tuple(v.shape[1:])) for v in kept)} '
                         "channels-first, as in the ONNX model.")
    out += ["", "", "def build_model():", code.docstring_lines(lines, "    ")]
    out += body
    return format_python("\n".join(out) + "\n")
