"""Print a whole Keras script as a PyTorch script.

The module's own code is kept through libcst (comments and layout survive): Keras
imports become torch imports, each builder function becomes the model class plus a
builder of the same name and signature, and every remaining statement that still uses
Keras becomes a marked stub that quotes the source line (raising inside functions
and the ``__main__`` block; a comment at module level, so importing stays harmless).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

import libcst as cst

from transpiler import cst_fast
from transpiler.cst_fast import nodes_of, walk
from transpiler.ir import sizes
from transpiler.ir.graph import Span
from transpiler.ir.program import ModelDef, Program
from transpiler.ir.source_file import SourceFile
from transpiler.printers import runtime_source
from transpiler.printers.torch import ops_augment, ops_recurrent, print_notes, tensor_definitions
from transpiler.printers.torch import array_ops, builder_effects, builder_guard, data_sources, data_utils, keras_exact
from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.printers.code import GENERATED_HEADER, comment_lines, comment_text, docstring
from transpiler.printers.formatter import format_python
from transpiler.printers.torch.construct_sites import construct_sites, per_call_builder
from transpiler.printers.torch.custom_step import extend_class
from transpiler.printers.torch.model_layers import LayersLoop, ModelLayers, call_bindings, loop_receiver, \
    translate_layer_indexing, translate_layers_loop
from transpiler.printers.torch.printer import ModelCode, construct_args, print_model_class
from transpiler.printers.torch.raw_chunks import RawChunks
from transpiler.printers.torch.given_models import given_arguments
from transpiler.printers.torch.training import TrainingPrinter, rewrite_callback_class
from transpiler.printers.torch.script_rewrites import KerasLayoutBatches, _CallReplacer, _Comments, _NewAxis, \
    _attach_comments, classes_sites_use, layer_called_outside, untranslated_binding
from transpiler.printers.torch.weight_transfer import WeightLists

_MODEL_METHODS = {"compile", "fit", "evaluate", "predict", "save", "save_weights", "load_weights",
                  "summary", "train_on_batch", "test_on_batch", "predict_on_batch", "get_weights",
                  "set_weights", "fit_generator", "evaluate_generator", "predict_generator", "to_json",
                  "get_layer", "layers", "count_params", "export", "weights", "variables",
                  "non_trainable_weights", "non_trainable_variables",
                  # Keras-only members a program may call that have no torch translation (the
                  # statement is a marked stub; it had passed through: AttributeError when run)
                  "compute_loss", "compute_metrics", "reset_metrics", "metrics_names", "get_metrics_result",
                  "make_train_function", "make_test_function", "make_predict_function", "stateless_call",
                  "get_config", "reset_states", "train_step", "test_step", "predict_step", "compiled_loss",
                  "compiled_metrics", "add_loss", "add_metric"}
#: a model's trainable weights: the torch module's parameters that train (an LSTM's second
#: bias, frozen as generated from Keras, is not one of Keras' weights)
_TRAINABLE = ("trainable_weights", "trainable_variables")
#: Keras' default float type for new weights and inputs → torch's default dtype
_FLOATX_CALLS = {"keras.config.set_floatx", "keras.backend.set_floatx", "tf.keras.backend.set_floatx"}
_SEED_CALLS = {"tf.random.set_seed", "tensorflow.random.set_seed", "keras.utils.set_random_seed",
               "tf.keras.utils.set_random_seed", "keras.random.set_seed"}


@dataclass
class ScriptResult:
    text: str
    stubs: list = field(default_factory=list)


def _code(node: cst.CSTNode) -> str:
    return cst_fast.code(node)


def _is_keras_module(name: str) -> bool:
    root = name.split(".")[0]
    return root in ("keras", "tensorflow", "tf_keras", "tensorflow_datasets")


def _called_names(node: cst.CSTNode) -> set[str]:
    return {call.func.value for call in nodes_of(node, cst.Call) if isinstance(call.func, cst.Name)}


class _Printer:
    def __init__(self, program: Program, source: SourceFile, models: list[ModelCode], training=None, tcode=None):
        self.training = training
        self.tcode = tcode
        self.in_tape = 0  # inside an unwrapped GradientTape (a custom training step)
        self.uses_f = False
        self.helpers_placed = not (tcode and tcode.helpers)
        # a generated helper may take the name the user imported from Keras (load_model,
        # to_categorical): after the import is gone, the name means the helper
        self.helper_names = {m.group(1) for h in (tcode.helpers if tcode else [])
                             for m in re.finditer(r"^(?:def|class) (\w+)", h, re.M)}
        self.program = program
        self.source = source  # (the Keras script, read-only)
        self.source_file = os.path.basename(program.path)
        self.raw = RawChunks(source.module, source.text)  # (generated text kept as text: raw_chunks.py)
        self.depth = 0  # how many blocks deep the statements being rewritten are
        self.keras_names = set(program.from_keras.keras_names) - self.helper_names
        self.models = {md.class_name: (md, code) for md, code in zip(program.models, models)}
        self.builders = {md.builder: (md, code) for md, code in zip(program.models, models) if md.builder}
        self.inline_models = [(md, code) for md, code in zip(program.models, models) if not md.builder]
        self.model_statements = set()
        for md in program.models:  # a builder's model: what its body held, and ``model.build(...)`` after
            self.model_statements |= md.statements - set(md.made_under)  # (``main()`` does more: it stays)
        self.sites = construct_sites(source, self.inline_models,
                                     frozenset(program.from_keras.translated_classes) & set(self.models))
        self.construct, self.per_call_stubs = self.sites.construct, {**dict.fromkeys(tcode.failed - set(tcode.statements) if tcode else (), ""), **self.sites.per_call_stubs}  # (+ failed training calls)
        self.per_call_builders = self.sites.per_call_builders
        self.model_vars = {md.var for md, _ in self.inline_models if md.var}
        self.model_vars |= self._builder_result_names(source.module)
        self.model_vars |= set(program.from_keras.wrapper_instances)  # (a fit() left a stub: the line too)
        self.weight_lists = WeightLists(self.model_vars)
        self.dropped_helpers = self._droppable_helpers(source.module)
        # the module classes of user Layer classes and block helpers take the place of
        # their definition; the others go right before their model's class
        self.layer_classes = translated = set(program.from_keras.translated_classes) - set(self.models)
        self.site_classes: dict[str, list[str]] = {}
        befores = [[] for _ in models]
        for code, before in zip(models, befores):
            for c in code.classes:
                at_site = c.source in self.dropped_helpers or c.source in translated
                (self.site_classes.setdefault(c.source, []) if at_site else before).append(c.text)
        moved = classes_sites_use(source.module, self.site_classes, befores)  # (a class they build: before them)
        for code, before in zip(models, befores):
            code.text = "\n\n".join([t for t in before if t not in moved] + [code.text])
        self.failure_lines = {span.line for span in program.from_keras.failures.values()}
        self.current_failure: int | None = None
        self.imports_placed = False
        self.untranslated_placed = False  # the Untranslated class a module-level stub binds names to
        self.trailing: list = []
        self.stubs: list = []
        self.pending_classes: list[str] = []
        self.callback_classes = set(program.from_keras.callback_classes)
        self.callback_stubs: set[str] = set()  # statements of callback classes that need Keras
        self.layer_loops = self._layer_loops(source.module)
        self.layout_batches = KerasLayoutBatches.of(program, tcode)  # (previews of channels-first loaders)
        if tcode is not None and self.layout_batches.needed(source.module, lambda n: self._span(n).line):
            tcode.helpers.append(runtime_source.source("torch.layouts", "keras_layout"))
            self.helpers_placed = False

    # -- helpers ------------------------------------------------------------------
    def _layer_loops(self, module: cst.Module) -> dict[int, LayersLoop]:
        """``for layer in model.layers:`` loops over a translated model that have a torch
        form (torch_model_layers), by the loop statement's id."""
        by_var = {md.var: md for md, _ in self.inline_models if md.var}
        calls = {}  # (the builder call that made the model: what its sizes are there)
        defs = {fn.name.value: fn for fn in nodes_of(module, cst.FunctionDef)}
        for node in nodes_of(module, cst.Assign):
            func = node.value.func if isinstance(node.value, cst.Call) else None
            if isinstance(func, cst.Name) and func.value in self.builders:
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        by_var[t.target.value] = self.builders[func.value][0]
                        calls[t.target.value] = call_bindings(by_var[t.target.value], node.value, defs.get(func.value))
        self.model_layers = {var: ModelLayers.of(md, self.models[md.class_name][1].text, calls.get(var))
                             for var, md in by_var.items()}
        taken = {n.value for n in nodes_of(module, cst.Name)}
        loops = {}
        for stmt in nodes_of(module, cst.For):
            model = loop_receiver(stmt.iter)
            if model in self.model_layers:
                loop = translate_layers_loop(stmt, model, self.model_layers[model], taken)
                if loop is not None and not self._touches_keras(loop.loop.body, _bound_names(stmt.target)):
                    loops[id(stmt)] = loop
        return loops

    def _builder_result_names(self, module: cst.Module) -> set[str]:
        names: set[str] = set()
        builders = set(self.builders)
        for node in nodes_of(module, cst.Assign):
            value = node.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in builders:
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        names.add(t.target.value)
        return names

    def _per_call_builder(self, fn: cst.FunctionDef) -> list:
        return per_call_builder(self.sites, self.program, fn, self._span(fn))

    def _droppable_helpers(self, module: cst.Module) -> set[str]:
        """Helpers inlined into builders and referenced nowhere else in the script."""
        helpers = set(self.program.from_keras.inlined_helpers)
        if not helpers:
            return set()
        keep = set(self.builders) | helpers
        used: set[str] = set()
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in keep or \
                    self.source.sid(stmt) in self.model_statements:
                continue  # (a statement that only built a model goes with it)
            used |= {n.value for n in nodes_of(stmt, cst.Name) if n.value in helpers}
        bodies = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value in helpers}
        # (a function building a model at each call is replaced by a stub or goes: its body is not kept)
        opened = set(self.builders) | set(self.per_call_builders)
        todo = [name for name in used if name in bodies and name not in opened]
        while todo:  # a helper the script still calls keeps, in its body, the helpers it calls
            new = {n.value for n in nodes_of(bodies[todo.pop()], cst.Name) if n.value in helpers} - used
            used |= new
            todo += [name for name in new if name in bodies and name not in opened]
        return helpers - used

    def _span(self, node: cst.CSTNode) -> Span:
        return self.source.span(node)

    def _touches_keras(self, node: cst.CSTNode, rebound: set[str] = frozenset()) -> bool:
        """Whether ``node`` still uses Keras objects; ``rebound``: names that hold torch objects
        there (a layers loop's target: the reader bound it to Keras layers, the loop to children)."""
        keras_names, model_vars = (self.keras_names - rebound) if rebound else self.keras_names, self.model_vars
        for n in walk(node):
            if type(n) is cst.Name and n.value in keras_names:
                return True
            if type(n) is cst.Attribute and isinstance(n.value, cst.Name) and n.value.value in model_vars \
                    and n.attr.value in _MODEL_METHODS:
                return True
        return False

    def _torch_imports(self, uses_f: bool, uses_math: bool) -> list[cst.BaseStatement]:
        lines = []
        source = self.source.text
        augment = self._augment_helpers()  # (before any class that calls them)
        uses_math = uses_math or bool(augment)
        if uses_math and "import math" not in source.splitlines():  # a module-level import math binds it
            lines.append("import math")
        # the runtime's adapt() state, before any module is built (printers/torch/data_utils.py)
        preamble, preamble_imports = data_utils.preamble_texts(self.program)
        extra = sorted((self.tcode.imports if self.tcode else set()) | preamble_imports)
        extra = [e for e in extra if e not in source]  # the user's own imports stay as they are
        lines += [e for e in extra if e.startswith("import ") and "torch" not in e]
        link = self.program.load_weights
        if link and not _imports_module(source, "os"):
            lines.append("import os")
        lines += ["import torch", "from torch import nn"]
        if uses_f:
            lines.append("import torch.nn.functional as F")
        lines += [e for e in extra if e.startswith("from ")]
        if link and link["path"].endswith(".safetensors"):
            lines.append("from safetensors.torch import load_file")
        if link:
            lines += ["", comment_text(f"# converted from {link['source']} by transpile --weights"),
                      f"CONVERTED_WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                      f"{link['path']!r})"]
        if any("KerasEmbedding(" in code.text for _md, code in self.models.values()) or \
                any("KerasEmbedding(" in text for texts in self.site_classes.values() for text in texts):
            # before every class that builds one
            lines += ["", runtime_source.source(keras_exact.RUNTIME, "KerasEmbedding")]
        for text in augment:
            lines += ["", text.strip("\n")]
        for text in preamble:
            lines += ["", text.strip("\n")]
        return self._chunk("\n".join(lines) + "\n", imports=True)

    def _chunk(self, text: str, imports: bool = False) -> list:
        """``list(cst.parse_module(text).body)`` of generated text, kept as text where that
        prints the same (printers/torch/raw_chunks.py)."""
        return self.raw.statements(text, top_level=self.depth == 0, imports=imports)

    def _augment_helpers(self) -> list[str]:
        """The runtime helpers of Keras' random rotation/zoom/translation the models call
        (runtime/torch/augment.py; they import math and torch)."""
        text = "\n".join([c.text for _md, c in self.models.values()] + [t for ts in self.site_classes.values() for t in ts])
        names, lstm = ops_augment.helpers_used(text), ops_recurrent.helpers_used(text)  # (lstm: ActivationLSTM)
        return [*(runtime_source.Copier().take(ops_augment.RUNTIME, *names) if names else []),
                *(runtime_source.Copier().take(ops_recurrent.RUNTIME, *lstm) if lstm else [])]

    def _stub(self, stmt: cst.SimpleStatementLine, raising: bool, bind: bool = False) -> list[cst.BaseStatement]:
        """The statement commented out under a TODO marker, then (if ``raising``) a raise; with
        ``bind`` (module level), the names it binds raise the message at their first use."""
        span = self._span(stmt)
        text = _code(stmt.with_changes(leading_lines=())).strip()
        flat = " ".join(text.split())
        short = flat if len(flat) <= 70 else flat[:67] + "..."
        where = f"{self.source_file}:{span.line}"
        reason = data_sources.stub_reason(self.program, span)  # tensorflow_datasets.load: what torch has
        # a stub reported in this statement already (the training printer's reason): one report
        # per statement (not per line: ``a; b`` are two, each with its own)
        sid = self.source.sid(stmt)
        earlier = next((d.message for d in self.program.diagnostics if d.severity == "stub" and d.span
                        and span.line > 0 and (d.span.file, d.span.line) == (span.file, span.line)
                        and (d.span.col <= 0 or sid.col <= d.span.col and
                             (sid.end_line > sid.line or d.span.col <= sid.end_col))
                        and not d.message.startswith("not translated yet")), None)
        reason = reason or earlier
        if earlier is None:
            self.program.stub(span, f"not translated yet: {reason or short}", flat)
        comments = [comment_text(f"# TODO(transpiler): not translated yet ({where})" + (f": {reason}" if reason else ""))]
        comments += comment_lines(text)
        leading = list(stmt.leading_lines) + [cst.EmptyLine(comment=cst.Comment(c)) for c in comments]
        msg = f"transpiler: {reason} ({where})" if reason else f"transpiler: {short!r} ({where}) is not translated yet"
        if raising:
            new = cst.parse_statement(f"raise NotImplementedError({msg!r})\n")
            return [new.with_changes(leading_lines=leading)]
        bound = untranslated_binding(stmt, msg, first=not self.untranslated_placed) if bind else []
        self.untranslated_placed |= bool(bound)
        return [*bound[:-1], bound[-1].with_changes(leading_lines=leading)] if bound else [_Comments(leading)]

    # -- rewriting ----------------------------------------------------------------
    def rewrite_module(self, module: cst.Module, uses_f: bool, uses_math: bool) -> cst.Module:
        self.uses_f = uses_f
        body = self._rewrite_body(module.body, level="module", uses=(uses_f, uses_math))
        module = module.with_changes(footer=[*self.trailing, *module.footer])
        if not self.imports_placed:
            insert_at = 0
            for i, stmt in enumerate(body):
                if isinstance(stmt, cst.SimpleStatementLine) and (
                        isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))
                        or (i == 0 and isinstance(stmt.body[0], cst.Expr)
                            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))):
                    insert_at = i + 1
            body = body[:insert_at] + self._torch_imports(uses_f, uses_math) + body[insert_at:]
        header = cst.EmptyLine(comment=cst.Comment(
            comment_text(f"# Transpiled from {self.source_file} (Keras) to PyTorch by transpiler; review before use.")))
        # a header this tool wrote (the script was translated before) names the old source: it goes
        kept = [line for line in module.header
                if line.comment is None or not GENERATED_HEADER.match(line.comment.value)]
        return module.with_changes(body=body, header=[header, *kept])

    def _rewrite_body(self, stmts, level: str, uses=(False, False)) -> list:
        out: list = []
        raised = False
        for stmt in stmts:
            if level == "module" and not self.helpers_placed and self._needs_helpers(stmt):
                # the generated training helpers go before the first code that calls them
                out += self._chunk("\n\n".join(self.tcode.helpers))
                self.helpers_placed = True
            if isinstance(stmt, cst.SimpleStatementLine):
                new = self._rewrite_line(stmt, level, uses, raised)
                if any(isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Raise) for s in new):
                    raised = True
                out += new
            elif isinstance(stmt, cst.FunctionDef) and level == "module" and stmt.name.value in self.builders:
                out += self._builder(stmt)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and level == "module" and \
                    stmt.name.value in self.site_classes:
                classes = self._chunk("\n\n".join(self.site_classes[stmt.name.value]))
                classes[0] = classes[0].with_changes(leading_lines=stmt.leading_lines)
                out += classes
            elif isinstance(stmt, cst.FunctionDef) and level == "module" and stmt.name.value in self.dropped_helpers:
                continue  # its layers live in the model class now
            elif isinstance(stmt, cst.FunctionDef) and stmt.name.value in self.per_call_builders:  # (nested too)
                out += self._per_call_builder(stmt)
            elif self.tcode is not None and isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) \
                    and (key := tensor_definitions.function_key(stmt, level)) in self.tcode.functions:
                # a function of tensor math (a loss a custom loop calls, a function a pipeline maps), in torch
                new = list(cst.parse_module("\n".join(self.tcode.functions[key]) + "\n").body)
                if isinstance(new[0], cst.FunctionDef) and self._header_touches_keras(new[0]):
                    out += self._stub_class(stmt)  # (its defaults still read Keras values)
                    continue
                head = new[0].with_changes(leading_lines=stmt.leading_lines)
                if isinstance(head, cst.FunctionDef):
                    head = head.with_changes(**self._keras_annotations_dropped(head))
                out += [head, *new[1:]]
            elif self.tcode is not None and isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) \
                    and self.source.sid(stmt) in self.tcode.statements:
                # a loss/metric the script defines, its body translated to torch (or comments only)
                lines = self.tcode.statements[self.source.sid(stmt)]
                new = list(cst.parse_module("\n".join(lines) + "\n").body)
                out += [new[0].with_changes(leading_lines=stmt.leading_lines), *new[1:]] if new \
                    else self._training_lines(stmt, lines)
            elif self.tcode is not None and self.source.sid(stmt) in self.tcode.unwrap:
                # `with tf.GradientTape() as tape:`: its body runs as is, after zero_grad()
                pre = list(cst.parse_module("\n".join(self.tcode.unwrap[self.source.sid(stmt)]) + "\n").body)
                pre[0] = pre[0].with_changes(leading_lines=stmt.leading_lines)
                self.in_tape += 1
                try:
                    out += pre + self._rewrite_body(stmt.body.body, level)
                finally:
                    self.in_tape -= 1
            elif isinstance(stmt, (cst.FunctionDef, cst.If, cst.For, cst.While, cst.With, cst.Try, cst.ClassDef)):
                inner = "function" if not isinstance(stmt, cst.If) or level != "module" else "main"
                new = self._rewrite_compound(stmt, inner)
                if level == "module" and self.pending_classes:
                    # classes of models built inside this statement go right before it
                    out += self._chunk("\n\n".join(self.pending_classes))
                    self.pending_classes = []
                if isinstance(new, list):
                    out += new
                elif new is not None:
                    out.append(new)
            else:
                out.append(stmt)
        if level == "module" and not self.helpers_placed:
            out += self._chunk("\n\n".join(self.tcode.helpers))
            self.helpers_placed = True
        out, trailing = _attach_comments(out)
        self.trailing = trailing
        return out

    def _needs_helpers(self, stmt) -> bool:
        """True for a top-level statement that holds a translated training statement."""
        if isinstance(stmt, (cst.Import, cst.ImportFrom)) or (
                isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))):
            return False
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in self.builders:
            return False
        if isinstance(stmt, cst.ClassDef) and (stmt.name.value in self.callback_classes
                                               or stmt.name.value in self.tcode.wrapper_classes):
            return True  # it derives from the generated Callback, or uses the Mean helper
        span = self._span(stmt)
        end = span.end_line or span.line
        if any(ts.span is not None and span.line <= ts.span.line <= end and ts.builder is None
               for ts in self.program.training):
            return True
        # `model = build_model()` where the builder compiles: the optimizer follows it; or where
        # the model's class uses a helper in __init__ (the Mean trackers of its own train_step)
        compiling = {ts.builder for ts in self.program.training if ts.kind == "compile" and ts.builder}
        extended = {name for md in self.program.models if md.class_name in self.tcode.class_extensions
                    for name in (md.builder, md.class_name) if name}
        return not isinstance(stmt, cst.FunctionDef) and bool(_called_names(stmt) & (compiling | extended))

    def _rewrite_compound(self, stmt, level: str):
        if isinstance(stmt, cst.If) and level == "main" and "__name__" not in _code(stmt.test):
            level = "module"
        if isinstance(stmt, cst.FunctionDef):
            span = self._span(stmt)
            inside = [ln for ln in self.failure_lines if span.line <= ln <= (span.end_line or span.line)]
            saved, self.current_failure = self.current_failure, (inside[0] if inside else None)
            try:
                return self._rewrite_compound_inner(stmt, level)
            finally:
                self.current_failure = saved
        return self._rewrite_compound_inner(stmt, level)

    def _header_touches_keras(self, stmt) -> bool:
        """A for/while/if/with whose header (not body) still uses Keras objects."""
        parts = []
        if isinstance(stmt, cst.For):
            parts = [stmt.iter]
        elif isinstance(stmt, (cst.If, cst.While)):
            parts = [stmt.test]
        elif isinstance(stmt, cst.With):
            parts = [item.item for item in stmt.items]
        elif isinstance(stmt, cst.FunctionDef):  # its defaults run with the def
            parts = [p.default for p in (*stmt.params.params, *stmt.params.kwonly_params) if p.default is not None]
        return any(self._touches_keras(p) for p in parts)

    def _stub_class(self, stmt: cst.ClassDef) -> list:
        """A Keras subclass (Layer/Model): commented out, with a stand-in class whose
        constructor raises, so the rest of the file still imports."""
        span = self._span(stmt)
        text = _code(stmt.with_changes(leading_lines=())).rstrip()
        where = f"{self.source_file}:{span.line}"
        header = text.splitlines()[0]
        self.program.stub(span, f"not translated yet: {header}", header)
        what = "a Keras subclass" if isinstance(stmt, cst.ClassDef) else "its defaults use Keras"
        comments = [comment_text(f"# TODO(transpiler): not translated yet ({where}): {what}")]
        comments += [line if line != "# " else "#" for line in comment_lines(text)]
        name = stmt.name.value
        msg = f"transpiler: {header!r} ({where}) is not translated yet"
        head = f"class {name}:\n    def __init__(self, *args, **kwargs):\n        " if isinstance(stmt, cst.ClassDef) \
            else f"def {name}(*args, **kwargs):\n    "  # (a function: raises when called)
        body = cst.parse_statement(f"{head}raise NotImplementedError({msg!r})\n")
        leading = list(stmt.leading_lines) + [cst.EmptyLine(comment=cst.Comment(c)) for c in comments]
        return [body.with_changes(leading_lines=leading)]

    def _translated_class(self, stmt: cst.ClassDef):
        """A Layer/Model subclass whose instances were translated: its code now lives in the
        generated model class; a comment says so."""
        name = stmt.name.value
        models = [md.class_name for md in self.program.models
                  if name == md.class_name or name in md.graph.from_keras.user_classes]
        where = ", ".join(sorted(set(models))) or "the generated model"
        text = comment_text(f"# {name} ({_code(stmt.bases[0].value) if stmt.bases else 'Layer'} subclass): "
                            f"translated into {where}, where its call() now runs inline in forward()")
        if name in models:
            return None
        return _Comments(list(stmt.leading_lines) + [cst.EmptyLine(comment=cst.Comment(text))])

    def _rewrite_compound_inner(self, stmt, level: str):
        if isinstance(stmt, cst.ClassDef) and stmt.name.value in self.callback_classes:
            # the script's keras.callbacks.Callback subclass: the generated fit() calls its hooks
            stmt, unsupported = rewrite_callback_class(stmt, self.keras_names, self.callback_classes)
            self.callback_stubs |= set(unsupported)
        if isinstance(stmt, cst.ClassDef) and stmt.name.value in self.program.from_keras.translated_classes:
            return self._translated_class(stmt)
        if isinstance(stmt, cst.ClassDef) and self.tcode is not None and stmt.name.value in self.tcode.wrapper_classes:
            new = cst.parse_statement(self.tcode.wrapper_classes[stmt.name.value])  # (wrapper_class.py)
            return new.with_changes(leading_lines=stmt.leading_lines)
        if isinstance(stmt, cst.ClassDef) and any(self._touches_keras(b.value) for b in stmt.bases) or \
                isinstance(stmt, cst.FunctionDef) and self._header_touches_keras(stmt):
            return self._stub_class(stmt)[0]
        if id(stmt) in self.layer_loops:
            loop = self.layer_loops[id(stmt)]
            notes = [*stmt.leading_lines, *(cst.EmptyLine(comment=cst.Comment(c)) for c in loop.comments)]
            if loop.shapes is None:
                return [loop.loop.with_changes(leading_lines=notes)]
            return [cst.parse_statement(loop.shapes + "\n").with_changes(leading_lines=notes),
                    loop.loop.with_changes(leading_lines=())]
        if self._header_touches_keras(stmt) and not (isinstance(stmt, cst.If) and "__name__" in _code(stmt.test)):
            # e.g. `for layer in model.layers:`: the whole statement needs a human
            stubbed = self._stub(stmt, raising=level != "module")
            return stubbed[0] if len(stubbed) == 1 and not isinstance(stubbed[0], _Comments) else \
                cst.SimpleStatementLine([cst.Pass()], leading_lines=stubbed[0].lines)
        def block(b):
            if isinstance(b, cst.IndentedBlock):
                self.depth += 1
                try:
                    new = self._rewrite_body(b.body, level)
                finally:
                    self.depth -= 1
                footer = [*self.trailing, *b.footer]
                if not new:
                    new = [cst.SimpleStatementLine([cst.Pass()], leading_lines=footer)]
                    footer = []
                return b.with_changes(body=new, footer=footer)
            return b

        changes = {}
        if hasattr(stmt, "body"):
            changes["body"] = block(stmt.body)
        if isinstance(stmt, cst.FunctionDef):
            changes.update(self._keras_annotations_dropped(stmt))
        if isinstance(stmt, cst.For):
            changes["iter"] = self.layout_batches.wrap(stmt.iter, self._span(stmt).line)
        if isinstance(stmt, cst.FunctionDef) and any(_code(d.decorator) in self._graph_decorators()
                                                      for d in stmt.decorators):
            # tf.function traces a graph; torch runs the same Python eagerly
            kept = [d for d in stmt.decorators if _code(d.decorator) not in self._graph_decorators()]
            changes["decorators"] = kept
            note = cst.EmptyLine(comment=cst.Comment("# @tf.function dropped: PyTorch runs this eagerly"))
            changes["leading_lines"] = [*changes.get("leading_lines", stmt.leading_lines), note]
        if isinstance(stmt, (cst.If, cst.For, cst.While, cst.Try)) and getattr(stmt, "orelse", None) is not None:
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                changes["orelse"] = self._rewrite_compound(orelse, level)
            else:
                changes["orelse"] = orelse.with_changes(body=block(orelse.body))
        if isinstance(stmt, cst.Try):
            changes["handlers"] = [h.with_changes(body=block(h.body)) for h in stmt.handlers]
            if stmt.finalbody is not None:
                changes["finalbody"] = stmt.finalbody.with_changes(body=block(stmt.finalbody.body))
        return stmt.with_changes(**changes)

    def _keras_annotations_dropped(self, fn: cst.FunctionDef) -> dict:
        """A kept function's annotations that name Keras objects (``history: keras.callbacks.History``)
        are evaluated when the ``def`` runs: NameError in the output, which imports no Keras. They
        are dropped (annotations do not change what the function computes), with a comment."""
        params = [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]
        star = [p for p in (fn.params.star_arg, fn.params.star_kwarg) if isinstance(p, cst.Param)]
        dropped = [p for p in params + star if p.annotation is not None and self._touches_keras(p.annotation)]
        returns = fn.returns is not None and self._touches_keras(fn.returns)
        if not dropped and not returns:
            return {}

        def strip(p):
            return p.with_changes(annotation=None) if any(p is d for d in dropped) else p
        new_params = fn.params.with_changes(
            posonly_params=[strip(p) for p in fn.params.posonly_params], params=[strip(p) for p in fn.params.params],
            kwonly_params=[strip(p) for p in fn.params.kwonly_params],
            star_arg=strip(fn.params.star_arg) if isinstance(fn.params.star_arg, cst.Param) else fn.params.star_arg,
            star_kwarg=strip(fn.params.star_kwarg) if fn.params.star_kwarg is not None else None)
        shown = [f"{p.name.value}: {_code(p.annotation.annotation)}" for p in dropped]
        shown += [f"-> {_code(fn.returns.annotation)}"] if returns else []
        note = cst.EmptyLine(comment=cst.Comment(comment_text(f"# Keras annotations dropped: {', '.join(shown)}")))
        out = {"params": new_params, "leading_lines": [*fn.leading_lines, note]}
        if returns:
            out["returns"] = None
        return out

    def _graph_decorators(self) -> set[str]:
        """``@tf.function`` (and ``@tf.function(...)``-less spellings) under the script's aliases."""
        out = set()
        for name in self.keras_names:
            out |= {f"{name}.function", f"{name}.autograph.experimental.do_not_convert"}
        return out

    def _trainable_weights(self, stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """``model.trainable_weights`` (or ``trainable_variables``) outside a training step →
        ``[p for p in model.parameters() if p.requires_grad]`` (a list of tensors, as Keras'
        is a list of variables: ``p.shape``, ``len(...)`` and sums over it read the same)."""
        model_vars = self.model_vars

        class Weights(cst.CSTTransformer):
            def leave_Attribute(self, original, updated):
                if isinstance(updated.value, cst.Name) and updated.value.value in model_vars and \
                        updated.attr.value in _TRAINABLE:
                    return cst.parse_expression(
                        f"[p for p in {updated.value.value}.parameters() if p.requires_grad]")
                return updated

        if not any(f".{name}" in _code(stmt) for name in _TRAINABLE):
            return stmt
        return stmt.visit(Weights())

    def _optimizer_reads(self, stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine | None:
        """``model.optimizer.learning_rate`` (or ``.lr``; ``.numpy()`` of it), read or assigned →
        the torch optimizer's rate, ``optimizer.param_groups[0]["lr"]``. None when the statement
        uses ``model.optimizer`` otherwise (the torch module has no optimizer: a stub)."""
        model_vars = self.model_vars
        if not any(f"{v}.optimizer" in _code(stmt) for v in model_vars):
            return stmt
        compiled = {var: mt.optimizer_var for var, mt in (self.training.models if self.training else {}).items()
                    if mt.compile is not None}
        rate_suffix = '.param_groups[0]["lr"]'

        class Reads(cst.CSTTransformer):
            left = False

            def leave_Attribute(self, original, updated):
                v = updated.value
                if updated.attr.value in ("learning_rate", "lr") and isinstance(v, cst.Attribute) and \
                        v.attr.value == "optimizer" and isinstance(v.value, cst.Name) and v.value.value in compiled:
                    return cst.parse_expression(compiled[v.value.value] + rate_suffix)
                if _code(v).endswith(rate_suffix) and updated.attr.value != "numpy":
                    self.left = True  # a method of the Keras variable (.assign(...))
                return updated

            def leave_Call(self, original, updated):
                f = updated.func
                if isinstance(f, cst.Attribute) and f.attr.value == "numpy" and not updated.args and \
                        _code(f.value).endswith(rate_suffix):
                    return f.value  # the rate is a float already
                return updated

        reads = Reads()
        new = stmt.visit(reads)
        other = any(re.search(rf"(?<![\w.]){re.escape(v)}\.optimizer\b", _code(new)) for v in model_vars)
        return None if reads.left or other else new

    def _tape_math(self, stmt: cst.SimpleStatementLine):
        """A statement of a custom training step (inside the unwrapped GradientTape) whose
        Keras/TensorFlow tensor math has torch spellings (``loss_fn(y, p) +
        tf.add_n(model.losses)``); ``model.losses`` is the module's regularization term.
        None when something stays untranslated (the statement becomes a stub)."""
        if not self.in_tape:
            return None
        with_term = {md.class_name for md, code in self.models.values() if "def regularization_loss(self):" in code.text}
        regularized = {md.var for md, _ in self.models.values() if md.var and md.class_name in with_term}
        for node in nodes_of(self.source.module, cst.Assign):  # model = build_model(...)
            call = node.value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in self.builders \
                    and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and \
                    self.builders[call.func.value][0].class_name in with_term:
                regularized.add(node.targets[0].target.value)
        model_vars = self.model_vars

        class Losses(cst.CSTTransformer):
            def leave_Attribute(self, original, updated):
                if isinstance(updated.value, cst.Name) and updated.value.value in model_vars and \
                        updated.attr.value == "losses":
                    name = updated.value.value
                    if name in regularized:
                        return cst.parse_expression(f"[{name}.regularization_loss()]")
                    return cst.parse_expression("[]")
                return updated

        stmt = stmt.visit(Losses())
        aliases = torch_loss_functions.module_aliases(self.source.module)
        wrapper = cst.FunctionDef(cst.Name("_step"), cst.Parameters(), cst.IndentedBlock([stmt]))
        try:
            new, uses_f = torch_loss_functions.translate_function(wrapper, aliases, _no_loss_call)
        except torch_loss_functions.Untranslatable:
            return None
        if self._touches_keras(new.body.body[0]) or (uses_f and not self.uses_f):
            return None  # (F.* where the script has no F import: a stub)
        return new.body.body[0]

    def _keras_alias(self, stmt: cst.SimpleStatementLine) -> bool:
        """``mnist = tf.keras.datasets.mnist``: a name bound to a Keras module, like an import."""
        small = stmt.body[0]
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value in self.keras_names):
            return False
        node = small.value
        while isinstance(node, cst.Attribute):
            node = node.value
        return isinstance(node, cst.Name) and node.value in self.keras_names

    def _rewrite_line(self, stmt: cst.SimpleStatementLine, level: str, uses, raised: bool) -> list:
        # long: one dispatch over every kind of module-level line (alias, callback, model
        # construction, training call, stub), in the order their precedence needs
        if self._keras_alias(stmt):
            return []  # its uses were translated (load_data → a numpy loader); like an import
        if self.callback_stubs and _code(stmt.with_changes(leading_lines=())).strip() in self.callback_stubs:
            return self._stub(stmt, bind=level == "module", raising=level != "module")
        if "newaxis" in _code(stmt):
            stmt = stmt.visit(_NewAxis(self.keras_names))  # tf.newaxis / np.newaxis is None
        stmt = self.layout_batches.rewrite(stmt, self._span(stmt).line)
        small = stmt.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return self._rewrite_import(stmt, uses)
        sid = self.source.sid(stmt)  # (the statement's stable id: what the frontend's facts name)
        if sid in self.construct:
            md, code = self.construct[sid]
            target = self.sites.targets.get(sid) or md.var or "model"
            code = replace(code, given=given_arguments(self.source.module, stmt, code.given))
            new = cst.parse_statement(f"{target} = {md.class_name}({construct_args(md, code)})\n")
            new = new.with_changes(leading_lines=stmt.leading_lines)
            loads = self._load_weights_lines(md, target)
            if isinstance(small, cst.Return):  # ``return keras.Model(...)`` of a function with arguments
                new = new.with_changes(body=[cst.Return(cst.parse_expression(
                    f"{md.class_name}({construct_args(md, code)})"))]) \
                    if not loads else new
                loads = [*loads, cst.parse_statement(f"return {target}\n")] if loads else loads
            loads = [*loads, *self._builder_compile(stmt)]  # (a function compiling the model it returns)
            if level == "module":
                return [*self._chunk(code.text), new, *loads]
            self.pending_classes.append(code.text)
            return [new, *loads]
        if sid in self.per_call_stubs:  # a call of a function that builds another model at each call
            return self._stub(stmt, bind=level == "module", raising=level != "module")
        if sid in self.model_statements or sid in self.program.from_keras.builder_layer_statements:
            return data_utils.data_side(self.tcode, sid, stmt)  # (adapt() in a helper on the model's tensors)
        if layer_called_outside(self.program, stmt, self._span(stmt), self.layer_classes):  # (on arrays)
            return self._stub(stmt, bind=level == "module", raising=level != "module")
        moved = self.weight_lists.translate(stmt)  # (weight_transfer.py: get_weights/set_weights)
        if moved is not None:
            return [moved]
        if self.tcode is not None and sid in self.tcode.statements:
            return self._training_lines(stmt, self.tcode.statements[sid])
        if self.tcode is not None and self.tcode.expressions:
            replacer = _CallReplacer(self.tcode.expressions, self._model_names(), self.source)
            rewritten = stmt.visit(replacer) if replacer.changes(stmt) else stmt
            if rewritten is not stmt and not rewritten.deep_equals(stmt):
                if not self._touches_keras(rewritten):
                    return [self._trainable_weights(rewritten)]
                math = self._tape_math(rewritten)
                if math is not None:
                    return [math]
                return self._stub(stmt, bind=level == "module", raising=level != "module" and not raised)
        if data_sources.needs_tensorflow(self.program, self._span(stmt)) is not None:
            return self._stub(stmt, bind=level == "module", raising=level != "module" and not raised)
        after = self._builder_compile(stmt)
        if after:
            return [stmt, *after]
        if not self._touches_keras(stmt):
            reads = self._optimizer_reads(stmt)
            if reads is None:
                return self._stub(stmt, bind=level == "module", raising=level != "module" and not raised)
            return [self._trainable_weights(reads), *self._builder_loads(reads)]
        math = self._tape_math(stmt)
        if math is not None:
            return [math]
        if ".layers[" in _code(stmt):  # model.layers[i] of a Sequential: the module it became
            indexed = translate_layer_indexing(stmt, self.model_layers.get)
            if indexed is not None and not self._touches_keras(indexed):
                return [indexed]
        text = _code(stmt.with_changes(leading_lines=())).strip()
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = _code(small.value.func)
            note = data_sources.no_effect_note(self.program, self._span(stmt))
            if note is not None:  # tfds.disable_progress_bar()
                return [_Comments([*stmt.leading_lines, cst.EmptyLine(comment=cst.Comment(note))])]
            if func in _SEED_CALLS and len(small.value.args) == 1:
                arg = _code(small.value.args[0].value)
                return [cst.parse_statement(f"torch.manual_seed({arg})\n").with_changes(
                    leading_lines=stmt.leading_lines)]
            if func in _FLOATX_CALLS and len(small.value.args) == 1 and not small.value.args[0].keyword and \
                    isinstance(small.value.args[0].value, cst.SimpleString) and \
                    small.value.args[0].value.evaluated_value in ("float16", "float32", "float64"):
                dtype = small.value.args[0].value.evaluated_value
                return [cst.parse_statement(f"torch.set_default_dtype(torch.{dtype})\n").with_changes(
                    leading_lines=stmt.leading_lines)]
            if func.endswith(".summary") and func.split(".")[0] in self.model_vars and not small.value.args:
                return [cst.parse_statement(f"print({func.split('.')[0]})\n").with_changes(
                    leading_lines=stmt.leading_lines)]
        del text
        arrays = array_ops.rewrite(stmt, torch_loss_functions.module_aliases(self.source.module))
        if arrays is not None and not self._touches_keras(arrays):  # keras.ops on arrays, outside any model
            return [arrays]
        # One raise per block is enough: what follows it is unreachable anyway. In a
        # builder that could not be translated, the raise quotes the failing line.
        raising = level != "module" and not raised
        if self.current_failure is not None:
            span = self._span(stmt)
            raising = span.line <= self.current_failure <= (span.end_line or span.line)
        return self._stub(stmt, bind=level == "module", raising=raising)

    def _builder_loads(self, stmt: cst.SimpleStatementLine) -> list:
        """``model = build_model()`` for the model a checkpoint was converted for: load it."""
        small = stmt.body[0]
        if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                and isinstance(small.value.func, cst.Name) and small.value.func.value in self.builders
                and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
            return []
        md, _ = self.builders[small.value.func.value]
        return self._load_weights_lines(md, small.targets[0].target.value)

    def _load_weights_lines(self, md, target: str) -> list:
        link = self.program.load_weights
        if not link or link["model"] != md.class_name:
            return []
        self.program.load_weights_placed = True
        load = ("load_file(CONVERTED_WEIGHTS)" if link["path"].endswith(".safetensors")
                else "torch.load(CONVERTED_WEIGHTS, weights_only=True)")
        return [cst.parse_statement(f"{target}.load_state_dict({load})\n")]

    def _model_names(self) -> dict[str, str]:
        """Model variable → the model's Keras name (``model.name`` in user code)."""
        out = {}
        for ts in self.program.training:
            if ts.model_def is not None:
                out[ts.model] = ts.model_def.graph.name
        return out

    def _training_lines(self, stmt: cst.SimpleStatementLine, lines: list[str]) -> list:
        """A training statement's replacement; an assignment keeps its targets."""
        if lines and all(line.startswith("#") for line in lines):
            return [_Comments([*stmt.leading_lines, *(cst.EmptyLine(comment=cst.Comment(line[:200]))
                                                      for line in lines)])]
        small = stmt.body[0]
        complete = lines and (lines[0].startswith("def ") or lines[0].endswith(".backward()")
                              or lines[0].endswith(".step()"))
        if isinstance(small, cst.Assign) and len(lines) == 1 and not complete:
            targets = " = ".join(_code(t.target) for t in small.targets)
            if not lines[0].startswith(f"{targets} = "):
                lines = [f"{targets} = {lines[0]}"]
        elif isinstance(small, cst.AnnAssign) and len(lines) == 1:
            lines = [f"{_code(small.target)} = {lines[0]}"]
        elif isinstance(small, cst.Return) and len(lines) == 1 and not lines[0].startswith("return "):
            lines = [f"return {lines[0]}"]
        new = cst.parse_module("\n".join(lines) + "\n")
        body = list(new.body)
        # the source line's comments, then the generated code's own (a note on the optimizer:
        # libcst keeps a module's leading comments in its header)
        body[0] = body[0].with_changes(leading_lines=[*stmt.leading_lines, *new.header, *body[0].leading_lines])
        return body

    def _builder_compile(self, stmt: cst.SimpleStatementLine) -> list:
        """``model = build_model()`` where build_model() compiles: the optimizer and loss follow."""
        small = stmt.body[0]
        if self.training is None or not isinstance(small, cst.Assign) or not isinstance(small.value, cst.Call):
            return []
        func = small.value.func
        returning = set(self.program.from_keras.compiled_by.values())  # (a function compiling what it returns)
        if not (isinstance(func, cst.Name) and (func.value in self.builders or func.value in returning)):
            return []
        target = small.targets[0].target
        if not isinstance(target, cst.Name):
            return []
        mt = self.training.models.get(target.value)
        builder_compiles = [ts for ts in self.program.training if ts.kind == "compile" and ts.builder == func.value]
        if mt is None or not builder_compiles or mt.compile is None:
            return []
        new = cst.parse_module("\n".join(self.training.compile_lines(target.value, mt)) + "\n")
        body = list(new.body)
        if not body:  # (a compile() adding no statement in torch, one without a loss: captcha_ocr crashed)
            return []
        comment = cst.EmptyLine(comment=cst.Comment(f"# compiled in {func.value}()"))
        body[0] = body[0].with_changes(leading_lines=[comment, *new.header, *body[0].leading_lines])
        return body

    def _rewrite_import(self, stmt: cst.SimpleStatementLine, uses) -> list:
        small = stmt.body[0]
        if isinstance(small, cst.Import):
            keep = [a for a in small.names if not _is_keras_module(_code(a.name))]
            if len(keep) == len(small.names):
                return [stmt]
            rest = [stmt.with_changes(body=[small.with_changes(names=_fix_commas(keep))])] if keep else []
        else:
            module = _code(small.module) if small.module is not None else ""
            if not _is_keras_module(module) or small.relative:
                return [stmt]
            rest = []
        if self.imports_placed:
            if rest:
                return rest
            return []
        self.imports_placed = True
        new = self._torch_imports(*uses)
        new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
        return new + rest

    def _builder(self, fn: cst.FunctionDef) -> list:
        md, code = self.builders[fn.name.value]
        params = _code(_without_framework_defaults(fn.params, self.keras_names))
        lines = []
        doc = fn.get_docstring(clean=True)
        body_lines = []
        if doc is not None:  # (the value, printed so that no quote or backslash in it is code)
            body_lines.append("    " + docstring(doc, "    "))
        for span, method in self.program.from_keras.untranslated:
            if fn_span_contains(self._span(fn), span):
                src = self.source.line(span)
                self.program.stub(span, f"not translated yet: {src}", src)
                body_lines.append("    " + comment_text(
                    f"# TODO(transpiler): not translated yet ({self.source_file}:{span.line}): {src}"))
        body_lines += builder_guard.guard_lines(self.program, md, fn.name.value, self._span(fn),
                                              self.source.text)
        carried, stubbed = builder_effects.side_effects(fn, self.keras_names, _code)
        for stmt in stubbed:
            span, src = self._span(stmt), _code(stmt).strip()
            self.program.stub(span, f"reads the Keras model being built; not carried into the PyTorch "
                                    f"builder: {src}", src)
            body_lines.append("    " + comment_text(
                f"# TODO(transpiler): reads the Keras build ({self.source_file}:{span.line}): {src}"))
        body_lines += ["    " + line for c in carried for line in c.splitlines()]
        body_lines.append(f"    return {md.class_name}({', '.join(_builder_arguments(md, code))})")
        decorators = "".join(_code(d) for d in fn.decorators)
        lines.append(f"{decorators}def {fn.name.value}({params}):")
        lines += body_lines
        text = code.text + "\n\n" + "\n".join(lines) + "\n"
        stmts = self._chunk(text)
        if fn.leading_lines:
            stmts[0] = stmts[0].with_changes(leading_lines=fn.leading_lines)
        return stmts


def _bound_names(target: cst.BaseExpression) -> set[str]:
    """The names a ``for`` target binds (``layer``, ``name, layer``)."""
    return {n.value for n in walk(target) if type(n) is cst.Name}


def _builder_arguments(md, code) -> list[str]:
    """What the generated builder passes its module: its own parameters by name, a size the
    program computes at run time (read inside the builder from module names) as its code."""
    out = list(code.given)  # (the models it holds, by the builder's own names)
    for name in code.init_params:
        sym = sizes.symbol_of(md.builder_args[name])
        out.append(sym.arg if sym is not None and sym.kind == "runtime" and isinstance(sym.arg, str) else name)
    return out


def _without_framework_defaults(params: cst.Parameters, names: set[str]) -> cst.Parameters:
    """A builder's parameters with defaults that name the source framework (``keras=keras``,
    ``act=layers.ReLU``) set to None: the output imports no Keras, and the generated builder
    builds its module without them (it never reads such a parameter)."""
    def fix(param: cst.Param) -> cst.Param:
        if param.default is None:
            return param
        used = {n.value for n in nodes_of(param.default, cst.Name)}
        return param.with_changes(default=cst.Name("None")) if used & names else param

    return params.with_changes(params=[fix(p) for p in params.params],
                               kwonly_params=[fix(p) for p in params.kwonly_params],
                               posonly_params=[fix(p) for p in params.posonly_params])


def _imports_module(source: str, name: str) -> bool:
    """True when ``source`` has a plain ``import name`` at the start of a line."""
    return any(line.strip() == f"import {name}" or line.strip().startswith(f"import {name} ")
               for line in source.splitlines())


def _fix_commas(names):
    out = list(names)
    if out:
        out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out


def fn_span_contains(outer: Span, inner: Span) -> bool:
    return outer.line <= inner.line <= (outer.end_line or outer.line)


def print_torch_script(program: Program, source: SourceFile) -> ScriptResult:
    """The whole PyTorch script for ``program`` (graphs already through the torch passes), read
    from the Keras script ``source``."""
    source_file = os.path.basename(program.path)
    training = TrainingPrinter(program)
    # (the program passes, ir/passes/training_analyses.py, marked the outputs the loss reads
    # as logits and the lookups recording per-occurrence gradient slices)
    tcode = training.run()
    classes: dict[str, str] = {}
    codes = [print_model_class(md, source_file, classes) for md in program.models]
    for md, code in zip(program.models, codes):
        if md.class_name in tcode.class_extensions:  # the model's own train_step and its trackers
            code.text = extend_class(code.text, *tcode.class_extensions[md.class_name])
    for md, code in zip(program.models, codes):
        _copied_shared_models(program, md, code)
    for md in program.models:
        for node in md.graph.nodes:
            for message in print_notes.notes(node).init_warnings:
                program.warn(node.span, f"{node.name}: initializer {message}")
        for what in print_notes.notes(md.graph).untranslated_regularizers:
            program.warn(md.graph.span, f"{what} is not translated (its weight is not one torch tensor; "
                                        "affects training only)")
    uses_f = any(c.uses_functional for c in codes)
    uses_math = any("import math" in c.imports for c in codes)
    uses_f = uses_f or bool(tcode.helpers)
    printer = _Printer(program, source, codes, training, tcode)
    module = printer.rewrite_module(source.module, uses_f, uses_math)
    text = format_python(printer.raw.put_back(module.code))
    return ScriptResult(text, printer.stubs)


__all__ = ["print_torch_script", "ScriptResult", "ModelDef"]


def _no_loss_call(name: str, from_logits: bool) -> str:
    raise NotImplementedError(name)  # (the training printer translated the ones it could)


def _copied_shared_models(program: Program, md, code) -> None:
    """A model of the program that ``md`` calls as a layer but does not hold itself (its module
    takes or returns other layouts than this call): Keras shares its layers, the torch module
    holds a copy; said where it is called."""
    seen = set()
    for node in md.graph.nodes:
        for scope, _call in (node.from_keras.scopes or ()):
            given = scope.given_model
            if given is None or scope.given_as in code.given or id(scope) in seen:
                continue
            seen.add(id(scope))
            name = given.var or given.builder or given.class_name
            program.warn(scope.span, f"the model {name} is used as a layer here: Keras shares its layers (and "
                                     f"weights) between {name} and this model; the torch module built here holds "
                                     f"a copy of its own (its layouts differ from {name}'s module)")

