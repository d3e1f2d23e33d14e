"""Command line: ``transpile SRC.py --to pytorch [-o OUT.py]``, or a directory / several files.

Exit codes: 0 ok; 1 ``--check`` found the target out of date; 2 bad input or usage
(a one-paragraph message, never a traceback); 3 something needs manual attention
and ``--strict`` was given.

One file is handled by :func:`transpile_file`, which returns a :class:`FileResult`
(what to print, and the exit code) instead of printing; the single-file command
(:func:`run_single`) and the directory / several-files mode (``transpiler.batch``)
both use it.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from dataclasses import dataclass, field

EXIT_OK, EXIT_CHECK, EXIT_INPUT, EXIT_STRICT = 0, 1, 2, 3
MAX_SOURCE_BYTES = 5_000_000
#: directory mode: seconds one file may take (--file-timeout)
DEFAULT_FILE_TIMEOUT = 300.0


class UsageError(Exception):
    """Bad input or usage: reported as one paragraph, exit 2."""


class NoModelError(UsageError):
    """The script parsed but builds no Keras model (directory mode skips such files)."""


def default_output(src: str, target: str) -> str:
    """``train.py`` → ``train_torch.py`` beside the source."""
    stem, _ext = os.path.splitext(src)
    return f"{stem}_{'torch' if target == 'pytorch' else 'keras'}.py"


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and a rename."""
    from transpiler.paths import atomic_write as write

    write(path, text)


def read_source(path: str) -> str:
    """The source text, or a UsageError saying why it cannot be read. Only a regular file is
    read (a FIFO or a device is refused by its type, before any read, as it could block or
    never end), and at most MAX_SOURCE_BYTES of it."""
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: is a directory; give a Python file")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device" if
                stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket" if
                stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise UsageError(f"{path}: is {kind}, not a regular file; give a Python file")
    if st.st_size > MAX_SOURCE_BYTES:
        raise UsageError(f"{path}: {st.st_size} bytes is larger than the {MAX_SOURCE_BYTES}-byte limit "
                         "for one script")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:  # (permission denied, an I/O error: the user's to fix, not a bug)
        raise UsageError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise UsageError(f"{path}: larger than the {MAX_SOURCE_BYTES}-byte limit for one script")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    if text.startswith("\ufeff"):  # a UTF-8 byte order mark: Python accepts it, and so do we
        text = text[1:]
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise UsageError(f"{path}:{line}: the file holds a NUL byte; it is not Python source")
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


# -- one file ---------------------------------------------------------------------------


@dataclass
class FileResult:
    """What handling one source produced. Picklable: worker processes return it.

    ``events`` are the messages in the order they are to be printed: ``("err", line)``
    goes to stderr with a newline, ``("out", text)`` to stdout as is (a diff).
    ``status`` is ``ok``, ``stubs``, ``error`` or ``skipped``; ``code`` the single-file
    exit code before ``--strict`` is applied (0, 1 or 2).
    """

    source: str
    output: str | None = None
    status: str = "ok"
    code: int = EXIT_OK
    models: int = 0
    #: models the source builds that became stubs (builder, class or variable names)
    missed: list[str] = field(default_factory=list)
    stubs: int = 0
    seconds: float = 0.0
    wrote: bool = False
    out_of_date: bool = False
    no_model: bool = False
    note: str = ""
    stop: str = ""  # whether the output runs past its stubs (transpiler/stub_path.py), when it has any
    events: list[tuple[str, str]] = field(default_factory=list)
    # the translate() result, for steps that follow in the same process (not pickled)
    translation: object = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        return {**self.__dict__, "translation": None}

    def err(self, line: str) -> None:
        self.events.append(("err", line))

    def fail(self, message: str, line: str) -> FileResult:
        """Mark as an error (exit 2) with ``message`` as the table note and ``line`` on stderr."""
        self.status, self.code, self.note = "error", EXIT_INPUT, message
        self.err(line)
        return self

    def internal_error(self, src: str, exc: Exception, what: str) -> FileResult:
        """A failure of the translator itself on ``src`` (``what``: the script, the model):
        the user gets a message asking for a report, not a traceback."""
        return self.fail(f"internal error: {type(exc).__name__}: {exc}",
                         f"transpile: internal error while translating {src}: {type(exc).__name__}: {exc}\n"
                         f"This is a bug in transpiler; please report it with {what}.")


def emit(result: FileResult, out=None, err=None) -> None:
    """Print a result's messages, in order."""
    out = out or sys.stdout
    err = err or sys.stderr
    for stream, text in result.events:
        if stream == "out":
            out.write(text)
        else:
            print(text, file=err)


@dataclass
class WeightOptions:
    """``--weights CKPT [--weights-out OUT]`` or ``--trace-weights``."""

    checkpoint: str | None = None
    output: str | None = None
    trace: bool = False
    seed: int = 0
    trace_timeout: float | None = None
    quiet: bool = False  # (-q: the checkpoint's "wrote" and warning lines are not printed)

    def __bool__(self) -> bool:
        return bool(self.checkpoint or self.trace)


def transpile_file(src: str, out_path: str, target: str = "pytorch", *, check: bool = False,
                   diff: bool = False, quiet: bool = False,
                   weights: WeightOptions | None = None, exact: bool = False) -> FileResult:
    """Translate ``src`` and write ``out_path`` (or, with ``check``/``diff``, compare with it).

    Never raises for bad input or a translator crash: those come back as an ``error``
    result with the message the user sees.
    """
    res = FileResult(source=src, output=out_path)
    start = time.perf_counter()
    # the cyclic GC paused while one file is translated (its garbage is collected after):
    # its collections cost about a tenth of a translation and free little before it ends
    enabled = gc.isenabled()
    gc.disable()
    try:
        _transpile_into(res, src, out_path, target, check=check, diff=diff, quiet=quiet,
                        weights=weights, exact=exact)
    finally:
        res.seconds = time.perf_counter() - start
        if enabled:
            gc.enable()
    return res


# long: each user-facing failure of one file's translation is caught and worded here, in order
def _transpile_into(res: FileResult, src: str, out_path: str, target: str, *, check: bool,
                    diff: bool, quiet: bool, weights: WeightOptions | None = None,
                    exact: bool = False) -> None:
    from transpiler.cli_onnx import is_onnx, transpile_onnx_into

    if is_onnx(src):  # a model file, not a script: read with the ONNX frontend
        return transpile_onnx_into(res, src, out_path, target, check=check, diff=diff, quiet=quiet, weights=weights)
    import_translator(target)
    from transpiler.frontend_ast.keras.frontend import FrontendError
    from transpiler.translate import translate
    from transpiler.weights.errors import CheckpointError

    plan = None  # --weights to PyTorch: the checkpoint's link, decided while translating (cli_weights.py)
    try:
        source = read_source(src)
        check_syntax(source, src)
        framework = already_in_target(source, target)
        if framework:
            if weights:
                raise UsageError(f"{src} is already a {framework} script: there is no translation to "
                                 "load a converted checkpoint into; give the script it was translated from")
            res.status, res.note = "skipped", f"already a {framework} script"
            res.err(f"transpile: {src} is already a {framework} script; nothing to translate, "
                    "nothing written")
            return
        if os.path.exists(out_path) and os.path.samefile(out_path, src):
            raise UsageError(f"{out_path}: the output would overwrite the source; choose another -o")
        if weights and target == "pytorch":  # (decided while translating: the script is translated once)
            from transpiler.cli_weights import WeightsPlan

            plan = WeightsPlan(source, src, out_path, weights, exact)
        try:
            result = translate(source, src, target, exact=exact, load_weights=plan)
        except FrontendError as exc:
            where = f"{exc.span}" if exc.span else src
            line = ""
            if exc.span and 1 <= exc.span.line <= len(source.splitlines()):
                line = "\n    " + source.splitlines()[exc.span.line - 1].strip()
            raise UsageError(f"{where}: {exc}{line}") from None
        if not result.program.models and not result.stubs and not uses_source_framework(source, target):
            if target == "keras":
                raise NoModelError(f"{src}: no PyTorch model found (looked for builder functions "
                                   "returning an nn.Module and nn.Module subclasses)" + _first_problem(result))
            raise NoModelError(f"{src}: no Keras model found (looked for Sequential, Model and "
                               "keras.Input in the module and in builder functions)"
                               + _first_problem(result))
        if weights:
            from transpiler.cli_weights import convert_torch_weights, finish_weights

            result = (finish_weights(res, result, plan, write=not (check or diff)) if plan is not None else
                      convert_torch_weights(res, result, src, weights, write=not (check or diff)))
    except CheckpointError as exc:
        res.fail(str(exc), f"transpile: error: {exc}")
        return
    except UsageError as exc:
        res.no_model = isinstance(exc, NoModelError)
        res.fail(str(exc), f"transpile: error: {exc}")
        return
    except RecursionError:
        res.fail("nested too deeply", f"transpile: error: {src}: an expression or block nests too deeply "
                 "for the translator (Python itself accepts it); split it into smaller parts")
        return
    except Exception as exc:  # noqa: BLE001 - the user gets a message, not a traceback
        res.internal_error(src, exc, "the script")
        return
    finally:
        if plan is not None:
            plan.cleanup()

    res.translation = result
    res.models, res.stubs = len(result.program.models), len(result.stubs)
    res.missed = list(result.program.models_not_translated)
    res.status = "stubs" if result.stubs else "ok"
    if result.stubs:
        from transpiler import stub_path

        res.stop = stub_path.describe(stub_path.first_stop(result.text), res.stubs)
    for diag in result.diagnostics:
        if not quiet or diag.severity != "warning":
            res.err(f"{diag}")
    if not quiet:  # (idiomatic output: what it computes otherwise than the source; --exact: none)
        for line in result.differences:
            res.err(f"transpile: {src}: numeric difference: {line}")
    if check or diff:
        current = ""
        if os.path.isdir(out_path):
            res.fail(f"{out_path} is a directory", f"transpile: error: {out_path}: is a directory; -o names "
                     "the output file to compare with")
            return
        try:
            if os.path.exists(out_path):
                with open(out_path, "rb") as fh:  # (an output that is not UTF-8 just differs)
                    current = fh.read(MAX_SOURCE_BYTES * 4).decode("utf-8", errors="replace")
        except OSError as exc:
            res.fail(f"cannot read {out_path}: {exc.strerror or exc}",
                     f"transpile: error: {out_path}: cannot read the output: {exc.strerror or exc}")
            return
        compare_output(res, out_path, current, result.text, check=check, diff=diff)
        return
    write_output(res, out_path, result.text)


def compare_output(res: FileResult, out_path: str, current: str, text: str, *, check: bool, diff: bool) -> None:
    """``--diff`` (the unified diff as an event) and ``--check`` (out of date: exit code and
    note) of the new ``text`` against the ``current`` output."""
    if diff:
        import difflib

        res.events.append(("out", "".join(difflib.unified_diff(
            current.splitlines(True), text.splitlines(True), out_path, out_path + " (new)"))))
    res.out_of_date = current != text
    if res.out_of_date and check:
        res.err(f"transpile: {out_path} is out of date")
        res.code, res.note = EXIT_CHECK, "out of date"


def write_output(res: FileResult, out_path: str, text: str) -> bool:
    """Write ``text`` atomically; a failure is the result's error. True when written."""
    try:
        atomic_write(out_path, text)
    except OSError as exc:
        res.fail(f"cannot write {out_path}: {exc.strerror or exc}",
                 f"transpile: error: {out_path}: cannot write the output: {exc.strerror or exc}")
        return False
    res.wrote = True
    return True


def uses_source_framework(source: str, target: str) -> bool:
    """``source`` imports the framework it is translated from (torch for ``--to keras``,
    keras or tensorflow for ``--to pytorch``): such a file is translated even when it builds
    no model (a library module of a multi-file program, a data or training helper); a
    file that does not use it has nothing to translate (exit 2)."""
    from transpiler.source_imports import KERAS_MODULES, TORCH_MODULES, imports_keras

    return imports_keras(source, TORCH_MODULES if target == "keras" else KERAS_MODULES)


def already_in_target(source: str, target: str) -> str:
    """``"PyTorch"`` when ``source`` imports torch and neither keras nor tensorflow and
    ``target`` is pytorch (likewise ``"Keras"``), else ``""``: translating a script into its
    own framework (a generated ``x_torch.py`` with ``--to pytorch`` again) changes nothing."""
    from transpiler.source_imports import KERAS_MODULES, TORCH_MODULES, imports_keras

    keras, torch = imports_keras(source, KERAS_MODULES), imports_keras(source, TORCH_MODULES)
    if target == "pytorch" and torch and not keras:
        return "PyTorch"
    if target == "keras" and keras and not torch:
        return "Keras"
    return ""


def import_translator(target: str = "pytorch") -> None:
    """Import the translation path (libcst, black: ~400k objects that live as long as the
    process) with the cyclic GC paused, then freeze what exists (``gc.freeze``) so that no
    later collection scans those objects again; unfrozen, the collections during one cold
    run cost about as much as its translation. ``target="keras"`` also imports the PyTorch
    reader and the Keras printer (``translate_to_keras`` imports them on first use): directory
    mode calls this before its workers fork, so that they inherit them instead of each
    importing them again. The methods of the dataclasses these modules define are compiled
    once and kept in the cache folder (transpiler/dataclass_codes.py)."""
    keras_path = ("transpiler.frontend_ast.torch.frontend", "transpiler.printers.keras.printer")
    wanted = ("transpiler.translate",) + (keras_path if target == "keras" else ())
    if all(name in sys.modules for name in wanted):
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        import importlib

        from transpiler.dataclass_codes import compiled_dataclass_methods

        with compiled_dataclass_methods():  # (dataclass methods compiled in an earlier run)
            for name in wanted:
                importlib.import_module(name)
    finally:
        gc.freeze()
        raise_gc_threshold()
        if enabled:
            gc.enable()


#: the cyclic GC's first-generation threshold while translating (CPython's default is 700)
GC_THRESHOLD = 20_000


def raise_gc_threshold() -> None:
    """Collect young objects every ``GC_THRESHOLD`` allocations instead of every 700: a
    translation allocates millions of short-lived objects (syntax trees, IR values), few in
    cycles, and at the default the collections cost about a tenth of a warm translation
    (measured on keras.io scripts: deit 1.15 → 1.04 s, cct 0.48 → 0.43 s); the garbage in
    cycles waits a little longer, bounded by the threshold (collections still run, so a very
    large program's memory stays bounded as before). The older generations' thresholds stay."""
    first, *older = gc.get_threshold()
    if first < GC_THRESHOLD:
        gc.set_threshold(GC_THRESHOLD, *older)


def _first_problem(result) -> str:
    for diag in result.diagnostics:
        return f"; first problem: {diag}"
    return ""


# -- the command line -------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="transpile",
        description="Translate a Keras training script into an idiomatic PyTorch script. "
                    "Give one script, a directory (every Keras script under it), or several "
                    "scripts (as pre-commit does).")
    add_source_arguments(p)
    add_output_arguments(p)
    add_weights_arguments(p)
    add_batch_arguments(p)
    return p


def add_switches(p, *switches: tuple[tuple[str, ...], str]) -> None:
    """Each ``(flags, help)`` as an on/off option of ``p`` (a parser or an argument group)."""
    for flags, text in switches:
        p.add_argument(*flags, action="store_true", help=text)


def add_weights_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("checkpoints (one script only)")
    g.add_argument("--weights", metavar="CKPT",
                   help="a Keras checkpoint (.keras, .h5, .weights.h5) to convert for the generated "
                        "module (the script then loads it); or the generated module's PyTorch "
                        "checkpoint (.pt, .safetensors) to convert back with --weights-out X.weights.h5")
    g.add_argument("--weights-out", metavar="OUT",
                   help="where the converted checkpoint goes (default: OUT's stem + .safetensors; "
                        "a .pt name writes a torch.save state_dict)")
    add_switches(g, (("--trace-weights",), "run the script's builder with Keras to capture its initial weights and "
                                           "convert those (executes your code; opt-in)"))
    g.add_argument("--trace-timeout", metavar="SECONDS", type=float, default=None,
                   help="stop --trace-weights' run of your code after this long (default 900, or "
                        "$TRANSPILE_TRACE_TIMEOUT); the run and every process it started are killed")
    add_switches(g, (("--verify",), "after writing, run both models on the same random inputs and print the "
                                    "equivalence report (imports both frameworks)"))


def add_source_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sources", nargs="+", metavar="SRC",
                   help="a Keras script (.py), an ONNX model (.onnx), a directory, or several scripts")
    p.add_argument("--to", dest="target", required=True, choices=["pytorch", "keras", "onnx"],
                   help="target framework (keras: a PyTorch script to Keras 3; onnx: the script's model "
                        "as an ONNX file, see --dynamic-batch and --model)")
    add_switches(p, (("--dynamic-batch",), "--to onnx: the batch axis is a dim_param (default: batch 1)"))
    p.add_argument("--model", metavar="NAME",
                   help="--to onnx: the builder or class to export when the script builds several models")


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output",
                   help="output path (default: SRC_torch.py beside the source); for a directory, "
                        "a directory the outputs are mirrored under")
    add_switches(p, (("--strict",), "exit 3 when anything needed a stub or manual attention"),
                 (("--check",), "write nothing; exit 1 if the output on disk differs from what would be generated"),
                 (("--diff",), "print a unified diff instead of writing"),
                 (("-q", "--quiet"), "only errors on stderr"))
    p.add_argument("--report", metavar="FILE",
                   help="write a markdown conversion report: every construct with file:line, what "
                        "it became, and the convert rate")
    add_switches(p, (("--exact",), "reproduce the source framework's numerics instead of writing the target's own "
                                   "idiom: to Keras, torch's default initializers (torch_kernel_init()) and torch's "
                                   "optimizer arithmetic (TorchAdam, ...); to PyTorch, Keras' default initializers "
                                   "(reset_parameters), Keras' epsilon placement and Keras' per-token-occurrence "
                                   "Embedding updates (KerasAdam, KerasEmbedding, ...), so that the output trains "
                                   "step for step like the source. Without it the output uses the target's own "
                                   "optimizers and initializers and the report lists each numeric difference that "
                                   "implies, with its measured size"),
                 (("--keras-exact-updates",), "deprecated alias of --exact (--to pytorch only)"))


def add_batch_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("directory and several-files mode")
    g.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="worker processes (default 1; 0: one per CPU)")
    add_switches(g, (("--batch",), "handle even a single file the way directory mode does: skip files that "
                                   "import neither keras nor tensorflow and files transpiler generated, "
                                   "print a summary (the pre-commit hook uses this)"))
    g.add_argument("--file-timeout", type=float, default=DEFAULT_FILE_TIMEOUT, metavar="SECONDS",
                   help=f"give up on a file whose translation takes longer (an error for that file; "
                        f"the others go on; default {DEFAULT_FILE_TIMEOUT:g}, 0: no limit)")


def is_batch(args: argparse.Namespace) -> bool:
    return args.batch or len(args.sources) > 1 or os.path.isdir(args.sources[0])


def run(argv: list[str] | None = None) -> int:
    """The CLI's logic; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "verify":
        from transpiler.verify_cli import verify_main

        return verify_main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_INPUT
    if args.verify and any(s.lower().endswith(".onnx") for s in args.sources):
        print("transpile: error: --verify does not take an ONNX model; after transpiling, run "
              "`transpile verify model.onnx model.py [--weights W]` (onnxruntime against the output)", file=sys.stderr)
        return EXIT_INPUT
    if args.target == "onnx":
        from transpiler.cli_onnx_out import run_onnx_out

        return run_onnx_out(args)
    if args.dynamic_batch or args.model:
        print("transpile: error: --dynamic-batch and --model go with --to onnx", file=sys.stderr)
        return EXIT_INPUT
    if args.jobs < 0:
        print("transpile: error: -j/--jobs must be 0 (one per CPU) or more", file=sys.stderr)
        return EXIT_INPUT
    if args.keras_exact_updates and args.target != "pytorch":
        print("transpile: error: --keras-exact-updates reproduces Keras' updates in a PyTorch program; "
              "it goes with --to pytorch (--exact is the flag for both directions)", file=sys.stderr)
        return EXIT_INPUT
    if args.keras_exact_updates:
        args.exact = True
        if not args.quiet:
            print("transpile: warning: --keras-exact-updates is deprecated; use --exact", file=sys.stderr)
    if is_batch(args):
        if args.weights or args.weights_out or args.trace_weights or args.verify or args.report:
            print("transpile: error: --weights, --weights-out, --trace-weights, --verify and --report "
                  "take one script, not a directory or several files", file=sys.stderr)
            return EXIT_INPUT
        from transpiler.batch import run_batch

        return run_batch(args)
    return run_single(args)


def run_single(args: argparse.Namespace) -> int:
    """One script: messages on stderr, the diff on stdout; returns the exit code."""
    source = args.sources[0]
    out_path = args.output or default_output(source, args.target)
    if args.weights_out and not (args.weights or args.trace_weights or source.lower().endswith(".onnx")):
        print("transpile: error: --weights-out needs --weights or --trace-weights", file=sys.stderr)
        return EXIT_INPUT
    weights = WeightOptions(args.weights, args.weights_out, args.trace_weights,
                            trace_timeout=getattr(args, "trace_timeout", None), quiet=args.quiet)
    message = path_clash(args, source, out_path)
    if not message and not (args.check or args.diff):
        from transpiler.paths import not_regular

        message = not_regular([("-o" if args.output else "the output", out_path), ("--report", args.report),
                               ("--weights-out", args.weights_out)])
    if not message and args.weights_out and not args.weights_out.endswith((".safetensors", ".pt", ".weights.h5")):
        message = (f"--weights-out {args.weights_out}: the name says which format is written; end it in "
                   ".safetensors or .pt (a torch checkpoint) or .weights.h5 (a Keras one)")
    if message:
        print(f"transpile: error: {message}; nothing was written", file=sys.stderr)
        return EXIT_INPUT
    res = transpile_file(source, out_path, args.target, check=args.check, diff=args.diff,
                         quiet=args.quiet, weights=weights, exact=args.exact)
    emit(res)
    if res.code != EXIT_OK:
        return res.code
    if res.wrote and not args.quiet:
        # what decides whether the output is usable comes first: models, stubs, where it stops
        # (the "(N models, M stubs)" shape is what scorers parse: ../shared/realworld/score.py)
        print(f"transpile: wrote {out_path} ({res.models} model{'s' if res.models != 1 else ''}, "
              f"{res.stubs} stub{'s' if res.stubs != 1 else ''}){models_missed(res.models, res.missed)}"
              f"{'; ' + res.stop if res.stop else ''}", file=sys.stderr)
    if res.translation is not None and not (args.quiet and not args.report):  # (-q: no rate to print)
        from transpiler import report

        if not args.quiet:
            done, total = report.convert_rate(report.report_rows(res.translation))
            print(f"transpile: {done}/{total} constructs translated "
                  f"({100.0 * done / max(total, 1):.1f}%)", file=sys.stderr)
        if args.report:
            try:
                atomic_write(args.report, report.render(res.translation, source, out_path, stop=res.stop))
            except OSError as exc:
                print(f"transpile: error: {args.report}: cannot write the report: {exc.strerror or exc}",
                      file=sys.stderr)
                return EXIT_INPUT
    if args.verify and res.wrote:
        from transpiler.verify_cli import verify_main

        code = verify_main([source, out_path] + (["--weights", args.weights] if args.weights else [])
                           + (["--exact"] if args.exact else []))
        if code != EXIT_OK:
            return code
    return _status(args, res)


def path_clash(args: argparse.Namespace, source: str, out_path: str) -> str | None:
    """Two of the run's files that are one (``--report train.py``, ``--weights-out`` equal to
    ``--weights`` or ``-o``): the message, before anything is read or written."""
    from transpiler.paths import clash

    default_weights_out = None
    if (args.weights or args.trace_weights) and not args.weights_out and args.target == "pytorch":
        default_weights_out = os.path.splitext(out_path)[0] + ".safetensors"
    return clash([("the source", source), ("-o" if args.output else "the output", out_path),
                  ("--weights", args.weights), ("--weights-out", args.weights_out),
                  ("the converted checkpoint (default --weights-out)", default_weights_out),
                  ("--report", args.report)],
                 written=("-o", "the output", "--weights-out", "the converted checkpoint (default --weights-out)",
                          "--report"),
                 # (-o onto the source: refused once the source is known to need translating; an
                 # output translated again in its own direction is left as it is)
                 later=(("the source", "-o"), ("the source", "the output")))


def models_missed(translated: int, missed: list[str]) -> str:
    """``; 1 of the 2 models found is a stub (get_model)``, or nothing when every model found
    was translated: the summary, ``--strict`` and the report lead with it (issue 22 item 10)."""
    if not missed:
        return ""
    found = translated + len(missed)
    verb = "is a stub" if len(missed) == 1 else "are stubs"
    return (f"; {len(missed)} of the {found} model{'s' if found != 1 else ''} found {verb} "
            f"({', '.join(missed)})")


def _status(args, res: FileResult) -> int:
    if args.strict and res.stubs:
        print(f"transpile: {res.models} model{'s' if res.models != 1 else ''} translated"
              f"{models_missed(res.models, res.missed)}; {res.stubs} "
              f"construct(s) need manual attention (--strict){'; ' + res.stop if res.stop else ''}",
              file=sys.stderr)
        return EXIT_STRICT
    return EXIT_OK


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Run as the program (no ``argv``), it ends the process
    without the interpreter's teardown (:func:`exit_now`); given ``argv``, it raises
    SystemExit as usual."""
    if argv is None:  # SIGTERM unwinds like Ctrl-C: worker and --trace-weights processes are ended,
        import signal  # temp folders removed (finally blocks run); the exit status says SIGTERM

        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        code = run(argv)
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback; what was written is whole (atomic)
        print("\ntranspile: interrupted; files already written are complete, the one in progress "
              "was not written", file=sys.stderr)
        code = 130
    if argv is None:
        exit_now(code)
    sys.exit(code)


def exit_now(code: int) -> None:
    """End the process at once, as mypy does: tearing down the modules libcst and black
    loaded takes longer than translating a script. Every output is written and closed by
    now and worker pools are shut down; only the standard streams need flushing."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let the interpreter's exit report it
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    main()
