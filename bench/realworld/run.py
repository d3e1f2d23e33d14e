"""Run one real-world program through the harness: translate, plant stand-ins, run the original
and the translation (each in its own temporary copy, in a subprocess, no network), compare the
first training steps from the same initial weights."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from bench.realworld import cache as rw_cache
from bench.realworld import deps, edits, standins

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTRUMENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "instrument")
REALWORLD = os.environ.get("RW_REALWORLD_DIR") or os.path.normpath(os.path.join(ROOT, "..", "shared", "realworld"))
TIMEOUT = 300
COMPARE_STEPS = 3
REL_TOL = 1e-4
SOURCE_IMPORTS = {"pytorch": re.compile(r"^\s*(import|from)\s+(keras|tensorflow)\b", re.M),
                  "keras": re.compile(r"^\s*(import|from)\s+(torch|torchvision)\b", re.M)}
TORCHVISION = re.compile(r"^\s*(import|from)\s+torchvision\b", re.M)


@dataclass
class Run:
    status: str = "not run"  # "ok" | "fails" | "timeout" | "not run"
    reason: str = ""
    secs: float = 0.0
    python: str = ""
    record: dict = field(default_factory=dict)
    cached: bool = False  # an original's run kept from an earlier harness run (cache.py)


@dataclass
class Result:
    script: str
    direction: str
    translate_rc: object = None
    stubs: int = 0
    models: int = 0
    parses: bool = False
    pure: bool = False
    translate_error: str = ""
    standins: list = field(default_factory=list)
    unknown_urls: list = field(default_factory=list)
    changes: dict = field(default_factory=dict)  # "original"/"translation" -> [Change]
    original: Run = field(default_factory=Run)
    translation: Run = field(default_factory=Run)
    weights: str = ""
    keras_losses: list = field(default_factory=list)
    keras_source: str = ""
    torch_losses: list = field(default_factory=list)
    compare: str = ""
    outcome: str = ""

    @property
    def clean(self) -> bool:
        return self.translate_rc == 0 and self.stubs == 0 and self.parses and self.pure


def _python_main() -> str:
    return os.environ.get("RW_PYTHON") or sys.executable


def torchvision_python() -> str | None:
    """The interpreter of the torch+torchvision venv (see docs/realworld.md), or None."""
    py = os.path.join(deps.tv_venv(), "bin", "python")
    return py if os.path.exists(os.path.join(deps.tv_venv(), ".complete")) else None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EXC = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Blocked))\b")


def _last_error(stderr: str) -> str:
    """The exception line of a traceback (with its next line when the message goes on)."""
    lines = [_ANSI.sub("", l).strip() for l in stderr.splitlines()]
    lines = [l for l in lines if l]
    for i in range(len(lines) - 1, -1, -1):
        if _EXC.match(lines[i]):
            text = lines[i]
            if text.endswith((".", ":")) and i + 1 < len(lines) and not lines[i + 1].startswith("Arguments"):
                text += " " + lines[i + 1]
            return text[:300]
    return (lines[-1][:300] if lines else "no message")


LIVE: set = set()  # the program processes running now (their groups end with the harness)


def kill_live() -> None:
    for p in list(LIVE):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass


def _run(cmd, cwd, env, timeout=None, log=None, log_dir=None):
    """(returncode or "timeout", stdout, stderr, secs); the whole process group ends at timeout
    (default ``TIMEOUT``)."""
    timeout = TIMEOUT if timeout is None else timeout
    t0 = time.perf_counter()
    log_dir = log_dir or cwd
    with open(os.path.join(log_dir, (log or "run") + ".out"), "w") as out, \
            open(os.path.join(log_dir, (log or "run") + ".err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        LIVE.add(p)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGABRT)  # PYTHONFAULTHANDLER: the program's stack to stderr first
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)  # what is left of the group (workers, the program)
            except ProcessLookupError:
                pass
            p.wait()
            rc = "timeout"
        except BaseException:  # interrupted: the program's whole group goes with the harness
            os.killpg(p.pid, signal.SIGKILL)
            raise
        finally:
            LIVE.discard(p)
    secs = time.perf_counter() - t0
    with open(os.path.join(log_dir, (log or "run") + ".out"), errors="replace") as fh:
        stdout = fh.read()
    with open(os.path.join(log_dir, (log or "run") + ".err"), errors="replace") as fh:
        stderr = fh.read()
    return rc, stdout, stderr, secs


def _base_env(home: str, threads: int = 1) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RW_", "PYTHON", "KERAS_", "TORCH_"))}
    env.update({
        "HOME": home, "KERAS_HOME": os.path.join(home, ".keras"), "TORCH_HOME": os.path.join(home, ".torch"),
        # the translations' get_file cache has Keras' layout: it reads the same planted stand-ins
        "TRANSPILED_DATA_HOME": os.path.join(home, ".keras"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"), "MPLBACKEND": "Agg", "CUDA_VISIBLE_DEVICES": "",
        "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": str(threads), "TF_NUM_INTRAOP_THREADS": str(threads),
        "TF_NUM_INTEROP_THREADS": str(threads),
        "PYTHONPATH": os.pathsep.join([INSTRUMENT, ROOT] + ([deps.deps_dir()] if os.path.isdir(deps.deps_dir()) else [])),
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",  # a timed-out run is stopped with SIGABRT: it says where it was
        # programs written before torch 2.6 made torch.load(weights_only=True) the default
        # (time_sequence_prediction loads a numpy array it saved): torch's own switch for them
        "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1",
    })
    os.makedirs(env["KERAS_HOME"], exist_ok=True)
    return env


_FLAGS: dict = {}


def exact_flags(target: str) -> list[str]:
    """The transpiler's exactness flag for ``target``: ``--exact`` where the CLI has it (planned),
    else ``--keras-exact-updates`` for Keras -> PyTorch (the torch -> Keras direction has none)."""
    if "help" not in _FLAGS:
        p = subprocess.run([_python_main(), "-m", "transpiler", "--help"], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        _FLAGS["help"] = p.stdout
    text = _FLAGS["help"]
    if re.search(r"--exact\b(?!-)", text):
        return ["--exact"]
    return ["--keras-exact-updates"] if target == "pytorch" and "--keras-exact-updates" in text else []


def translate(src: str, target: str, out: str, cwd: str, extra=()) -> tuple:
    cmd = [_python_main(), "-m", "transpiler", src, "--to", target, "-o", out, *extra, *exact_flags(target)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    return _run(cmd, cwd, env, log="transpile" if not extra else "weights")


def _stage(text: str, url_map: dict, folder: str, name: str, known_hashes=frozenset()):
    os.makedirs(folder, exist_ok=True)
    edited, changes = edits.edit(text, url_map, known_hashes)
    with open(os.path.join(folder, name), "w") as fh:
        fh.write(edited)
    return changes


def _plant(plan, cache, folder, cwd=None):
    """Stand-ins for one run: $HOME and Keras' cache in ``folder``, relative-path data beside
    the program in ``cwd`` (default ``folder``)."""
    os.makedirs(folder, exist_ok=True)
    home = os.path.join(folder, "home")
    env = _base_env(home)
    planted, urls = cache.plant(plan, env["KERAS_HOME"], cwd or folder)
    with open(os.path.join(folder, "planted.txt"), "w") as fh:
        fh.write("\n".join(planted))
    return env, urls


def _execute(python, script, folder, env, mode, extra_env) -> Run:
    return _execute_cmd(python, [script], folder, env, mode, extra_env, folder)


def _execute_cmd(python, argv, cwd, env, mode, extra_env, folder) -> Run:
    """Run ``python argv`` in ``cwd`` under the instrumentation; logs and record go to ``folder``."""
    os.makedirs(folder, exist_ok=True)
    record = os.path.join(folder, "record.json")
    planted = os.path.join(folder, "planted.txt")
    if not os.path.exists(planted):
        open(planted, "w").close()
    env = dict(env, RW_MODE=mode, RW_RECORD=record, RW_PLANTED=planted,
               RW_STEPS=str(edits.MAX_STEPS), RW_NEUTRALISE="1", **extra_env)
    rc, _, stderr, secs = _run([python, *argv], cwd, env, log_dir=folder)
    run = Run(python=python, secs=round(secs, 1))
    if rc == 0:
        run.status = "ok"
    elif rc == "timeout":
        run.status, run.reason = "timeout", f"over {TIMEOUT} s" + where_stopped(stderr, cwd)
    else:
        run.status, run.reason = "fails", _last_error(stderr)
    if os.path.exists(record):
        with open(record) as fh:
            run.record = json.load(fh)
    workers = sorted(f for f in os.listdir(folder) if re.fullmatch(r"record\.\d+\.json", f))
    if workers:  # processes the program started wrote records of their own
        run.record.setdefault("events", [])
        run.record["workers"] = len(workers)
        run.record["worker_losses"] = []
        for f in workers:
            with open(os.path.join(folder, f)) as fh:
                rec = json.load(fh)
            run.record["worker_losses"].append(rec.get("losses", []))
            for key in ("optimizers", "distributions"):  # what the workers built counts as the program's
                have = run.record.setdefault(key, [])
                have += [v for v in rec.get(key, []) if v not in have]
            if not run.record.get("weights_saved") and (rec.get("weights_saved") or {}).get("path"):
                run.record["weights_saved"] = rec["weights_saved"]
    if run.record:
        blocked = [e for e in run.record.get("events", []) if e.startswith("network blocked")]
        if blocked and run.status != "ok":
            run.reason = f"{run.reason} [{blocked[0]}]"
    return run


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


def where_stopped(stderr: str, cwd: str) -> str:
    """', at prog.py:12 in main: <line>' from the faulthandler dump of a run stopped at its
    timeout: the innermost frame in the program's own files (most recent call first), or ''."""
    at = stderr.rfind("Fatal Python error: Aborted")
    if at < 0:
        return ""
    root = os.path.realpath(cwd)
    for line in stderr[at:].splitlines():
        m = _FRAME.match(line)
        if not m:
            continue
        path = os.path.realpath(os.path.join(cwd, m.group("file")))
        if not path.startswith(root + os.sep):
            continue
        text = ""
        try:
            with open(path, errors="replace") as fh:
                text = fh.read().splitlines()[int(m.group("line")) - 1].strip()
        except (OSError, IndexError):
            pass
        rel = os.path.relpath(path, root)
        return f", at {rel}:{m.group('line')} in {m.group('func')}" + (f": {text}" if text else "")
    return ""


def per_step(logs: list, key: str = "loss") -> list:
    """Per-batch values from Keras' per-batch logs, which hold the running mean over the epoch."""
    means = [l.get(key) for l in logs if l.get(key) is not None]
    return [k * m - (k - 1) * prev for k, (m, prev) in enumerate(zip(means, [0.0] + means), 1)]


def compare_losses(a: list, b: list, steps=COMPARE_STEPS, tol=REL_TOL) -> tuple[bool, str]:
    if len(a) < steps or len(b) < steps:
        return False, f"not compared: {len(a)} Keras / {len(b)} torch step losses recorded"
    errs = [abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a[:steps], b[:steps])]
    worst = max(errs)
    return worst <= tol, f"max rel err {worst:.1e}"


def run_keras_script(src: str, work: str, cache: standins.StandInCache, run_translation=True) -> Result:
    name = os.path.splitext(os.path.basename(src))[0]
    res = Result(script=os.path.relpath(src, REALWORLD), direction="keras")
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, name + "_torch.py")
    rc, _, stderr, _ = translate(src, "pytorch", out, work)
    res.translate_rc = rc
    res.stubs = sum(1 for line in stderr.splitlines() if ": stub: " in line)
    m = re.search(r"\((\d+) models?, (\d+) stubs?\)", stderr)
    res.models = int(m.group(1)) if m else 0
    translation = None
    if rc not in (0, 3):
        res.translate_error = _last_error(stderr)
    if os.path.exists(out):
        with open(out) as fh:
            translation = fh.read()
        try:
            ast.parse(translation)
            res.parses = True
        except SyntaxError:
            res.parses = False
        res.pure = not SOURCE_IMPORTS["pytorch"].search(translation)

    with open(src) as fh:
        original = fh.read()
    plan = standins.plan(original + "\n" + (translation or ""))
    res.standins = plan.keras_datasets + [s.filename for s in plan.urls.values()] + [f.name for f in plan.files]
    res.unknown_urls = plan.unknown_urls

    # the original, as Keras
    odir = os.path.join(work, "original")
    env, urls = _plant(plan, cache, odir)
    res.changes["original"] = [asdict(c) for c in _stage(original, urls, odir, name + ".py")]
    weights_h5 = os.path.join(work, "initial.weights.h5")
    key = rw_cache.key({name + ".py": original}, _python_main(), [], res.standins, {})
    res.original = rw_cache.load(key, weights_h5)
    if res.original is None:
        res.original = _execute(_python_main(), name + ".py", odir, env, "keras", {"RW_SAVE_WEIGHTS": weights_h5})
        rw_cache.store(key, res.original, weights_h5)
    rec = res.original.record
    res.keras_losses, res.keras_source = keras_losses(rec)

    # the translation, as PyTorch
    if translation is None or not res.parses:
        pass
    elif res.stubs:
        res.translation.reason = f"{res.stubs} stubs"
    elif run_translation:
        tdir = os.path.join(work, "translation")
        tenv, turls = _plant(plan, cache, tdir)
        res.changes["translation"] = [asdict(c) for c in _stage(translation, turls, tdir, name + "_torch.py")]
        extra = {}
        saved = rec.get("weights_saved") or {}
        if saved.get("path") and os.path.exists(saved["path"]):
            pt = os.path.join(work, "initial.pt")
            wrc, _, werr, _ = translate(src, "pytorch", os.path.join(work, "weights_discard.py"), work,
                                        extra=("--weights", saved["path"], "--weights-out", pt))
            if wrc in (0, 3) and os.path.exists(pt):
                extra["RW_LOAD_WEIGHTS"] = pt
                res.weights = "converted"
            else:
                res.weights = "conversion failed: " + _last_error(werr)
        elif saved.get("error"):
            res.weights = "not saved: " + saved["error"]
        python = _python_main()
        if TORCHVISION.search(translation):
            python = torchvision_python() or python
        res.translation = _execute(python, name + "_torch.py", tdir, tenv, "torch", extra)
        res.torch_losses = torch_losses(res.translation.record)
        if res.weights == "converted" and not res.translation.record.get("weights_loaded"):
            res.weights = "converted, not loaded (no module with the checkpoint's keys ran forward)"
    res.compare = compare(res)
    res.outcome = classify(res)
    return res


def torch_losses(rec: dict) -> list:
    """A PyTorch run's step losses (each scalar backward); a program training in one worker
    process (Hogwild with one process) gives that worker's."""
    if rec.get("losses") or rec.get("workers") != 1:
        return rec.get("losses", [])
    return rec["worker_losses"][0]


def keras_losses(rec: dict) -> tuple[list, str]:
    """A Keras run's step losses and where they come from: a fit with Keras' own train step (its
    per-batch logs), train_on_batch, else the gradient targets (a custom train_step or loop,
    eager or under tf.function)."""
    if rec.get("logs") and not rec.get("custom_train_step"):
        return per_step(rec["logs"]), "fit logs"
    if rec.get("losses"):
        return rec["losses"], "train_on_batch"
    if rec.get("tape"):
        return rec["tape"], "gradient targets" + (" (custom train_step)" if rec.get("custom_train_step") else "")
    return [], ""


def not_comparable(*records: dict) -> str:
    """Why the programs' first steps cannot be compared whatever the translation does, or ''."""
    for rec in records:
        if rec.get("workers", 0) > 1:
            return f"training runs in {rec['workers']} worker processes (Hogwild: interleaving is not deterministic)"
        if rec.get("distributions"):
            return f"the training samples ({', '.join(rec['distributions'])}): losses depend on the draws"
        if "LBFGS" in rec.get("optimizers", []):
            return "LBFGS evaluates the loss several times per step"
    return ""


def compare(res: Result) -> str:
    """The first-3-steps verdict: 'equal: ...', 'differ: ...' or 'not compared: <why>'."""
    keras_run, torch_run = (res.original, res.translation) if res.direction == "keras" else \
        (res.translation, res.original)
    why = not_comparable(res.original.record, res.translation.record)
    if why:  # the program's nature, whatever the translation does (the issues' denominators)
        return "not comparable: " + why
    if res.translate_rc not in (0, 3) or not res.parses:
        return "not compared: the translation failed"
    if res.stubs:
        return f"not compared: {res.stubs} stubs"
    if res.original.status == "not run":
        return "not compared: the original was not run" + (f" ({res.original.reason})" if res.original.reason else "")
    ref = res.keras_losses if res.direction == "keras" else res.torch_losses
    if not ref:
        return "not compared: the original recorded no training step" + \
            ("" if res.original.status == "ok" else f" ({res.original.status})")
    if res.translation.status == "not run":
        return "not compared: the translation was not run" + (f" ({res.translation.reason})" if res.translation.reason else "")
    loaded = (torch_run if res.direction == "keras" else keras_run).record.get("weights_loaded")
    if not loaded:
        return "not compared: " + (res.weights or "no initial weights")
    if loaded.get("after_losses"):
        return "not compared: the initial weights were loaded after the first step"
    ok, text = compare_losses(res.keras_losses, res.torch_losses)
    if not ok and text.startswith("not compared"):
        return text + ("" if res.translation.status == "ok" else f" (translation {res.translation.status})")
    return ("equal: " if ok else "differ: ") + text


OUTCOMES = ["translate failed", "stubs", "original fails here", "translation crashes", "runs", "first steps equal"]


def classify(res: Result) -> str:
    if res.translate_rc not in (0, 3) or not res.parses:
        return "translate failed"
    if res.stubs:
        return "stubs"
    if res.original.status != "ok":
        return "original fails here"
    if res.translation.status != "ok":
        return "translation crashes"
    if res.compare.startswith("equal"):
        return "first steps equal"
    return "runs"
