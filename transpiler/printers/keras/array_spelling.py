"""How the Keras output spells the array functions of the training program's data code
(ir/array_functions.py): numpy's, as ``np.<name>`` (data code runs on numpy arrays)."""

from __future__ import annotations

import libcst as cst

from transpiler.ir.array_functions import ARRAY_FUNCTIONS, TREE_MARK, spell
from transpiler.ir.code_literals import dotted_name
from transpiler.ir.tensor_functions import TENSOR_FUNCTIONS

NUMPY = {name: f"np.{name}" for name in sorted(ARRAY_FUNCTIONS)}
#: a training step's tensor functions (ir/tensor_functions.py): keras.ops, Keras' huber loss and
#: loss functions (``losses.<name>``: keras.losses)
KERAS_OPS = {name: "keras.losses.huber" if name == "huber" else
             f"keras.{name}" if name.startswith("losses.") else f"keras.ops.{name}" for name in sorted(TENSOR_FUNCTIONS)}


def numpy_text(template: str) -> str:
    """``template`` (an ``ArrayExpr``'s) with its marked array functions spelled as numpy's."""
    return spell(template, NUMPY)


def array_text(expr) -> str:
    """An ``ir.training.ArrayExpr``'s template with its marks spelled: numpy's array functions,
    or, for a training step's tensor math, keras.ops."""
    return spell(expr.template, KERAS_OPS) if expr.tensors else numpy_text(expr.template)


class _SpellTree(cst.CSTTransformer):
    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        dotted = dotted_name(original)
        if dotted and dotted.startswith(TREE_MARK + ".") and dotted[len(TREE_MARK) + 1:] in NUMPY:
            return cst.parse_expression(NUMPY[dotted[len(TREE_MARK) + 1:]])
        return updated


def numpy_tree(node: cst.CSTNode) -> cst.CSTNode:
    """A syntax tree a frontend rewrote (ir.array_functions.tree_mark) with its marked array
    functions spelled as numpy's (a FlattenSentinel: each of its statements)."""
    if isinstance(node, cst.FlattenSentinel):
        return cst.FlattenSentinel([n.visit(_SpellTree()) for n in node.nodes])
    return node.visit(_SpellTree())
