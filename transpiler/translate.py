"""The translation path: source text → ir.Program → passes → target source.

Imports no deep-learning framework (a test checks ``sys.modules``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.frontend_ast.keras.frontend import KerasFrontend
from transpiler.ir.passes import TORCH_PIPELINE, run_pipeline
from transpiler.ir.passes.training_analyses import TORCH_PROGRAM_PASSES, run_program_passes
from transpiler.ir.program import Diagnostic, Program
from transpiler.printers import differences
from transpiler.printers.torch.script import print_torch_script
from transpiler.reserved_names import free_reserved_names
from transpiler.ir import sizes
from transpiler import weight_plan

TARGETS = ("pytorch", "keras")


@dataclass
class Translation:
    """The result of translating one file."""

    program: Program
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: PyTorch → Keras: the printer of the training objects (``ProgramPrinter``), for verify and
    #: the docs table, which evaluate the same expressions (a printer object, not program data)
    training_printer: Any = None

    @property
    def stubs(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "stub"]

    @property
    def differences(self) -> list[str]:
        """The numeric differences from the source program that the idiomatic output implies
        (none under ``exact``): one line each, with its measured size (printers/differences.py)."""
        return list(self.program.numeric_differences)


def translate(source: str, path: str = "<string>", target: str = "pytorch", lint: bool = True,
              load_weights: dict | None = None, exact: bool = False,
              keras_exact_updates: bool = False) -> Translation:
    """Translate ``source`` (Keras, or PyTorch for ``target="keras"``) to ``target`` source text.

    ``load_weights`` (``{"model": class name, "path": file relative to the output,
    "source": checkpoint name}``) makes the script load a converted checkpoint right
    after it builds that model; it may be a function of the program (read and through
    the passes, not printed yet) returning that link or None (the CLI's ``--weights``:
    which model loads the checkpoint depends on the program; cli_weights.py). ``exact`` (``--exact``): the output reproduces the source
    framework's numerics (its default initializers, its optimizers' arithmetic; to PyTorch
    also Keras' per-token-occurrence Embedding updates, printers/torch/keras_exact.py);
    without it the output uses the target's own optimizers and initializers and
    ``Translation.differences`` lists what that changes (printers/differences.py).
    ``keras_exact_updates``: the deprecated name of ``exact``.
    """
    exact = exact or keras_exact_updates
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    source, renamed = free_reserved_names(source)
    if target == "keras":
        result = translate_to_keras(source, path, lint=lint, exact=exact)
        result.diagnostics += _note_renamed(result.program, renamed)
        return result
    try:
        program, result = _translate_to_torch(source, path, lint, load_weights, exact, True)
    except sizes.RuntimeSizeLeak:
        # a size the program computes when it runs was needed as a number (a 'same' padding's
        # ceiling on it, ...): read the script again with such sizes refused as before
        program, result = _translate_to_torch(source, path, lint, load_weights, exact, False)
    link = program.load_weights
    if link and not program.load_weights_placed:
        program.warn(None, f"the script never builds {link['model']}; load {link['path']} "
                           "with model.load_state_dict(...) where you build it")
    _note_renamed(program, renamed)
    return Translation(program, result.text, list(program.diagnostics))


def _note_renamed(program: Program, renamed: dict[str, str]) -> list[Diagnostic]:
    """A warning for each name of the source renamed because the output imports it."""
    import builtins

    return [program.warn(None, f"renamed {old} to {new} in the output: the generated program " +
                         (f"uses the builtin {old}" if hasattr(builtins, old) else f"imports {old}"))
            for old, new in sorted(renamed.items())]


def translate_to_keras(source: str, path: str = "<string>", lint: bool = True, exact: bool = False) -> Translation:
    """Translate a PyTorch script to Keras: torch frontend → IR → Keras passes → Keras printer
    (``exact``: torch's initializers and optimizer arithmetic reproduced, see ``translate``)."""
    from transpiler.frontend_ast.torch.frontend import run_torch_frontend
    from transpiler.ir.passes import KERAS_PIPELINE
    from transpiler.printers.keras.printer import print_keras_script

    def prepare(program) -> None:  # (before the training code is read: it asks for output layouts)
        for md in program.models:
            parts = [g for _, g in md.graph.from_torch.composed.get("parts", ())]
            for graph in [md.graph] + [m.graph for m in md.methods.values()] + parts:
                run_pipeline(graph, (("record_source_state", weight_plan.record_source_state),) + KERAS_PIPELINE,
                             lint=lint)

    frontend = run_torch_frontend(source, path, prepare)  # (reads the classes it imports from siblings)
    program = frontend.program
    program.exact = bool(exact)
    for md in program.models:
        for span, message in md.graph.unsupported:
            program.stub(span, f"{md.builder or md.class_name}: {message}")
    with differences.exactness(exact) as replaced:
        text, training_printer = print_keras_script(program, frontend.source_file)
    for md in program.models:  # (after printing: the printer settles the layers' names)
        for graph in [md.graph] + [g for _, g in md.graph.from_torch.composed.get("parts", ())]:
            weight_plan.record_keras_printed_layers(graph)
    for key in sorted(replaced):
        differences.record(program, differences.TO_KERAS, key)
    return Translation(program, text, list(program.diagnostics), training_printer)


def _translate_to_torch(source: str, path: str, lint: bool, load_weights, exact: bool, runtime_sizes: bool):
    frontend = KerasFrontend(source, path, runtime_sizes=runtime_sizes)
    program = frontend.run()
    for md in program.models:
        run_pipeline(md.graph, TORCH_PIPELINE, lint=lint)
        leaks = sizes.runtime_leaks(md.builder_args.values())
        if leaks:
            raise sizes.RuntimeSizeLeak(f"{md.class_name}: {'; '.join(leaks)}")
    # (after every model's passes: a module holding another model of the program names that
    # model's tensors as its own plan does, printers/torch/state_plan.py)
    for md in program.models:
        weight_plan.record_torch_state(md.graph)  # (the printer's regularization_loss reads it too)
    if load_weights and not callable(load_weights):
        program.load_weights = dict(load_weights)
    program.exact = bool(exact)
    run_program_passes(program, TORCH_PROGRAM_PASSES)
    if callable(load_weights):  # the link depends on the program (which model the checkpoint is for)
        for md in program.models:
            weight_plan.record_keras_source_layers(md.graph)
        link = load_weights(program)
        if link:
            program.load_weights = dict(link)
    with differences.exactness(exact) as replaced:
        result = print_torch_script(program, frontend.source_file)
    for md in program.models:
        weight_plan.record_keras_source_layers(md.graph)
    for key in sorted(replaced):
        differences.record(program, differences.TO_PYTORCH, key)
    return program, result
