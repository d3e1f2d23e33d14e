"""The command line for ONNX model files: ``transpile model.onnx --to pytorch -o model.py
[--weights-out model.safetensors]`` (``cli.py`` hands a ``.onnx`` source here).

The weights always go with the code (an ONNX file holds them): to ``--weights-out``, or beside
the output under its name (``model.py`` → ``model.safetensors`` / ``model.weights.h5``).
``--check``/``--diff`` compare the source text only and write nothing.
"""

from __future__ import annotations

import os

ONNX_SUFFIX = ".onnx"


def is_onnx(path: str) -> bool:
    return path.lower().endswith(ONNX_SUFFIX)


def transpile_onnx_into(res, src: str, out_path: str, target: str, *, check: bool, diff: bool, quiet: bool,
                        weights=None) -> None:
    """Fill ``res`` (a ``cli.FileResult``) for the ONNX file ``src``; never raises for bad input."""
    from transpiler.cli import compare_output, write_output
    from transpiler.frontend_onnx.loader import OnnxReadError
    from transpiler.frontend_onnx.reader import Unsupported
    from transpiler.translate_onnx import default_weights_path, translate_onnx
    from transpiler.weights.errors import CheckpointError

    if weights is not None and (weights.checkpoint or weights.trace):
        res.fail("--weights/--trace-weights do not apply to an ONNX source",
                 f"transpile: error: {src}: an ONNX file holds its weights; --weights and --trace-weights "
                 "do not apply (use --weights-out to choose where the converted weights go)")
        return
    if not os.path.isfile(src):
        res.fail(f"{src}: no such file", f"transpile: error: {src}: no such file")
        return
    if os.path.exists(out_path) and os.path.samefile(out_path, src):
        res.fail("the output would overwrite the source",
                 f"transpile: error: {out_path}: the output would overwrite the source; choose another -o")
        return
    writing = not (check or diff)
    weights_out = (weights.output if weights is not None and weights.output else None) or \
        default_weights_path(out_path, target)
    try:
        if writing:
            os.makedirs(os.path.dirname(os.path.abspath(weights_out)), exist_ok=True)
        result = translate_onnx(src, target, weights_out if writing else None)
    except (OnnxReadError, Unsupported, CheckpointError) as exc:
        res.fail(str(exc), f"transpile: error: {src}: {exc}" if not str(exc).startswith(src) else
                 f"transpile: error: {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - the user gets a message, not a traceback
        res.internal_error(src, exc, "the model")
        return
    res.models, res.stubs = 1, len(result.stubs)
    res.status = "stubs" if result.stubs else "ok"
    for diag in result.diagnostics:
        if not quiet or diag.severity != "warning":
            res.err(f"{diag}")
    if not writing:
        current = ""
        if os.path.exists(out_path):
            with open(out_path, encoding="utf-8") as fh:
                current = fh.read()
        compare_output(res, out_path, current, result.text, check=check, diff=diff)
        return
    if not write_output(res, out_path, result.text):
        return
    if result.weights_path and not quiet:
        res.err(f"transpile: wrote {result.weights_path} ({result.weights_bytes} bytes)")
