"""Program passes: what the training program decides about the model graphs.

They run after the graph pipelines, before printing, over the whole ``ir.program.Program``
(the model graphs and the training statements); printers read their results, they do not
redo them. Both read facts of the ops table (``probabilities``, ``sparse_gradient``) and of
``ir/training.py``, never an op's name.

* ``analyse_logits``: a model output made by a softmax (over its last axis) or a sigmoid that
  a compiled cross-entropy loss reads as probabilities is marked in
  ``graph.logits_outputs`` (output index → the op it skips): the loss then reads
  the logits (numerically stabler; the model's ``forward`` still returns probabilities by
  default). The training loop the program's models share then asks each model for its
  logits, so every other compiled model is marked ``graph.logits_parameter``: its
  ``forward`` takes ``return_logits`` too (it has no final activation to skip).
* ``mark_occurrence_slices``: under ``--exact`` (``program.exact``),
  when the program trains with an optimizer whose Keras update is not linear in the
  gradient (``ir.training.SPARSE_SENSITIVE_OPTIMIZERS``), every lookup whose gradient Keras'
  TensorFlow backend hands over as per-row slices (``sparse_gradient``) records them:
  ``node.occurrence_slices``.
"""

from __future__ import annotations

from typing import Callable

from transpiler.ir import training as T
from transpiler.ir.graph import Value
from transpiler.ir.program import Program


def _over_last_axis(value: Value) -> bool:
    """Every axis attribute of ``value``'s producer names the last axis (a softmax over the
    features; an element-wise op has none)."""
    node, rank = value.producer, len(value.shape)
    for name in node.spec.axis_attrs:
        axes = node.attrs[name]
        for axis in axes if isinstance(axes, tuple) else (axes,):
            if axis is None or axis % rank != rank - 1:
                return False
    return True


def analyse_logits(program: Program) -> Program:
    """Mark model outputs whose final softmax/sigmoid the loss should absorb."""
    for ts in program.training:
        if ts.kind != "compile" or ts.model_def is None:
            continue
        graph = ts.model_def.graph
        marks = graph.logits_outputs
        for i, (loss, value) in enumerate(zip(ts.config.losses, graph.outputs)):
            producer = value.producer
            wanted = T.CROSS_ENTROPY.get(loss.kind)
            if loss.from_logits or wanted is None or producer is None or producer.spec.probabilities != wanted:
                continue
            if not _over_last_axis(value):
                continue  # softmax over another axis: keep the probabilities
            marks[i] = producer.op
    if any(md.graph.logits_outputs for md in program.models):
        for ts in program.training:  # (one fit/evaluate loop calls every compiled model alike)
            if ts.kind == "compile" and ts.model_def is not None and not ts.model_def.graph.logits_outputs:
                ts.model_def.graph.logits_parameter = True
    return program


def _optimizers(program: Program):
    """The optimizers the training program makes (compile's and optimizer objects)."""
    for ts in program.training:
        if isinstance(ts.config, T.Compile):
            yield ts.config.optimizer
        elif isinstance(ts.config, T.Optimizer):
            yield ts.config


def mark_occurrence_slices(program: Program) -> Program:
    """Under --exact with a Keras optimizer that reads per-occurrence slices, the models'
    row lookups record them."""
    if not program.exact:
        return program
    if not any(opt.kind in T.SPARSE_SENSITIVE_OPTIMIZERS for opt in _optimizers(program)):
        return program
    for md in program.models:
        for node in md.graph.nodes:
            if node.spec.sparse_gradient:
                node.occurrence_slices = True
    return program


ProgramPasses = tuple[tuple[str, Callable[[Program], Program]], ...]

#: the program passes before the PyTorch printer (after every graph's TORCH_PIPELINE)
TORCH_PROGRAM_PASSES: ProgramPasses = (
    ("logits", analyse_logits),
    ("occurrence_slices", mark_occurrence_slices),
)


def run_program_passes(program: Program, passes: ProgramPasses = TORCH_PROGRAM_PASSES) -> Program:
    """Run ``passes`` over ``program`` in place."""
    for _name, fn in passes:
        program = fn(program)
    return program
