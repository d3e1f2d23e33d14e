"""A model's own training step in Keras: the methods and trackers the torch reader read
(``ir.training.OwnStep``, frontend_ast/torch/own_step.py) spelled as a ``keras.Model``
subclass has them.

The reader records the facts; this module writes the Keras: the tensor functions its templates
mark as ``keras.ops`` / ``keras.losses`` (array_spelling.KERAS_OPS), the gradient step
(``zero_grad()`` … ``loss.backward()`` … ``optimizer.step()``) as a ``tf.GradientTape``
around the loss's statements, ``tape.gradient`` and ``apply_gradients``, and each mean tracker
as a ``keras.metrics.Mean``. Pure syntax: no framework is imported.
"""

from __future__ import annotations

import libcst as cst

from transpiler.ir.tensor_functions import spell
from transpiler.ir.training import OwnMethod, OwnStep
from transpiler.printers.keras.array_spelling import KERAS_OPS

#: what the methods need beyond the Keras output's own imports (the tape)
IMPORTS = ("import tensorflow as tf",)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def imports(own: OwnStep | None) -> tuple[str, ...]:
    """The imports a model's own step needs (none without one)."""
    return IMPORTS if own else ()


def trackers(own: OwnStep | None) -> list[tuple[str, str]]:
    """``(attribute, constructor)`` of each tracker the model's ``__init__`` makes."""
    return [(attr, f"keras.metrics.Mean({args})") for attr, args in (own.trackers if own else ())]


def methods(own: OwnStep | None) -> list[tuple[str, str]]:
    """``(name, text)`` of each method of the model's own step, in the class's order."""
    return [(m.name, method_text(m)) for m in (own.methods if own else ())]


def method_text(method: OwnMethod) -> str:
    """One method in Keras: its tensor functions spelled, its gradient step on a tape."""
    text = spell(method.template, KERAS_OPS)
    if method.tape is None:
        return text
    fn = cst.parse_module(text).body[0]
    body = list(fn.body.body)
    z, b, s = method.tape
    loss = _code(body[b].body[0].value.func.value)  # (``<loss>.backward()``)
    with_ = cst.With(items=[cst.WithItem(cst.parse_expression("tf.GradientTape()"),
                                         asname=cst.AsName(cst.Name("tape")))],
                     body=cst.IndentedBlock(body=body[z + 1:b]), leading_lines=body[z].leading_lines)
    grads = cst.parse_statement(f"grads = tape.gradient({loss}, self.trainable_weights)")
    apply = cst.parse_statement("self.optimizer.apply_gradients(zip(grads, self.trainable_weights))")
    body = body[:z] + [with_, grads.with_changes(leading_lines=body[b].leading_lines)] + body[b + 1:s] + \
        [apply.with_changes(leading_lines=body[s].leading_lines)] + body[s + 1:]
    return _code(fn.with_changes(body=fn.body.with_changes(body=body))).strip("\n")
