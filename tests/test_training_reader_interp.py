"""The torch training reader on the one interpreter (frontend_ast/interp/): it reads static
Python as the other readers do (implicitly concatenated strings, names bound to strings,
static keys), reads every part of an expression it translates, and no second evaluator of
expressions grows back beside the interpreter."""

from __future__ import annotations

import ast
import pathlib
import re

import libcst as cst
import pytest

from test_torch_training import assigned, has, program
from transpiler.frontend_ast.interp import Env, FunctionRef, Interpreter

FRONTEND = pathlib.Path(__file__).resolve().parent.parent / "transpiler" / "frontend_ast"


def test_training_reader_reads_implicitly_concatenated_strings():
    """``"ne" "tG"`` is the string ``"netG"`` (the dcgan odd_syntax fuzz finding): a checkpoint
    dict with such keys, saved and loaded by such a path, translates as the plain spelling does."""
    plain = '''
        torch.save({"netG": model.state_dict()}, "ckpt.pt")
        checkpoint = torch.load("ckpt.pt")
        model.load_state_dict(checkpoint["netG"])
    '''
    split = '''
        torch.save({("ne" "tG"): model.state_dict()}, "ck" "pt.pt")
        checkpoint = torch.load(("ckpt" ".pt"))
        model.load_state_dict((checkpoint["ne" 'tG']))
    '''
    _, want = program(plain, "")
    _, got = program(split, "")
    assert not want.stubs and not got.stubs, got.stubs
    assert has(got, 'model.save_weights("ckpt_netG.weights.h5")')
    assert assigned(got, "checkpoint") == assigned(want, "checkpoint")


def test_training_reader_reads_static_names_as_keys():
    """A key held in a variable is the interpreter's static value, as a literal is."""
    _, tr = program('''
        key = "net" + "G"
        torch.save({key: model.state_dict()}, "ckpt.pt")
    ''', "")
    assert not tr.stubs and has(tr, 'model.save_weights("ckpt_netG.weights.h5")')


def test_training_reader_reads_the_branch_python_would_not_take():
    """The reader translates: an untaken branch, the right side of ``and`` and a lambda's body
    are read too, so no torch call is left in them (the interpreter alone would skip them)."""
    _, tr = program('''
        a = torch.zeros(3) if False else torch.ones(3)
        b = False and torch.randn(2)
        f = lambda n: torch.rand(n)
    ''', "")
    assert not tr.stubs
    for name in ("a", "b", "f"):
        assert "torch" not in assigned(tr, name), assigned(tr, name)


def _defined_methods(path: pathlib.Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno


def test_no_second_expression_evaluator_outside_the_interpreter():
    """Only interp/ maps libcst expression types to evaluators (its ``_eval_<Type>`` methods);
    a reader plugs in through the registries and hooks. A method ``_e_<Type>``/``_eval_<Type>``
    or a dispatch on a node's type name (``getattr(self, f"_e_{type(node).__name__}")``)
    anywhere else in frontend_ast/ is a second interpreter growing back."""
    dispatch = re.compile(r"getattr\(\s*self\s*,\s*f[\"'][^\"']*\{\s*type\(")
    found = []
    for path in sorted(FRONTEND.rglob("*.py")):
        if "interp" in path.relative_to(FRONTEND).parts:
            continue
        rel = path.relative_to(FRONTEND)
        for name, line in _defined_methods(path):
            if re.fullmatch(r"_(e|eval)_[A-Z]\w*", name) and isinstance(getattr(cst, name.split("_", 2)[2], None),
                                                                       type):
                found.append(f"{rel}:{line}: {name}")
        for n, text in enumerate(path.read_text().splitlines(), 1):
            if dispatch.search(text):
                found.append(f"{rel}:{n}: {text.strip()}")
    assert not found, "\n".join(found)


def test_scopes_and_values_are_defined_once():
    """The interpreter's scope (``Env``) and shared values are classes of interp/ only."""
    shared = {"Env", "Unknown", "ClassRef", "FunctionRef", "BatchDim", "Signature", "Unsupported"}
    found = []
    for path in sorted(FRONTEND.rglob("*.py")):
        if "interp" in path.relative_to(FRONTEND).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name in shared:
                found.append(f"{path.relative_to(FRONTEND)}:{node.lineno}: class {node.name}")
    assert not found, "\n".join(found)
    from transpiler.frontend_ast.torch import reader_values

    assert issubclass(reader_values.Scope, Env)
    assert reader_values.FuncV is FunctionRef


def _readers():
    from transpiler.frontend_ast.keras.frontend import KerasFrontend
    from transpiler.frontend_ast.torch.frontend import TorchFrontend
    from transpiler.frontend_ast.torch.training import TrainingReader

    return {"keras": KerasFrontend, "torch": TorchFrontend, "training": TrainingReader}


#: hooks of the interpreter overridden on purpose by a reader's mixin that is not itself an
#: Interpreter subclass (its statements: assignment targets, what ``*x`` iterates)
DELIBERATE = {("KerasStatements", "_assign"), ("TorchStatements", "_assign"), ("TorchStatements", "_iterate"),
              # (an Input whose axis count the data decides: a pending value read and bound through them)
              ("KerasLazyInputs", "_read"), ("KerasLazyInputs", "_assign")}


@pytest.mark.parametrize("reader", ["keras", "torch", "training"])
def test_no_reader_mixin_shadows_an_interpreter_hook_by_accident(reader):
    """A method of a reader's plain mixin named like one of the interpreter's replaces it for
    the whole reader: a Keras mixin's own ``_callee(obj, func)`` once shadowed the interpreter's
    call hook and the Keras reader read no builder. Hooks are overridden in the reader's
    Interpreter subclass (or listed in DELIBERATE)."""
    cls = _readers()[reader]
    assert issubclass(cls, Interpreter)
    bad = []
    for name in dir(Interpreter):
        if name.startswith("__"):
            continue
        owner = next(c for c in cls.__mro__ if name in c.__dict__)
        if not issubclass(owner, Interpreter) and owner.__module__.split(".")[2] != "interp" and \
                (owner.__name__, name) not in DELIBERATE:
            bad.append(f"{owner.__module__}.{owner.__name__}.{name}")
    assert not bad, "\n".join(bad)


def test_training_reader_evaluates_through_the_interpreter():
    """The training reader's entry (``expr``) is the interpreter's dispatch, with its evaluators."""
    from transpiler.frontend_ast.torch.training import TrainingReader

    for name in ("_eval", "_eval_Name", "_eval_Call", "_eval_Subscript", "_eval_Tuple", "_eval_Dict",
                 "_eval_ConcatenatedString", "_comprehension", "_bind_arguments"):
        assert getattr(TrainingReader, name) is getattr(Interpreter, name), name
    assert TrainingReader.READ_EVERY_PART


def test_a_script_name_shadows_a_builtin_in_the_training_reader():
    """A builder called ``sum`` is the builder where the program calls it (the fuzz's rename
    of dcgan), as in Python: the module's names shadow builtins."""
    from test_torch_training import HEAD, LOOP
    from transpiler.translate import translate

    tail = "    criterion = nn.CrossEntropyLoss()\n    optimizer = torch.optim.Adam(model.parameters())\n" + LOOP
    want = translate(HEAD + tail, "t.py", "keras")
    got = translate((HEAD + tail).replace("build_model", "sum"), "t.py", "keras")
    assert not want.stubs and not got.stubs, got.stubs
    assert len(got.program.models) == len(want.program.models) == 1
    # (the output renames a module-level binding of a builtin its own code uses: reserved_names)
    assert got.text == want.text.replace("build_model", "sum_")
    assert any("renamed sum to sum_" in str(d) for d in got.diagnostics), [str(d) for d in got.diagnostics]


def test_string_arguments_are_the_interpreters_values():
    """``reduction="s" "um"`` and a parameter group's key ``"para" "ms"`` are strings (the
    odd_syntax fuzz of residual_mlp, vae, custom_param and text_classifier)."""
    plain = '''
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam([{"params": model.parameters(), "lr": 1e-3}])
        err = F.l1_loss(x, x, reduction="sum")
    '''
    split = '''
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam([{"para" "ms": model.parameters(), ("l" "r"): 1e-3}])
        err = F.l1_loss(x, x, reduction=("s" "um"))
    '''
    _, want = program(plain)
    _, got = program(split)
    assert not want.stubs and not got.stubs, got.stubs
    assert assigned(got, "err") == assigned(want, "err")
