"""The array functions of a training program's data code, in one vocabulary (issue 17 item 3).

Data code outside the model (making arrays, random draws, comparisons, element-wise math on
batches) reaches the IR as ``ir.training.ArrayExpr`` templates. A frontend names an array
function in a template as a *mark*, ``$name(``, never as target text (``np.clip(``): the
printer decides how the target program spells it (``spell``: numpy's ``np.clip`` in the Keras
output today; ``keras.ops.clip`` for backend-neutral code, ``torch.clip`` for a PyTorch one).

The names and their meaning are numpy's (the array API everyone reads), dotted where numpy
nests them (``random.randint``). A mark whose name is not in ``ARRAY_FUNCTIONS`` is an error
(``mark`` refuses it, and tests/test_target_text_lint.py checks every mark the frontends write).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: every array function a template may mark (numpy's names and semantics)
ARRAY_FUNCTIONS = frozenset({
    # element-wise math
    "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil", "sign", "log1p", "expm1", "negative",
    "isnan", "isfinite", "square", "log2", "log10", "maximum", "minimum", "clip", "where",
    "add", "subtract", "multiply", "divide",
    # making arrays
    "asarray", "array", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "full_like", "eye", "diag",
    "triu", "tril", "arange", "linspace",
    # shapes and joins
    "reshape", "swapaxes", "transpose", "squeeze", "expand_dims", "stack", "concatenate", "prod", "broadcast_to", "tile",
    # comparisons, in place
    "allclose", "isclose", "array_equal", "copyto",
    # random draws
    "random.standard_normal", "random.random_sample", "random.randint", "random.permutation", "random.choice",
})

#: a mark in a template: ``$name(`` (the call's parenthesis is part of it, so that text of the
#: user's program inside a template, a path like ``"$exp/model.pt"``, is never taken for one)
MARK = re.compile(r"\$([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)\(")


def mark(name: str) -> str:
    """The mark naming the array function ``name`` in a template (without the parenthesis)."""
    if name not in ARRAY_FUNCTIONS:
        raise KeyError(f"not an array function of ir.array_functions: {name}")
    return f"${name}"


#: the root name of a marked array function in a syntax tree a frontend rewrites (a kept class of
#: the user's, frontend_ast/torch/data.py): ``_array_function_.random.randint(...)``; the printer
#: replaces each such attribute chain by its spelling (a tree cannot hold a ``$`` mark)
TREE_MARK = "_array_function_"


def tree_mark(name: str) -> str:
    """The dotted name a frontend writes into a syntax tree for the array function ``name``."""
    return f"{TREE_MARK}.{mark(name)[1:]}"


def marks(template: str) -> set[str]:
    """The array functions ``template`` marks."""
    return {m.group(1) for m in MARK.finditer(template)}


def spell(template: str, spelling: Mapping[str, str]) -> str:
    """``template`` with each mark replaced by the target's spelling of its function."""
    return MARK.sub(lambda m: spelling[m.group(1)] + "(", template)
