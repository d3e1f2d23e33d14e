"""Byte-identity of the translations across a change (issue 21: a faster formatter or
printer must not change one output byte).

    python -m bench.outputs record DIR            # today's outputs into DIR (one file each)
    python -m bench.outputs compare DIR           # translate again, compare with DIR

Inputs: the corpus both ways (``corpus/keras`` to PyTorch, ``corpus/torch`` to Keras), every
golden case's input (``tests/golden`` to PyTorch, also with ``exact=True``;
``tests/golden_keras`` to Keras), and the real-world scripts of ``../shared/realworld``
(keras to PyTorch, torch to Keras; ``RW_REALWORLD_DIR`` names another folder, ``--no-realworld``
leaves them out, ``--sample N`` takes every k-th so that about N of each set are left). A translation that raises is recorded as its
error line, so a change in what fails is a difference too. ``compare`` writes each differing
output beside the recorded one (``NAME.new``) and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

from bench.common import ROOT

SHARED = os.environ.get("RW_REALWORLD_DIR") or os.path.normpath(os.path.join(ROOT, "..", "shared", "realworld"))


def jobs(realworld: bool = True, sample: int | None = None) -> list[tuple[str, str, str, bool]]:
    """(key, source path, target, exact) for every translation compared."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py"))):
        out.append(("corpus_keras__" + os.path.basename(path), path, "pytorch", False))
    for path in sorted(glob.glob(os.path.join(ROOT, "corpus", "torch", "*.py"))):
        out.append(("corpus_torch__" + os.path.basename(path), path, "keras", False))
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "*", "input.py"))):
        case = os.path.basename(os.path.dirname(path))
        out.append((f"golden__{case}", path, "pytorch", False))
        out.append((f"golden_exact__{case}", path, "pytorch", True))
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "golden_keras", "*", "input.py"))):
        out.append((f"golden_keras__{os.path.basename(os.path.dirname(path))}", path, "keras", False))
    if realworld:
        if not os.path.isdir(SHARED):
            raise SystemExit(f"{SHARED} is missing: set RW_REALWORLD_DIR, or pass --no-realworld")
        for name, target in (("keras", "pytorch"), ("torch", "keras")):
            paths = sorted(glob.glob(os.path.join(SHARED, name, "**", "*.py"), recursive=True))
            if sample:
                paths = paths[::max(1, len(paths) // sample)]
            for path in paths:
                rel = os.path.relpath(path, os.path.join(SHARED, name)).replace(os.sep, "__")
                out.append((f"realworld_{name}__{rel}", path, target, False))
    return out


def translated(path: str, target: str, exact: bool) -> str:
    from transpiler.translate import translate

    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        return translate(source, path, target, exact=exact).text
    except Exception as exc:  # noqa: BLE001  (what fails is part of what is compared)
        return f"ERROR {type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.outputs", description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["record", "compare"])
    parser.add_argument("folder")
    parser.add_argument("--no-realworld", action="store_true", help="leave out ../shared/realworld")
    parser.add_argument("--sample", type=int, help="about this many scripts of each real-world set")
    args = parser.parse_args(argv)
    todo = jobs(not args.no_realworld, args.sample)
    os.makedirs(args.folder, exist_ok=True)
    start, differ, missing = time.perf_counter(), [], []
    for key, path, target, exact in todo:
        text = translated(path, target, exact)
        recorded = os.path.join(args.folder, key)
        if args.mode == "record":
            with open(recorded, "w", encoding="utf-8") as fh:
                fh.write(text)
            continue
        if not os.path.exists(recorded):
            missing.append(key)
            continue
        with open(recorded, encoding="utf-8") as fh:
            if fh.read() == text:
                continue
        differ.append(key)
        with open(recorded + ".new", "w", encoding="utf-8") as fh:
            fh.write(text)
    took = time.perf_counter() - start
    if args.mode == "record":
        print(f"recorded {len(todo)} outputs in {args.folder} ({took:.0f} s)")
        return 0
    print(f"compared {len(todo) - len(missing)} outputs with {args.folder} ({took:.0f} s): "
          f"{len(differ)} differ{': ' + ', '.join(differ) if differ else ''}"
          + (f"; {len(missing)} not recorded: {', '.join(missing)}" if missing else ""))
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
