"""Section: cost linear in program size (issue 21 item 5, issue 22 item 5).

Generated programs of size N, four families: a Keras ``keras.Sequential`` of N Dense layers
translated to PyTorch; a PyTorch builder returning an ``nn.Sequential`` of N modules
(Linear/ReLU pairs) translated to Keras; a Keras script with N plain statement lines beside a
small model (``v7 = 7 * 2 + 1``: the long scripts of the hostile-input issue); and a Keras
script holding one list literal of 10·N numbers on one line (its 1 MB one-line list). Each
size runs in a fresh process (imports and a small warm-up translation first, so neither is
counted): the wall time of ``translate()`` and the growth of the peak resident set over the
warmed-up process, both per unit (layer, line, element). Target: per-unit time and memory
flat within 1.5× from the smallest to the largest size. Sizes: ``BENCH_SCALE_SIZES``
(default 1000,5000,20000); a size that runs longer than ``BENCH_SCALE_TIMEOUT`` seconds
(default 1200) is reported as not finishing. ``BENCH_SCALE_KINDS`` picks families
(default all: keras,torch,statements,literal).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.common import ROOT, fmt_ratio, log, table

SIZES = [int(n) for n in os.environ.get("BENCH_SCALE_SIZES", "1000,5000,20000").split(",")]
TIMEOUT = float(os.environ.get("BENCH_SCALE_TIMEOUT", "1200"))
TARGET = 1.5
KINDS = os.environ.get("BENCH_SCALE_KINDS", "keras,torch,statements,literal").split(",")


def keras_program(n: int) -> str:
    """A Keras script whose model is a Sequential of ``n`` Dense layers (and an output layer)."""
    layers = "\n".join('        layers.Dense(16, activation="relu"),' for _ in range(n))
    return ("import keras\nfrom keras import layers\n\nmodel = keras.Sequential(\n    [\n"
            f"        keras.Input(shape=(16,)),\n{layers}\n        layers.Dense(1),\n    ]\n)\n"
            'model.compile(optimizer="adam", loss="mse")\n')


def torch_program(n: int) -> str:
    """A PyTorch script whose builder returns an nn.Sequential of ``n`` modules (Linear/ReLU pairs)."""
    layers = "\n".join("        nn.Linear(16, 16),\n        nn.ReLU()," for _ in range(n // 2))
    return ("import torch\nfrom torch import nn\n\nINPUT_SHAPE = (16,)\n\n\ndef build_model():\n"
            f"    return nn.Sequential(\n{layers}\n        nn.Linear(16, 1),\n    )\n\n\n"
            "model = build_model()\noptimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n")


_SMALL_MODEL = ("\nmodel = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(8, activation=\"relu\"), "
                "layers.Dense(1)])\nmodel.compile(optimizer=\"adam\", loss=\"mse\")\n")


def statements_program(n: int) -> str:
    """A Keras script of ``n`` plain statement lines (arithmetic on constants) and a small model."""
    body = "".join(f"v{i} = {i} * 2 + 1\n" for i in range(n))
    return "import keras\nfrom keras import layers\n\n" + body + _SMALL_MODEL


def literal_program(n: int) -> str:
    """A Keras script holding one list literal of ``10 * n`` numbers on one line, and a small model."""
    numbers = ", ".join(f"0.{(i * 7919) % 1000000:06d}" for i in range(10 * n))
    return "import keras\nfrom keras import layers\n\nDATA = [" + numbers + "]\n" + _SMALL_MODEL


#: kind: (program of size n, target, label, unit, units per n)
FAMILIES = {
    "keras": ("keras_program", "pytorch", "Keras Sequential → PyTorch", "layer", 1),
    "torch": ("torch_program", "keras", "PyTorch nn.Sequential → Keras", "layer", 1),
    "statements": ("statements_program", "pytorch", "Keras script of N statement lines → PyTorch", "line", 1),
    "literal": ("literal_program", "pytorch", "Keras script with a one-line list of 10·N numbers → PyTorch",
                "element", 10),
}

_CHILD = """
import json, resource, sys, time
sys.setrecursionlimit(100000)
import bench.scale as scale
from transpiler.translate import translate
kind, n = sys.argv[1], int(sys.argv[2])
name, target = scale.FAMILIES[kind][:2]
program = getattr(scale, name)
translate(program(4), "warm.py", target)
source = program(n)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
result = translate(source, "generated.py", target)
elapsed = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "rss_kb": peak - base, "stubs": len(result.stubs),
                  "out_lines": result.text.count("\\n")}))
"""


def _measure(kind: str, n: int) -> dict | None:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, kind, str(n)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} {n}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run() -> str:
    rows, verdicts = [], []
    for kind in KINDS:
        label, unit, per_n = FAMILIES[kind][2:]
        per_layer = []
        for n in SIZES:
            m = _measure(kind, n)
            if m is None:
                log(f"  scale {kind} {n}: did not finish in {TIMEOUT:.0f} s")
                rows.append([label, n, f"did not finish in {TIMEOUT:.0f} s", "", "", "", ""])
                per_layer.append(None)
                continue
            t, mem = m["seconds"] / (n * per_n), max(m["rss_kb"], 0) / (n * per_n)
            per_layer.append((t, mem))
            log(f"  scale {kind} {n}: {m['seconds']:.1f} s, +{m['rss_kb'] / 1024:.0f} MiB")
            rows.append([label, f"{n * per_n:,} {unit}s", f"{m['seconds']:.1f}", f"{t * 1e3:.3f}", f"{mem:.2f}",
                         m["out_lines"], m["stubs"]])
        done = [p for p in per_layer if p]
        if len(done) == len(per_layer) and len(done) >= 2:
            t_growth = done[-1][0] / done[0][0]
            m_growth = done[-1][1] / done[0][1] if done[0][1] > 0 else None  # (no growth over the warm process)
            ok = t_growth <= TARGET and (m_growth is None or m_growth <= TARGET)
            memory = fmt_ratio(m_growth) if m_growth is not None else "not measurable (no growth at the smallest size)"
            verdicts.append(f"{label}: per-{unit} time {fmt_ratio(t_growth)}, per-{unit} memory {memory} "
                            f"from {SIZES[0] * per_n:,} to {SIZES[-1] * per_n:,} {unit}s "
                            f"({'meets' if ok else 'misses'} ≤ {TARGET}×)")
        else:
            verdicts.append(f"{label}: not every size finished (misses)")
    return "\n".join([
        "Generated programs of size N translated in a fresh process each (after the imports and a small "
        "warm-up): `translate()` wall time and the growth of the peak RSS, per unit. A Keras `Sequential` of N "
        "Dense layers → PyTorch; a PyTorch builder returning an `nn.Sequential` of N modules (Linear/ReLU) → Keras; "
        "a Keras script of N plain statement lines beside a small model; a Keras script with one list literal of "
        "10·N numbers on one line.",
        "",
        "**" + "; ".join(verdicts) + ".**",
        "",
        table(["program", "size", "seconds", "ms/unit", "KiB/unit", "output lines", "stubs"], rows),
    ])
