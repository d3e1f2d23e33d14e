"""A whole translated program: model graphs, where they came from, and diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.ir.graph import Graph, Span
from transpiler.ir.layout import Layout
from transpiler.ir.reader_facts import KerasProgramFacts, TorchProgramFacts
from transpiler.ir.source_file import NodeId


@dataclass
class Diagnostic:
    """Something that needed (or needs) a human: a stub, an assumption, an error."""

    span: Span | None
    message: str
    severity: str = "stub"  # "stub" (manual work), "warning" (assumption made), "error"
    source_line: str = ""

    def __str__(self) -> str:
        where = f"{self.span}: " if self.span else ""
        return f"{where}{self.severity}: {self.message}"


@dataclass
class ModelDef:
    """One model of the program.

    ``builder`` is the user's builder function (kept under the same name in the
    output), ``builder_args`` the argument values the graph was specialised for,
    ``var`` the variable a model built outside a builder function was bound to,
    ``statements`` the stable ids (``ir.source_file.NodeId``) of source statements that only
    built this model, ``construct_statement`` the one that builds it, and ``made_under`` the
    statements running when it was made, outermost first (``main()``, then ``teacher =
    build_classifier(16)`` in main's body): they call the code that builds the model, and
    do more than build it, so they stay.
    """

    graph: Graph
    class_name: str
    builder: str | None = None
    builder_args: dict[str, Any] = field(default_factory=dict)
    var: str | None = None
    statements: set[NodeId] = field(default_factory=set)
    construct_statement: NodeId | None = None
    made_under: tuple[NodeId, ...] = ()
    comments: list[str] = field(default_factory=list)
    #: the source model's own methods that forward calls (a VAE's ``encode``/``decode``), each
    #: a model of its own over the same layers (the program may call them)
    methods: dict[str, "ModelDef"] = field(default_factory=dict)
    #: the names of ``methods`` the training program calls (the printer writes a function for each)
    called_methods: set[str] = field(default_factory=set)


def output_perm(md: ModelDef | None, index: int) -> tuple | None:
    """The permutation that gives a Keras output the layout the torch model returned it in."""
    if md is None:
        return None
    src = md.graph.layouts.outputs
    dst = md.graph.layouts.target_outputs
    if not src or not dst or index >= len(src) or src[index] == dst[index] or not src[index] or not dst[index]:
        return None
    return Layout(dst[index], src[index]).perm


@dataclass
class ClassFacts:
    """A class the script defines, as its reader saw it: ``kind`` (the reader's: ``module`` /
    ``plain`` for torch, ``layer`` / ``model`` for Keras), where it is defined, and the
    ``__init__`` its instances run (its own or a base class's), as stable ids."""

    kind: str
    node: NodeId | None = None
    init: NodeId | None = None

    @property
    def is_module(self) -> bool:
        return self.kind == "module"


@dataclass
class ModuleNames:
    """What the module level of the script binds, for printers (they never see a frontend):
    ``names`` maps every module-level name to the dotted path it imports (``np`` →
    ``numpy``; None for any other value), ``classes`` the script's classes by name, and
    ``layer_models`` the builders printed for ``model = nn.Linear(...)`` statements."""

    names: dict[str, str | None] = field(default_factory=dict)
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    layer_models: set[str] = field(default_factory=set)


@dataclass
class Program:
    """The IR of a whole source file."""

    path: str
    source: str
    framework: str
    models: list[ModelDef] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: the training program's statements (ir.training.TrainingStatement), in order
    training: list = field(default_factory=list)
    #: model classes whose builder is ``def build_model(): return Net()`` (class name → builder
    #: name): ``Net()`` in the program builds the same model (the torch reader finds them)
    class_builders: dict[str, str] = field(default_factory=dict)
    #: ``--exact``: the output reproduces the source framework's numerics (its optimizers'
    #: arithmetic, initializers, Keras' embedding updates); else the target's own (idiomatic)
    exact: bool = False
    #: the numeric differences the idiomatic output implies, as the report lists them
    #: (printers/differences.py; none under ``exact``)
    numeric_differences: list[str] = field(default_factory=list)
    #: names of models the source builds that became stubs (a builder, class or variable),
    #: in the order met: with ``models`` they are the models found (the summary leads with them)
    missed_models: list[str] = field(default_factory=list)
    #: the module level's names and classes (filled by the torch reader; the printers of a Keras
    #: program read none of it)
    scope: ModuleNames = field(default_factory=ModuleNames)

    #: what the Keras reader found about the script (for the torch printers)
    from_keras: KerasProgramFacts = field(default_factory=KerasProgramFacts)
    #: what the torch reader found about the script (for the Keras printers)
    from_torch: TorchProgramFacts = field(default_factory=TorchProgramFacts)
    #: ``model.load_weights(path)`` of the source joined to the weights file written beside the
    #: output (translate.py), and whether the torch printer placed its load in the script
    load_weights: dict | None = None
    load_weights_placed: bool = False

    def _add(self, diag: Diagnostic) -> Diagnostic:
        for old in self.diagnostics:
            if (old.span, old.message, old.severity) == (diag.span, diag.message, diag.severity):
                return old
        self.diagnostics.append(diag)
        return diag

    def stub(self, span: Span | None, message: str, source_line: str = "") -> Diagnostic:
        """Record something left for a human (a marked stub in the output)."""
        return self._add(Diagnostic(span, message, "stub", source_line))

    def model_stub(self, span: Span | None, name: str, message: str, source_line: str = "") -> Diagnostic:
        """A stub that stands for a whole model the source builds (``name``: its builder, class
        or variable): it counts among the models found but not translated."""
        if name not in self.missed_models:
            self.missed_models.append(name)
        return self.stub(span, message, source_line)

    @property
    def models_not_translated(self) -> list[str]:
        """The models found that are stubs (not also translated under the same name: a builder
        that failed for one call but built for another is translated)."""
        done = {n for md in self.models for n in (md.class_name, md.builder, md.var) if n}
        return [n for n in self.missed_models if n not in done]

    def warn(self, span: Span | None, message: str, source_line: str = "") -> Diagnostic:
        """Record an assumption the translation made."""
        return self._add(Diagnostic(span, message, "warning", source_line))
