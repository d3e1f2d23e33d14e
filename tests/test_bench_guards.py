"""Guards behind the benchmark figures (bench/, docs/benchmarks.md).

The transpile-latency figure is only meaningful while translating loads no deep-learning
framework. ``tests/test_cli.py::test_translation_path_imports_no_framework`` checks the
CLI on one small script and ``tests/test_frontend_keras.py::test_reading_imports_no_framework``
the frontend alone; this one runs ``transpiler.translate.translate`` on every corpus
script in a fresh process.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = sorted(p for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py")) if not p.endswith("_torch.py"))


def test_translating_the_corpus_imports_no_framework():
    code = (
        "import sys\n"
        "from transpiler.translate import translate\n"
        f"for path in {CORPUS!r}:\n"
        "    with open(path, encoding='utf-8') as fh:\n"
        "        translate(fh.read(), path)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tensorflow', 'keras'))\n"
        "print(len(bad), bad[:5])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0 []", proc.stdout + proc.stderr
    assert len(CORPUS) >= 12
