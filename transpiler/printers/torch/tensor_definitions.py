"""Module-level definitions of Keras/TensorFlow tensor math, translated whole to torch.

Functions that compile() does not name (losses and metrics a custom loop calls,
``loss = my_loss(y, logits)``, the functions a tf.data pipeline maps) and plain classes (no
base class) holding tensor math, such as keras.io ddpm's ``GaussianDiffusion`` utility (its
``tf.constant`` schedules, ``tf.gather`` / ``tf.reshape`` per timestep, ``tf.random.normal``
noise): each is translated through the table of printers/torch/loss_functions.py when every
call in it has a torch spelling, and otherwise left to the script printer (which stubs the
lines that need Keras). The script printer puts the translation where the definition was.
"""

from __future__ import annotations

import re

import libcst as cst

from transpiler import cst_fast
from transpiler.ir import training as T
from transpiler.printers.torch import data_pipeline
from transpiler.printers.torch import loss_functions as torch_loss_functions

_FRAMEWORKS = ("keras", "tensorflow", "tf_keras")


def _plain_class(stmt: cst.CSTNode) -> bool:
    """A class of the script's own, no framework base (``class GaussianDiffusion:``)."""
    return isinstance(stmt, cst.ClassDef) and all(
        isinstance(b.value, cst.Name) and b.value.value == "object" and b.keyword is None for b in stmt.bases)


def function_key(stmt, level: str) -> str:
    """The key of a definition in ``TrainingCode.functions``: a module-level one's name; a
    function defined inside another (``process`` a pipeline built there maps), ``.name``."""
    return stmt.name.value if level == "module" else f".{stmt.name.value}"


def nested_mapped(module: cst.Module) -> list:
    """The functions defined directly inside a module-level function whose name a tf.data
    ``.map`` reads (keras.io movielens' ``process`` in ``get_dataset_from_csv``), each name
    defined once in the script (so its key names one definition)."""
    mapped = data_pipeline.mapped_function_names(module)
    top = {s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    found = [inner for s in module.body if isinstance(s, cst.FunctionDef)
             for inner in s.body.body if isinstance(inner, cst.FunctionDef) and inner.name.value in mapped]
    names = [f.name.value for f in found]
    return [f for f in found if f.name.value not in top and names.count(f.name.value) == 1 and not f.decorators]


def translate(printer) -> None:
    """Fill ``printer.code.functions`` (name → lines) with the definitions of ``printer.program``
    that translate; ``printer.needs`` gets "F" where the translation calls torch.nn.functional."""
    program = printer.program
    if not program.source or not program.training:
        return
    try:
        module = cst_fast.parse(program.source)
    except cst.ParserSyntaxError:
        return
    aliases = torch_loss_functions.module_aliases(module)
    keras_aliases = {k for k, v in aliases.items() if v.split(".")[0] in _FRAMEWORKS}
    skip = {md.builder for md in program.models if md.builder}
    skip |= set(program.from_keras.inlined_helpers) - data_pipeline.mapped_function_names(module)
    skip |= {ts.config.name for ts in program.training if ts.kind == "custom_code"}
    lines = program.source.splitlines()
    for stmt in nested_mapped(module):  # (a function a pipeline maps, defined where the pipeline is)
        try:
            new, uses_f = torch_loss_functions.translate_function(stmt, aliases, _no_loss)
        except (torch_loss_functions.Untranslatable, NotImplementedError):
            continue
        printer.needs |= {"F"} if uses_f else set()
        printer.code.functions[function_key(stmt, "function")] = cst.Module([]).code_for_node(
            new.with_changes(leading_lines=())).rstrip("\n").split("\n")
    for stmt in module.body:
        if not (isinstance(stmt, cst.FunctionDef) or _plain_class(stmt)) or stmt.name.value in skip \
                or stmt.decorators:
            continue
        text = cst.Module([]).code_for_node(stmt)
        if not any(re.search(rf"(?<![\w.]){re.escape(a)}\b", text) for a in keras_aliases):  # (tf., gamma)
            continue
        head = "def" if isinstance(stmt, cst.FunctionDef) else "class"
        start = next((i + 1 for i, ln in enumerate(lines) if re.match(rf"{head} {stmt.name.value}\b", ln)), None)
        end = (start or 0) + len(text.strip("\n").splitlines())
        if start is None or any(ts.span is not None and start <= ts.span.line <= end for ts in program.training):
            continue  # it holds training statements: the script printer rewrites it
        try:
            new, uses_f = torch_loss_functions.translate_function(  # (Keras' loss functions inside:
                stmt, aliases, lambda name, logits: printer.loss_name(T.Loss(name, logits), False))  # per sample)
        except (torch_loss_functions.Untranslatable, NotImplementedError):
            continue
        if uses_f:
            printer.needs.add("F")
        printer.code.functions[stmt.name.value] = cst.Module([]).code_for_node(
            new.with_changes(leading_lines=())).rstrip("\n").split("\n")


def _no_loss(name, logits):
    raise torch_loss_functions.Untranslatable(f"a Keras loss ({name}) in a mapped function")
