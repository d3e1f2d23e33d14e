"""Every transpiled corpus program runs to completion as a script, without Keras."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest
from corpus_sample import sampled

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(__file__))
CORPUS = sorted(p for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py")) if not p.endswith("_torch.py"))
#: programs with a construct that is a marked stub today: they must stop there, loudly
STOPS_AT_STUB: dict[str, str] = {}

# After the program (even one stopped by a stub): which Keras/TensorFlow modules got imported.
CHECK = (
    "import sys\n"
    "def _report():\n"
    "    bad = sorted(m for m in sys.modules if m.split('.')[0] in ('keras', 'tensorflow', 'tf_keras'))\n"
    "    if bad:\n"
    "        print('IMPORTED-FRAMEWORK', bad[:3], file=sys.stderr)\n"
    "import atexit\n"
    "atexit.register(_report)\n"
)


def _run_transpiled(path: str, tmp_path, keras_exact_updates: bool = False) -> subprocess.CompletedProcess:
    name = os.path.basename(path)[:-3]
    with open(path, encoding="utf-8") as fh:
        result = translate(fh.read(), path, keras_exact_updates=keras_exact_updates)
    program = tmp_path / f"{name}_torch.py"
    program.write_text(result.text)
    runner = tmp_path / "run.py"
    runner.write_text(CHECK + f"import runpy\nrunpy.run_path({str(program)!r}, run_name='__main__')\n")
    return program_runner.run([sys.executable, str(runner)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONHASHSEED="0"))


#: programs that need stand-in data this test does not place yet, with the reason (strict xfail)
NEEDS_DATA = {"image_folder_classifier": "reads images from data/flowers; this test places no stand-in folder",
              # (tests/test_csv_feature_columns.py runs it on a stand-in CSV)
              "csv_feature_classifier": "reads patients.csv with pandas; this test places no stand-in CSV"}


@pytest.mark.slow
@pytest.mark.parametrize("path", sampled([pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=NEEDS_DATA[n]))
                                          if (n := os.path.basename(p)[:-3]) in NEEDS_DATA else p for p in CORPUS], every=4),
                         ids=lambda p: os.path.basename(p)[:-3])
def test_transpiled_program_runs_without_keras(path, tmp_path):
    name = os.path.basename(path)[:-3]
    proc = _run_transpiled(path, tmp_path)
    if name in STOPS_AT_STUB:
        assert proc.returncode != 0
        assert "NotImplementedError: transpiler:" in proc.stderr and STOPS_AT_STUB[name] in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert "IMPORTED-FRAMEWORK" not in proc.stderr, proc.stderr[-500:]


#: the corpus programs that train an Embedding with an adaptive optimizer
EMBEDDING_PROGRAMS = ["lstm_classifier", "bilstm_tagger", "text_cnn", "transformer_classifier"]


@pytest.mark.slow
@pytest.mark.parametrize("name", EMBEDDING_PROGRAMS)
def test_keras_exact_updates_program_runs_without_keras(name, tmp_path):
    """--keras-exact-updates: KerasEmbedding and the Keras optimizer classes run the whole
    program (fit, evaluate, predict) as a script, still without Keras."""
    proc = _run_transpiled(os.path.join(ROOT, "corpus", "keras", f"{name}.py"), tmp_path, keras_exact_updates=True)
    assert "KerasEmbedding(" in (tmp_path / f"{name}_torch.py").read_text()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "IMPORTED-FRAMEWORK" not in proc.stderr, proc.stderr[-500:]
