"""The command line of ONNX out: ``transpile SRC.py --to onnx [-o OUT.onnx] [--weights W]
[--dynamic-batch] [--model NAME]`` (``cli.py`` hands ``--to onnx`` here)."""

from __future__ import annotations

import argparse
import os
import sys

EXIT_OK, EXIT_INPUT, EXIT_UNSUPPORTED = 0, 2, 3


def default_output(source: str) -> str:
    return os.path.splitext(source)[0] + ".onnx"


def run_onnx_out(args: argparse.Namespace) -> int:
    from transpiler.cli import read_source
    from transpiler.paths import clash, not_regular

    if len(args.sources) != 1 or os.path.isdir(args.sources[0]):
        return _error("--to onnx takes one script (a directory or several files are not exported)")
    source = args.sources[0]
    if source.lower().endswith(".onnx"):
        return _error(f"{source} is an ONNX model already")
    if args.check or args.diff or args.report or args.verify or args.trace_weights or args.weights_out or args.exact:
        return _error("--check, --diff, --report, --verify, --trace-weights, --weights-out and --exact do not "
                      "apply to --to onnx (the model file holds the weights; `transpile verify OUT.onnx "
                      "OUT.py` checks a translation against it)")
    out_path = args.output or default_output(source)
    if not out_path.lower().endswith(".onnx"):
        return _error(f"-o {out_path}: an ONNX model's name ends in .onnx")
    message = clash([("the source", source), ("-o" if args.output else "the output", out_path),
                     ("--weights", args.weights)]) or not_regular([("-o" if args.output else "the output", out_path)])
    if message:
        return _error(f"{message}; nothing was written")
    from transpiler.cli import UsageError, check_syntax
    from transpiler.frontend_ast.keras.values import FrontendError

    try:
        text = read_source(source)
        check_syntax(text, source)
    except UsageError as exc:
        return _error(str(exc))
    from transpiler import onnx_out
    from transpiler.printers.onnx.builder import Unsupported
    from transpiler.weights.errors import CheckpointError

    try:
        result = onnx_out.export_script(text, source, weights=args.weights, dynamic_batch=args.dynamic_batch,
                                        model=args.model)
        onnx_out.check(result.model)
    except Unsupported as exc:
        print(f"transpile: {source}: cannot export to ONNX: {exc}; nothing was written", file=sys.stderr)
        return EXIT_UNSUPPORTED
    except FrontendError as exc:
        return _error(f"{exc.span or source}: {exc}; nothing was written")
    except (CheckpointError, OSError) as exc:
        where = f"{exc.filename}: " if isinstance(exc, OSError) and isinstance(exc.filename, str) else ""
        return _error(f"{where}{getattr(exc, 'strerror', None) or exc}; nothing was written")
    except RecursionError:
        return _error(f"{source}: an expression or block nests too deeply for the translator (Python itself "
                      "accepts it); split it into smaller parts")
    except Exception as exc:  # noqa: BLE001 - the user gets a message, not a traceback
        print(f"transpile: internal error while exporting {source}: {type(exc).__name__}: {exc}\n"
              "This is a bug in transpiler; please report it with the script.", file=sys.stderr)
        return EXIT_INPUT
    try:
        size = onnx_out.write_model(out_path, result.model)
    except OSError as exc:
        return _error(f"{out_path}: cannot write the model: {exc.strerror or exc}")
    if not args.quiet:
        for w in result.warnings:
            print(f"transpile: warning: {w}", file=sys.stderr)
        others = [n for n in result.found if n != result.name]
        more = f"; the script builds {len(result.found)} models ({', '.join(result.found)}): --model NAME " \
               "chooses" if others else ""
        print(f"transpile: wrote {out_path} ({result.name}, {len(result.model.graph.node)} nodes, "
              f"{size} bytes){more}", file=sys.stderr)
    return EXIT_OK


def _error(message: str) -> int:
    print(f"transpile: error: {message}", file=sys.stderr)
    return EXIT_INPUT
