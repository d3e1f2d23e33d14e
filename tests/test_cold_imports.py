"""The single-file CLI imports only what one translation needs (issue 21: in a cold run most
of the time is imports): not directory mode's process pool."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, sys
from transpiler.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_single_file_mode_does_not_import_directory_mode(tmp_path):
    src = os.path.join(ROOT, "corpus", "keras", "mlp_regression.py")
    env = dict(os.environ, PYTHONPATH=ROOT, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", CHILD, src, "--to", "pytorch", "-o", str(tmp_path / "out.py"), "-q"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["code"] in (0, 3, None), proc.stderr[-2000:]
    imported = set(seen["modules"])
    assert "transpiler.translate" in imported and "transpiler.source_imports" in imported
    assert not imported & {"transpiler.batch", "concurrent.futures.process", "multiprocessing"}
