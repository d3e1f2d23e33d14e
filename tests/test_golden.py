"""Golden tests: ``tests/golden/<case>/input.py`` → ``expected_pytorch.py``, exactly.

One parametrised runner per property over every case folder (black's test-case
style): the output equals the expected file, parses, is left unchanged by black, and
is byte-identical when translated again. ``TRANSPILER_REGEN_GOLDEN=1`` rewrites the
expected files from the current output (see tests/golden/README.md); cases marked
xfail below are never rewritten, their expected file holds the *correct* output.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import black
import pytest

from transpiler.translate import translate

GOLDEN = Path(__file__).parent / "golden"
EXPECTED = "expected_pytorch.py"
REGEN = os.environ.get("TRANSPILER_REGEN_GOLDEN") == "1"

#: cases whose expected file is the hand-corrected output the transpiler does not
#: produce yet; the reason says why (strict: fixing the bug makes the test fail until
#: the mark is removed).
KNOWN_WRONG: dict[str, str] = {}

CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.py").is_file())


@functools.cache
def _translated(case: str) -> str:
    source = (GOLDEN / case / "input.py").read_text()
    return translate(source, "input.py").text


def _expected_param(case: str):
    marks = []
    if case in KNOWN_WRONG:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[case]))
    return pytest.param(case, id=case, marks=marks)


def test_every_case_has_an_expected_file():
    assert len(CASES) >= 10
    missing = [c for c in CASES if not (GOLDEN / c / EXPECTED).is_file()]
    # when regenerating, test_matches_expected writes the missing files
    assert REGEN or missing == [], f"run with TRANSPILER_REGEN_GOLDEN=1 to create {missing}"


@pytest.mark.parametrize("case", [_expected_param(c) for c in CASES])
def test_matches_expected(case):
    expected_path = GOLDEN / case / EXPECTED
    output = _translated(case)
    if REGEN and case not in KNOWN_WRONG:
        expected_path.write_text(output)
    assert output == expected_path.read_text()


#: every case is also translated with ``--exact`` (``exact=True``); where that output differs
#: from the idiomatic default (Keras' initializers in ``reset_parameters``, Keras' optimizer
#: classes, KerasEmbedding), it is compared with ``expected_pytorch_exact.py``
EXACT_EXPECTED = "expected_pytorch_exact.py"


@functools.cache
def _translated_exact(case: str) -> str:
    return translate((GOLDEN / case / "input.py").read_text(), "input.py", exact=True).text


@pytest.mark.parametrize("case", CASES)
def test_exact_matches_expected(case):
    output = _translated_exact(case)
    expected_path = GOLDEN / case / EXACT_EXPECTED
    if REGEN and case not in KNOWN_WRONG:
        if output != _translated(case):
            expected_path.write_text(output)
        elif expected_path.exists():
            expected_path.unlink()
    if not expected_path.exists():  # --exact changes nothing for this case
        assert output == _translated(case)
        return
    assert output == expected_path.read_text()
    assert translate((GOLDEN / case / "input.py").read_text(), "input.py", exact=True).text == output
    assert black.format_str(output, mode=black.Mode()) == output
    assert not _imported_roots(output) & {"keras", "tensorflow", "tf_keras"}


#: what --exact is about, checked on the outputs themselves (case, text, in the exact output,
#: in the default output)
EXACT_FACTS = [
    # the lookup records slices, the optimizer reads them
    ("embedding_adaptive_optimizer_note", "class KerasEmbedding(nn.Embedding):", True, False),
    ("embedding_adaptive_optimizer_note", "self.embedding1 = KerasEmbedding(vocab_size, 8)", True, False),
    ("embedding_adaptive_optimizer_note", "class KerasOptimizer(torch.optim.Optimizer):", True, False),
    ("embedding_adaptive_optimizer_note", "class KerasAdam(KerasOptimizer):", True, False),
    ("embedding_adaptive_optimizer_note", "self.per_occurrence(p, torch.square)", True, False),
    ("embedding_adaptive_optimizer_note", "optimizer = KerasAdam(model.parameters()", True, False),
    ("embedding_adaptive_optimizer_note", "optimizer = torch.optim.Adam(", False, True),
    # Keras' default initializers under --exact, torch's own otherwise
    ("training_compile_fit", "nn.init.xavier_uniform_(self.fc1.weight)", True, False),
    ("training_compile_fit", "def reset_parameters(self):", True, False),
    ("training_compile_fit", "eps=1e-07", True, True),  # (the value is meaning, in both)
    ("builder_compiles", "KerasRMSprop(model.parameters()", True, False),
    ("builder_compiles", "torch.optim.RMSprop(model.parameters()", False, True),
]


@pytest.mark.parametrize("case, text, in_exact, in_default", EXACT_FACTS,
                         ids=[f"{c}:{t}" for c, t, _, _ in EXACT_FACTS])
def test_exact_output_keeps_what_the_flag_is_about(case, text, in_exact, in_default):
    assert (text in _translated_exact(case)) is in_exact
    assert (text in _translated(case)) is in_default


@pytest.mark.parametrize("case", CASES)
def test_output_parses(case):
    ast.parse(_translated(case), filename=f"{case}/{EXPECTED}")


@pytest.mark.parametrize("case", CASES)
def test_output_is_black_stable(case):
    output = _translated(case)
    assert black.format_str(output, mode=black.Mode()) == output


@pytest.mark.parametrize("case", CASES)
def test_translating_again_is_byte_identical(case):
    source = (GOLDEN / case / "input.py").read_text()
    assert translate(source, "input.py").text == _translated(case)


@pytest.mark.parametrize("case", [c for c in CASES if (GOLDEN / c / EXPECTED).is_file()])
def test_expected_file_is_valid_black_python(case):
    """The fixture itself (hand-corrected ones included) is code black would leave alone."""
    text = (GOLDEN / case / EXPECTED).read_text()
    ast.parse(text)
    assert black.format_str(text, mode=black.Mode()) == text


#: what each case is about, checked on the output itself so that a careless
#: regeneration cannot accept a regression of the construct the case exists for.
OUTPUT_FACTS = [
    ("functional_cnn_flatten_dense", ".permute(", False),  # Dense absorbs Keras' HWC order
    ("functional_cnn_flatten_dense", ".flatten(1)", True),
    ("stride2_same_odd_size", "stride=2, padding=1)", True),  # odd size: symmetric
    ("stride2_same_odd_size", "F.pad(", True),  # even size: TF pads bottom/right only
    ("residual_helper_functions", "def conv_bn_relu", False),  # helpers live in the class
    ("multi_input_multi_output", "def forward(self, image, meta):", True),
    ("multi_input_multi_output", "return label, score", True),
    ("lstm_return_state", "nn.LSTM(6, 12, batch_first=True)", True),
    ("bidirectional_gru_sum", "bidirectional=True", True),
    ("comments_preserved", "# project into a wider space first", True),
    ("comments_preserved", "# Keras 2 spelling of negative_slope", True),
    ("comments_preserved", "# a bottleneck keeps the head small", True),
    ("training_compile_fit", "optimizer = torch.optim.Adam(", True),  # torch's own (--exact: KerasAdam)
    ("training_compile_fit", "lr=0.001", True),
    ("training_compile_fit", "eps=1e-07", True),
    ("training_compile_fit", "loss_fn = mean_squared_error", True),
    ("training_compile_fit", "fit(model, optimizer, loss_fn, x, y, epochs=2, batch_size=16)", True),
    ("training_compile_fit", "NotImplementedError", False),
    ("untranslated_stubbed", "# TODO(transpiler): not translated yet (input.py:16)", True),
    ("untranslated_stubbed", "# loss = model.compute_loss(x, y, model(x))", True),
    ("untranslated_stubbed", "raise NotImplementedError(", True),
    ("custom_gradient_tape", "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)", True),
    ("custom_gradient_tape", "optimizer.zero_grad()", True),
    ("custom_gradient_tape", "loss.backward()", True),
    ("custom_gradient_tape", "optimizer.step()", True),
    ("custom_gradient_tape", "dataset = make_loader(x, y, batch_size=16)", True),
    ("custom_gradient_tape", "GradientTape", False),
    ("tutorial_top_level", "(x_train, y_train), (x_test, y_test) = load_mnist()", True),
    ("tutorial_top_level", "validation_split=0.1", True),
    ("tutorial_top_level", "one_channel_layout(x_train, (0, 3, 1, 2))", True),
    ("tutorial_top_level", "TODO(transpiler)", False),
    ("builder_compiles", "# compiled in get_model()", True),
    ("builder_compiles", "torch.optim.RMSprop(model.parameters()", True),
    ("builder_compiles", "# es = keras.callbacks.EarlyStopping(", True),
    ("builder_compiles", 'torch.save(model.state_dict(), "my_model.pt")', True),
    ("builder_compiles", "TODO(transpiler)", False),
    ("functional_top_level", "model = Net()", True),
    ("functional_top_level", "TODO(transpiler)", False),
    ("functional_top_level", "binary_accuracy", True),
    ("subclass_stubbed", "# class MyModel(keras.Model):", True),
    ("subclass_stubbed", "raise NotImplementedError(", True),
    ("fit_on_tf_data", "fit(model, optimizer, loss_fn, x, y, epochs=2, batch_size=8, shuffle=False)", True),
    ("save_and_load_model", 'torch.save(model.state_dict(), "model.pt")', True),
    ("save_and_load_model", 'model2 = load_model("model.pt")', True),
    ("save_and_load_model", "model.load_state_dict(torch.load(path, weights_only=True))", True),
    ("save_and_load_model", "TODO(transpiler)", False),
    ("model_in_main", "model = Net()", True),
    ("model_in_main", "print(model)", True),
    ("sequential_add_input_shape", "class Regressor(nn.Module):", True),  # Sequential(name=)
]


@pytest.mark.parametrize("case, text, present", OUTPUT_FACTS,
                         ids=[f"{c}:{t}" for c, t, _ in OUTPUT_FACTS])
def test_output_keeps_what_the_case_is_about(case, text, present):
    assert (text in _translated(case)) is present


def _imported_roots(text: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("case", CASES)
def test_output_imports_no_keras(case):
    roots = _imported_roots(_translated(case))
    assert "torch" in roots
    assert not roots & {"keras", "tensorflow", "tf_keras"}


@pytest.mark.parametrize("case", CASES)
def test_builder_keeps_its_name(case):
    source = (GOLDEN / case / "input.py").read_text()
    builders = [n.name for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name.startswith("build_")]
    out_defs = {n.name for n in ast.parse(_translated(case)).body if isinstance(n, ast.FunctionDef)}
    assert set(builders) <= out_defs
