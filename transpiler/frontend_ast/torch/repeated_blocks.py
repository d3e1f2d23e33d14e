"""A block repeated a constructor argument's number of times (issue 19).

``self.blocks = nn.Sequential(*[Block(config) for _ in range(config.n_layer)])``,
``self.layers = nn.ModuleList([Layer(d) for _ in range(n_layers)])`` in a class printed for
its constructor's sizes (frontend_ast/torch/lazy_inputs): the trace builds the placeholder
number of blocks (``COUNT_PLACEHOLDER``, two: a count is no shape, and a hundred traced blocks
cost seconds), and ``range`` marks the count as used by its number (ir/sizes). When every
repetition is the same class of the file built with the same arguments, the Keras class can
hold the same list (``self.blocks = [Block(config) for _ in range(config.n_layer)]``) and call
it in a loop (printers/keras/subclass): the count is then printed as the caller's
expression, and its ``range`` mark is released here. Anything else keeps the refusal.

Imports no deep-learning framework.
"""

from __future__ import annotations

import re

import libcst as cst

from transpiler.cst_fast import nodes_of


#: the number a constructor argument (or a config attribute) counting a repeated block is traced
#: with, instead of a large distinct placeholder prime: the count is never a tensor's size (a use
#: of its number anywhere else marks it, and the class is refused as for any placeholder), and
#: two blocks still show the loop (each item called on the previous one's output)
COUNT_PLACEHOLDER = 2


def counted_names(cls) -> set[str]:
    """The counts of the repeated blocks ``cls``'s ``__init__`` builds, as source text
    (``n_layers``, ``config.n_layer``): the constructor arguments traced with
    ``COUNT_PLACEHOLDER`` (frontend_ast/torch/lazy_inputs)."""
    init = cls.method("__init__") if cls is not None else None
    found = set()
    for assign in nodes_of(init, cst.Assign) if init is not None else ():
        got = _repeated_call(assign.value)
        count = got[1].args[0].value if got is not None else None
        if isinstance(count, cst.Name) or isinstance(count, cst.Attribute) and isinstance(count.value, cst.Name):
            found.add(_code(count))
    return found


def _code(node) -> str:
    return cst.Module([]).code_for_node(node).strip().rstrip(",").strip()


def _repeated_call(value) -> tuple[cst.Call, cst.Call] | None:
    """``nn.Sequential(*[C(...) for _ in range(E)])`` / ``nn.ModuleList([C(...) for _ in
    range(E)])``: (the block's call, the range call)."""
    if not isinstance(value, cst.Call) or len(value.args) != 1:
        return None
    name = _code(value.func).split(".")[-1]
    arg = value.args[0]
    if name == "Sequential" and arg.star != "*" or name == "ModuleList" and arg.star or \
            name not in ("Sequential", "ModuleList"):
        return None
    comp = arg.value
    if not isinstance(comp, (cst.ListComp, cst.GeneratorExp)) or comp.for_in.inner_for_in is not None or \
            comp.for_in.ifs or not isinstance(comp.elt, cst.Call) or not isinstance(comp.elt.func, cst.Name):
        return None
    it = comp.for_in.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"
            and len(it.args) == 1 and not it.args[0].keyword and not it.args[0].star):
        return None
    target = comp.for_in.target
    if not isinstance(target, cst.Name) or any(n.value == target.value for n in nodes_of(comp.elt, cst.Name)):
        return None  # (each block built alike: the loop variable unused)
    return comp.elt, it


def repeated_blocks(mod, args: dict) -> dict[str, tuple[str, str, str]]:
    """The repeated blocks of ``mod`` (a user module built for its constructor's sizes
    ``args``) a Keras class can hold as a list: attribute → (class, the call's arguments, the
    count's source text). The count's ``range`` mark is released for those (see the module doc)."""
    from transpiler.ir import fields, sizes

    init = mod.cls.method("__init__") if mod.cls is not None else None
    if init is None:
        return {}
    params = {p.name.value for p in init.params.params[1:]}
    kids = dict(mod.children()) if mod.kind == "user" else {}
    found = {}
    for assign in nodes_of(init, cst.Assign):
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            continue
        got = _repeated_call(assign.value)
        container = kids.get(target.attr.value)
        if got is None or container is None or container.kind not in ("sequential", "module_list"):
            continue
        call, counted = got
        items = list(container.items)
        if not items or any(m.kind != "user" or m.cls_name != call.func.value for m in items):
            continue
        names = [n.value for a in call.args for n in nodes_of(a.value, cst.Name)]
        if any(a.star for a in call.args) or set(names) - params - {"True", "False", "None"}:
            continue
        count = counted.args[0].value
        sym = _count_symbol(count, args, params, fields, sizes)
        if sym is None:
            continue
        with sizes.quiet():  # (compared to check, not printed)
            number = count_value(count, args)
            if not isinstance(number, int) or int(number) != len(items):
                continue
        if _other_ranges(mod, counted, sym.name.split(".")[-1]):
            continue
        sym.specialised.discard("range")
        found[target.attr.value] = (call.func.value, ", ".join(_code(a) for a in call.args), _code(count))
    return found


def count_value(count, args: dict):
    if isinstance(count, cst.Name):
        return args.get(count.value)
    if not (isinstance(count, cst.Attribute) and isinstance(count.value, cst.Name)):
        return None
    value = args.get(count.value.value)
    return value.values.get(count.attr.value) if hasattr(value, "values") else None


def _count_symbol(count, args, params, fields, sizes):
    """The named size of ``n_layers`` / ``config.n_layer`` (a parameter or a config object's attribute)."""
    if isinstance(count, cst.Name) and count.value in params:
        return sizes.symbol_of(args.get(count.value))
    if isinstance(count, cst.Attribute) and isinstance(count.value, cst.Name) and count.value.value in params:
        value = args.get(count.value.value)
        if isinstance(value, fields.Fields):
            return sizes.symbol_of(value.values.get(count.attr.value))
    return None


def _other_ranges(mod, counted: cst.Call, word: str) -> bool:
    """Another ``range`` of the class's code (or of a class it nests) reads ``word``: its
    number is then used elsewhere, and the class stays refused."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    from transpiler.frontend_ast.torch.support import _walk

    classes = [mod.cls.node]
    for _, m in _walk(mod):
        if m.kind == "user" and m.cls is not None and not any(m.cls.node is c for c in classes):
            classes.append(m.cls.node)
    for node in classes:
        for call in nodes_of(node, cst.Call):
            if call is counted or not (isinstance(call.func, cst.Name) and call.func.value == "range"):
                continue
            if any(pattern.search(_code(a.value)) for a in call.args):
                return True
    return False
