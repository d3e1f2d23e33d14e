"""Every output is what ``black`` would write: black leaves it unchanged (issue 21).

The golden cases check this for their outputs (tests/test_golden.py,
tests/test_golden_keras.py); here the corpus both ways (Keras to PyTorch, PyTorch to Keras)
and a sample of the real-world scripts of ``../shared/realworld`` (where the folder is at
hand), the outputs a faster formatting path (transpiler/printers/formatter.py) must leave
exactly as black's own ``format_str`` would.
"""

from __future__ import annotations

import glob
import os

import black
import pytest

from transpiler.translate import translate
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REALWORLD = os.environ.get("RW_REALWORLD_DIR") or os.path.normpath(os.path.join(ROOT, "..", "shared", "realworld"))
#: about this many scripts of each real-world set (every k-th, in name order)
SAMPLE = 6


def _corpus(folder: str) -> list[str]:
    return sorted(glob.glob(os.path.join(ROOT, "corpus", folder, "*.py")))


def _realworld(folder: str) -> list[str]:
    paths = sorted(glob.glob(os.path.join(REALWORLD, folder, "**", "*.py"), recursive=True))
    return paths[::max(1, len(paths) // SAMPLE)]


CASES = ([pytest.param(p, "pytorch", id=f"corpus-keras-{os.path.basename(p)}") for p in _corpus("keras")]
         + [pytest.param(p, "keras", id=f"corpus-torch-{os.path.basename(p)}") for p in _corpus("torch")]
         + [pytest.param(p, "pytorch", id=f"realworld-keras-{os.path.relpath(p, REALWORLD)}")
            for p in _realworld("keras")]
         + [pytest.param(p, "keras", id=f"realworld-torch-{os.path.relpath(p, REALWORLD)}")
            for p in _realworld("torch")])


def test_the_sets_are_there():
    assert len(_corpus("keras")) >= 20 and len(_corpus("torch")) >= 8


@pytest.mark.parametrize("path, target", sampled(CASES, every=4))
def test_black_leaves_the_output_unchanged(path, target):
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    from transpiler.frontend_ast.keras.frontend import FrontendError  # (the readers' refusal, as cli.py)

    try:
        output = translate(source, path, target).text
    except FrontendError as exc:  # (a script the tool refuses has no output; an internal error fails)
        pytest.skip(f"refused: {exc}")
    assert black.format_str(output, mode=black.Mode()) == output
