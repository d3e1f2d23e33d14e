"""The original programs' runs, kept between harness runs.

An original program does not change when the transpiler does: its run (status, reason, time,
record of step losses) and the initial weights it saved are kept under a key of everything
that decides them: the program's files and arguments, the stand-ins it gets, the harness's own
instrumentation, edits and stand-in makers, the interpreter and the packages it has. A rerun
with the same key reuses them, so a run after a transpiler change costs the translations only.
Timeouts are not kept (they depend on the machine's load), nor runs that were not made.

Location: ``$RW_CACHE_DIR``, else ``~/.cache/transpiler-realworld``; ``--fresh`` ignores it
(and refills it). ``python -m bench.realworld.cache RESULTS.json WORK`` fills it from an earlier
run's ``--json`` and ``--work`` made by the same harness code.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
from dataclasses import asdict

VERSION = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = {"enabled": True}


def cache_dir() -> str:
    return os.environ.get("RW_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                          "transpiler-realworld")


def _packages(python: str) -> list[str]:
    """The interpreter's installed distributions (their dist-info names carry the versions)."""
    prefix = os.path.dirname(os.path.dirname(python))
    names = []
    for site in sorted(glob.glob(os.path.join(prefix, "lib", "python*", "site-packages"))):
        names += sorted(n for n in os.listdir(site) if n.endswith((".dist-info", ".egg-link", ".pth")))
    return names


def _harness_files() -> list[str]:
    files = sorted(glob.glob(os.path.join(HERE, "instrument", "*.py")))
    return files + [os.path.join(HERE, n) for n in ("standins.py", "edits.py")]


def key(sources: dict, python: str, argv: list, standins: list, extra: dict) -> str:
    from bench.realworld import deps, run

    h = hashlib.sha256()

    def add(*parts):
        for p in parts:
            h.update(str(p).encode())
            h.update(b"\0")

    add(VERSION, run.TIMEOUT, os.path.abspath(python), *argv, *sorted(standins))
    add(*sorted(f"{k}={v}" for k, v in extra.items() if k != "RW_SAVE_WEIGHTS"))
    for rel in sorted(sources):
        add(rel, sources[rel])
    for path in _harness_files():
        with open(path, "rb") as fh:
            h.update(fh.read())
    add(*_packages(python))
    if os.path.isdir(deps.deps_dir()):
        add(*sorted(os.listdir(deps.deps_dir())))
    return h.hexdigest()[:32]


def load(k: str, weights_dest: str):
    """The kept run of key ``k`` (its initial weights copied to ``weights_dest``), or None."""
    from bench.realworld import run

    if not SETTINGS["enabled"]:
        return None
    folder = os.path.join(cache_dir(), k)
    try:
        with open(os.path.join(folder, "run.json")) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    r = run.Run(**data)
    saved = r.record.get("weights_saved") or {}
    if saved.get("path"):
        kept = os.path.join(folder, "weights")
        if not os.path.exists(kept):
            return None
        shutil.copyfile(kept, weights_dest)
        saved["path"] = weights_dest
    r.cached = True
    return r


def store(k: str, r, weights_src: str) -> None:
    if r.status not in ("ok", "fails"):
        return
    folder = os.path.join(cache_dir(), k)
    os.makedirs(folder, exist_ok=True)
    saved = r.record.get("weights_saved") or {}
    if saved.get("path"):
        if not os.path.exists(weights_src):
            return
        shutil.copyfile(weights_src, os.path.join(folder, "weights.tmp"))
        os.replace(os.path.join(folder, "weights.tmp"), os.path.join(folder, "weights"))
    tmp = os.path.join(folder, f"run.json.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        json.dump(asdict(r), fh)
    os.replace(tmp, os.path.join(folder, "run.json"))


def seed(results_json: str, work: str) -> int:
    """Keep the originals' runs of an earlier ``--json``/``--work`` pair made by this same harness
    code (the key holds the harness's files as they are now: seed only from a run of them).
    Returns how many runs were kept."""
    from bench.realworld import cli, run, torch_direction

    results, _, _ = cli.load_results(results_json)
    kept = 0
    for r in results:
        if not r.original.python:
            continue
        if r.direction == "keras":
            name = os.path.splitext(os.path.basename(r.script))[0]
            with open(os.path.join(run.REALWORLD, r.script)) as fh:
                sources = {name + ".py": fh.read()}
            k = key(sources, r.original.python, [], r.standins, {})
            weights = os.path.join(work, "keras", r.script.replace("/", "__")[:-3], "initial.weights.h5")
        else:
            prog = r.script.split("/", 1)[1]
            entry, argv, pre = torch_direction.PROGRAMS[prog]
            single = os.path.basename(entry) if prog.startswith("reinforcement_learning/") else None
            sources = torch_direction._sources(torch_direction._folder(prog), single)
            k = key(sources, r.original.python, [entry, *argv, *pre], r.standins, {})
            weights = os.path.join(work, "torch", r.script.replace("/", "__"), "initial.pt")
        if (r.original.record.get("weights_saved") or {}).get("path") and not os.path.exists(weights):
            continue
        before = os.path.exists(os.path.join(cache_dir(), k, "run.json"))
        store(k, r.original, weights)
        kept += os.path.exists(os.path.join(cache_dir(), k, "run.json")) and not before
    return kept


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3:
        print("usage: python -m bench.realworld.cache RESULTS.json WORK", file=sys.stderr)
        sys.exit(2)
    print(f"kept {seed(sys.argv[1], sys.argv[2])} original runs in {cache_dir()}")
