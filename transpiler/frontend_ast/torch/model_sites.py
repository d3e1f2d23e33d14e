"""Where a torch script builds the models of its program, beside ``model = Net()`` at module
level (the frontend's ``_find_models``): ``Net(...).to(device)`` (the placing methods return the
module itself), and the layer models (``model = nn.Linear(20, 1)``) of a program function
that also makes the model's optimizer (the DDP tutorial series' ``load_train_objs()``), which
is not a model builder. Imports no deep-learning framework."""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.torch.cli_args import _literal as literal_value
from transpiler.ir.code_literals import bare_argument

#: methods placing a module on a device (or in a mode) that return the module itself
PLACING = frozenset({"to", "cuda", "cpu", "float", "train"})


def makes_optimizer(fn: cst.FunctionDef) -> bool:
    """``fn`` hands a model's parameters to something (``SGD(model.parameters())``): program
    code around a model, not a model's builder."""
    return any(isinstance(n.func, cst.Attribute) and n.func.attr.value == "parameters"
               for n in nodes_of(fn, cst.Call))


def program_function_statements(fe) -> list:
    """The top-level statements of the functions that make a model's optimizer
    (``load_train_objs()``: ``model = nn.Linear(20, 1)`` there is the program's model), the
    layer models (``_torch_layer_model``) among them found as at module level."""
    out = [s for s in main_guard_statements(fe.module) if isinstance(s, cst.SimpleStatementLine) and
           isinstance(s.body[0], cst.Assign)]
    for ref in fe.functions.values():
        if ref.node not in fe.node_files and makes_optimizer(ref.node):
            out += [s for s in _block_statements(ref.node.body.body) if isinstance(s, cst.SimpleStatementLine) and
                    isinstance(s.body[0], cst.Assign) and not _builds_class(fe, s.body[0].value)]
    return out


def main_guard_statements(module: cst.Module) -> list:
    """The statements of the script's ``if __name__ == "__main__":`` blocks (and of their
    ``if``/``with``/``try`` blocks): where a script without a ``main()`` builds its model
    (``gat_net = GAT(...)``, ``net = Net([784, 500, 500])``)."""
    out = []
    for stmt in module.body:
        if isinstance(stmt, cst.If) and _is_main_test(stmt.test):
            out += _block_statements(stmt.body.body)
    return out


def _is_main_test(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` however it is spelled (parentheses, ``("__""main__")``, the
    operands swapped; issue 22, whole-program fuzz): the two operands evaluated, not compared
    as text."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)):
        return False
    sides = [bare_argument(test.left), bare_argument(test.comparisons[0].comparator)]
    names = [s for s in sides if isinstance(s, cst.Name)]
    if len(names) != 1 or names[0].value != "__name__":
        return False
    other = sides[1] if sides[0] is names[0] else sides[0]
    return literal_value(other) == "__main__"


def _block_statements(body) -> list:
    """The statements of a function body, those of its ``if``/``else``, ``with`` and ``try``
    blocks included (``if args.pretrained: ... else: model = models.__dict__[args.arch]()``)."""
    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (cst.If, cst.With, cst.Try)):
            blocks = [stmt.body] + ([stmt.orelse] if getattr(stmt, "orelse", None) is not None else []) + \
                [h.body for h in getattr(stmt, "handlers", ())]
            while isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.If):  # (elif)
                stmt = stmt.orelse
                blocks += [stmt.body] + ([stmt.orelse] if stmt.orelse is not None else [])
            for block in blocks:
                if isinstance(block, (cst.IndentedBlock, cst.Else)):
                    inner = block.body if isinstance(block, cst.Else) else block
                    out += _block_statements(inner.body)
    return out


def _builds_class(fe, value) -> bool:
    """``Net(...)`` of a class of the script (found in functions by the builders, not here)."""
    call = placed(value)
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in fe.classes


def placed(value):
    """``Net(...).to(device)`` / ``Net(...).cuda()``: the call that builds the module."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
            value.func.attr.value in PLACING and isinstance(value.func.value, cst.Call):
        value = value.func.value
    return value
