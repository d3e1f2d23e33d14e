"""The models a generated module takes as constructor arguments (Keras shares their layers:
``features = encoder(inputs)`` where ``encoder`` is a model of the program; printers/torch/
structure.py decides which), as code at the statement that builds the module.

Inside a builder the module is built with the builder's own parameter names. Where the source
builds the model by calling a function of the script (``classifier = create_classifier(enc)``,
printed in place of that call), each name that is one of the function's parameters is the
call's argument for it; a module-level name stays itself.

``holds_given`` decides whether a module holds such a model's instance (printers/torch/
structure.py prints it as the argument; printers/torch/state_plan.py names its tensors as the
held model's own module names them: ``b_blocks.fc1.weight``, not a copy's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from transpiler.ir.modules import ModuleInfo

#: whether a module holds the program's own instance of a model it calls (Keras shares its
#: layers) instead of a copy
HOLD_GIVEN_MODELS = True


def holds_given(parent: "ModuleInfo", child: "ModuleInfo") -> bool:
    """Whether ``parent`` (a model's own module) holds ``child`` as the program's model
    instance: ``child`` is a model of the program, and its module takes and returns what each
    call of it here passes and gets (same layouts and ranks). Otherwise the parent holds a copy
    (and the program is told)."""
    scope = child.scope
    md = scope.given_model if scope is not None else None
    if parent.scope is not None or md is None or scope.given_as is None or not HOLD_GIVEN_MODELS:
        return False

    def same(a, b) -> bool:
        return len(a) == len(b) and all(x.layout == y.layout and len(x.shape) == len(y.shape)
                                        for x, y in zip(a, b))
    return bool(scope.call_inputs) and all(
        same(ins, md.graph.inputs) and same(scope.call_outputs.get(n, []), md.graph.outputs)
        for n, ins in scope.call_inputs.items())


def given_arguments(module: cst.Module, stmt: cst.CSTNode, given: list[str]) -> list[str]:
    """The code passing each of ``given`` at ``stmt`` (a statement of ``module``)."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    value = getattr(small, "value", None)
    if not given or not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return list(given)
    fn = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == value.func.value), None)
    if fn is None:
        return list(given)
    names = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)]
    positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    bound: dict[str, str] = {}
    for i, arg in enumerate(value.args):
        text = cst.Module([]).code_for_node(arg.value)
        if arg.star:
            break  # (a starred argument: the later ones are not matched)
        if arg.keyword is not None:
            bound[arg.keyword.value] = text
        elif i < len(positional):
            bound[positional[i]] = text
    # (a parameter left to its default is no model of the program: the module-level name is kept)
    return [bound.get(n, n) if n in names else n for n in given]
