"""The one interpreter (transpiler/frontend_ast/interp/): its registries, argument binding,
provenance hooks, and that the readers are its plugins rather than interpreters of their own."""

from __future__ import annotations

import libcst as cst
import pytest

from transpiler.frontend_ast import interp
from transpiler.frontend_ast.interp import (PASS, ArgumentError, Env, Interpreter, RuleTable, TypeTable, Unknown,
                                            code_of)


class _Plain(Interpreter):
    """A reader with no hooks: plain static Python."""

    def __init__(self, source: str = ""):
        self.module = cst.parse_module(source)
        self.path = "<test>"
        self.globals = Env()


def _value(expr: str, **bound):
    fe = _Plain()
    env = Env()
    env.vars.update(bound)
    return fe._eval(cst.parse_expression(expr), env)


@pytest.mark.parametrize("expr, expected", [
    ("1_000 + 0x10", 1016), ("2 ** 3 // 3", 2), ("[i * i for i in range(4) if i]", [1, 4, 9]),
    ("[(a, b) for a in range(2) for b in 'xy']", [(0, "x"), (0, "y"), (1, "x"), (1, "y")]),
    ("{'a': 1, **{'b': 2}}", {"a": 1, "b": 2}), ("(1, *[2, 3])", (1, 2, 3)), ("3 if 0 else 4", 4),
    ("1 < 2 <= 2 != 3", True), ("not 0 and 5", 5), ("f'{7:03d}-{\"x\"!r}'", "007-'x'"),
    ("-n + +n", 0), ("'abc'[1:]", "bc"), ("len([1, 2])", 2), ("max(*[1, 5, 2])", 5),
])
def test_static_python_evaluates_like_python(expr, expected):
    assert _value(expr, n=3) == expected


def test_unknown_flows_through_containers_and_operators_without_raising():
    assert isinstance(_value("[x for x in data]", data=Unknown("run-time")), Unknown)
    assert isinstance(_value("data and 1", data=Unknown()), Unknown)
    assert isinstance(_value("data < 3", data=Unknown()), Unknown)
    assert isinstance(_value("undefined_name"), Unknown)


def test_type_table_picks_the_most_specific_registered_type():
    table = TypeTable()

    class Base: ...

    class Derived(Base): ...

    table.register(Base)(lambda: "base")
    assert table.lookup(Derived)() == "base"
    child = table.extend()
    child.register(Derived)(lambda: "derived")
    assert child.lookup(Derived)() == "derived" and child.lookup(Base)() == "base"
    assert table.lookup(Derived)() == "base"  # the parent is not changed by its extension
    with pytest.raises(ValueError):
        child.register(Derived)(lambda: None)


def test_rule_table_tries_a_readers_rules_first_and_lets_a_rule_decline():
    parent = RuleTable()
    parent.register(int)(lambda fe, a, b: "parent")
    child = parent.extend()
    child.register(int)(lambda fe, a, b: PASS if a == 0 else "child")
    assert child.apply(None, 1, "x") == "child"
    assert child.apply(None, 0, "x") == "parent"  # declined: the next rule applies
    assert child.apply(None, "x", 2.0) is PASS


def _function(source: str) -> cst.FunctionDef:
    return cst.parse_module(source).body[0]


def test_arguments_bind_as_python_binds_them():
    fe = _Plain()
    fn = _function("def f(self, a, b=2, *rest, c, d=4, **kw): pass\n")
    bound = fe._bind_arguments(fn, [10, 20, 30], {"c": 3, "e": 5}, Env(), skip=1)
    assert bound == {"a": 10, "b": 20, "rest": (30,), "c": 3, "d": 4, "kw": {"e": 5}}
    with pytest.raises(ArgumentError) as missing:
        fe._bind_arguments(fn, [10], {}, Env(), skip=1)
    assert (missing.value.kind, missing.value.name) == ("missing", "c")
    with pytest.raises(ArgumentError) as many:
        fe._bind_arguments(_function("def g(a): pass\n"), [1, 2], {}, Env())
    assert many.value.kind == "too many"


def test_provenance_hooks_see_where_a_value_came_from():
    """The hooks sizes with provenance builds on: a parameter's default expression, and
    arithmetic on static operands."""
    seen = []

    class Tracing(_Plain):
        def _parameter_value(self, name, value, fn, default):
            seen.append((name, value, None if default is None else code_of(default)))
            return value

        def _arith_result(self, result, op, operands, node):
            seen.append((code_of(node), result))
            return result

    fe = Tracing()
    fn = _function("def build(width=WIDTH * 2, classes=10): pass\n")
    env = Env()
    env.set("WIDTH", 16)
    bound = fe._bind_arguments(fn, [], {"classes": 3}, env)
    assert bound == {"width": 32, "classes": 3}
    assert seen == [("WIDTH * 2", 32), ("width", 32, "WIDTH * 2"), ("classes", 3, None)]


def test_values_are_defined_once():
    from transpiler.frontend_ast.keras import layers as keras_layers
    from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
    from transpiler.frontend_ast.keras import frontend as keras_frontend
    from transpiler.frontend_ast.torch import modules as torch_modules
    from transpiler.frontend_ast.torch import frontend as torch_frontend

    assert keras_layers.Unsupported is torch_modules.Unsupported is interp.Unsupported
    assert keras_layers.Signature is torch_modules.Signature is interp.Signature
    assert keras_tensor_ops.BatchDim is interp.BatchDim
    for module in (keras_frontend, torch_frontend):
        for name in ("Unknown", "ClassRef", "FunctionRef"):
            value = getattr(module, name, None)
            assert value is None or value is getattr(interp, name), (module.__name__, name)


@pytest.mark.parametrize("reader", ["keras", "torch"])
def test_readers_are_plugins_of_the_one_interpreter(reader):
    """A reader supplies hooks; it does not evaluate static Python again (a guard against a
    second interpreter growing back)."""
    if reader == "keras":
        from transpiler.frontend_ast.keras.frontend import KerasFrontend as Reader
    else:
        from transpiler.frontend_ast.torch.frontend import TorchFrontend as Reader
    assert issubclass(Reader, Interpreter)
    shared = ("_eval_Name", "_eval_Tuple", "_eval_List", "_eval_Dict", "_eval_ListComp", "_eval_BinaryOperation",
              "_eval_UnaryOperation", "_eval_BooleanOperation", "_eval_Comparison", "_eval_IfExp",
              "_eval_Subscript", "_eval_Call", "_eval_Attribute", "_eval", "_comprehension", "_bind_arguments")
    for name in shared:
        assert getattr(Reader, name) is getattr(Interpreter, name), name


@pytest.mark.parametrize("code, expected", [
    ("for m in self.modules():\n    pass\n", True), ("self.apply(self._init)\n", True),
    ("nn.init.zeros_(self.fc.bias)\n", True), ("self.fc.weight.data.normal_(0, 0.01)\n", True),
    ("self.fc = nn.Linear(2, 3)\n", False), ("x = modules(self)\n", False), ("y = init.zeros\n", False),
])
def test_torch_reader_recognises_weight_init_code_by_matchers(code, expected):
    from transpiler.frontend_ast.torch.support import _is_init_code

    assert _is_init_code(cst.parse_module(code).body[0]) is expected


def test_torch_reader_finds_init_methods_and_training_steps():
    from transpiler.frontend_ast.torch.support import _init_code_methods, _mentions, _trains

    cls = cst.parse_module("class N:\n    def __init__(self):\n        self.fc = 1\n"
                           "        self.apply(self._init_weights)\n").body[0]
    assert _init_code_methods(cls) == {"apply", "_init_weights"}
    step = cst.parse_module("def step(self):\n    loss.backward()\n").body[0]
    assert _trains(step) and not _trains(cls.body.body[0])
    assert _mentions(step, {"loss"}) and not _mentions(step, {"opt"})
