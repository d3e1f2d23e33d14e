"""Command line: ``transpile SRC.py --to pytorch [-o OUT.py]``.

Exit codes: 0 ok; 1 ``--check`` found the target out of date; 2 bad input or usage
(a one-paragraph message, never a traceback); 3 something needs manual attention
and ``--strict`` was given.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile

EXIT_OK, EXIT_CHECK, EXIT_INPUT, EXIT_STRICT = 0, 1, 2, 3
MAX_SOURCE_BYTES = 5_000_000


class UsageError(Exception):
    """Bad input or usage: reported as one paragraph, exit 2."""


def default_output(src: str, target: str) -> str:
    """``train.py`` → ``train_torch.py`` beside the source."""
    stem, _ext = os.path.splitext(src)
    return f"{stem}_{'torch' if target == 'pytorch' else 'keras'}.py"


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".transpile-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_source(path: str) -> str:
    """The source text, or a UsageError saying why it cannot be read."""
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory; give a Python file")
    size = os.path.getsize(path)
    if size > MAX_SOURCE_BYTES:
        raise UsageError(f"{path}: {size} bytes is larger than the {MAX_SOURCE_BYTES}-byte limit "
                         "for one script")
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    if not text.strip():
        raise UsageError(f"{path}: the file is empty; there is nothing to transpile")
    return text


def check_syntax(source: str, path: str) -> None:
    """Python's own parser gives the most precise location for a syntax error."""
    import ast

    try:
        ast.parse(source, filename=path)
    except SyntaxError as exc:
        line = (exc.text or "").rstrip("\n").strip()
        where = f"{path}:{exc.lineno}:{exc.offset or 1}"
        raise UsageError(f"{where}: syntax error: {exc.msg}" + (f"\n    {line}" if line else "")) from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="transpile",
        description="Translate a Keras training script into an idiomatic PyTorch script.")
    p.add_argument("source", help="the Keras script (.py)")
    p.add_argument("--to", dest="target", required=True, choices=["pytorch"],
                   help="target framework")
    p.add_argument("-o", "--output", help="output path (default: SRC_torch.py beside the source)")
    p.add_argument("--strict", action="store_true",
                   help="exit 3 when anything needed a stub or manual attention")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if the output on disk differs from what would be generated")
    p.add_argument("--diff", action="store_true", help="print a unified diff instead of writing")
    p.add_argument("-q", "--quiet", action="store_true", help="only errors on stderr")
    return p


def run(argv: list[str] | None = None) -> int:
    """The CLI's logic; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_INPUT
    from transpiler.frontend_ast.keras_frontend import FrontendError
    from transpiler.translate import translate

    try:
        source = read_source(args.source)
        out_path = args.output or default_output(args.source, args.target)
        if os.path.exists(out_path) and os.path.samefile(out_path, args.source):
            raise UsageError(f"{out_path}: the output would overwrite the source; choose another -o")
        check_syntax(source, args.source)
        try:
            result = translate(source, args.source, args.target)
        except FrontendError as exc:
            where = f"{exc.span}" if exc.span else args.source
            line = ""
            if exc.span and 1 <= exc.span.line <= len(source.splitlines()):
                line = "\n    " + source.splitlines()[exc.span.line - 1].strip()
            raise UsageError(f"{where}: {exc}{line}") from None
        if not result.program.models and not result.stubs:
            raise UsageError(f"{args.source}: no Keras model found (looked for Sequential, Model and "
                             "keras.Input in the module and in builder functions)"
                             + _first_problem(result))
    except UsageError as exc:
        print(f"transpile: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as exc:  # noqa: BLE001 - the user gets a message, not a traceback
        print(f"transpile: internal error while translating {args.source}: {type(exc).__name__}: {exc}\n"
              "This is a bug in transpiler; please report it with the script.", file=sys.stderr)
        return EXIT_INPUT

    for diag in result.diagnostics:
        if not args.quiet or diag.severity != "warning":
            print(f"{diag}", file=sys.stderr)
    if args.check or args.diff:
        current = ""
        if os.path.exists(out_path):
            with open(out_path, encoding="utf-8") as fh:
                current = fh.read()
        if args.diff:
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(True), result.text.splitlines(True), out_path, out_path + " (new)"))
        if current != result.text:
            if args.check:
                print(f"transpile: {out_path} is out of date", file=sys.stderr)
                return EXIT_CHECK
        return _status(args, result)
    atomic_write(out_path, result.text)
    if not args.quiet:
        n_models = len(result.program.models)
        print(f"transpile: wrote {out_path} ({n_models} model{'s' if n_models != 1 else ''}, "
              f"{len(result.stubs)} stub{'s' if len(result.stubs) != 1 else ''})", file=sys.stderr)
    return _status(args, result)


def _first_problem(result) -> str:
    for diag in result.diagnostics:
        return f"; first problem: {diag}"
    return ""


def _status(args, result) -> int:
    if args.strict and result.stubs:
        print(f"transpile: {len(result.stubs)} construct(s) need manual attention (--strict)", file=sys.stderr)
        return EXIT_STRICT
    return EXIT_OK


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    sys.exit(run(argv))


if __name__ == "__main__":
    main()
