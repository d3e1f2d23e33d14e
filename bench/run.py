"""One command for every benchmark: ``.venv/bin/python -m bench`` writes docs/benchmarks.md.

Sections are modules of this package, registered in ``SECTIONS`` below; each exposes
``run() -> str`` (its markdown body) and runs in a fresh interpreter, so one section's
imports (TensorFlow's threads, torch's settings) cannot disturb another's timings. A
registered section whose module does not exist yet is reported as not yet measured.
Every figure is a ratio (or an error) measured within the same run, so it holds on a
shared, noisy machine.

    python -m bench                      # all sections → docs/benchmarks.md
    python -m bench --only model_speed   # some sections → stdout (or -o FILE)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time

if __package__ in (None, ""):  # ``python bench/run.py``: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.common import ROOT, log  # noqa: E402

#: (module under bench/, title): the report's sections, in order
SECTIONS = [
    ("latency", "Transpile latency"),
    ("throughput", "Directory-mode throughput"),
    ("scale", "Cost linear in program size"),
    ("checkpoint", "Checkpoint conversion"),  # bench/checkpoint.py: being written with transpiler/weights/
    ("model_speed", "Generated model speed"),
    ("fidelity", "Fidelity"),
]
#: what a section not written yet will measure (said in the report until its module exists)
PLANNED = {
    "checkpoint": "a ≥ 1 GB synthetic checkpoint through `transpiler/weights/`: throughput vs `shutil.copyfile`, "
                  "peak RSS",
}
DEFAULT_OUT = os.path.join(ROOT, "docs", "benchmarks.md")


def section_exists(module: str) -> bool:
    return importlib.util.find_spec(f"bench.{module}") is not None


def run_section(module: str, title: str) -> tuple[str, float]:
    """The section's markdown, from ``bench.<module>.run()`` in a fresh interpreter."""
    if not section_exists(module):
        planned = f" To come: {PLANNED[module]}." if module in PLANNED else ""
        return f"{title.lower()}: not yet measured (`bench/{module}.py` does not exist yet).{planned}", 0.0
    fd, out = tempfile.mkstemp(prefix=f"bench-{module}-", suffix=".md")
    os.close(fd)
    code = (f"import sys; sys.path.insert(0, {ROOT!r})\n"
            f"import bench.{module} as m\n"
            f"text = m.run()\n"
            f"open({out!r}, 'w', encoding='utf-8').write(text)\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="tensorflow", PYTHONHASHSEED="0")
    t = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env)
        elapsed = time.perf_counter() - t
        if proc.returncode != 0:
            return f"**Failed**: `bench/{module}.py` exited {proc.returncode} (its stderr is above in the run's log).", elapsed
        with open(out, encoding="utf-8") as fh:
            return fh.read().strip(), elapsed
    finally:
        os.unlink(out)


def _versions() -> str:
    def version(pkg: str) -> str:
        try:
            from importlib.metadata import version as v

            return v(pkg)
        except Exception:  # noqa: BLE001
            return "not installed"

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "transpiler"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    if dirty:
        commit += f" + uncommitted changes to {len(dirty.splitlines())} file(s) under transpiler/"
    return (f"Python {platform.python_version()}, torch {version('torch')}, tensorflow-cpu "
            f"{version('tensorflow-cpu')}, keras {version('keras')}, black {version('black')}; "
            f"{os.cpu_count()} CPUs (shared with other work), commit `{commit}`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=[m for m, _ in SECTIONS], help="run only these sections")
    parser.add_argument("-o", "--output", help=f"report path (default {os.path.relpath(DEFAULT_OUT, ROOT)}; "
                                                "'-' for stdout; --only defaults to stdout)")
    args = parser.parse_args(argv)
    chosen = [(m, t) for m, t in SECTIONS if not args.only or m in args.only]
    output = args.output or ("-" if args.only else DEFAULT_OUT)

    parts, timings = [], []
    t0 = time.perf_counter()
    for number, (module, title) in enumerate(SECTIONS, 1):
        if (module, title) not in chosen:
            continue
        log(f"[bench] {number}. {title} ...")
        body, elapsed = run_section(module, title)
        timings.append(f"{module} {elapsed:.0f} s")
        parts.append(f"## {number}. {title}\n\n{body}\n")
        log(f"[bench] {number}. {title}: {elapsed:.0f} s")
    total = time.perf_counter() - t0

    header = (
        "# Benchmarks\n\n"
        "Written by `.venv/bin/python -m bench` (bench/run.py); do not edit by hand. Every speed figure is a "
        "ratio of two things measured in the same run, interleaved, so it holds on a noisy, shared machine; "
        "absolute times are context only.\n\n"
        f"{_versions()}. Run time {total:.0f} s ({', '.join(timings)}).\n"
    )
    text = header + "\n" + "\n".join(parts)
    if output == "-":
        sys.stdout.write(text)
    else:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        log(f"[bench] wrote {os.path.relpath(output, ROOT)} in {total:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
