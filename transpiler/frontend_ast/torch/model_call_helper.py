"""A torch script's function that calls a model the way Keras' ``model(x, training=...)`` does
outside a training step, recognised by its structure (not by its name): the torch side of a
Keras model call on arrays (the generated runtime ``call_model``, runtime/torch/training.py).

It takes the model, the inputs as ``*inputs`` and the mode as a keyword parameter with a
default; it sets the model's mode from that parameter (``model.train(training)``, restored
after), optionally turns gradients on or off from another keyword parameter
(``torch.set_grad_enabled(grad)``), and returns the model called on the inputs, each passed
as it is or through one conversion function of the script (arrays to tensors); the
runtime's own ``call_model`` (runtime/torch/training.py, copied into generated scripts) is
one such function, its ``_as_model_input`` the conversion.

The conversion function (one parameter, makes a tensor with ``torch.from_numpy`` /
``torch.as_tensor`` / ``torch.tensor``, calls no other function of the script) is a
``model_input`` helper: it goes with the call helper when nothing else uses it. The torch
reader reads a call of the helper as Keras' ``model(x, training=...)`` (helper_calls.py).
Pure syntax: imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.ir.code_literals import dotted_name as _dotted

#: torch functions that make a tensor of an array (a conversion function calls one)
_TENSOR_MAKERS = {"from_numpy", "as_tensor", "tensor"}


def _calls(node) -> list[cst.Call]:
    return list(nodes_of(node, cst.Call))


def _returns(fn: cst.FunctionDef) -> list:
    found: list = []

    class V(cst.CSTVisitor):
        def visit_Return(self, n: cst.Return) -> None:
            found.append(n.value)

        def visit_FunctionDef(self, n) -> bool:
            return False

        def visit_Lambda(self, n) -> bool:
            return False

    fn.body.visit(V())
    return found


def _name_of(node) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def model_call_roles(fn: cst.FunctionDef, defs: dict[str, cst.FunctionDef]) -> tuple[dict[str, str], str | None] | None:
    """(role → parameter name, the conversion function's name or None) when ``fn`` is a model
    call helper (the module docstring); roles: ``model``, ``inputs`` (the ``*`` parameter),
    ``training``, optionally ``grad`` and ``kwargs`` (the ``**`` parameter)."""
    p = fn.params
    if p.posonly_params or len(p.params) != 1 or p.params[0].default is not None or \
            not isinstance(p.star_arg, cst.Param) or any(k.default is None for k in p.kwonly_params):
        return None
    model, inputs = p.params[0].name.value, p.star_arg.name.value
    keywords = {k.name.value for k in p.kwonly_params}
    kwargs = p.star_kwarg.name.value if p.star_kwarg is not None else None
    calls = _calls(fn.body)
    # the mode: model.train(<a keyword parameter>)
    modes = {_name_of(c.args[0].value) for c in calls
             if isinstance(c.func, cst.Attribute) and c.func.attr.value == "train" and
             _name_of(c.func.value) == model and len(c.args) == 1 and c.args[0].keyword is None}
    training = [m for m in modes if m in keywords]
    if len(training) != 1:
        return None
    roles = {"model": model, "inputs": inputs, "training": training[0]}
    grads = {_name_of(c.args[0].value) for c in calls
             if (_dotted(c.func) or "").split(".")[-1] == "set_grad_enabled" and len(c.args) == 1}
    if grads:
        if len(grads) != 1 or not grads <= keywords:
            return None
        roles["grad"] = grads.pop()
    if set(keywords) - {roles["training"], roles.get("grad")}:
        return None  # (a keyword parameter of another role)
    returns = _returns(fn)
    if len(returns) != 1 or not isinstance(returns[0], cst.Call) or _name_of(returns[0].func) != model:
        return None
    convert = None
    for arg in returns[0].args:
        if arg.star == "**" and kwargs is not None and _name_of(arg.value) == kwargs:
            roles["kwargs"] = kwargs
            continue
        if arg.star != "*" or arg.keyword is not None:
            return None
        converted = _each_input(arg.value, inputs, defs)
        if converted is None or "inputs_passed" in roles:
            return None
        roles["inputs_passed"] = inputs
        convert = converted or None
    if "inputs_passed" not in roles:
        return None
    del roles["inputs_passed"]
    return roles, convert


def _each_input(value, inputs: str, defs: dict) -> str | None:
    """``inputs`` itself (→ ""), or a generator/list over it applying one conversion function
    of the script to each item (→ its name); None otherwise."""
    if _name_of(value) == inputs:
        return ""
    if not isinstance(value, (cst.GeneratorExp, cst.ListComp)):
        return None
    comp = value.for_in
    if comp.inner_for_in is not None or comp.ifs or _name_of(comp.iter) != inputs:
        return None
    item = _name_of(comp.target)
    elt = value.elt
    if item is None:
        return None
    if _name_of(elt) == item:
        return ""
    if isinstance(elt, cst.Call) and len(elt.args) == 1 and elt.args[0].keyword is None and \
            not elt.args[0].star and _name_of(elt.args[0].value) == item:
        name = _name_of(elt.func)
        if name in defs and is_model_input(defs[name], defs):
            return name
    return None


def is_model_input(fn: cst.FunctionDef, defs: dict) -> bool:
    """A conversion of one model input to a tensor: one parameter, no other function of the
    script called (itself aside, for nested inputs), and each value it returns is the input
    itself, a torch tensor made of it (``torch.from_numpy``, ``.to(dtype)``, ...) or, for a list
    or dict of inputs, the function applied to each item; the data are not changed."""
    p = fn.params
    if p.posonly_params or p.kwonly_params or len(p.params) != 1 or isinstance(p.star_arg, cst.Param) or \
            p.star_kwarg is not None:
        return False
    names = [(_dotted(c.func) or "") for c in _calls(fn.body)]
    if any(n in defs and n != fn.name.value for n in names):
        return False
    if not any(n.startswith("torch.") and n.split(".")[-1] in _TENSOR_MAKERS for n in names):
        return False
    assigned: dict[str, list] = {}

    class V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                if isinstance(t.target, cst.Name):
                    assigned.setdefault(t.target.value, []).append(n.value)

        def visit_FunctionDef(self, n) -> bool:
            return False

    fn.body.visit(V())
    checker = _Conversion(fn.name.value, p.params[0].name.value, assigned)
    returns = _returns(fn)
    return bool(returns) and all(checker.ok(r) for r in returns)


#: numpy functions that give an input as an array without changing its values
_ARRAY_VIEWS = {"asarray", "ascontiguousarray", "array"}
#: tensor methods that change a tensor's type or memory, not its values
_TENSOR_KEEPERS = {"to", "float", "contiguous", "detach", "clone"}


class _Conversion:
    """Whether an expression of a conversion function is its input as a tensor (see
    ``is_model_input``)."""

    def __init__(self, name: str, param: str, assigned: dict[str, list]):
        self.name, self.param, self.assigned = name, param, assigned

    def ok(self, e, depth: int = 0) -> bool:
        if depth > 8 or e is None:
            return False
        if isinstance(e, cst.Name):
            if e.value == self.param:
                return True
            values = self.assigned.get(e.value)
            return bool(values) and all(self.ok(v, depth + 1) for v in values)
        if isinstance(e, cst.IfExp):
            return self.ok(e.body, depth + 1) and self.ok(e.orelse, depth + 1)
        if isinstance(e, (cst.ListComp, cst.GeneratorExp)):
            return self._each(e.elt)
        if isinstance(e, cst.DictComp):
            return self._each(e.value)
        if not isinstance(e, cst.Call):
            return False
        dotted = _dotted(e.func) or ""
        if dotted.startswith("torch.") and dotted.split(".")[-1] in _TENSOR_MAKERS:
            return bool(e.args) and e.args[0].keyword is None and self.plain(e.args[0].value, depth + 1)
        if self._each(e):
            return True
        if isinstance(e.func, cst.Attribute) and e.func.attr.value in _TENSOR_KEEPERS:
            return self.ok(e.func.value, depth + 1)
        # type(value)(each converted): the same kind of list or tuple
        return isinstance(e.func, cst.Call) and _dotted(e.func.func) == "type" and len(e.args) == 1 and \
            self.ok(e.args[0].value, depth + 1)

    def plain(self, e, depth: int = 0) -> bool:
        """The input itself, or as a numpy array (``np.asarray(value, dtype=...)``)."""
        if depth > 8:
            return False
        if isinstance(e, cst.Name):
            if e.value == self.param:
                return True
            values = self.assigned.get(e.value)
            return bool(values) and all(self.plain(v, depth + 1) for v in values)
        return isinstance(e, cst.Call) and (_dotted(e.func) or "").split(".")[-1] in _ARRAY_VIEWS and \
            bool(e.args) and e.args[0].keyword is None and self.plain(e.args[0].value, depth + 1)

    def _each(self, e) -> bool:
        """The function itself applied to an item (a list's or dict's)."""
        return isinstance(e, cst.Call) and _name_of(e.func) == self.name and len(e.args) == 1
