"""The program passes of ir/passes/training_analyses.py: which outputs a loss reads as logits,
which lookups record per-occurrence gradient slices (--exact). They ran inside the PyTorch
printers before; printers now only read their results."""

from __future__ import annotations

import ast
import pathlib

import pytest

from transpiler.frontend_ast.keras.frontend import read_keras
from transpiler.ir import ops as ops_table
from transpiler.ir import training as T
from transpiler.ir.passes import TORCH_PIPELINE, run_pipeline
from transpiler.ir.passes.training_analyses import analyse_logits, mark_occurrence_slices, run_program_passes

PRINTERS = pathlib.Path(__file__).resolve().parent.parent / "transpiler" / "printers"


def _program(head: str, loss: str, optimizer: str = "'adam'", exact: bool = False):
    src = ("import keras\nfrom keras import layers\n\n"
           "model = keras.Sequential([keras.Input(shape=(6,)), layers.Embedding(10, 4), layers.Flatten(),\n"
           f"                          {head}])\n"
           f"model.compile(optimizer={optimizer}, loss={loss!r})\n")
    program = read_keras(src, "m.py")
    for md in program.models:
        run_pipeline(md.graph, TORCH_PIPELINE)
    if exact:
        program.exact = True
    return program


@pytest.mark.parametrize("head,loss,marked", [
    ("layers.Dense(3, activation='softmax')", "sparse_categorical_crossentropy", {0: "softmax"}),
    ("layers.Dense(3, activation='softmax')", "categorical_crossentropy", {0: "softmax"}),
    ("layers.Dense(1, activation='sigmoid')", "binary_crossentropy", {0: "sigmoid"}),
    # a sigmoid is no categorical distribution, a softmax no binary one
    ("layers.Dense(3, activation='sigmoid')", "categorical_crossentropy", {}),
    ("layers.Dense(3, activation='softmax')", "binary_crossentropy", {}),
    ("layers.Dense(3, activation='softmax')", "mean_squared_error", {}),
    ("layers.Dense(3)", "sparse_categorical_crossentropy", {}),
], ids=["sparse_softmax", "categorical_softmax", "binary_sigmoid", "categorical_sigmoid", "binary_softmax",
        "mse", "no_activation"])
def test_logits_outputs_follow_the_probabilities_fact(head, loss, marked):
    program = analyse_logits(_program(head, loss))
    assert program.models[0].graph.logits_outputs == marked


def test_a_softmax_over_another_axis_keeps_its_probabilities():
    program = _program("layers.Reshape((2, 12)), layers.Softmax(axis=1)", "categorical_crossentropy")
    analyse_logits(program)
    assert program.models[0].graph.logits_outputs == {}
    program = _program("layers.Reshape((2, 12)), layers.Softmax(axis=-1)", "categorical_crossentropy")
    analyse_logits(program)
    assert program.models[0].graph.logits_outputs == {0: "softmax"}


def _slices(program) -> list[bool]:
    return [n.occurrence_slices for n in program.models[0].graph.nodes if n.op == "embedding"]


@pytest.mark.parametrize("optimizer,exact,expected", [
    ("'adam'", True, [True]),
    ("keras.optimizers.RMSprop(0.01)", True, [True]),
    ("'sgd'", True, [False]),  # linear in the gradient: the summed gradient is the same update
    ("'adam'", False, [False]),  # only --exact reproduces the slices
])
def test_occurrence_slices_under_exact_with_a_sparse_sensitive_optimizer(optimizer, exact, expected):
    program = _program("layers.Dense(3)", "mse", optimizer, exact)
    mark_occurrence_slices(program)
    assert _slices(program) == expected


def test_the_pass_decides_what_the_printer_writes_classes_for():
    """The printer writes a Keras-exact optimizer class for exactly the optimizers whose
    slices the pass records."""
    from transpiler.printers.torch.keras_exact import EXACT_OPTIMIZERS

    assert set(EXACT_OPTIMIZERS) == set(T.SPARSE_SENSITIVE_OPTIMIZERS)
    assert {n for n, s in ops_table.all_ops().items() if s.sparse_gradient} == {"embedding"}
    assert {n: s.probabilities for n, s in ops_table.all_ops().items() if s.probabilities} == {
        "softmax": "categorical", "sigmoid": "binary"}
    assert set(T.CROSS_ENTROPY.values()) <= {"categorical", "binary"}


def test_translation_runs_the_program_passes():
    from transpiler.translate import translate

    src = ("import keras\nfrom keras import layers\n\n"
           "model = keras.Sequential([keras.Input(shape=(6,)), layers.Embedding(10, 4), layers.Flatten(),\n"
           "                          layers.Dense(3, activation='softmax')])\n"
           "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n")
    result = translate(src, "m.py", exact=True)
    graph = result.program.models[0].graph
    assert graph.logits_outputs == {0: "softmax"}
    assert "KerasEmbedding(" in result.text and "KerasAdam(" in result.text
    assert run_program_passes(result.program) is result.program


def _analysis_writes(tree: ast.AST, fields: set[str]) -> list[str]:
    """Writes of an analysis field (``g.logits_outputs = ...``, ``g.logits_outputs[i] = ...``,
    ``n.occurrence_slices = True``, a mutating call such as ``g.logits_outputs.update(...)``)."""
    def is_field(t: ast.AST) -> bool:
        return isinstance(t, ast.Attribute) and t.attr in fields

    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if is_field(t) or isinstance(t, ast.Subscript) and is_field(t.value):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_field(node.func.value) \
                and node.func.attr in ("setdefault", "update", "pop", "clear", "__setitem__"):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


#: the typed fields the program passes fill (ir.graph.Graph.logits_outputs, Node.occurrence_slices)
ANALYSIS_FIELDS = {"logits_outputs", "occurrence_slices"}


def test_analysis_write_finder_finds_what_it_looks_for():
    tree = ast.parse('g.logits_outputs = {}\ng.logits_outputs[0] = "softmax"\ng.logits_outputs.update(a=1)\n'
                     'n.occurrence_slices = True\nn.other = 1\nx = g.logits_outputs.get(0)\n')
    assert len(_analysis_writes(tree, ANALYSIS_FIELDS)) == 4


def test_printers_read_the_analyses_and_do_not_make_them():
    found = {}
    for path in sorted(PRINTERS.rglob("*.py")):
        hits = _analysis_writes(ast.parse(path.read_text(encoding="utf-8")), ANALYSIS_FIELDS)
        if hits:
            found[str(path.relative_to(PRINTERS))] = hits
    assert not found, f"printers write analysis results (ir/passes/training_analyses.py makes them): {found}"
