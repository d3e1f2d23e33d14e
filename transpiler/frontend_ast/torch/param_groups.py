"""Optimizer parameter groups of a PyTorch program, read statically for Keras.

torch programs pick parameters by name (``for name, p in model.named_parameters(): (no_decay
if name.endswith("bias") else decay).append(p)``, ``[p for n, p in model.named_parameters()
if n != "log_temperature"]``, ``[model.log_temperature]``). The names are the model's
state_dict keys, which the frontend knows, so that code is run here with the frontend's
interpreter over the keys (``torch_params.ParamSet``): each list becomes the list of
parameters it holds (``GroupV``), printed as the Keras variables holding them
(``model.get_layer("conv3").weights[1]``).

An optimizer given groups is translated when Keras can say the same thing: the groups
differ only in ``weight_decay`` (decoupled, AdamW), one value and zero, which is
``optimizer.exclude_from_weight_decay(var_list=...)``. Per-group learning rates (or any
other per-group setting) are not expressible by one Keras optimizer: that is a stub.

Imports no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.frontend_ast.interp import Env
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.params import ParamSet, ParamTag
from transpiler.ir import ops as ops_table
from transpiler.ir.params import param_names


@dataclass(eq=False)
class Group:
    """A list of a model's parameters, by state_dict key."""

    keys: list[str] = field(default_factory=list)
    model: object = None  # the reader's ModelV


def source_plan(md):
    """The state_dict of the model's source module, as the driver recorded it on the graph
    (``Graph.weight_plan.source_state``, ``weight_plan.record_source_state``) before the training
    code is read."""
    plan = md.graph.weight_plan.source_state
    if plan is None:
        raise Unsupported(f"{md.class_name}: its parameters by name are known once the Keras passes "
                          "have run (read the program with translate_to_keras)")
    if plan.error:
        raise Unsupported(plan.error)
    return plan


def parameter_keys(md) -> list[str]:
    """``model.named_parameters()`` keys of a translated model, in state_dict order (no buffers)."""
    keys = []
    for entry in source_plan(md):
        if entry.constant is not None or entry.node.from_torch.buffer:
            continue
        spec = {p.name: p for p in ops_table.get(entry.node.op).params}
        if all(spec[p].trainable for p in entry.parts if p in spec):
            keys.append(entry.key)
    return keys


def keras_variables(md, keys: list[str]) -> list[tuple[str, int]]:
    """The Keras variables (layer name, index in ``layer.weights``) holding torch's ``keys``."""
    where = {}
    for entry in source_plan(md):
        if entry.packed:
            where[entry.key] = None
            continue
        where[entry.key] = (entry.layer, param_names(entry.node).index(entry.param))
    out: list[tuple[str, int]] = []
    for key in keys:
        var = where.get(key)
        if var is None:
            raise Unsupported(f"parameter group member {key!r}: a packed torch tensor is several Keras "
                              "variables")
        if var not in out:
            out.append(var)
    return out


def _names(node) -> list[str]:
    """The names ``node`` mentions, in order of appearance (the output is deterministic)."""
    found: dict[str, None] = {}

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.setdefault(n.value)

    node.visit(V())
    return list(found)


def _env(reader, node, scope, model_cls, group_cls) -> tuple[Env, dict[str, object]]:
    """The frontend interpreter's view of ``node``'s names: a model is its parameter keys, a
    parameter list the keys it holds."""
    env = Env(reader.fe.globals)
    models: dict[str, object] = {}
    for name in _names(node):
        value = scope.lookup(name)
        if isinstance(value, model_cls) and value.md is not None:
            env.vars[name] = ParamSet(parameter_keys(value.md))
            models[name] = value
        elif isinstance(value, group_cls):
            env.vars[name] = [ParamTag(k) for k in value.group.keys]
            if value.group.model is not None:
                models.setdefault("", value.group.model)
    return env, models


def iterates_parameters(node: cst.BaseExpression) -> bool:
    """``X.named_parameters()`` / ``X.parameters()``."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
        node.func.attr.value in ("named_parameters", "parameters")


def _tags(value, what: str) -> list[str]:
    if isinstance(value, ParamTag):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, ParamTag) for v in value):
        raise Unsupported(f"{what}: not a list of the model's parameters (known statically)")
    return [v.key for v in value]


def _one_model(models: dict, what: str):
    distinct = {m: m for m in models.values()}  # (the abstract values hash by identity)
    if len(distinct) != 1:
        raise Unsupported(f"{what}: the parameters of exactly one translated model are needed")
    return next(iter(distinct.values()))


def read_list(reader, node: cst.BaseExpression, scope, model_cls, group_cls) -> Group:
    """A list expression of parameters (a comprehension over ``named_parameters()``,
    ``[model.log_temperature]``, a list built earlier) → its keys."""
    env, models = _env(reader, node, scope, model_cls, group_cls)
    try:
        value = reader.fe._eval(node, env)
    except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
        raise Unsupported(f"{reader_code(node)}: cannot be read statically ({exc})") from None
    return Group(_tags(value, reader_code(node)), _one_model(models, reader_code(node)))


def read_loop(reader, stmt: cst.For, scope, model_cls, group_cls) -> dict[str, Group]:
    """``for name, p in model.named_parameters(): ...append(p)`` → the lists it fills."""
    env, models = _env(reader, stmt, scope, model_cls, group_cls)
    model = _one_model(models, "a loop over named_parameters()")
    lists = {name: value for name, value in env.vars.items() if isinstance(value, list)}
    try:
        reader.fe._exec_stmt(stmt, env)
    except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
        raise Unsupported(f"a loop over named_parameters(): cannot be run statically ({exc})") from None
    return {name: Group(_tags(env.vars[name], name), model) for name in lists}


def reader_code(node) -> str:
    return cst.Module([]).code_for_node(node)


def optimizer_groups(name: str, groups: list[dict], defaults: dict):
    """The settings every group shares (``values`` for the one Keras optimizer), the keys
    to exclude from weight decay (or None) and each group's learning rate as a multiple of
    the optimizer's (``{group index: scale}``, the groups that differ); raises when the
    groups differ in anything else."""
    settings = [{k: v for k, v in g.items() if k != "params"} for g in groups]
    keys = sorted({k for s in settings for k in s})
    common: dict = {}
    excluded: list[str] | None = None
    scales: dict[int, float] = {}
    for key in keys:
        values = [s.get(key, defaults.get(key)) for s in settings]
        if all(v == values[0] for v in values):
            common[key] = values[0]
            continue
        if key == "weight_decay" and name == "AdamW" and len({v for v in values if v}) == 1:
            common[key] = next(v for v in values if v)
            excluded = [k for g, v in zip(groups, values) if not v for k in g["params"].keys]
            continue
        base = defaults.get("lr")
        if key == "lr" and isinstance(base, (int, float)) and base > 0 and \
                all(isinstance(v, (int, float)) and v >= 0 for v in values):
            # the update is linear in the rate (weight decay aside: AdamW's is checked below)
            scales = {i: v / base for i, v in enumerate(values) if v != base}
            continue
        raise Unsupported(f"torch.optim.{name}: parameter groups with different {key} values "
                          f"({', '.join(map(repr, values))}): a Keras optimizer applies one setting to every "
                          "variable (expressible: different learning rates, and AdamW's weight_decay switched "
                          "off for some variables)")
    if scales and name == "AdamW" and (common.get("weight_decay", defaults.get("weight_decay")) or excluded):
        raise Unsupported(f"torch.optim.{name}: parameter groups with different learning rates and weight decay: "
                          "Keras decays every variable with the optimizer's rate")
    return common, excluded, scales
