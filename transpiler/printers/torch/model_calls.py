"""``model(x)`` on data in the training program (not inside a model): the torch call, in the
mode Keras runs the model's layers in there.

Keras resolves ``training`` per layer (``ir/training_modes.py``): ``model(x, training=False)``
and ``training=True`` fix it; without the flag each layer takes its own default, which is
inference except for the image augmentation layers. The runtime's ``call_model`` converts
the arrays, sets the mode for the call, runs it without gradients (outside a gradient tape)
and restores the model's mode.
"""

from __future__ import annotations

import libcst as cst

from transpiler.ir.training_modes import default_mode, node_default


def model_call_lines(printer, ts, in_tape: bool) -> list[str]:
    """The expression replacing the call of a ``model_call`` training statement ``ts`` (it
    may sit inside another expression: one line, no comment)."""
    call = cst.parse_expression(ts.source)
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == "training")]
    code = ", ".join(cst.Module([]).code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in args)
    graph = ts.model_def.graph if ts.model_def is not None else None
    if in_tape and ts.config is True and ts.model in tape_models(printer, ts):
        return [f"{ts.model}({code})"]  # a training step's forward: the mode the tape's model.train() set
    if in_tape and ts.config is None and not _runs_at_inference(graph):
        return [f"{ts.model}({code})"]  # (nothing in it runs differently at inference, or all of it trains)
    printer.needs.add("call_model")  # tensors in, the mode set for the call, tensors out
    grad = ", grad=True" if in_tape else ""
    if ts.config is True:
        return [f"call_model({ts.model}, {code}, training=True{grad})"]
    if ts.config is False:
        return [f"call_model({ts.model}, {code}{grad})"]
    mode = default_mode(graph)
    if mode == "train":
        return [f"call_model({ts.model}, {code}, training=True)"]  # (an expression: no comment)
    if mode == "mixed":
        printer.program.warn(ts.span, f"{ts.model}(...) without training=: Keras applies the image augmentation "
                                      "layers (they train by default) and runs the others at inference; the "
                                      "torch model has one mode: it runs at inference here, without the "
                                      "augmentation")
    return [f"call_model({ts.model}, {code}{grad})"]


def _runs_at_inference(graph) -> bool:
    """Whether a call of the model without a ``training`` flag runs some of its layers as at
    inference (Dropout, BatchNormalization, ...): inside a gradient tape too, Keras resolves
    the flag per layer from the call's signature default, so ``logits = model(x)`` under
    ``tf.GradientTape()`` trains the weights with dropout off and batch normalization on its
    moving statistics."""
    return graph is not None and any(node_default(n) is False for n in graph.nodes)


def tape_models(printer, ts) -> set[str]:
    """The models whose mode the gradient tape around ``ts`` sets (``model.train()`` where the
    tape was: the model of the optimizer applying its gradients); another model called in the
    tape (``head(encoder(x, training=True))`` training ``head``) gets its mode from its call."""
    program = printer.program
    tapes = [t for t in program.training if t.kind == "tape" and t.stmt is not None and ts.span is not None
             and t.stmt.line <= ts.span.line <= (t.stmt.end_line or t.stmt.line)]
    if not tapes:
        return set()
    after = [s for s in program.training if s.kind == "apply_gradients" and s.span
             and s.span.line > tapes[-1].stmt.line]
    model = printer._loop_model(after[0].source.split(".apply_gradients", 1)[0]) if after else None
    return {model} if model else set()
