"""Section 4: fidelity of the generated models and programs.

Inference (MMdnn's metrics): per corpus model, the Keras model with random weights
(``tests/harness.randomize_keras_weights``) and the generated module with the mapped
weights run on 1,000 random inputs in batches (``verify.random_inputs``/``verify.run_both``);
max abs error, mean relative error, top-1/top-5 agreement. Training: per corpus program,
the largest per-step loss difference over the first 20 training steps, from the machinery
``tests/test_training_equivalence.py`` uses (its ``run_both``, its tolerance and its known
deviations; float64, dropout off, the program's own optimizer and loss).
"""

from __future__ import annotations

import os
import sys

from bench.common import CORPUS, TESTS, fmt_pct, fmt_sci, log, name_of, read, table

N_INPUTS = 1000
BATCH = 250


def _setup():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    if TESTS not in sys.path:
        sys.path.insert(0, TESTS)
    import torch  # noqa: F401  (torch before tensorflow)
    import warnings

    warnings.filterwarnings("ignore", category=UserWarning)  # Keras' deprecation notes on corpus spellings

    torch.set_num_threads(1)


def _inference(path: str) -> tuple[list[list], int]:
    import keras
    import numpy as np
    from harness import load_source_module, randomize_keras_weights

    from transpiler import verify
    from transpiler.translate import translate

    source = read(path)
    result = translate(source, path)
    md = next(m for m in result.program.models if m.builder == "build_model")
    generated = verify.load_generated(result.text, f"bench_fidelity_{name_of(path)}")
    keras.backend.clear_session()
    kmodel = load_source_module(source).build_model()
    randomize_keras_weights(kmodel, 0)
    tmodel = generated.build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    per_output = None
    for i in range(N_INPUTS // BATCH):
        comps = verify.run_both(kmodel, tmodel, md.graph, verify.random_inputs(md.graph, BATCH, seed=1000 + i))
        if per_output is None:
            per_output = [[] for _ in comps]
        for sink, c in zip(per_output, comps):
            sink.append(c)
    rows = []
    for k, comps in enumerate(per_output):
        label = name_of(path) + (f"[{k}]" if len(per_output) > 1 else "")
        classes = verify._source_shape(md.graph.outputs[k])[-1]
        top1 = None if comps[0].top1 is None else float(np.mean([c.top1 for c in comps]))
        top5 = None if comps[0].top5 is None or classes <= 5 else float(np.mean([c.top5 for c in comps]))
        rows.append([label, max(c.max_abs for c in comps), float(np.mean([c.mean_rel for c in comps])), top1, top5,
                     classes])
    return rows, verify.keras_param_count(kmodel)


def _training(path: str):
    import numpy as np
    import test_training_equivalence as te

    k, t = te.run_both(path, exact=True)
    diff = np.abs(k - t)
    rel = diff / np.maximum(np.abs(k), 1e-8)
    return float(diff.max()), float(rel.max()), int(diff.argmax()) + 1, float(k[0]), len(k)


def run() -> str:
    _setup()
    import test_training_equivalence as te

    inf_rows, train_rows, failures = [], [], []
    for path in CORPUS:
        name = name_of(path)
        try:
            rows, _ = _inference(path)
            inf_rows += rows
            log(f"  fidelity {name}: max abs {max(r[1] for r in rows):.2e}")
        except Exception as exc:  # noqa: BLE001  (one failing model must not hide the others)
            failures.append(f"inference {name}: {type(exc).__name__}: {exc}")
            log(f"  fidelity {name}: FAILED {exc}")
    for path in CORPUS:
        name = name_of(path)
        try:
            worst, worst_rel, step, first, steps = _training(path)
            note = te.KNOWN_DEVIATIONS.get(name)
            within = worst_rel <= te.RTOL
            train_rows.append([name, f"{first:.4f}", fmt_sci(worst), fmt_sci(worst_rel), step,
                               "yes" if within else "**no**",
                               ("known: " + note.split(":")[0]) if note else ""])
            log(f"  training {name}: max loss diff {worst:.2e} (step {step})")
        except Exception as exc:  # noqa: BLE001
            failures.append(f"training {name}: {type(exc).__name__}: {exc}")
            log(f"  training {name}: FAILED {exc}")

    worst_abs = max(r[1] for r in inf_rows)
    worst_rel = max(r[2] for r in inf_rows)
    top1s = [r[3] for r in inf_rows if r[3] is not None]
    top5s = [r[4] for r in inf_rows if r[4] is not None]
    inf_table = table(["model[output]", "classes", "max abs error", "mean rel error", "top-1 agree", "top-5 agree"],
                      [[r[0], r[5], fmt_sci(r[1]), fmt_sci(r[2]), fmt_pct(r[3]), fmt_pct(r[4])] for r in inf_rows])
    n_within = sum(1 for r in train_rows if r[5] == "yes")
    out = [
        f"Inference: Keras model (random weights of a sensible scale, as `tests/harness.py` gives them) vs the "
        f"generated module with the mapped weights, float32, {N_INPUTS:,} random inputs per model in batches of "
        f"{BATCH}. Top-1/top-5 agreement is over classification outputs (top-5: the same set of five classes; "
        f"'—' where an output has ≤ 5 classes or is not a class vector).",
        "",
        f"**Worst max abs error {worst_abs:.1e}, worst mean relative error {worst_rel:.1e}; top-1 agreement "
        f"{fmt_pct(min(top1s)) if top1s else '—'} at worst"
        + (f", top-5 {fmt_pct(min(top5s))} at worst" if top5s else "") + ".**",
        "",
        inf_table,
        "",
        f"Training: per corpus program, Keras' `train_on_batch` vs the generated `train_step` (generated optimizer "
        f"and loss functions) for the first {te.STEPS} steps on the same batches, "
        f"same initial weights, float64, dropout off (`tests/test_training_equivalence.py`); the largest per-step "
        f"loss difference, absolute and relative, and the step where it occurs. Within = relative ≤ "
        f"{te.RTOL:.0e}, the test's tolerance.",
        "",
        f"**{n_within} of {len(train_rows)} programs within {te.RTOL:.0e} relative over {te.STEPS} steps**"
        + (f"; the others ({', '.join(r[0] for r in train_rows if r[5] != 'yes')}) are "
           + ("all" if all(r[6] for r in train_rows if r[5] != "yes") else "not all")
           + " the test's known deviations (reasons in `KNOWN_DEVIATIONS` there)." if n_within < len(train_rows)
           else "."),
        "",
        table(["program", "step-1 loss", "max abs Δloss", "max rel Δloss", "at step", "within", "note"], train_rows),
    ]
    if failures:
        out += ["", "Failures:", ""] + [f"- {f}" for f in failures]
    return "\n".join(out)
