"""transpiler/cli.py: the CLI collects young objects less often while it translates (issue 21:
at CPython's default threshold the cyclic GC cost about a tenth of a warm translation)."""

from __future__ import annotations

import gc
import subprocess
import sys

from transpiler import cli


def test_the_first_generation_threshold_is_raised_and_the_older_ones_kept():
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        cli.raise_gc_threshold()
        assert gc.get_threshold() == (cli.GC_THRESHOLD, 11, 12)
        gc.set_threshold(cli.GC_THRESHOLD * 2, 11, 12)  # (a higher one set by the embedding program stays)
        cli.raise_gc_threshold()
        assert gc.get_threshold() == (cli.GC_THRESHOLD * 2, 11, 12)
    finally:
        gc.set_threshold(*saved)


def test_a_cold_process_translates_with_the_raised_threshold():
    code = ("import gc; from transpiler import cli; cli.import_translator(); "
            "print(gc.get_threshold()[0], gc.isenabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(cli.GC_THRESHOLD), "True"]
