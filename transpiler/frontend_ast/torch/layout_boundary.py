"""A feature map the Keras model returns channels-last, handed to code written for torch's layout.

A convolutional model's output in a training step is a Keras tensor in the Keras model's
layout (channels-last), which ``LiveV.permuted`` records with the permutation that gives
torch's layout back. A function the program calls with it — one of this file
(``gram_matrix(y)``) or of another file (``utils.normalize_batch(y)``) — indexes torch's
layout (``y.view(b, ch, w * h)``, ``mean.view(-1, 1, 1)``): its code is read (or translated
in its own file) once, for torch's layout. So the call hands it the map permuted back
(``keras.ops.transpose(y, (0, 3, 1, 2))``, a differentiable view of the same numbers), and
what the function returns is in torch's layout too.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.reader_values import LiveV


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def torch_layout_call(reader, node: cst.Call, args) -> list | None:
    """``node`` (``f(..., y, ...)``, ``args`` its (arg, value) pairs) with each argument that is
    a channels-last feature map permuted back to torch's layout (recorded as the call's
    template); the argument values as the function then receives them (in torch's layout).
    None when no argument is such a map; ``Unsupported`` when one's permutation is unknown or
    the call unpacks arguments (``*xs``: which of them is a map is not known here)."""
    starred = any(a.star and _holds_map(reader, a.value) for a, _ in args)
    if not starred and not any(isinstance(v, LiveV) and v.permuted for _, v in args):
        return None
    if starred or any(a.star for a, _ in args):
        raise Unsupported(f"{_code(node.func)}() gets unpacked arguments holding a feature map the Keras model "
                          "returns channels-last (its code indexes torch's channels-first layout)")
    parts = [node.func]
    texts = []
    values = []
    for arg, value in args:
        parts.append(arg.value)
        slot = "{%d}" % (len(parts) - 1)
        if isinstance(value, LiveV) and value.permuted:
            if value.perm is None:
                raise Unsupported(f"{_code(node.func)}() gets a feature map the Keras model returns channels-last, "
                                  "in a layout whose way back to torch's is not known here (its code indexes "
                                  "torch's channels-first layout)")
            slot = f"$transpose({slot}, {tuple(value.perm)!r})"
            value = type(value)()  # (the same kind of tensor, in torch's layout)
        texts.append(f"{arg.keyword.value}={slot}" if arg.keyword is not None else slot)
        values.append(value)
    reader.array(node, "{0}(" + ", ".join(texts) + ")", parts, tensors=True)
    return values


def _holds_map(reader, node) -> bool:
    """Whether ``node`` (an unpacked argument, ``*[out]``, ``*outs``) names a channels-last map."""
    found = []

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            value = reader.cur_scope.lookup(n.value)
            found.append(isinstance(value, LiveV) and value.permuted or
                         any(isinstance(i, LiveV) and i.permuted for i in getattr(value, "items", None) or ()))

    node.visit(_V())
    return any(found)


def other_file_function(reader, recv, node: cst.Call, args):
    """``utils.normalize_batch(x)``: a function of another file of the program (``recv`` names
    the module) given the step's tensors, in a training step: a tensor of the step, in torch's
    layout (a channels-last map handed to it permuted back). A feature map handed to another
    function (a method of a value this file cannot tell) also goes permuted back, its result
    unknown. None: neither."""
    from transpiler.frontend_ast.torch.reader_values import OTHER, Arr

    permuted = any(isinstance(v, LiveV) and v.permuted for _, v in args)
    if reader.live and not reader.no_grad and _program_module(reader, recv) and \
            any(isinstance(v, (Arr, LiveV)) for _, v in args):
        if permuted:
            torch_layout_call(reader, node, args)
        return LiveV()
    if permuted:
        torch_layout_call(reader, node, args)
        return OTHER
    return None


def _program_module(reader, recv) -> bool:
    """Whether ``recv`` names a module of the program itself (``import utils`` of utils.py beside it)."""
    from transpiler.frontend_ast.torch.untranslated_models import program_file
    from transpiler.ir.code_literals import dotted_name

    name = dotted_name(recv)
    return bool(name) and reader.fe.globals.vars.get(name) is not None and \
        program_file(reader.fe.path, name, 0) is not None


__all__ = ["other_file_function", "torch_layout_call"]
