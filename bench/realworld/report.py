"""docs/realworld.md: the per-script table and the summary counts of one direction.

The file holds a fixed introduction (what the harness does, what a user needs) and one
section per direction between markers; a run rewrites only its own direction's section.
"""

from __future__ import annotations

import collections
import datetime
import json
import os
import platform
import re
import subprocess

from bench.realworld import run

HEADER = """# The real-world harness

`python -m bench.realworld [--direction keras|torch|all] [--only NAME ...] [-j N] [--setup] [--json FILE]`
measures the transpiler on programs nobody on this project wrote (`../shared/realworld/`: 55 keras.io
examples, 16 pytorch/examples programs), end to end, and rewrites this file's section of each
direction it ran, and the same facts as `docs/realworld.json` (one row per program, no times:
`diff` two runs' files to see what changed). `python -m bench.realworld --from-json A.json B.json`
rewrites both from earlier runs' `--json` files (the verdicts recomputed by today's harness from
the runs' records); `python -m bench.realworld.recover` rebuilds a
stopped run's results from its `--work` folder. For each program it:

1. **translates** it as a user would (`python -m transpiler SRC --to pytorch|keras` with the
   transpiler's exactness flag: `--exact` where the CLI has it, else `--keras-exact-updates` for
   Keras -> PyTorch): exit code, stub lines, whether the output parses and imports nothing of
   the source framework. A directory program (pytorch/examples) is translated as a package;
2. **makes synthetic stand-ins for its downloads** (`bench/realworld/standins.py`): the files
   `keras.datasets.*.load_data()` reads from Keras' cache (planted in a fresh `$KERAS_HOME`),
   torchvision's dataset folders beside the program, and, for a download URL named in the
   program's text, a small file of the format that URL serves (a registry keyed by URL pattern);
   an archive among them is also planted extracted in `$KERAS_HOME/datasets/` and `./datasets/`,
   where `get_file(extract=True)` put its tree before Keras 3 moved extraction into a
   `<name>_extracted` folder (programs written then read `Path(path).parent / "20_newsgroup"`,
   `data_dir.rstrip("X.zip")`, `fname="BSR"` + `BSDS500/`: with the real download on this Keras
   they would fail; original and translation see the same files). Files a program reads from a
   relative path it never downloads (a `wget`/Kaggle/gdown step in a comment: captcha PNGs, the
   LOL pairs, GloVe, the EEG CSV, speaker WAV folders) are planted beside it
   (`FILE_STANDINS`). `tensorflow_datasets.load` (and `tfds.data_source`) of a dataset in
   `TFDS_DATASETS` (a table of each dataset's features: image shape, class count, split names)
   serves small deterministic examples with tfds' split syntax (`train[:90%]`, `train[40%:50%]`,
   `train[:10]+test`, lists of splits), `as_supervised`, `with_info` and `batch_size`, in either
   framework's run (`instrument/rw_tfds.py`); a dataset not in the table goes to the real
   function and fails offline, naming itself;
3. **runs the original and the translation** in subprocesses, each in its own temporary copy
   with its own `$HOME`/`$KERAS_HOME`, 300 s each, one thread. In its copies the harness changes
   only data lines (a download URL -> `file://` of the stand-in), epoch and step counts (epochs
   capped at 1, steps at 4) and expected file hashes (set to `None`), and lists each changed
   line below, per program. A pytorch/examples program is started with the arguments its
   README gives (`torch_direction.PROGRAMS`: 1 epoch, small batches where it takes them as
   options). The run's instrumentation (`bench/realworld/instrument/`, a `sitecustomize` on
   the run's `PYTHONPATH`, never written into the program) refuses every socket that leaves
   the machine; caps `fit`/`evaluate` at 1 epoch of 4 steps, a DataLoader pass with gradients on
   at 4 batches, `predict` on a dataset or generator and a hand-written loop over a `tf.data`
   dataset at 32 batches (`RW_PREDICT_STEPS`; `predict` on arrays and an inference DataLoader
   pass over in-memory tensors stay whole: their outputs are compared with all labels; a loop
   over an unbatched dataset of at most 256 elements, examples read into a program's own
   tables, is read whole); gives `get_file` a path `fname` (refused by Keras 3) as its file
   name, as earlier Keras took it, and says so in the record; waives
   Keras' built-in hash check for the planted stand-ins only; turns shuffling off
   (`fit(shuffle=False)`, `tf.data.Dataset.shuffle`, `DataLoader(shuffle=False)`); and puts
   dropout, Keras' `Random*` layers and torchvision's random transforms in inference behaviour
   (identity; random crops become centre crops) in both frameworks. A translation draws its
   augmentation in its own modules' `if self.training:` branches (Keras' Random* layers,
   GaussianNoise, GaussianDropout, written inline): in a torch run each module of the program
   (not torch's own, so BatchNorm keeps batch statistics) runs its forward with its own
   `training` flag off, restored after, so those branches take the inference path as the Keras
   side's layers do (both at inference: nothing drawn on either side); the table's "harness
   changes" says, per program, which Keras layers and which torch modules ran so. Torch originals run with
   `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`, torch's own switch for programs written before 2.6;
4. **compares the first 3 training steps** from the same initial weights, converted with the
   project's own weights path:
   * Keras -> PyTorch: the Keras model's weights are saved at its first `fit`,
     `train_on_batch` or `GradientTape.gradient` (a custom loop: the called model holding the
     gradient's variables), converted with `transpile SRC --to pytorch --weights
     initial.weights.h5 --weights-out initial.pt` and loaded into the first torch module whose
     state-dict keys they match, before its first forward;
   * PyTorch -> Keras: the torch module trained by the first scalar `backward` (the latest
     outermost module with trainable parameters) is saved then, converted with `transpile FILE
     --to keras --weights initial.pt --weights-out initial.weights.h5` (the entry file, else the
     program file that defines the model) and loaded into the first Keras model it fits, before
     its first call (at `fit` for a model built by it);
   * step losses: Keras' per-batch logs of a `fit` with Keras' own train step (running means,
     differenced back to each batch), `train_on_batch` results, else every
     `GradientTape.gradient` target outside Keras' trainer (a custom `train_step` or loop; under
     `tf.function` read by a `tf.py_function` as the graph runs); torch's scalar `backward`
     calls. Equal means within 1e-4 relative for each of the first 3 steps.

   The verdict says why when nothing is compared: the translation failed or has stubs, a run
   failed (its reason), no step was recorded, weights not saved / not converted (the
   converter's message) / not loaded / loaded after the first step, or the program is not
   step-comparable by nature: it samples (`torch.distributions`: reinforcement learning), it
   trains in more than one worker process (Hogwild; a one-process Hogwild run is compared with
   its worker's losses), or it uses LBFGS (several loss evaluations per step).

**Kept runs.** An original program does not change when the transpiler does: its run and the
initial weights it saved are kept (`bench/realworld/cache.py`: `$RW_CACHE_DIR`, else
`~/.cache/transpiler-realworld`) under a key of the program's files and arguments, its
stand-ins, the harness's instrumentation, edits and stand-in makers, and the interpreter's
packages, and reused by a later run with the same key (marked "(kept)" in the table), so a run
after a transpiler change costs the translations only. Timeouts are never kept; `--fresh` runs
every original again.

The times are wall-clock seconds on a 2-core machine shared with other work: a "timeout" (over
300 s) may be the machine's load rather than the program's, and is worth a rerun with `--only`.

Outcomes, first that applies: **translate failed** (exit code not 0/3, or output does not
parse), **stubs** (the translation is not run), **original fails here** (with the reason),
**translation crashes**, **runs**, **first steps equal**.

## What a user needs

* The Keras side runs in the project's venv (`pip install -e '.[test]'`: tensorflow-cpu, Keras 3,
  the CPU torch 2.13 build). Original programs that need KerasNLP/KerasCV, `requests` to a
  server, or files fetched outside the program (a `wget` in a comment) fail here and are named
  so in the table.
* torchvision: the CPU torch 2.13 build has no torchvision that imports beside it. The
  pytorch/examples originals that import torchvision (and any translation that does) run in a
  second venv holding the registry's `torch==2.14.1` and `torchvision==0.29.1` (a CUDA build,
  about 5.5 GB, that runs on CPU); the others run on the project's torch. Create it once (a few
  minutes; gitignored):

      python -m venv .venv-tv && .venv-tv/bin/pip install torch==2.14.1 torchvision==0.29.1 numpy pillow pandas packaging requests

  or point `RW_TORCHVISION_VENV` at an existing one. Without it those programs are reported
  as not run. A user of a generated program that imports torchvision needs the same pair.
* `python -m bench.realworld --setup` installs the programs' own imports (matplotlib, pandas,
  scikit-learn, scipy, Pillow, tqdm, imageio, IPython, tensorflow_datasets, pydot, tensorboard
  and what they import)
  into `.rw-deps/` (or `RW_DEPS_DIR`) with `pip install --target --no-deps` (nothing of the venv
  is shadowed); with `--direction torch` or `all` it also creates `.venv-tv/`. It names the
  system tools it cannot install: graphviz's `dot` (`apt-get install graphviz`), which
  `keras.utils.plot_model` needs (structured_data_classification_from_scratch, tabtransformer).
* `pytest -m realworld` runs the whole harness (about an hour); the default suite runs a small
  sample (`tests/realworld/`): the instrumentation on programs written in the tests, one
  keras.io original on stand-in MNIST, and the PyTorch -> Keras comparison end to end on a
  corpus program laid out as a one-file project.

## What the harness does not cover yet

* **Hand-written loops over arrays** (`for i in range(len(x))`, pixel-by-pixel sampling calling
  `predict` per pixel) cannot be capped without changing the program; the small stand-ins bound
  them, and a program whose loop is still too long for 300 s is reported as a timeout with the
  line of the program it was on (the run is stopped with SIGABRT under `PYTHONFAULTHANDLER=1`
  before it is killed).
* **Stand-ins missing** (those originals fail here and say so): Caltech-101 (object detection:
  the program also extracts into `/` itself, outside any sandbox, and imports cv2), ShapeNet
  PartAnnotation (pointnet, which also reads `/tmp/.keras/` by absolute path), HuggingFace
  `datasets` (conll2003), a TF Serving server, a trained teacher SavedModel (deit), the
  `resnet_cifar10_v2` module (simsiam, a `wget` in a comment), Cora over `requests` (gat), an
  image folder and VGG16 weights (fast_neural_style). A translation's torchvision dataset for a
  `tfds.load` gets no stand-in yet.
* **Stand-in sizes**: the `keras.datasets` stand-ins are small round numbers (1,000 train / 500
  test; programs split by fixed batch counts), except MNIST's train set at its real 60,000
  (programs slice it by count: siamese_contrastive's `[:30000]`, `[30000:]`), its test set
  1,000, CIFAR-10's five batches of 10,000 (Keras' loader fixes them) and its test set 1,000.
* **A program's own random layers** (cct's StochasticDepth: `keras.random.uniform` in a
  layer's `call` under `training`) still draw on the Keras side, while the torch side runs the
  program's modules' training-only branches at inference: such a program's first steps differ
  by the harness's neutralisation, not by the translation. Paired draws (the Keras run's draws
  recorded and replayed in the torch run) would cover them; not done yet.
* **Several models trained by one program** (GANs, distillation): the initial weights saved are
  those of the model `fit` trains (a wrapper holding both) or of the model holding the first
  gradient's variables; whether they convert is the weights path's answer, given in the verdict.
"""


def _begin(direction):
    return f"<!-- realworld:{direction}:begin -->"


def _end(direction):
    return f"<!-- realworld:{direction}:end -->"


def counts(results, direction) -> dict:
    n = len(results)
    return {
        "scripts": n,
        "clean (translated without stub)": sum(r.clean for r in results),
        "with a model": sum(r.models > 0 for r in results),
        "transpiler failures": sum(r.translate_rc not in (0, 3) for r in results),
        "stub lines": sum(r.stubs for r in results),
        "original runs here": sum(r.original.status == "ok" for r in results),
        "original over 300 s": sum(r.original.status == "timeout" for r in results),
        "translation run": sum(r.translation.status in ("ok", "fails", "timeout") for r in results),
        "translation runs": sum(r.translation.status == "ok" for r in results),
        "first steps equal": sum(r.outcome == "first steps equal" for r in results),
        "first steps differ": sum((r.compare or "").startswith("differ") for r in results),
        "first steps not comparable (the program's nature)": sum((r.compare or "").startswith("not comparable")
                                                                 for r in results),
    }


def summary_line(results, direction) -> str:
    c = counts(results, direction)
    n = c["scripts"]
    return (f"{direction}: {c['clean (translated without stub)']}/{n} translate clean, {c['transpiler failures']} transpiler failures, "
            f"{c['stub lines']} stubs; originals run {c['original runs here']}/{n}; translations run "
            f"{c['translation runs']}/{n}; first 3 steps equal {c['first steps equal']}/{n}")


def _cell(text: str, limit=110) -> str:
    text = (text or "").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reason(text: str) -> str:
    """A failure's reason, with the refused network access (if any) first."""
    m = re.search(r"\s*\[(network blocked: [^\]]*)\]$", text or "")
    return f"{m.group(1)}; {text[: m.start()]}" if m else (text or "")


def _changes_cell(res) -> str:
    kinds = collections.Counter()
    for side in res.changes.values():
        for c in side:
            for k in c["kind"].split("+"):
                kinds[k] += 1
    text = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"
    neutral = _neutralised(res)
    if neutral:
        text += "; " + neutral
    if res.direction == "torch":  # a program's command line is the harness's choice too: say it
        from bench.realworld import torch_direction

        spec = torch_direction.PROGRAMS.get(res.script.split("/", 1)[-1])
        if spec:
            entry, argv, pre = spec
            text += f"; run as `{' '.join([*(p + ' &&' for p in pre), entry, *argv])}`"
    return text


_KERAS_INFERENCE = re.compile(r"^(\w+) in inference behaviour")
_TORCH_INFERENCE = re.compile(r"^training-only branches of (\w+) in inference behaviour")


def _neutralised(res) -> str:
    """How random augmentation was neutralised in this program's runs, from their records: the
    Keras layers run in inference behaviour, the torch modules whose training-only branches ran
    at inference (both at inference: nothing is drawn on either side)."""
    keras_run, torch_run = (res.original, res.translation) if res.direction == "keras" else \
        (res.translation, res.original)
    found = []
    for label, run_, pattern in (("Keras", keras_run, _KERAS_INFERENCE), ("torch", torch_run, _TORCH_INFERENCE)):
        names = [m.group(1) for e in run_.record.get("events", []) for m in [pattern.match(e)] if m]
        if names:
            found.append(f"{label} {', '.join(names)}")
    return ("at inference: " + "; ".join(found)) if found else ""


def _translation_cell(res) -> str:
    t = res.translation
    if t.status == "not run":
        return "not run" + (f" ({t.reason})" if t.reason else "")
    return f"{t.status} {t.secs}s" + (f": {_reason(t.reason)}" if t.reason else "")


def _translate_cell(r) -> str:
    """Translated without stub: yes, or why not."""
    if r.translate_rc not in (0, 3):
        return f"no: exit {r.translate_rc}: {r.translate_error}"
    if not r.parses:
        return "no: the output does not parse"
    if r.stubs:
        return f"no: {r.stubs} stubs ({r.models} models)"
    return "yes" if r.pure else "yes (imports the source framework)"


def _first3(r) -> str:
    text = r.compare or "not compared"
    if text.startswith(("equal", "differ")) and r.keras_source:
        text += f" (Keras losses from {r.keras_source})"
    return text


def row(r) -> dict:
    """The per-script facts the lead diffs between runs (no times: they move with the load)."""
    return {"translated without stub": r.clean, "translate": _translate_cell(r),
            "original": r.original.status, "original reason": r.original.reason,
            "translation": r.translation.status, "translation reason": r.translation.reason,
            "first 3 steps": _first3(r), "weights": r.weights, "outcome": r.outcome,
            "harness changes": _changes_cell(r)}


def section(results, direction, secs, jobs, note: str = "") -> str:
    c = counts(results, direction)
    n = c["scripts"]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=run.ROOT, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    title = "Keras -> PyTorch (`../shared/realworld/keras/`)" if direction == "keras" else \
        "PyTorch -> Keras (`../shared/realworld/torch/`)"
    lines = [_begin(direction), f"## {title}", "",
             f"Run of {datetime.date.today().isoformat()} at commit {commit}, {platform.machine()}, "
             f"`-j {jobs}`, {secs / 60:.0f} min of runs.", ""]
    if note:
        lines += [note, ""]
    lines += ["| measure | count |", "| --- | --- |"]
    for k, v in c.items():
        lines.append(f"| {k} | {v}/{n} |" if k not in ("scripts", "stub lines") else f"| {k} | {v} |")
    outcomes = collections.Counter(r.outcome for r in results)
    verdicts = collections.Counter(_first3(r).split(":")[0] for r in results)
    lines += ["", "Outcomes: " + ", ".join(f"{o} {outcomes.get(o, 0)}" for o in run.OUTCOMES),
              "First 3 steps: " + ", ".join(f"{v} {verdicts[v]}" for v in sorted(verdicts)), ""]
    side = ("Keras", "PyTorch") if direction == "keras" else ("PyTorch", "Keras")
    lines.append(f"| {'script' if direction == 'keras' else 'program'} | translated without stub | "
                 f"original ({side[0]}) runs | translation ({side[1]}) runs | first 3 step losses | "
                 "harness changes | stand-ins | outcome |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        name = r.script.split("/", 1)[1] if "/" in r.script else r.script
        orig = f"{r.original.status} {r.original.secs}s" + (" (kept)" if r.original.cached else "") + \
            (f": {_reason(r.original.reason)}" if r.original.reason else "")
        lines.append("| " + " | ".join([
            name, _cell(_translate_cell(r), 80), _cell(orig), _cell(_translation_cell(r)), _cell(_first3(r), 120),
            _changes_cell(r), _cell(", ".join(r.standins) or "-", 60), r.outcome]) + " |")
    unknown = [(r.script, u) for r in results for u in r.unknown_urls]
    if unknown:
        lines += ["", "### URLs in the programs' text without a stand-in", "",
                  "(Documentation links among them are harmless; a download among them is a stand-in to add.)", ""]
        for script, url in unknown:
            lines.append(f"* `{os.path.basename(script)}`: {url}")
    lines += ["", "### Lines the harness changed in its copies", ""]
    for r in results:
        for side_name, changes in r.changes.items():
            for ch in changes:
                lines.append(f"* `{os.path.basename(r.script)}` ({side_name}) line {ch['line']} [{ch['kind']}]: "
                             f"`{_cell(ch['before'].strip(), 100)}` -> `{_cell(ch['after'].strip(), 100)}`")
    lines.append(_end(direction))
    return "\n".join(lines) + "\n"


def write_json(path, results, direction) -> None:
    """``docs/realworld.json``: per direction, the counts and one row per script (sorted, no
    times), for ``diff`` between runs; the other direction's part is kept as the file had it."""
    data = {}
    if os.path.exists(path):
        with open(path) as fh:
            try:
                data = json.load(fh)
            except ValueError:
                data = {}
    data[direction] = {"counts": counts(results, direction),
                       "scripts": {r.script: row(r) for r in sorted(results, key=lambda r: r.script)}}
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def write(path, results, direction, secs, jobs, note: str = "") -> None:
    """The introduction, then each direction's section: this run's, and the other direction's
    as the file had it."""
    sections = {direction: section(results, direction, secs, jobs, note).rstrip("\n")}
    if os.path.exists(path):
        with open(path) as fh:
            old = fh.read()
        for other in ("keras", "torch"):
            b, e = _begin(other), _end(other)
            if other not in sections and b in old and e in old:
                sections[other] = old[old.index(b): old.index(e) + len(e)]
    text = HEADER.rstrip("\n") + "\n"
    for d in ("keras", "torch"):
        if d in sections:
            text += "\n" + sections[d] + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)
