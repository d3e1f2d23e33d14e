"""Rebuild the results of a stopped (or pre-``--json``) Keras-direction run from its ``--work``
folder and its progress log (the lines ``python -m bench.realworld`` prints per script).

Everything measured is re-read from the run's own files (transpile.err, the translation, each
run's run.err and record.json); the log gives what no file holds: each run's status and seconds.

    python -m bench.realworld.recover WORK LOG OUT.json
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import asdict

from bench.realworld import edits, run, standins

LINE = re.compile(r"^(?P<script>keras/[\w.]+\.py): (?P<outcome>[a-z ]+?)  \(original (?P<ostatus>[\w ]+?) "
                  r"(?P<osecs>[\d.]+)s.*?; translation (?P<tstatus>ok|fails|timeout|not run)")


def _read(path):
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as fh:
        return fh.read()


def _run_from(folder, status, secs) -> run.Run:
    r = run.Run(status=status, secs=float(secs) if secs else 0.0)
    rec = _read(os.path.join(folder, "record.json"))
    r.record = json.loads(rec) if rec else {}
    if status == "fails":
        r.reason = run._last_error(_read(os.path.join(folder, "run.err")) or "")
        blocked = [e for e in r.record.get("events", []) if e.startswith("network blocked")]
        if blocked:
            r.reason = f"{r.reason} [{blocked[0]}]"
    elif status == "timeout":
        r.reason = f"over {run.TIMEOUT} s"
    return r


def recover(work: str, log: str) -> list[run.Result]:
    results = []
    for line in open(log):
        m = LINE.match(line)
        if not m:
            continue
        src = os.path.join(run.REALWORLD, m["script"])
        name = os.path.splitext(os.path.basename(src))[0]
        folder = next((f for f in (os.path.join(work, "keras", name), os.path.join(work, "keras", "keras__" + name))
                       if os.path.isdir(f)), None)
        if folder is None:
            continue
        res = run.Result(script=m["script"], direction="keras")
        err = _read(os.path.join(folder, "transpile.err")) or ""
        translation = _read(os.path.join(folder, name + "_torch.py"))
        res.stubs = sum(1 for l in err.splitlines() if ": stub: " in l)
        mm = re.search(r"\((\d+) models?, (\d+) stubs?\)", err)
        res.models = int(mm.group(1)) if mm else 0
        res.translate_rc = 0 if translation is not None else 2
        if translation is None:
            res.translate_error = run._last_error(err)
        else:
            try:
                ast.parse(translation)
                res.parses = True
            except SyntaxError:
                res.parses = False
            res.pure = not run.SOURCE_IMPORTS["pytorch"].search(translation)
        original = _read(src)
        plan = standins.plan(original + "\n" + (translation or ""))
        res.standins = plan.keras_datasets + [s.filename for s in plan.urls.values()] + [f.name for f in plan.files]
        res.unknown_urls = plan.unknown_urls
        urls = {u: "file://" + os.path.join(work, "_standins", "urls", s.filename) for u, s in plan.urls.items()}
        res.changes["original"] = [asdict(c) for c in edits.edit(original, urls)[1]]
        res.original = _run_from(os.path.join(folder, "original"), m["ostatus"], m["osecs"])
        rec = res.original.record
        res.keras_losses, res.keras_source = run.keras_losses(rec)
        tdir = os.path.join(folder, "translation")
        if os.path.isdir(tdir):
            res.changes["translation"] = [asdict(c) for c in edits.edit(translation, urls)[1]]
            res.translation = _run_from(tdir, m["tstatus"], None)
            res.torch_losses = res.translation.record.get("losses", [])
            res.weights = "converted" if os.path.exists(os.path.join(folder, "initial.pt")) else ""
        elif res.stubs:
            res.translation.reason = f"{res.stubs} stubs"
        res.compare = run.compare(res)
        res.outcome = run.classify(res)
        if res.outcome != m["outcome"]:
            print(f"{m['script']}: recovered outcome {res.outcome!r}, the log said {m['outcome']!r}", file=sys.stderr)
        results.append(res)
    return results


def main(argv=None) -> int:
    work, log, out = (argv or sys.argv[1:])[:3]
    results = recover(work, log)
    with open(out, "w") as fh:
        json.dump({"secs": 0.0, "jobs": 1, "results": [asdict(r) for r in results]}, fh, indent=1)
    print(f"recovered {len(results)} results", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
