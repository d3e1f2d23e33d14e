"""``transpile verify SRC.py OUT.py [--weights CKPT]``: the equivalence report.

Builds the Keras model of SRC and the generated module of OUT with the same weights
(the checkpoint's, or the Keras model's own initial weights mapped through the IR),
feeds both the same random inputs (several batches; shapes from the IR) and prints,
per output, MMdnn's metrics: max abs error, mean relative error, top-1/top-5
agreement, pass/fail against the tolerance. For a training program it also trains
both from the same weights on the same batches and prints the first step losses side
by side. Exit 0 when everything passes, 1 when something does not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


def verify_parser(description: str, source: str, output: str, weights: str, batch_size: int = 8,
                  batch_size_help: str = "inputs per batch (default 8)",
                  tol_help: str = "max abs error allowed (default 1e-4)") -> argparse.ArgumentParser:
    """The arguments every ``transpile verify`` takes (the source, the output, the weights,
    the random batches, the tolerance, the seed), with the help texts of one kind of source."""
    p = argparse.ArgumentParser(prog="transpile verify", description=description)
    p.add_argument("source", help=source)
    p.add_argument("output", help=output)
    p.add_argument("--weights", metavar="CKPT", help=weights)
    p.add_argument("--batches", type=int, default=4, help="random batches (default 4)")
    p.add_argument("--batch-size", type=int, default=batch_size, help=batch_size_help)
    p.add_argument("--tol", type=float, default=1e-4, help=tol_help)
    p.add_argument("--seed", type=int, default=0)
    return p


def build_parser() -> argparse.ArgumentParser:
    p = verify_parser("Run a Keras script's model and its transpiled module side by side and report how far "
                      "apart they are.", "the Keras script", "the generated PyTorch script",
                      "a Keras checkpoint both models load")
    p.add_argument("--steps", type=int, default=5,
                   help="training steps compared for a training program (default 5; 0 = none)")
    p.add_argument("--exact", action="store_true",
                   help="the output was generated with --exact: the training comparison trains that program")
    p.add_argument("--keras-exact-updates", dest="exact", action="store_true",
                   help="deprecated alias of --exact")
    return p


def parsed_arguments(parser: argparse.ArgumentParser, argv: list[str]):
    """``verify``'s arguments (Keras/PyTorch or ONNX sources alike), or the exit code when they
    are refused, its message printed: bad counts, or two of SRC, OUT and --weights the same file."""
    from transpiler.paths import clash

    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_INPUT
    if args.batches < 1 or args.batch_size < 1:
        print("transpile verify: error: --batches and --batch-size must be 1 or more", file=sys.stderr)
        return EXIT_INPUT
    message = clash([("SRC", args.source), ("OUT", args.output), ("--weights", args.weights)])
    if message:
        print(f"transpile verify: error: {message}", file=sys.stderr)
        return EXIT_INPUT
    return args


def verify_main(argv: list[str]) -> int:
    if argv and argv[0].lower().endswith(".onnx"):
        from transpiler.verify_onnx import verify_onnx_main

        return verify_onnx_main(argv)
    args = parsed_arguments(build_parser(), argv)
    if isinstance(args, int):
        return args
    from transpiler.cli import UsageError, check_syntax, read_source
    from transpiler.weights.errors import CheckpointError

    try:
        source = read_source(args.source)
        check_syntax(source, args.source)
        if not os.path.exists(args.output):
            raise UsageError(f"{args.output}: no such file (transpile {args.source} first)")
        args.output_text = read_source(args.output)  # (a regular UTF-8 file of bounded size)
        check_syntax(args.output_text, args.output)
        args.temp_files = []
        try:
            return _verify(args, source)
        finally:  # (the copies of both scripts the modules were imported from)
            for path in args.temp_files:
                if os.path.exists(path):
                    os.unlink(path)
    except (UsageError, CheckpointError) as exc:
        print(f"transpile verify: error: {exc}", file=sys.stderr)
        return EXIT_INPUT


def _verify(args, source: str) -> int:
    from transpiler.cli import UsageError
    from transpiler.translate import translate
    from transpiler.weights import convert

    result = translate(source, args.source, exact=args.exact)
    models = result.program.models
    if not models:
        raise UsageError(f"{args.source}: no Keras model found")
    md = convert.select_keras_model(models, args.weights) if args.weights else next(
        (m for m in models if m.builder), models[0])
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import torch

    import keras

    from transpiler import verify

    keras_module = verify.load_generated(source, "verify_source")
    args.temp_files.append(keras_module.__transpiled_path__)
    # layers are found by name: the model is built with the names a fresh process gives (the
    # script may have built models at import, or this process before)
    keras.backend.clear_session()
    keras.utils.set_random_seed(args.seed)
    kmodel = _build(keras_module, md)
    try:
        generated = verify.load_generated(args.output_text, "verify_output")
        args.temp_files.append(generated.__transpiled_path__)
        tmodel = _build(generated, md)
    except Exception as exc:  # noqa: BLE001 - the output is not this script's translation
        raise UsageError(f"{args.output}: does not build {md.class_name} as {args.source}'s translation "
                         f"would ({type(exc).__name__}: {_first_line(exc)}); is it another script's output?"
                         ) from None
    if args.weights:
        kmodel.load_weights(args.weights)
        with tempfile.TemporaryDirectory(prefix="transpile-verify-") as tmp:
            out = os.path.join(tmp, "w.safetensors")
            convert.keras_to_torch(md.graph, args.weights, out)
            from safetensors.torch import load_file

            state = load_file(out)
        origin = f"weights from {args.weights}"
    else:
        state = verify.map_keras_weights(md.graph, kmodel)
        origin = "the Keras model's initial weights, mapped through the IR"
    try:
        tmodel.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise UsageError(f"{args.output}: its module's parameters are not those of {args.source}'s model "
                         f"{md.class_name} ({_first_line(exc)}); is it another script's output?") from None
    per_output: list[list] = [[] for _ in md.graph.outputs]
    for b in range(args.batches):
        inputs = verify.random_inputs(md.graph, args.batch_size, seed=args.seed + b)
        for i, c in enumerate(verify.run_both(kmodel, tmodel, md.graph, inputs)):
            per_output[i].append(c)
    print(f"verify {args.source} -> {args.output}: model {md.class_name}, {origin}")
    print(f"{args.batches} random batches of {args.batch_size}; parameters: Keras "
          f"{verify.keras_param_count(kmodel)}, torch {verify.torch_param_count(tmodel)} "
          f"(+{verify.lstm_extra_bias(md.graph)} torch-only recurrent bias)")
    rows = [("output", "max abs err", "mean rel err", "top-1", "top-5", "result")]
    ok = True
    for value, comps in zip(md.graph.outputs, per_output):
        worst = max(c.max_abs for c in comps)
        rel = float(np.mean([c.mean_rel for c in comps]))
        top1 = mean_text([c.top1 for c in comps])
        top5 = mean_text([c.top5 for c in comps])
        vacuous = any(c.vacuous for c in comps)  # NaN everywhere on both sides proves nothing
        passed = worst <= args.tol and not vacuous
        ok &= passed
        nan = sum(c.both_nan for c in comps)
        verdict = ("NOT COMPARED (every value is NaN on both sides)" if vacuous
                   else "pass" if passed else f"FAIL (> {args.tol:g})")
        if nan and not vacuous:
            verdict += f" ({nan} of {sum(c.size for c in comps)} values NaN on both sides)"
        rows.append((_output_name(value), f"{worst:.2e}", f"{rel:.2e}", top1, top5, verdict))
    print_table(rows)
    if args.steps > 0 and _trains(result.program):
        ok &= _training_report(args, torch)
    return EXIT_OK if ok else EXIT_FAIL


def _trains(program) -> bool:
    kinds = {ts.kind for ts in program.training}
    return "compile" in kinds or {"optimizer_object", "loss_object"} <= kinds


def _training_report(args, torch) -> bool:
    import numpy as np

    from transpiler import verify_training

    try:
        k, t = verify_training.run_both(args.source, steps=args.steps, exact=args.exact)
    except Exception as exc:  # noqa: BLE001 - the report says what could not be compared
        print(f"training: not compared ({type(exc).__name__}: {exc})")
        return True
    rel = np.abs(k - t) / np.maximum(np.abs(k), 1e-8)
    print(f"training: {args.steps} steps from the same initial weights on the same random batches "
          "(float64, dropout off)")
    rows = [("step", "keras loss", "torch loss", "rel diff")]
    rows += [(str(i + 1), f"{a:.8g}", f"{b:.8g}", f"{r:.1e}") for i, (a, b, r) in enumerate(zip(k, t, rel))]
    print_table(rows)
    passed = bool(rel.max() <= args.tol)
    print(f"training: {'pass' if passed else 'FAIL'} (largest relative difference {rel.max():.1e})")
    return passed


def _output_name(value) -> str:
    """The Keras layer that produces ``value`` (what the user calls the output)."""
    producer = value.producer
    owner = (producer.from_keras.fused_into or producer) if producer else None
    layer = owner.layer if owner else None
    return layer.keras_name if layer is not None and layer.keras_name else (value.var or value.name)


def _build(module, md):
    if md.builder:
        return getattr(module, md.builder)(**md.builder_args)
    if md.var and hasattr(module, md.var):
        return getattr(module, md.var)
    return getattr(module, md.class_name)()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def mean_text(values) -> str:
    """The mean of the values that are not None, to three places ("-" for none)."""
    values = [v for v in values if v is not None]
    return f"{sum(values) / len(values):.3f}" if values else "-"


def print_table(rows) -> None:
    """``rows`` (the first the header) as aligned columns."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))
