"""``transpile verify model.onnx model.py [--weights W]``: onnxruntime against the generated code.

Runs the ONNX model with onnxruntime and the module generated from it (PyTorch or Keras: read
from its imports) with its converted weights (``--weights``, else the checkpoint ``transpile``
wrote beside the output under its name), on the same seeded random inputs (several batches; a
Keras model's feature maps go in channels-last and come back channels-first for the
comparison), and prints per output the max abs error, mean relative error, top-1/top-5
agreement and pass/fail against the tolerance. Exit 0 when every output passes, 1 when one
does not, 2 on bad input (onnxruntime missing included).
"""

from __future__ import annotations

import argparse
import os
import sys

from transpiler.verify_cli import EXIT_FAIL, EXIT_INPUT, EXIT_OK, mean_text, print_table, verify_parser


def build_parser() -> argparse.ArgumentParser:
    return verify_parser(
        "Run an ONNX model with onnxruntime and the source transpiled from it side by side and report how far "
        "apart they are.", "the ONNX model", "the generated PyTorch or Keras script",
        "the converted weights (default: beside OUT under its name, as transpile wrote them)", batch_size=2,
        batch_size_help="inputs per batch where the model's batch size is free (default 2)",
        tol_help="max abs error allowed, times the output's largest magnitude where that exceeds 1 (default 1e-4)")


def verify_onnx_main(argv: list[str]) -> int:
    from transpiler.verify_cli import parsed_arguments

    args = parsed_arguments(build_parser(), argv)
    if isinstance(args, int):
        return args
    from transpiler.cli import UsageError, check_syntax, read_source

    try:
        for path in (args.source, args.output):
            if not os.path.isfile(path):
                raise UsageError(f"{path}: no such file")
        text = read_source(args.output)
        check_syntax(text, args.output)
        return _verify(args, text)
    except UsageError as exc:
        print(f"transpile verify: error: {exc}", file=sys.stderr)
        return EXIT_INPUT


def _target_of(text: str) -> str | None:
    if "\nimport torch" in "\n" + text:
        return "pytorch"
    if "\nimport keras" in "\n" + text:
        return "keras"
    return None


def _verify(args, text: str) -> int:  # long: load, feed, run both, tabulate
    from transpiler.cli import UsageError
    from transpiler.translate_onnx import default_weights_path, translate_onnx

    target = _target_of(text)
    if target is None:
        raise UsageError(f"{args.output}: neither a PyTorch nor a Keras script (no `import torch` / `import keras`)")
    weights = args.weights or default_weights_path(args.output, target)
    if not os.path.isfile(weights):
        raise UsageError(f"{weights}: no such file (the converted weights: transpile {args.source} "
                         f"--to {target} -o {args.output} writes them there, or give --weights)")
    try:
        import onnxruntime as ort
    except ImportError:
        raise UsageError("onnxruntime is not installed (pip install onnxruntime): it runs the ONNX model") from None
    result = translate_onnx(args.source, target)  # (the graph: input order and layouts; no weights written)
    if result.stubs:
        raise UsageError(f"{args.source}: its translation has stubs ({result.stubs[0].message}); nothing to compare")
    graph = result.program.models[0].graph
    import numpy as np

    if target == "pytorch":
        import torch  # noqa: F401  (before TensorFlow in a process that may hold both)
    from transpiler import verify

    module = verify.load_generated(text, "verify_onnx_output")
    try:
        net = module.build_model()
        _load(net, target, weights)
    except Exception as exc:  # noqa: BLE001 - another model's script or checkpoint
        raise UsageError(f"{args.output} with {weights}: does not build and load as {args.source}'s translation "
                         f"({type(exc).__name__}: {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''})"
                         ) from None
    finally:
        os.unlink(module.__transpiled_path__)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    session = ort.InferenceSession(args.source, opts, providers=["CPUExecutionProvider"])
    import onnx

    proto = onnx.load(args.source, load_external_data=False)
    inits = {i.name for i in proto.graph.initializer}
    feeds_spec = [i for i in session.get_inputs() if i.name not in inits]  # (opset-9 files list weights as inputs)
    per_output: list[list] = [[] for _ in session.get_outputs()]
    scales = [0.0] * len(per_output)
    for b in range(args.batches):
        rng = np.random.default_rng(args.seed + b)
        feeds = {}
        for spec in feeds_spec:
            shape = [d if isinstance(d, int) else args.batch_size for d in spec.shape]
            dtype = np.dtype(_NP.get(spec.type, "float32"))
            feeds[spec.name] = (rng.integers(0, 10, size=shape) if dtype.kind in "iu" else
                                rng.standard_normal(shape)).astype(dtype)
        want = session.run(None, feeds)
        got = _run(net, target, graph, [feeds[s.name] for s in feeds_spec])
        for i, (w, g) in enumerate(zip(want, got)):
            per_output[i].append(verify.compare_arrays(np.asarray(w), np.asarray(g).reshape(np.shape(w))))
            scales[i] = max(scales[i], float(np.max(np.abs(w))) if np.size(w) else 0.0)
    print(f"verify {args.source} -> {args.output} ({target}): weights from {weights}")
    print(f"{args.batches} random batches against onnxruntime {ort.__version__}")
    rows = [("output", "max abs err", "mean rel err", "top-1", "top-5", "result")]
    ok = True
    for spec, comps, scale in zip(session.get_outputs(), per_output, scales):
        worst = max(c.max_abs for c in comps)
        tol = args.tol * max(1.0, scale)
        passed = worst <= tol
        ok &= passed
        rows.append((spec.name, f"{worst:.2e}", f"{np.mean([c.mean_rel for c in comps]):.2e}",
                     mean_text([c.top1 for c in comps]), mean_text([c.top5 for c in comps]),
                     "pass" if passed else f"FAIL (> {tol:g})"))
    print_table(rows)
    return EXIT_OK if ok else EXIT_FAIL


_NP = {"tensor(float)": "float32", "tensor(double)": "float64", "tensor(float16)": "float16",
       "tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(int16)": "int16", "tensor(int8)": "int8",
       "tensor(uint8)": "uint8", "tensor(bool)": "bool"}


def _load(net, target: str, weights: str) -> None:
    if target == "pytorch":
        from safetensors.torch import load_file

        net.load_state_dict(load_file(weights), strict=True)
        net.eval()
    else:
        net.load_weights(weights)


def _run(net, target: str, graph, xs: list):
    """The generated model's outputs on ``xs`` (channels-first in and out, as ONNX's)."""
    import numpy as np

    if target == "pytorch":
        import torch

        with torch.no_grad():
            ys = net(*[torch.from_numpy(np.ascontiguousarray(x)) for x in xs])
        return [y.numpy() for y in (ys if isinstance(ys, (tuple, list)) else [ys])]
    moved = []
    for x, v in zip(xs, graph.inputs):
        wants = tuple(v.shape[1:])
        moved.append(x if wants == tuple(x.shape[1:]) else np.transpose(x, (0, *range(2, x.ndim), 1)))
    ys = net(moved if len(moved) > 1 else moved[0], training=False)
    ys = [np.asarray(y) for y in (ys if isinstance(ys, (tuple, list)) else [ys])]
    if any(m is not x for m, x in zip(moved, xs)):
        kept = [bool(v.layout) and v.layout[1:2] == "C" for v in graph.outputs]
        ys = [np.transpose(y, (0, y.ndim - 1, *range(1, y.ndim - 1))) if y.ndim >= 3 and not k else y
              for y, k in zip(ys, kept)]
    return ys
