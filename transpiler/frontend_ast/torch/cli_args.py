"""A script's command line as static values: its ``argparse`` defaults (issue 19 item 2).

``parser = argparse.ArgumentParser(); parser.add_argument('-a', '--arch', default='resnet18')``
then ``args = parser.parse_args()``: the model reader needs ``args.arch`` where the model is
built from it (``models.__dict__[args.arch]()``, ``Adam(self.parameters(), lr=args.lr)`` in a
module's constructor). The translation is made for the defaults, as the program runs when
started without options; the printed program keeps reading its options at run time, and
where a value chose the structure of the model the printer guards it (the model it builds
is the one of the defaults).

A name is the namespace when the script binds it to ``<parser>.parse_args()`` anywhere (in
``main()``, under ``if __name__ == "__main__":``); a parameter of the same name of a program
function (``def main_worker(gpu, ngpus_per_node, args)``, called with that namespace) reads the
same values. An option without a default (argparse's ``None``) or ``required=True`` is
unknown: the run gives it (``store_true``: ``False``); a string default of an option with ``type=int/float`` is converted, as argparse does.

Imports no deep-learning framework.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst

from transpiler.frontend_ast.interp import Unknown
from transpiler.ir.code_literals import bare_argument

_CONVERT = {"int": int, "float": float, "str": str}


class CommandLine:
    """The namespace ``parse_args()`` returns, with the parser's defaults (dest → value)."""

    def __init__(self, defaults: dict[str, Any]):
        self.defaults = dict(defaults)

    def get(self, attr: str) -> Any:
        if attr in self.defaults:
            return self.defaults[attr]
        return Unknown(f"command-line option {attr!r} the parser does not declare")

    def __repr__(self) -> str:
        return f"CommandLine({self.defaults!r})"


def _literal(node: cst.BaseExpression) -> Any:
    """A default written as a literal (numbers, strings, booleans, None, tuples/lists of
    them), evaluated as Python evaluates it: however it is spelled (``('resnet''18')``,
    ``(9_0)``, ``-(1)``; issue 22, whole-program fuzz), else Unknown."""
    try:
        return ast.literal_eval("(" + cst.Module([]).code_for_node(node) + "\n)")
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Unknown("a default that is not a literal")


def _string(node: cst.BaseExpression) -> str | None:
    value = _literal(node)
    return value if isinstance(value, str) else None


def _name(node: cst.BaseExpression | None) -> str | None:
    """``type=int`` / ``type=(int)``: the name, else None."""
    node = bare_argument(node) if node is not None else None
    return node.value if isinstance(node, cst.Name) else None


def _option(call: cst.Call) -> tuple[str, Any] | None:
    """``add_argument(...)``'s dest and default."""
    flags = [f for f in (_string(a.value) for a in call.args if a.keyword is None) if f is not None]
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if not flags:
        return None
    dest = _string(kw["dest"]) if "dest" in kw else None
    if dest is None:
        longs = [f for f in flags if f.startswith("--")]
        dest = (longs[0][2:] if longs else flags[0].lstrip("-")).replace("-", "_")
    action = _string(kw["action"]) if "action" in kw else None
    if "required" in kw and _literal(kw["required"]) is True:
        default = Unknown(f"--{dest}: given on the command line (required)")
    elif "default" in kw:
        default = _literal(kw["default"])
        kind = _name(kw.get("type"))
        if isinstance(default, str) and kind in _CONVERT:
            try:
                default = _CONVERT[kind](default)
            except ValueError:
                default = Unknown("default")
    elif action == "store_true":
        default = False
    elif action == "store_false":
        default = True
    else:  # (argparse's None: no value the translation can build for; the run gives it)
        default = Unknown(f"--{dest}: no default")
    return dest, default


def _method_call(node, name: str) -> cst.Call | None:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == name \
            and isinstance(node.func.value, cst.Name):
        return node
    return None


def namespaces(module: cst.Module) -> dict[str, CommandLine]:
    """The names the script binds to a ``parse_args()`` of its parser (see the module doc);
    empty when the script parses no command line."""
    parsers: set[str] = set()
    options: dict[str, dict[str, Any]] = {}
    bound: dict[str, str] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            names = [t.target.value for t in node.targets if isinstance(t.target, cst.Name)]
            func = value.func if isinstance(value, cst.Call) else None
            if isinstance(func, cst.Attribute) and func.attr.value == "ArgumentParser" or \
                    isinstance(func, cst.Name) and func.value == "ArgumentParser":
                parsers.update(names)
            call = _method_call(value, "parse_args") or _method_call(value, "parse_known_args")
            if call is not None and not call.args and call.func.attr.value == "parse_args":
                for n in names:
                    bound[n] = call.func.value.value

        def visit_Call(self, node: cst.Call) -> None:
            call = _method_call(node, "add_argument")
            if call is not None:
                found = _option(call)
                if found is not None:
                    options.setdefault(call.func.value.value, {}).setdefault(*found)

    module.visit(Finder())
    return {name: CommandLine(options.get(parser, {})) for name, parser in bound.items() if parser in parsers}


def reads_command_line(node: cst.CSTNode, names) -> bool:
    """Does the expression read one of the namespaces ``names`` (``args.lr``)? Such a value
    is the program's to read when it runs (its options), not a constant of the translation."""
    if not names:
        return False

    class Finder(cst.CSTVisitor):
        found = False

        def visit_Name(self, name: cst.Name) -> None:
            if name.value in names:
                Finder.found = True

    node.visit(Finder())
    return Finder.found


def binds_namespace(stmt, namespaces: dict[str, CommandLine]) -> str | None:
    """``args = parser.parse_args()``: the namespace name the statement binds, else None."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return None
    assign = stmt.body[0]
    if _method_call(assign.value, "parse_args") is None or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    return target.value if isinstance(target, cst.Name) and target.value in namespaces else None


def default_guard(name: str, reads: dict[str, Any]) -> cst.If | None:
    """``if args.arch != 'resnet18': raise SystemExit(...)`` after ``args = parser.parse_args()``:
    the options of namespace ``name`` the model reader read (``reads``: ``"args.arch"`` →
    value) chose what the translation built (a network by name, a layer's size); run with
    another value the program stops, saying so, instead of running the default's model."""
    options = [(k, v) for k, v in reads.items() if k.split(".")[0] == name]
    if not options:
        return None
    test = " or ".join(f"{k} != {v!r}" for k, v in options)
    given = ", ".join(f"{k}={v!r}" for k, v in options)
    message = (f"transpiler: this Keras program was translated for the default options {given} "
               "(they chose its model); translate the PyTorch program again for other values")
    return cst.parse_statement(f"if {test}:\n    raise SystemExit({message!r})\n")
