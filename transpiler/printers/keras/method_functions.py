"""A model's own method forward does not call, printed as a function of the Keras model
(``def gpt_generate(model, idx, ...)``): the statements as the program printer renders them
(the reader read them with ``self`` the model: frontend_ast/torch/method_functions.py), ``self``
renamed to the function's model parameter, the method's decorators gone (``@torch.no_grad()``:
Keras computes no gradients outside a tape)."""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of


class _Self(cst.CSTTransformer):
    """``self`` → the function's model parameter."""

    def __init__(self, old: str, new: str):
        super().__init__()
        self.old, self.new = old, new

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.new) if updated.value == self.old else updated


def function_text(printer, fn: cst.FunctionDef, function_name: str) -> str:
    """The Keras program's function for method ``fn`` (its statements as the program printer
    renders them, ``self`` renamed to ``model``, the def named ``function_name``)."""
    text = printer.render(fn)
    new = cst.parse_module(text)
    defs = [s for s in new.body if isinstance(s, cst.FunctionDef)]
    if len(defs) != 1:
        raise ValueError(f"{function_name}: the method printed as {len(defs)} definitions")
    old = fn.params.params[0].name.value
    names = {n.value for n in walk_names(fn)} - {old}
    param = "model" if "model" not in names else "model_"
    body = new.visit(_Self(old, param))
    out = []
    for stmt in body.body:
        if isinstance(stmt, cst.FunctionDef):
            stmt = stmt.with_changes(name=cst.Name(function_name), decorators=[])
        out.append(cst.Module([]).code_for_node(stmt))
    return "".join(out)


def walk_names(node) -> list[cst.Name]:
    return list(nodes_of(node, cst.Name))
