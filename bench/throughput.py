"""Section: directory-mode throughput (issue 21 item 2).

``transpile DIR --to pytorch -o TMP -j N`` over ``../shared/realworld/keras/`` and
``transpile DIR --to keras -o TMP -j N`` over ``../shared/realworld/torch/``, at -j 1 and
-j 2, each a fresh process into a fresh output folder (the package's bytecode compiled
first, as ``pip install`` does): files per second (every file the run handled: translated,
failed or skipped, as the summary counts them) and the speed-up of -j 2 over -j 1. The runs
alternate (-j 1, -j 2, -j 1, -j 2, ...) ``BENCH_THROUGHPUT_REPEATS`` times (default 2) and
the best of each is kept: on a shared machine the spread between repeats is reported beside
it. That one bad file never stalls the rest is a test (tests/test_batch.py: a file that
makes the translator loop times out after ``--file-timeout``, a syntax error is its own
error, the others are written).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time

from bench.common import ROOT, VENV_BIN, log, table
from bench.latency import compile_bytecode

REPEATS = int(os.environ.get("BENCH_THROUGHPUT_REPEATS", "2"))
JOBS = (1, 2)
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "realworld"))
SETS = [("keras", "pytorch"), ("torch", "keras")]
SUMMARY = re.compile(r"total: (\d+) files?: (\d+) ok, (\d+) stubs?, (\d+) errors?, (\d+) skipped")


def _run(folder: str, target: str, jobs: int, tmp: str) -> tuple[float, str]:
    out = tempfile.mkdtemp(dir=tmp, prefix=f"out-j{jobs}-")
    cmd = [os.path.join(VENV_BIN, "transpile"), folder, "--to", target, "-o", out, "-j", str(jobs)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t
    found = SUMMARY.findall(proc.stderr)
    return elapsed, (f"exit {proc.returncode}; " + ", ".join(
        f"{n} {w}" for n, w in zip(found[-1][1:], ("ok", "with stubs", "errors", "skipped")))) if found else \
        f"exit {proc.returncode}, no summary"


def _autogroup() -> str:
    """A note when the kernel schedules by session (CFS autogroup): then every session gets one
    fair share of the CPUs however many processes it runs, and with other sessions busy two
    workers share what one had (measured: two busy loops in one session got 0.32 + 0.33 s of CPU
    in 8 s where one alone got 0.44 s, and 1.33 + 1.28 s each in a session of its own)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled", encoding="ascii") as fh:
            enabled = fh.read().strip() == "1"
    except OSError:
        return ""
    return ("; the kernel's autogroup scheduling is on here (/proc/sys/kernel/sched_autogroup_enabled): this "
            "session gets one share of the CPUs however many workers it runs, so while other sessions are busy "
            "-j 2 gains little") if enabled else ""


def _files(folder: str) -> int:
    return sum(1 for d, _, names in os.walk(folder) for n in names if n.endswith(".py"))


def run() -> str:
    compile_bytecode()
    rows, notes = [], []
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        for name, target in SETS:
            folder = os.path.join(SHARED, name)
            if not os.path.isdir(folder):
                notes.append(f"`{folder}` is missing: {name} not measured.")
                continue
            n = _files(folder)
            times: dict[int, list[float]] = {j: [] for j in JOBS}
            outcome = ""
            for rep in range(REPEATS):
                for jobs in JOBS if rep % 2 == 0 else reversed(JOBS):
                    elapsed, outcome = _run(folder, target, jobs, tmp)
                    times[jobs].append(elapsed)
                    log(f"  throughput {name} -j {jobs}: {elapsed:.1f} s ({outcome})")
            best = {j: min(ts) for j, ts in times.items()}
            spread = {j: max(ts) / min(ts) for j, ts in times.items()}
            rows.append([f"`realworld/{name}` → {target}", n] +
                        [f"{n / best[j]:.2f} files/s ({best[j]:.1f} s; spread {spread[j]:.2f}×)" for j in JOBS] +
                        [f"**{best[1] / best[2]:.2f}×**", outcome])
    out = [f"Directory mode over the real-world folders, a fresh process per run into an empty `-o` folder; "
           f"best of {REPEATS} runs per setting, the runs alternating (spread: slowest/fastest run).", "",
           table(["folder", "files", "-j 1", "-j 2", "speed-up", "outcome (last run)"], rows), "",
           f"{os.cpu_count()} CPUs, shared with other work: a speed-up below 2× is partly the other load{_autogroup()}. "
           "One bad file never stalls the rest: `--file-timeout` (default 300 s) ends a file whose translation "
           "runs past it (tests/test_batch.py::test_a_file_that_hangs_the_translator_times_out_and_the_rest_go_on, "
           "at -j 1 and -j 2)."]
    return "\n".join(out + ([""] + notes if notes else []))
