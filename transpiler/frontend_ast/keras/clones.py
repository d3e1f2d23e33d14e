"""``keras.models.clone_model(model)``: a new model of the same architecture, freshly
initialised (Keras builds new layers from the config; the weights are not copied).

The clone is an instance of the same translated module class: the reader records a
``clone_model`` statement and hands back a handle on the same model, so what the program
does with the clone (compile, fit, evaluate) is translated like the original's. The torch
side is the runtime's ``clone_model``: ``copy.deepcopy`` then every module re-initialised.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.interp import Unknown
from transpiler.frontend_ast.keras.values import ModelHandle, ModelObj


def clone_model(fe, node: cst.Call, args: list, kwargs: dict):
    """The handle of the clone (an Unknown when the model is not one of the script's or the call
    passes what the clone does not translate: ``clone_function``, ``input_tensors``)."""
    from transpiler.ir import training as T

    span = fe._span(node)
    source = args[0] if args else kwargs.get("model")
    model = source.model if isinstance(source, ModelHandle) else source
    builder = source.builder if isinstance(source, ModelHandle) else None
    entry = next((e for e in fe.models if (model is not None and e[0] is model) or (
        builder is not None and e[1] == builder)), None)
    extra = sorted(set(kwargs) - {"model"}) + (["input_tensors"] if len(args) > 1 else [])
    if entry is None or not isinstance(entry[0], ModelObj) or extra or not node.args:
        # (the statement is then the script printer's marked stub; a model read later, when
        # the program is interpreted again, is found then)
        return Unknown("cloned model")
    if not any(ts.call == fe.source_file.sid(node) for ts in fe.program.training):  # (a loop body read more than once)
        stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
        code = T.Code(cst.Module([]).code_for_node(node.args[0].value))
        fe.program.training.append(T.TrainingStatement("clone_model", "", code, span, stmt, call=fe.source_file.sid(node),
                                                       source=cst.Module([]).code_for_node(node)))
        fe.training_models[fe.program.training[-1]] = entry[0]
    return ModelHandle(entry[1], entry[0])
