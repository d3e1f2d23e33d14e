"""A model's parameters grouped by name and module type when the program runs (issue 19:
minGPT's ``create_optimizer(model, config)``, a library function given any model).

The reader groups parameters statically where it knows the model (param_groups.py: the
script builds it). A function of a library file taking the model as a parameter cannot be
read so: which model, and how many blocks it holds, is the caller's. Its code is kept and
runs over the Keras model (runtime keras/named_params.py):

* ``model.named_modules()`` / ``m.named_parameters()`` → ``torch_named_modules(model)`` /
  ``torch_named_parameters(m)``: the layers and variables under torch's spelling of names
  (``weight`` / ``bias`` leaves, so ``pn.endswith("bias")`` classifies as in torch);
* a torch module class held as a value (``whitelist = (torch.nn.Linear, )``, for
  ``isinstance``) → ``torch_layer_classes("Linear")``, the Keras classes doing its work;
* ``torch.optim.AdamW(optim_groups, ...)`` of a list of ``{"params": ..., "weight_decay": ...}``
  groups the function builds → ``param_groups_optimizer(keras.optimizers.AdamW(...),
  optim_groups)``, which excludes the zero-decay group from weight decay and refuses (when the
  program runs) groups differing in anything Keras cannot express.

Imports no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpiler.ir.code_literals import bare_argument

from transpiler.frontend_ast.torch.reader_values import V

#: torch module classes a program may hold as values (isinstance), with a Keras counterpart
LAYER_CLASSES = frozenset({"Linear", "LayerNorm", "Embedding", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                           "ConvTranspose2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm",
                           "MultiheadAttention", "LSTM", "GRU", "RNN"})


@dataclass(eq=False)
class NamedWalkV(V):
    """``model.named_modules()`` / ``model.named_parameters()`` of a model known only when the
    program runs: pairs of a name and a layer (a model in turn) or a variable."""

    modules: bool
    name: str = "model"


def walk(reader, model, method: str, node: cst.Call):
    """``model.named_modules()`` / ``named_parameters()`` of a model whose layers this file does
    not know (``model.md`` None): the runtime walk; None for another method or arguments."""
    if method not in ("named_modules", "named_parameters") or node.args:
        return None
    helper = f"torch_{method}"
    reader.runtime_expr(node, f"{helper}({{0}})", [node.func.value], [helper])
    return NamedWalkV(method == "named_modules", model.name)


def element(items: NamedWalkV):
    """What a loop over a ``NamedWalkV`` binds: (name, module) or (name, parameter)."""
    from transpiler.frontend_ast.torch.reader_values import OTHER, ModelV, TupleV

    return TupleV([OTHER, ModelV(items.name, None) if items.modules else OTHER])


def class_values(reader, value: cst.BaseExpression, scope) -> None:
    """The torch module classes ``value`` holds as values (``(torch.nn.Linear, )``), not
    called: each the runtime ``torch_layer_classes(...)``."""
    from transpiler.cst_fast import walk as walk_nodes
    from transpiler.frontend_ast.torch.reader_values import TorchRef

    from transpiler.ir.identity import IdentityMap

    called: IdentityMap[bool] = IdentityMap()
    for n in walk_nodes(value):
        if isinstance(n, cst.Call):
            called[n.func] = True
    for n in walk_nodes(value):
        if not isinstance(n, (cst.Attribute, cst.Name)) or n in called or not _dotted_name(n):
            continue  # (only a dotted name can be a class: ``model[2].bias`` is not read here)
        ref = reader.peek(n, scope)
        if isinstance(ref, TorchRef) and ref.path.startswith("torch.nn.") and \
                ref.path.rsplit(".", 1)[-1] in LAYER_CLASSES and ref.path.count(".") == 2:
            reader.runtime_expr(n, f"torch_layer_classes({ref.path.rsplit('.', 1)[-1]!r})", [],
                                ["torch_layer_classes"])


def _dotted_name(node) -> bool:
    """``node`` is a name or a chain of attributes of a name (``torch.nn.Linear``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _is_string(node: cst.BaseExpression, value: str) -> bool:
    """``node`` is the string literal ``value`` however spelled (``("para" "ms")``: issue 22)."""
    node = bare_argument(node)
    return isinstance(node, cst.SimpleString) and node.evaluated_value == value


def built_groups(reader, arg: cst.BaseExpression) -> bool:
    """``arg`` names a list of parameter-group dicts (``{"params": ..., ...}``) the current
    function assigns: ``optim_groups = [{"params": [...], "weight_decay": wd}, ...]``."""
    from transpiler.cst_fast import nodes_of

    fn = reader.cur_function
    if fn is None or not isinstance(arg, cst.Name):
        return False
    for assign in nodes_of(fn, cst.Assign):
        if not any(isinstance(t.target, cst.Name) and t.target.value == arg.value for t in assign.targets):
            continue
        v = bare_argument(assign.value)
        return isinstance(v, (cst.List, cst.Tuple)) and bool(v.elements) and all(
            isinstance(bare_argument(e.value), cst.Dict) and any(_is_string(el.key, "params")
                                                                 for el in bare_argument(e.value).elements
                                                                 if isinstance(el, cst.DictElement))
            for e in v.elements)
    return False
