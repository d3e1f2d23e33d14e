"""Golden tests for the PyTorch → Keras direction: ``tests/golden_keras/<case>/input.py`` →
``expected_keras.py``, exactly (the runner of ``test_golden.py``, for ``--to keras``).

``TRANSPILER_REGEN_GOLDEN=1`` rewrites the expected files from the current output;
review the diff before committing it.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import black
import pytest

from transpiler.translate import translate

GOLDEN = Path(__file__).parent / "golden_keras"
EXPECTED = "expected_keras.py"
REGEN = os.environ.get("TRANSPILER_REGEN_GOLDEN") == "1"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input.py").is_file())


@functools.cache
def _translated(case: str) -> str:
    return translate((GOLDEN / case / "input.py").read_text(), "input.py", "keras").text


def test_every_case_has_an_expected_file():
    missing = [c for c in CASES if not (GOLDEN / c / EXPECTED).is_file()]
    assert REGEN or missing == [], f"run with TRANSPILER_REGEN_GOLDEN=1 to create {missing}"


@pytest.mark.parametrize("case", CASES)
def test_matches_expected(case):
    path = GOLDEN / case / EXPECTED
    if REGEN:
        path.write_text(_translated(case))
    assert _translated(case) == path.read_text()


#: every case is also translated with ``--exact``; where that differs from the idiomatic
#: default (torch's initializers, torch's optimizer arithmetic), it is compared with
#: ``expected_keras_exact.py``
EXACT_EXPECTED = "expected_keras_exact.py"


@functools.cache
def _translated_exact(case: str) -> str:
    return translate((GOLDEN / case / "input.py").read_text(), "input.py", "keras", exact=True).text


@pytest.mark.parametrize("case", CASES)
def test_exact_matches_expected(case):
    path = GOLDEN / case / EXACT_EXPECTED
    output = _translated_exact(case)
    if REGEN:
        if output != _translated(case):
            path.write_text(output)
        elif path.exists():
            path.unlink()
    if not path.exists():  # --exact changes nothing for this case
        assert output == _translated(case)
        return
    assert output == path.read_text()
    assert black.format_str(output, mode=black.Mode()) == output


def test_idiomatic_default_carries_no_exactness_helpers():
    """Without --exact the Keras output uses Keras' own initializers and optimizers: no
    torch_kernel_init()/torch_uniform_init() and no Torch<Optimizer> class where Keras' own
    computes what the program means (a coupled L2 weight decay still needs torch's class)."""
    inits = ("torch_kernel_init", "torch_uniform_init")
    optimizers = ("TorchAdam", "TorchRMSprop", "TorchNadam", "TorchAdamax", "TorchSGD")
    found = {case: [h for h in inits + optimizers if h in _translated(case)
                    and (h in inits or "weight_decay=" not in (GOLDEN / case / "input.py").read_text())]
             for case in CASES}
    assert not {case: hs for case, hs in found.items() if hs}
    assert any("keras.optimizers.Adam(" in _translated(case) for case in CASES)
    assert any("torch_kernel_init()" in _translated_exact(case) for case in CASES)


@pytest.mark.parametrize("case", CASES)
def test_parses_is_black_and_imports_no_torch(case):
    text = _translated(case)
    tree = ast.parse(text)
    assert black.format_str(text, mode=black.Mode()) == text
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "torch" for a in node.names)
        if isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] != "torch"


@pytest.mark.parametrize("case", CASES)
def test_deterministic(case):
    source = (GOLDEN / case / "input.py").read_text()
    assert translate(source, "input.py", "keras").text == _translated(case)  # (two translations)
