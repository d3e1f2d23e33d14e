"""The PyTorch -> Keras direction: each pytorch/examples program (a folder) translated as a
package (``transpile DIR --to keras -o OUT``), its original run with torch+torchvision (the
``.venv-tv`` of deps.py) on stand-in data, and its translation run with Keras where it
parses (a stub raises where the run reaches it: the run's reason then names it).

A program is started the way its README says; the command line is data, not a code change:
``PROGRAMS`` gives each folder's entry file and arguments (1 epoch and small batches where the
program takes them as options). Stand-ins and the harness's edits are the Keras direction's.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict

from bench.realworld import cache as rw_cache
from bench.realworld import edits, run, standins

# folder -> (entry file, argv, programs run first in the same folder)
PROGRAMS = {
    "distributed/ddp": ("example.py", [], []),
    "distributed/ddp-tutorial-series": ("single_gpu.py", ["1", "1", "--batch_size", "8"], []),
    "distributed/minGPT-ddp": ("mingpt/main.py", [], []),
    "fast_neural_style": ("neural_style/neural_style.py",
                          ["train", "--dataset", "data", "--style-image", "style.jpg", "--save-model-dir", "models",
                           "--epochs", "1", "--batch-size", "2"], []),
    "gat": ("main.py", ["--epochs", "1"], []),
    "imagenet": ("main.py", ["--dummy", "-a", "resnet18", "--epochs", "1", "-b", "4", "-j", "0"], []),
    "language_translation": ("main.py", ["--epochs", "1"], []),
    "legacy/snli": ("train.py", ["--epochs", "1"], []),
    "mnist_forward_forward": ("main.py", ["--epochs", "1"], []),
    "mnist_hogwild": ("main.py", ["--epochs", "1", "--num-processes", "1"], []),
    "reinforcement_learning/actor_critic": ("actor_critic.py", [], []),
    "reinforcement_learning/reinforce": ("reinforce.py", [], []),
    "siamese_network": ("main.py", ["--epochs", "1"], []),
    "super_resolution": ("main.py", ["--upscale_factor", "3", "--batchSize", "4", "--testBatchSize", "4",
                                     "--nEpochs", "1", "--lr", "0.001"], []),
    "time_sequence_prediction": ("train.py", ["--steps", "1"], ["generate_sine_wave.py"]),
    "word_language_model": ("main.py", ["--epochs", "1"], []),
}


def models_in(stderr: str) -> int:
    """Models translated, from the summary line (directory mode: '...; 2 models, 8 stubs; ...')."""
    m = re.findall(r"\b(\d+) models?[,)]", stderr)
    return int(m[-1]) if m else 0


def program_dirs() -> list[str]:
    base = os.path.join(run.REALWORLD, "torch")
    return [os.path.join(base, name) for name in sorted(PROGRAMS)]


def _folder(name: str) -> str:
    """The files of a program: its folder (reinforcement_learning holds two single-file programs)."""
    base = os.path.join(run.REALWORLD, "torch")
    return os.path.join(base, os.path.dirname(name)) if name.startswith("reinforcement_learning/") \
        else os.path.join(base, name)


def _sources(folder: str, only: str | None) -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), folder)
                if only and rel != only:
                    continue
                with open(os.path.join(dirpath, f)) as fh:
                    out[rel] = fh.read()
    return out


def _stage_program(sources: dict, url_map: dict, dest: str) -> list:
    changes = []
    for rel, text in sorted(sources.items()):
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        edited, ch = edits.edit(text, url_map)
        with open(path, "w") as fh:
            fh.write(edited)
        for c in ch:
            d = asdict(c)
            d["before"] = f"{rel}: {d['before'].strip()}"
            changes.append(d)
    return changes


def _execute_program(python, prog_dir, entry, argv, pre, env, mode, extra_env, work) -> run.Run:
    entry_dir = os.path.dirname(os.path.join(prog_dir, entry))
    for p in pre:
        r = run._execute_cmd(python, [os.path.join(prog_dir, p)], entry_dir, env, mode, extra_env,
                             os.path.join(work, "pre"))
        if r.status != "ok":
            r.reason = f"{p}: {r.reason}"
            return r
    return run._execute_cmd(python, [os.path.join(prog_dir, entry), *argv], entry_dir, env, mode, extra_env, work)


def run_torch_program(path: str, work: str, cache: standins.StandInCache, spec=None) -> run.Result:
    """One program: ``path`` a folder of the set (its entry and arguments from ``PROGRAMS``), or
    any folder with ``spec = (entry, argv, pre, single)`` (single: translate that one file only)."""
    if spec is None:
        name = os.path.relpath(path, os.path.join(run.REALWORLD, "torch"))
        entry, argv, pre = PROGRAMS[name]
        folder = _folder(name)
        single = os.path.basename(entry) if name.startswith("reinforcement_learning/") else None
        script = f"torch/{name}"
    else:
        entry, argv, pre, single = spec
        folder, script = path, f"torch/{os.path.basename(path)}"
    res = run.Result(script=script, direction="torch")
    os.makedirs(work, exist_ok=True)

    out = os.path.join(work, "translated")
    src = os.path.join(folder, single) if single else folder
    rc, _, stderr, _ = run.translate(src, "keras", out if not single else os.path.join(out, single), work)
    res.translate_rc = rc
    res.stubs = sum(1 for line in stderr.splitlines() if ": stub: " in line)
    res.models = models_in(stderr)
    if rc not in (0, 3):
        res.translate_error = run._last_error(stderr)
    translated = _sources(out, None) if os.path.isdir(out) else {}
    res.parses = bool(translated) and all(_parses(t) for t in translated.values())
    res.pure = bool(translated) and not any(run.SOURCE_IMPORTS["keras"].search(t) for t in translated.values())

    sources = _sources(folder, single)
    plan = standins.plan("\n".join(sources.values()) + "\n".join(translated.values()) + " ".join(argv))
    res.standins = plan.keras_datasets + [s.filename for s in plan.urls.values()] + [f.name for f in plan.files]
    res.unknown_urls = plan.unknown_urls

    python = run.torchvision_python()
    if python is None and not any(run.TORCHVISION.search(t) for t in sources.values()):
        python = run._python_main()  # no torchvision needed: the project's own torch
    odir = os.path.join(work, "original")
    prog = os.path.join(odir, "prog")
    env, urls = run._plant(plan, cache, odir, prog)
    res.changes["original"] = _stage_program(sources, urls, prog)
    initial_pt = os.path.join(work, "initial.pt")
    if python is None:
        res.original.reason = "no torch+torchvision venv (python -m bench.realworld --setup)"
    else:
        key = rw_cache.key(sources, python, [entry, *argv, *pre], res.standins, {})
        res.original = rw_cache.load(key, initial_pt)
        if res.original is None:
            res.original = _execute_program(python, prog, entry, argv, pre, env, "torch",
                                            {"RW_SAVE_WEIGHTS": initial_pt}, odir)
            rw_cache.store(key, res.original, initial_pt)
    res.torch_losses = run.torch_losses(res.original.record)

    # (with stubs too: a stub raises only where the run reaches it, ``--pretrained`` in a branch
    # the harness's command line does not take; a run stopping at one says so in its reason)
    if translated and res.parses and entry in translated:
        tdir = os.path.join(work, "translation")
        tprog = os.path.join(tdir, "prog")
        tenv, turls = run._plant(plan, cache, tdir, tprog)
        res.changes["translation"] = _stage_program(translated, turls, tprog)
        extra = {}
        h5 = convert_initial_weights(res, folder, single or entry, sources, initial_pt, work)
        if h5:
            extra["RW_LOAD_WEIGHTS"] = h5
        res.translation = _execute_program(run._python_main(), tprog, entry, argv, pre, tenv, "keras", extra, tdir)
        res.keras_losses, res.keras_source = run.keras_losses(res.translation.record)
        if h5 and not res.translation.record.get("weights_loaded"):
            res.weights = "converted, not loaded (no Keras model the weights fit was called)"
    elif res.stubs:
        res.translation.reason = f"{res.stubs} stubs"
    if res.stubs and res.translation.status == "fails" and "transpiler: " in (res.translation.reason or ""):
        res.translation.reason = f"stops at a stub: {res.translation.reason}"
    res.compare = run.compare(res)
    res.outcome = run.classify(res)
    return res


def convert_initial_weights(res, folder: str, entry: str, sources: dict, initial_pt: str, work: str) -> str:
    """The original's initial weights (saved at its first backward) as a Keras weights file, by the
    project's own path: ``transpile FILE --to keras --weights initial.pt --weights-out X.weights.h5``
    on the entry file, else on each other file of the program (the one defining the model)."""
    saved = res.original.record.get("weights_saved") or {}
    if not saved.get("path") or not os.path.exists(initial_pt):
        res.weights = "not saved: " + (saved.get("error") or "the original ran no backward")
        return ""
    h5 = os.path.join(work, "initial.weights.h5")
    errors = []
    for rel in [entry] + sorted(r for r in sources if r != entry):
        rc, _, err, _ = run.translate(os.path.join(folder, rel), "keras", os.path.join(work, "weights_discard.py"),
                                      work, extra=("--weights", initial_pt, "--weights-out", h5))
        if rc in (0, 3) and os.path.exists(h5):
            res.weights = f"converted (from {rel})"
            return h5
        errors.append(f"{rel}: {run._last_error(err)}")
    res.weights = "conversion failed: " + "; ".join(errors)[:300]
    return ""


def _parses(text: str) -> bool:
    import ast

    try:
        ast.parse(text)
        return True
    except SyntaxError:
        return False
