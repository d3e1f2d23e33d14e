"""The tensor functions of a training step's math, in one vocabulary (issue 17 item 3).

Inside a training step the torch reader meets tensors that gradients flow through (a model's
outputs, the loss): the target program holds them as its framework's tensors, not as numpy
arrays (ir/array_functions.py is the vocabulary of those). Their math reaches the IR as
``ir.training.ArrayExpr`` templates with ``tensors`` set, which name each function as a mark,
``$name(`` (the same marks as array functions), never as target text (``keras.ops.clip(``):
the printer spells it (``keras.ops.clip`` in the Keras output; ``torch.clip`` would be a
PyTorch one's).

The names are the backend-neutral tensor API's (numpy's where numpy has the function; the
gradient, dtype and loss functions by their usual names). A name not in ``TENSOR_FUNCTIONS``
is refused by ``mark``; tests/test_target_text_lint.py checks the frontends' marks.
"""

from __future__ import annotations

from transpiler.ir.array_functions import marks, spell

__all__ = ["TENSOR_FUNCTIONS", "mark", "marks", "spell"]

#: every tensor function a training step's template may mark
TENSOR_FUNCTIONS = frozenset({
    # element-wise math
    "exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "square", "negative", "log1p", "sin", "cos",
    "floor", "ceil", "sign", "power", "clip", "softplus", "silu", "maximum", "minimum", "matmul",
    # reductions
    "sum", "mean", "max", "min", "prod", "std", "var", "logsumexp", "softmax", "log_softmax",
    # shapes, joins, gathers
    "reshape", "squeeze", "expand_dims", "concatenate", "stack", "take_along_axis",
    "swapaxes", "transpose", "broadcast_to", "size",
    # selections
    "where",
    # making tensors
    "zeros_like", "full_like", "convert_to_tensor", "zeros", "ones", "full",
    # dtypes, gradients, leaving the graph
    "cast", "stop_gradient", "convert_to_numpy",
    # losses, per element (``huber``: the mean over the last axis, as Keras computes it)
    "binary_crossentropy", "sparse_categorical_crossentropy", "huber",
    # loss functions, one value per sample (the mean over the last axis where the loss is per
    # element), arguments (target, output[, from_logits=]): a model's own step calls them
    "losses.binary_crossentropy", "losses.sparse_categorical_crossentropy", "losses.categorical_crossentropy",
    "losses.mean_squared_error", "losses.mean_absolute_error", "losses.huber",
})


def mark(name: str) -> str:
    """The mark naming the tensor function ``name`` in a template (without the parenthesis)."""
    if name not in TENSOR_FUNCTIONS:
        raise KeyError(f"not a tensor function of ir.tensor_functions: {name}")
    return f"${name}"
