"""Shared helpers for the benchmark sections: corpus paths, timing, markdown."""

from __future__ import annotations

import glob
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
VENV_BIN = os.path.dirname(sys.executable)
CORPUS = sorted(p for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py")) if not p.endswith("_torch.py"))


def name_of(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def corpus_path(name: str) -> str:
    return os.path.join(ROOT, "corpus", "keras", f"{name}.py")


def read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def source_lines(path: str) -> int:
    return len(read(path).splitlines())


def log(*args) -> None:
    """Progress goes to stderr: stdout/the report stays clean."""
    print(*args, file=sys.stderr, flush=True)


def median(xs) -> float:
    return float(statistics.median(xs))


def geomean(xs) -> float:
    xs = list(xs)
    prod = 1.0
    for x in xs:
        prod *= x
    return prod ** (1.0 / len(xs)) if xs else float("nan")


def table(header: list[str], rows: list[list]) -> str:
    """A markdown table (cells already formatted or str()-able)."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}×"


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def fmt_sci(x: float | None) -> str:
    return "—" if x is None else f"{x:.1e}"


def fmt_pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"
