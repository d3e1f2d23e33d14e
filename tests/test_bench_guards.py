"""Guards behind the benchmark figures (bench/, docs/benchmarks.md).

The transpile-latency figure is only meaningful while translating loads no deep-learning
framework. ``tests/test_cli.py::test_translation_path_imports_no_framework`` checks the
CLI on one small script and ``tests/test_frontend_keras.py::test_reading_imports_no_framework``
the frontend alone; this one runs ``transpiler.translate.translate`` on every corpus
script in a fresh process. The cold-run figure also rests on what the translation path
does not load (numpy, astroid) and on the CLI's fast exit; those are guarded here too.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = sorted(p for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py")) if not p.endswith("_torch.py"))


def test_translating_both_corpora_imports_no_framework_numpy_or_astroid():
    """One fresh process translates every corpus script both ways (the two facts were two
    processes that each translated the Keras corpus). No torch, tensorflow or keras is loaded.
    numpy (~0.15 s to import), astroid (~0.3 s to start) and libcst.matchers (~0.5 s) cost a
    cold run a large share of its time: the keras corpus asks astroid only about names the module
    never binds (``print``), which the frontend answers without it. A new corpus script that
    really needs astroid (a constant bound only under an ``if``) fails here: weigh the cost then."""
    torch_corpus = sorted(glob.glob(os.path.join(ROOT, "corpus", "torch", "*.py")))
    code = (
        "import sys\n"
        "from transpiler.translate import translate\n"
        f"for path in {CORPUS!r}:\n"
        "    with open(path, encoding='utf-8') as fh:\n"
        "        translate(fh.read(), path)\n"
        "astroid = 'astroid' in sys.modules\n"
        f"for path in {torch_corpus!r}:\n"
        "    with open(path, encoding='utf-8') as fh:\n"
        "        translate(fh.read(), path, target='keras')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tensorflow', 'keras'))\n"
        "print(len(bad), bad[:5])\n"
        "print(astroid, 'numpy' in sys.modules, 'libcst.matchers' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    frameworks, others = proc.stdout.strip().splitlines()
    assert frameworks == "0 []", proc.stdout + proc.stderr
    assert others.split() == ["False", "False", "False"], proc.stdout + proc.stderr
    assert len(CORPUS) >= 12 and len(torch_corpus) >= 10


ASTROID_CASES = {
    "main_block_prints": 'UNITS = 8\nif __name__ == "__main__":\n    print("x")\n    WIDTH = 16\n',
    "star_import": "if True:\n    from math import *\n",
    "nested_global": "if True:\n    def f():\n        global G\n        G = 4\n",
    "walrus_and_except": "if (N := 3) > 1:\n    M = N\ntry:\n    import json\nexcept ImportError as err:\n    E = 1\n",
    "match": "match 3:\n    case [a, *rest]:\n        A = 1\n    case {'k': v, **others}:\n        B = 2\n    case int() as whole:\n        C = 3\n",
    "dotted_import_and_loops": "import os.path as osp, collections.abc\nfor i, (p, q) in [(1, (2, 3))]:\n    D = i\n",
    "literals": "UNITS = 8\nNEG = -3\nRATE = 1e-3\nNAME = 'a' 'b'\nSHAPE = (32, 32, 3)\nSIZES = [1, [2, (3,)]]\n"
                "FLAG = True\nNOTHING = None\nTABLE = {'a': 1}\nSUM = 2 + 3\nSET = {1}\nC = 1j\n",
    "several_values": "WIDTH = 8\nif len([]) > 2:\n    WIDTH = 16\nelse:\n    WIDTH = 8.0\nDEPTH = 3\nDEPTH = 3\n"
                      "MIXED = 1\nMIXED = 2\nMIXED = make()\nLATE = 4\nLATE = make()\n",
    "calls_and_frameworks": "import tensorflow as tf\nfrom keras import layers\nAUTO = tf.data.AUTOTUNE\n"
                            "DENSE = layers.Dense\nDATA = load()\nLENGTH = len([1, 2])\nB, E = split()\nT, U = 1, 2\n"
                            "COUNT = 0\nCOUNT += step()\nTOTAL: int = 3\nPI = math.pi\nLAM = lambda z: z\n"
                            "F = [g(k) for k in range(3)]\nS = str\n",
}
ASKED = ["print", "len", "slice", "UNITS", "WIDTH", "pi", "G", "N", "M", "err", "E", "json", "a", "rest", "v",
         "others", "whole", "A", "B", "C", "osp", "os", "collections", "i", "p", "D", "undefined",
         "NEG", "RATE", "NAME", "SHAPE", "SIZES", "FLAG", "NOTHING", "TABLE", "SUM", "SET", "DEPTH", "MIXED",
         "LATE", "AUTO", "DENSE", "DATA", "LENGTH", "T", "U", "COUNT", "TOTAL", "PI", "LAM", "F", "S"]


@pytest.mark.parametrize("case", sorted(ASTROID_CASES))
def test_frontend_answers_unbound_names_like_astroid(case):
    """The shortcuts that keep astroid off the cold path (names the module cannot bind; module-level
    assignments whose answer the ``ast`` tree gives) give astroid's own answers."""
    from transpiler.frontend_ast.interp import module_constants
    from transpiler.frontend_ast.keras.frontend import KerasFrontend

    fast = KerasFrontend(ASTROID_CASES[case], f"{case}.py")
    slow = KerasFrontend(ASTROID_CASES[case], f"{case}.py")
    slow._module_may_bind = lambda name: True  # always ask astroid
    slow._answer_without_astroid = lambda name: module_constants._ASK_ASTROID
    for name in ASKED:
        assert repr(fast._astroid_value(name)) == repr(slow._astroid_value(name)), name


def test_cli_run_as_a_program_flushes_before_its_fast_exit(tmp_path):
    """``transpile`` ends with os._exit (no interpreter teardown): stdout must be complete."""
    from transpiler.cli import transpile_file

    src = os.path.join(ROOT, "corpus", "keras", "mnist_cnn.py")
    out = str(tmp_path / "mnist_cnn_torch.py")
    expected = "".join(text for kind, text in transpile_file(src, out, diff=True).events if kind == "out")
    proc = subprocess.run([sys.executable, "-m", "transpiler", src, "--to", "pytorch", "-o", out, "--diff", "-q"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(expected) > 5000 and proc.stdout == expected


def test_throughput_bench_reads_the_directory_summary(tmp_path, capsys):
    """bench/throughput.py reports each run's outcome from directory mode's summary line; a
    change of that line's wording must not turn its table into 'no summary'."""
    from bench.throughput import SUMMARY
    from transpiler.cli import run

    src = tmp_path / "src"
    src.mkdir()
    with open(os.path.join(ROOT, "corpus", "keras", "mlp_regression.py")) as fh:
        (src / "mlp.py").write_text(fh.read())
    (src / "bad.py").write_text("import keras\n\n\ndef build_model(:\n    pass\n")
    (src / "util.py").write_text("print(1)\n")
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "out")]) == 2
    found = SUMMARY.findall(capsys.readouterr().err)
    assert found and found[-1] == ("3", "1", "0", "1", "1")
