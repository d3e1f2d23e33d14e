"""Section 3: speed of the generated model code.

For each corpus CNN/RNN: transpile the Keras script, import the generated module, call
``build_model()``, and time one training step (forward + backward) against a hand-written
torch reference of the same architecture (``bench/reference/<name>.py``, same parameter and
buffer count, asserted). CPU, one thread, batch 1 and 32; the models take turns within each
round and each ratio is the median of the per-round ratios, so a load spike on the machine
hits all of them alike; a second instance of the reference (A/A) shows the run's noise
floor. Also counts the layout ops (permute/transpose/movedim/...)
each forward calls at the Python level (a TorchFunctionMode), against the reference.
"""

from __future__ import annotations

import importlib
import re
import time

from bench.common import corpus_path, fmt_ms, geomean, log, median, read, table

#: corpus models measured: the CNNs and RNNs (text_cnn and conv_autoencoder as well)
MODELS = ["mnist_cnn", "resnet_small", "mobilenet_like", "unet_small", "conv_autoencoder", "text_cnn",
          "conv1d_timeseries", "lstm_classifier", "gru_regression", "bilstm_tagger"]
#: image CNNs: target zero inserted transposes
CNNS = {"mnist_cnn", "resnet_small", "mobilenet_like", "unet_small"}
BATCHES = (1, 32)
BUDGET_S = 5.0  # timing budget per model and batch size (both sides together)
MIN_ROUNDS, MAX_ROUNDS = 60, 2000
TARGET = 1.02
LAYOUT_OPS = {"permute", "transpose", "transpose_", "movedim", "moveaxis", "swapaxes", "swapdims", "t", "t_",
              "T", "mT", "H", "mH", "contiguous"}


def _generated(name: str):
    from transpiler import verify
    from transpiler.translate import translate

    path = corpus_path(name)
    result = translate(read(path), path)
    md = next(m for m in result.program.models if m.builder == "build_model")
    module = verify.load_generated(result.text, f"bench_{name}")
    return md, module, result.text


def _patterns(text: str) -> list[str]:
    """Generated-code patterns that explain a gap to the reference (said in the report when present)."""
    found = []
    if re.search(r"nn\.ZeroPad[123]d", text):
        found.append("a separate `nn.ZeroPad*d` module (the reference folds the padding into the next conv's "
                     "`padding=`)")
    if "ConvTranspose" in text and re.search(r"\)\[:, :, [^\]\n]*-1\]", text):
        found.append("a transposed-conv output cropped by slicing (TF's asymmetric 'same' crop): the strided, "
                     "non-contiguous view is what the next ops read, and upsampling a non-contiguous input "
                     "(forward and backward) is slower than a contiguous one")
    if re.search(r"\.permute\([^)]*\)\s*\n\s*return", text):
        found.append("a channels-last output (a permute right before `return`; the reference returns "
                     "channels-first)")
    return found


def _inputs(md, batch: int, seed: int = 0):
    """Generated-module inputs (target layout, its dtypes) and the reference's (token ids as int64)."""
    import torch
    from transpiler import verify

    gen, ref = [], []
    for x, v in zip(verify.random_inputs(md.graph, batch, seed), md.graph.inputs):
        t = torch.from_numpy(verify.to_target_layout(x, v.layout))
        gen.append(t)
        ref.append(t.long() if verify._vocab_for(md.graph, v) is not None else t)
    return gen, ref


def _counts(module) -> int:
    return sum(p.numel() for p in module.parameters()) + sum(
        b.numel() for n, b in module.named_buffers() if not n.endswith("num_batches_tracked"))


def _layout_ops(module, inputs) -> tuple[int, int]:
    """(layout ops, F.pad calls) one forward makes at the Python level."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Count(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.layout = self.pads = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name == "__get__":  # a property such as Tensor.mT
                name = getattr(getattr(func, "__self__", None), "__name__", "")
            if name in LAYOUT_OPS:
                self.layout += 1
            elif name == "pad":
                self.pads += 1
            return func(*args, **(kwargs or {}))

    module.eval()
    with torch.no_grad(), Count() as c:
        module(*inputs)
    return c.layout, c.pads


def _keras_padded(model):
    """The reference with TF's 'same' padding for its stride-2, kernel-3 convolutions: (0, 1) by ``F.pad``
    and no conv padding, instead of the symmetric ``padding=1`` (every such conv in the measured models sees
    an even size, where TF pads (0, 1)). Same parameters; the cost of Keras-exact padding, hand-written."""
    from torch import nn
    import torch.nn.functional as F

    class PadThenConv(nn.Module):
        def __init__(self, conv):
            super().__init__()
            self.conv = conv
            conv.padding = (0,) * len(conv.padding)
            self.pads = (0, 1) * len(conv.padding)

        def forward(self, x):
            return self.conv(F.pad(x, self.pads))

    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if (type(child) in (nn.Conv1d, nn.Conv2d) and set(child.stride) == {2} and set(child.kernel_size) == {3}
                    and set(child.padding) == {1}):
                setattr(module, name, PadThenConv(child))
    return model


def _step_fn(module, inputs, seed: int):
    """One training step: zero grads, forward, backward of a fixed random projection of the output."""
    import torch

    module.train()
    with torch.no_grad():
        out = module(*inputs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    gen = torch.Generator().manual_seed(seed)
    weights = [torch.randn(o.shape, generator=gen) for o in outs]

    def step():
        module.zero_grad(set_to_none=True)
        out = module(*inputs)
        outs = out if isinstance(out, (list, tuple)) else [out]
        loss = sum((o * w).sum() for o, w in zip(outs, weights))
        loss.backward()

    return step


def _time_group(steps: dict) -> dict[str, list[float]]:
    """Per-round times of every step function; within a round each runs once, in an order that
    rotates from round to round, so a load spike on the machine hits all of them alike. Times are
    the thread's CPU time (with one torch thread, forward and backward both run on it), so time
    spent descheduled by other processes on the shared machine does not count."""
    names = list(steps)
    for _ in range(3):  # warm-up
        for n in names:
            steps[n]()
    t = time.perf_counter()
    for _ in range(3):
        for n in names:
            steps[n]()
    per_round = (time.perf_counter() - t) / 3
    rounds = max(MIN_ROUNDS, min(MAX_ROUNDS, int(BUDGET_S / max(per_round, 1e-6))))
    times = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            t0 = time.thread_time()  # CPU time of this thread: torch runs single-threaded in it
            steps[n]()
            times[n].append(time.thread_time() - t0)
    return times


def _ratio(times: dict[str, list[float]], a: str, b: str) -> float:
    """Median of the per-round ratios a/b."""
    return median([x / y for x, y in zip(times[a], times[b])])


def _onnx_line() -> str:
    try:
        import tf2onnx  # noqa: F401
        import onnx2torch  # noqa: F401
    except Exception as exc:  # noqa: BLE001  (any import failure: the line says which)
        return ("tf2onnx → onnx2torch baseline: not measured. `pip install tf2onnx onnx2torch` would replace the "
                "pinned CPU torch 2.13 with a CUDA torch 2.14; with `--no-deps`, tf2onnx 1.17 imports but "
                "onnx2torch 1.5.15 needs torchvision, whose PyPI wheel (0.28) fails to load against the CPU torch "
                "build (`operator torchvision::nms does not exist`), so neither was kept in the venv "
                f"(import here: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}).")
    return ("tf2onnx → onnx2torch baseline: both import here, but the comparison is not implemented in "
            "bench/model_speed.py yet.")


def fmt_ratio(x: float) -> str:
    return f"{x:.3f}×"


def _cell(ratio: float) -> str:
    return f"**{fmt_ratio(ratio)}**" if ratio > TARGET else fmt_ratio(ratio)


def run() -> str:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    rows, layout_rows, pad_rows, notes = [], [], [], []
    per_batch, noise = {b: [] for b in BATCHES}, {b: [] for b in BATCHES}
    for name in MODELS:
        md, gen_module, gen_text = _generated(name)
        for pattern in _patterns(gen_text[gen_text.index("\nclass "):gen_text.index("\ndef build_model")]):
            notes.append(f"`{name}`: {pattern}.")
        ref_module = importlib.import_module(f"bench.reference.{name}")
        gen, ref, ref2 = gen_module.build_model(), ref_module.build_model(), ref_module.build_model()
        n_gen, n_ref = _counts(gen), _counts(ref)
        assert n_gen == n_ref, f"{name}: generated has {n_gen} parameters+buffers, the reference {n_ref}"
        g_in, r_in = _inputs(md, 1)
        (g_layout, g_pads), (r_layout, r_pads) = _layout_ops(gen, g_in), _layout_ops(ref, r_in)
        layout_rows.append([name, g_layout, r_layout, g_layout - r_layout, g_pads, r_pads])
        padded = _keras_padded(ref_module.build_model()) if g_pads else None
        cells, pad_cells = [name, f"{n_gen:,}"], [name, g_pads]
        for batch in BATCHES:
            g_in, r_in = _inputs(md, batch)
            steps = {"gen": _step_fn(gen, g_in, 1), "ref": _step_fn(ref, r_in, 1), "ref2": _step_fn(ref2, r_in, 1)}
            if padded is not None:
                steps["padded"] = _step_fn(padded, r_in, 1)
            times = _time_group(steps)
            ratio, aa = _ratio(times, "gen", "ref"), _ratio(times, "ref2", "ref")
            per_batch[batch].append(ratio)
            noise[batch].append(abs(aa - 1))
            cells += [fmt_ms(median(times["gen"])), fmt_ms(median(times["ref"])), _cell(ratio), fmt_ratio(aa)]
            log(f"  speed {name} batch {batch}: generated {median(times['gen']) * 1e3:.2f} ms, reference "
                f"{median(times['ref']) * 1e3:.2f} ms, ratio {ratio:.3f} (A/A {aa:.3f}, {len(times['gen'])} rounds)")
            if padded is not None:
                cost, exact = _ratio(times, "padded", "ref"), _ratio(times, "gen", "padded")
                pad_cells += [fmt_ratio(cost), _cell(exact)]
                log(f"  speed {name} batch {batch}: vs Keras-padded reference {exact:.3f} (padding costs {cost:.3f})")
        rows.append(cells)
        if padded is not None:
            pad_rows.append(pad_cells)

    header = ["model", "params+buffers"]
    for b in BATCHES:
        header += [f"gen ms (b={b})", f"ref ms (b={b})", f"gen/ref (b={b})", f"A/A (b={b})"]
    summary = "; ".join(
        f"batch {b}: geometric mean {fmt_ratio(geomean(per_batch[b]))}, worst {fmt_ratio(max(per_batch[b]))} "
        f"({MODELS[per_batch[b].index(max(per_batch[b]))]})" for b in BATCHES)
    over = sorted({MODELS[i] for b in BATCHES for i, r in enumerate(per_batch[b]) if r > TARGET})
    floor = "; ".join(f"batch {b}: median {100 * median(noise[b]):.1f}%, worst {100 * max(noise[b]):.1f}%"
                      for b in BATCHES)
    inserted_cnn = {r[0]: r[3] for r in layout_rows if r[0] in CNNS}
    out = [
        f"One training step (zero_grad, forward, backward) of the generated module vs a hand-written "
        f"reference (`bench/reference/`), CPU, `torch.set_num_threads(1)`, train mode. Per model and batch size "
        f"the generated module, the reference and a second instance of the reference (the A/A control: its "
        f"ratio to the first shows the noise floor of this run) take turns within each round, in rotating "
        f"order ({MIN_ROUNDS}–{MAX_ROUNDS} rounds, ~{BUDGET_S:.0f} s); times are the thread's CPU time "
        f"(`time.thread_time`, so time spent descheduled by other processes does not count), ms are medians, "
        f"ratios are medians of the per-round ratios. Target ≤ {TARGET:.2f}× (above it in bold). Parameter+buffer counts are "
        f"asserted equal.",
        "",
        f"**Speed ratio generated/reference: {summary}.** "
        + (f"Above {TARGET:.2f}×: {', '.join(over)}." if over else f"All within {TARGET:.2f}×.")
        + f" A/A noise floor |ref/ref − 1|: {floor}.",
        "",
        table(header, rows),
        "",
        "The references use the idiomatic symmetric `padding=1` for their stride-2 'same' convolutions; Keras "
        "pads those (0, 1) and the generated modules reproduce that exactly with an `F.pad` first. To separate "
        "that cost from the code's, the same reference with Keras' padding written by hand (`F.pad(x, (0, 1, "
        "...))`, then an unpadded conv) takes part in the same rounds for the models whose generated code pads:",
        "",
        table(["model", "F.pad (gen)"] + [h for b in BATCHES for h in
                                          (f"Keras-padded ref / ref (b={b})", f"gen / Keras-padded ref (b={b})")],
              pad_rows),
        "",
        "Layout ops per forward (Python-level permute/transpose/movedim/t/mT/contiguous calls, counted with a "
        "`TorchFunctionMode`) and `F.pad` calls, generated vs reference. The image CNNs take channels-first "
        "input (the program permutes the dataset once, outside the model).",
        "",
        f"**Inserted transposes in the corpus image CNNs: {sum(inserted_cnn.values())}** "
        f"({', '.join(f'{k} {v}' for k, v in inserted_cnn.items())}; target 0).",
        "",
        table(["model", "layout ops (gen)", "layout ops (ref)", "inserted", "F.pad (gen)", "F.pad (ref)"],
              layout_rows),
        "",
        "`conv_autoencoder`'s two layout ops stand for its source's two `Permute((2, 1, 3))` layers, `text_cnn`'s "
        "for the (N, L, C) → (N, C, L) between its Embedding and its Conv1Ds: the references have the same.",
        "",
    ]
    if notes:
        out += ["Generated-code patterns found in the measured forwards (beyond Keras-exact padding) that the "
                "references do not have:", ""] + [f"- {n}" for n in notes] + [""]
    out += [
        _onnx_line(),
    ]
    return "\n".join(out)
