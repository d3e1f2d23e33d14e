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


def _run(folder: str, target: str, jobs: int, tmp: str) -> tuple[float, float, str]:
    """Wall-clock seconds, CPU seconds (user + system of the process and the workers it
    waited for: ``wait4``'s usage counts reaped descendants) and the outcome of one run."""
    out = tempfile.mkdtemp(dir=tmp, prefix=f"out-j{jobs}-")
    cmd = [os.path.join(VENV_BIN, "transpile"), folder, "--to", target, "-o", out, "-j", str(jobs)]
    with tempfile.TemporaryFile(mode="w+", dir=tmp) as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t
        returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    cpu = usage.ru_utime + usage.ru_stime
    found = SUMMARY.findall(stderr)
    return elapsed, cpu, (f"exit {returncode}; " + ", ".join(
        f"{n} {w}" for n, w in zip(found[-1][1:], ("ok", "with stubs", "errors", "skipped")))) if found else \
        f"exit {returncode}, no summary"


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
    rows, notes, loads = [], [], [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        for name, target in SETS:
            folder = os.path.join(SHARED, name)
            if not os.path.isdir(folder):
                notes.append(f"`{folder}` is missing: {name} not measured.")
                continue
            n = _files(folder)
            times: dict[int, list[float]] = {j: [] for j in JOBS}
            cpus: dict[int, list[float]] = {j: [] for j in JOBS}
            outcome = ""
            for rep in range(REPEATS):
                for jobs in JOBS if rep % 2 == 0 else reversed(JOBS):
                    elapsed, cpu, outcome = _run(folder, target, jobs, tmp)
                    times[jobs].append(elapsed)
                    cpus[jobs].append(cpu)
                    log(f"  throughput {name} -j {jobs}: {elapsed:.1f} s, {cpu:.1f} s CPU ({outcome})")
            best = {j: min(ts) for j, ts in times.items()}
            cpu = {j: min(ts) for j, ts in cpus.items()}
            spread = {j: max(ts) / min(ts) for j, ts in times.items()}
            rows.append([f"`realworld/{name}` → {target}", n] +
                        [f"{n / best[j]:.2f} files/s ({best[j]:.1f} s; spread {spread[j]:.2f}×)" for j in JOBS] +
                        [f"**{best[1] / best[2]:.2f}×**"] +
                        [f"{n / cpu[j]:.2f} files/CPU-s ({cpu[j]:.1f} s)" for j in JOBS] +
                        [f"{cpu[2] / best[2]:.2f} CPUs", outcome])
            loads.append(os.getloadavg()[0])
    out = [f"Directory mode over the real-world folders, a fresh process per run into an empty `-o` folder; "
           f"best of {REPEATS} runs per setting, the runs alternating (spread: slowest/fastest run).", "",
           table(["folder", "files", "-j 1", "-j 2", "speed-up", "-j 1 CPU", "-j 2 CPU", "-j 2 busy",
                  "outcome (last run)"], rows), "",
           "CPU: user + system time of the run's process and its workers (files per CPU-second: what a file "
           "costs, whatever the other load); -j 2 busy: CPU seconds per wall-clock second of the -j 2 run (2.00: "
           f"both workers always running). Load average (1 min) at the start and after each folder: "
           f"{', '.join(f'{x:.1f}' for x in loads)}.", "",
           f"{os.cpu_count()} CPUs, shared with other work: a speed-up below 2× is partly the other load{_autogroup()}. "
           "One bad file never stalls the rest: `--file-timeout` (default 300 s) ends a file whose translation "
           "runs past it (tests/test_batch.py::test_a_file_that_hangs_the_translator_times_out_and_the_rest_go_on, "
           "at -j 1 and -j 2)."]
    return "\n".join(out + ([""] + notes if notes else []))
