"""Idiomatic by default, exact on request (``--exact``), the same in both directions.

Without ``--exact`` a translation uses the target framework's own optimizers and default
initializers, as an engineer of that framework would write them; what that changes in the
numbers is listed in the translation's report (``Translation.differences``, printed by the
CLI and written by ``--report``), one line per difference, from the catalogue below. With
``--exact`` the printers reproduce the source framework's numerics instead (torch's
initializers and optimizer arithmetic in Keras through transpiler/runtime/keras/; Keras'
initializers, epsilon placement and per-token-occurrence Embedding updates in PyTorch through
transpiler/runtime/torch/) and nothing is listed.

What an argument *means* is translated in both modes (BatchNorm momentum, paddings, epsilon
values, gate order, a coupled L2 weight decay, SGD's dampening, an initializer the program
chose): that is the translation, not an exactness helper.

Each difference carries its size as measured on the corpus by
tests/test_numeric_differences.py: the largest relative difference of the per-step loss over
20 training steps between the idiomatic and the exact program (or the source framework's run),
and where it was measured. The test fails when the figure stated here is no longer what it
measures.

Imports no deep-learning framework.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

_EXACT = contextvars.ContextVar("transpiler_exact", default=False)
_REPLACED: contextvars.ContextVar[set | None] = contextvars.ContextVar("transpiler_replaced", default=None)


def exact() -> bool:
    """Whether the model printing in progress reproduces the source's numerics (``--exact``)."""
    return _EXACT.get()


def replaced(key: str) -> None:
    """A model printer left out the helper reproducing difference ``key`` (idiomatic mode)."""
    seen = _REPLACED.get()
    if seen is not None and not exact():
        seen.add(key)


@contextlib.contextmanager
def exactness(on: bool):
    """Print models with (``on``) or without ``--exact``; yields the set of difference keys
    the printing replaced by the target's own defaults (see ``replaced``)."""
    seen: set[str] = set()
    token, token_seen = _EXACT.set(bool(on)), _REPLACED.set(seen)
    try:
        yield seen
    finally:
        _EXACT.reset(token)
        _REPLACED.reset(token_seen)


@dataclass(frozen=True)
class Difference:
    """``text``: what the idiomatic output computes otherwise; ``drift``: the measured largest
    relative per-step loss difference over 20 steps; ``measured_on``: the corpus programs."""

    text: str
    drift: float
    measured_on: str

    def line(self) -> str:
        return (f"{self.text} (max relative loss drift over 20 steps: {self.drift:.1e}, measured on "
                f"{self.measured_on}; --exact reproduces the source's numbers)")


#: Keras output of a PyTorch program (--to keras)
TO_KERAS = {
    "initializers": Difference(
        "initial weights: Keras' default initializers (glorot_uniform kernels, zero biases, orthogonal "
        "recurrent kernels, U(-0.05, 0.05) embeddings) instead of torch's (kaiming_uniform(a=sqrt(5)) "
        "weights, U(+-1/sqrt(fan_in)) biases, N(0, 1) embeddings)",
        9.2e-1, "corpus/torch/mlp_regression.py, one seed per side"),
    "adam_epsilon": Difference(
        "Adam/AdamW: Keras adds epsilon to sqrt(v) before the bias correction, torch after it",
        1.5e-3, "corpus/torch mnist_cnn and gru_regression, same initial weights"),
    "rmsprop_epsilon": Difference(
        "RMSprop: Keras divides by sqrt(v + epsilon) and its momentum sums lr-scaled steps, torch "
        "divides by sqrt(v) + epsilon and its momentum sums unscaled ones (apart once the rate changes)",
        9.1e-1, "corpus/torch/mlp_regression.py (its StepLR) with RMSprop(lr=0.01, momentum=0.5), "
                "same initial weights"),
    "adagrad_epsilon": Difference(
        "Adagrad: Keras divides by sqrt(sum + epsilon), torch by sqrt(sum) + epsilon (apart for "
        "weights whose gradients are still tiny)",
        2.5e-1, "corpus/torch/mlp_regression.py with Adagrad(lr=0.05), same initial weights"),
    "sgd_momentum": Difference(
        "SGD momentum: Keras' buffer sums lr-scaled steps, torch's raw gradients (equal while the "
        "learning rate is constant, apart once a schedule changes it)",
        2.3e-1, "corpus/torch/mlp_regression.py (its StepLR) without weight decay, same initial weights"),
    "adamax_epsilon": Difference(
        "Adamax: Keras divides by u + epsilon, torch puts epsilon inside u = max(beta_2 u, |g| + epsilon)",
        4.7e-7, "corpus/torch/mlp_regression.py with Adamax(lr=0.01), same initial weights"),
    "nadam_schedule": Difference(
        "NAdam: Keras' momentum schedule is beta_1 (1 - 0.5 * 0.96 ** t), torch's "
        "beta_1 (1 - 0.5 * 0.96 ** (0.004 t))",
        1.4, "corpus/torch/mlp_regression.py with NAdam(lr=0.01), same initial weights"),
    "lstm_bias_rate": Difference(
        "LSTM biases: torch's two biases move their sum twice as far per step as Keras' one bias",
        3.3e-2, "corpus/torch/lstm_classifier.py (with Adam's epsilon), same initial weights"),
}

#: PyTorch output of a Keras program (--to pytorch)
TO_PYTORCH = {
    "initializers": Difference(
        "initial weights: torch's default initialisation (kaiming_uniform(a=sqrt(5)) weights, "
        "U(+-1/sqrt(fan_in)) biases, N(0, 1) embeddings) instead of Keras' defaults (glorot_uniform "
        "kernels, zero biases, orthogonal recurrent kernels, U(-0.05, 0.05) embeddings)",
        1.5, "corpus/keras/mlp_regression.py under SGD, one seed per side"),
    "adam_epsilon": Difference(
        "Adam/AdamW: torch adds eps to sqrt(v_hat) after the bias correction, Keras before it",
        2.8e-4, "corpus/keras mlp_regression and conv1d_timeseries, same initial weights"),
    "rmsprop_epsilon": Difference(
        "RMSprop: torch divides by sqrt(v) + eps, Keras by sqrt(v + epsilon)",
        2.2e-2, "corpus/keras/custom_layers.py, same initial weights"),
    "embedding_slices": Difference(
        "Embedding under an adaptive optimizer: Keras' TensorFlow backend applies the table's "
        "gradient one slice per token occurrence, torch the summed gradient",
        9.5e-4, "corpus/keras lstm_classifier and text_cnn, Keras against Keras with dense gradients"),
}


def record(program, table: dict[str, Difference], key: str) -> None:
    """List difference ``key`` of ``table`` in ``program``'s report (once; not under --exact,
    which the program says: ``program.exact``)."""
    if program.exact:
        return
    line = table[key].line()
    listed = program.numeric_differences
    if line not in listed:
        listed.append(line)
