"""``python -m bench.realworld``: run the harness and write docs/realworld.md."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import asdict

from bench.realworld import report, run, standins


def _scripts(direction: str, only: list[str]) -> list[str]:
    folder = os.path.join(run.REALWORLD, "keras" if direction == "keras" else "torch")
    if direction == "keras":
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py"))
    else:
        from bench.realworld import torch_direction

        files = torch_direction.program_dirs()
    if only:
        files = [f for f in files if any(o in os.path.relpath(f, run.REALWORLD) for o in only)]
    return files


def _write(out: str, results: list, secs: float, jobs: int, note: str = "") -> None:
    """docs/realworld.md and .json: each direction present in ``results`` rewrites its section."""
    for direction in ("keras", "torch"):
        mine = sorted((r for r in results if r.direction == direction), key=lambda r: r.script)
        if not mine:
            continue
        report.write(out, mine, direction, secs, jobs, note)
        report.write_json(_json_beside(out), mine, direction)
        print(report.summary_line(mine, direction), file=sys.stderr)
    print(f"wrote {out} and {_json_beside(out)}", file=sys.stderr)


def _json_beside(md: str) -> str:
    """docs/realworld.md -> docs/realworld.json (the diffable per-script facts)."""
    return os.path.splitext(md)[0] + ".json"


def load_results(path: str):
    """(results, secs, jobs) of a --json file."""
    with open(path) as fh:
        data = json.load(fh)
    rows, secs, jobs = (data, 0.0, 1) if isinstance(data, list) else (data["results"], data["secs"], data["jobs"])
    results = []
    for row in rows:
        row = dict(row)
        original, translation = run.Run(**row.pop("original")), run.Run(**row.pop("translation"))
        res = run.Result(**row, original=original, translation=translation)
        res.compare, res.outcome = run.compare(res), run.classify(res)  # today's verdict on the records
        results.append(res)
    return results, secs, jobs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.realworld", description=__doc__)
    ap.add_argument("--direction", choices=["keras", "torch", "all"], default="keras",
                    help="keras: the keras.io scripts -> PyTorch; torch: the pytorch/examples programs -> Keras; "
                         "all: both, in one pool of -j workers")
    ap.add_argument("--only", nargs="*", default=[], help="substrings of script names")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--out", default=None, help="markdown report (default docs/realworld.md; '-' for none)")
    ap.add_argument("--json", default=None, help="also write the raw results as JSON")
    ap.add_argument("--work", default=None, help="keep the per-script folders here (default: a temp dir)")
    ap.add_argument("--setup", action="store_true",
                    help="first install what the programs import (.rw-deps) and, for --direction torch, "
                         "the torch+torchvision venv (.venv-tv, ~5.5 GB)")
    ap.add_argument("--from-json", nargs="+", default=None,
                    help="write the report from --json files of earlier runs instead of running "
                         "(a later file's row replaces an earlier one's for the same script)")
    ap.add_argument("--note", default="", help="a paragraph for the report's section (how the run was made)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="with --from-json: the runs' wall-clock minutes (default: the files' sum)")
    ap.add_argument("--fresh", action="store_true",
                    help="run every original again instead of reusing its kept run (bench/realworld/cache.py)")
    args = ap.parse_args(argv)
    if args.fresh:
        from bench.realworld import cache as rw_cache

        rw_cache.SETTINGS["enabled"] = False
    if args.from_json:
        merged, secs, jobs = {}, 0.0, 1
        for path in args.from_json:
            rows, sec, j = load_results(path)
            merged.update((r.script, r) for r in rows)
            secs += sec or sum(r.original.secs + r.translation.secs for r in rows)
            jobs = max(jobs, j)
        out = args.out or os.path.join(run.ROOT, "docs", "realworld.md")
        if out != "-":
            _write(out, list(merged.values()), secs if args.minutes is None else args.minutes * 60, jobs, args.note)
        return 0
    log = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731
    if args.setup:
        from bench.realworld import deps

        if deps.ensure_program_deps(log) is None:
            return 2
        if args.direction != "keras" and deps.ensure_torchvision_venv(log) is None:
            return 2
        for tool in deps.system_tools_missing():
            log(f"not installed (a system package; the originals needing it fail here): {tool}")

    if not os.path.isdir(run.REALWORLD):
        print(f"no real-world set at {run.REALWORLD} (set RW_REALWORLD_DIR)", file=sys.stderr)
        return 2
    directions = ["keras", "torch"] if args.direction == "all" else [args.direction]
    scripts = [(d, p) for d in directions for p in _scripts(d, args.only)]

    def stop(signum, frame):
        run.kill_live()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    work = args.work or tempfile.mkdtemp(prefix="realworld-")
    cache = standins.StandInCache(os.path.join(work, "_standins"))
    t0 = time.perf_counter()

    done, lock = [], threading.Lock()

    def save_json():
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as fh:
                json.dump({"secs": time.perf_counter() - t0, "jobs": args.jobs,
                           "results": [asdict(r) for r in done]}, fh, indent=1)
            os.replace(tmp, args.json)

    def one(item):
        direction, path = item
        name = os.path.relpath(path, run.REALWORLD).replace(os.sep, "__")
        name = name[:-3] if name.endswith(".py") else name
        folder = os.path.join(work, direction, name)
        if direction == "keras":
            res = run.run_keras_script(path, folder, cache)
        else:
            from bench.realworld import torch_direction

            res = torch_direction.run_torch_program(path, folder, cache)
        print(f"{res.script}: {res.outcome}  (original {res.original.status} {res.original.secs}s"
              f"{': ' + res.original.reason if res.original.reason else ''}; translation {res.translation.status}"
              f"{': ' + res.translation.reason if res.translation.reason else ''}) {res.compare}",
              file=sys.stderr, flush=True)
        with lock:  # the JSON grows script by script: a stopped run keeps what it measured
            done.append(res)
            save_json()
        return res

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, scripts))
    secs = time.perf_counter() - t0
    done[:] = results
    save_json()
    out = args.out
    if out is None and not args.only:
        out = os.path.join(run.ROOT, "docs", "realworld.md")
    if out and out != "-":
        _write(out, results, secs, args.jobs, args.note)
    else:
        for d in directions:
            print(report.summary_line([r for r in results if r.direction == d], d), file=sys.stderr)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0
