"""How the Keras output spells the array functions of the training program's data code
(ir/array_functions.py): numpy's, as ``np.<name>`` (data code runs on numpy arrays)."""

from __future__ import annotations

from transpiler.ir.array_functions import ARRAY_FUNCTIONS, spell

NUMPY = {name: f"np.{name}" for name in sorted(ARRAY_FUNCTIONS)}


def numpy_text(template: str) -> str:
    """``template`` (an ``ArrayExpr``'s) with its marked array functions spelled as numpy's."""
    return spell(template, NUMPY)
