"""PyTorch source → ir.Program, by abstract interpretation of the user's code.

libcst parses the file (comments survive). Module-level statements bind imports
(``import torch.nn as nn``, ``from torch import nn``, ``torch.nn.functional as F``...),
constants and definitions. A model is found as a builder function (one whose
parameters all have defaults and that returns a module: ``def build_model(): return
Net()``), else a module-level ``model = Net()``, else an ``nn.Module`` subclass that no
other class uses and that can be built with its defaults.

``__init__`` is run with the shared interpreter (frontend_ast/interp/; this reader's hooks
are in torch_expressions.py, torch functions in torch_functions.py' registry): ``self.name = nn.X(...)`` builds a module
through the recogniser table (``torch_modules.py``), ``nn.Sequential``/``nn.ModuleList``
(also built in loops and comprehensions) are containers, user modules nest. Then
``forward`` is evaluated over IR values: submodule calls, ``F.*``, ``torch.*`` and tensor
methods become IR nodes in torch's channels-first layout (layout tags ``NCHW`` ...).
Input shapes come from a module-level ``INPUT_SHAPE = (C, H, W)`` (and ``INPUT_DTYPE``),
else from literal-shaped data fed to the model (``torch.randn(64, 1, 28, 28)``).
The program around the models (data, optimizer, loss, the training loop, checkpoints) is
read by ``torch_training`` into the training configuration.
Anything the interpreter cannot translate is a diagnostic with file:line, never a
silent drop.

Imports no deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from transpiler import cst_fast
from transpiler.cst_fast import nodes_of, positions as cst_positions
from transpiler.frontend_ast.torch import modules as tm
from transpiler.frontend_ast.torch import params as torch_params
from transpiler.frontend_ast.torch import vision as torch_vision
from transpiler.frontend_ast.torch import lazy_inputs
from transpiler.frontend_ast.torch import repeated_blocks
from transpiler.frontend_ast.torch import reset_methods
from transpiler.frontend_ast.torch import zoo_nn  # noqa: F401  (registers nn.Transformer*)
from transpiler.frontend_ast.torch import module_inherit
from transpiler.frontend_ast.torch import method_functions
from transpiler.frontend_ast.interp import ClassRef, Env, FunctionRef, Return, Unknown
from transpiler.frontend_ast.torch.params import TensorData
from transpiler.frontend_ast.keras.frontend import FrontendError, collect_comments
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.support import (
    _dotted, _code, _mentions, _init_code_methods, _trains, _returns_nothing, _walk, _walk_params,
    _graph_inputs, _assign_paths, _class_names_in, _simplify_rnns, _merge_bidirectional_halves,
    _relabel_sequences, _prune)
from transpiler.frontend_ast.torch.values import (
    Ref, Mod, LayerToken, Tensor, Shape, _DATA_MAKERS, _GENERATOR_METHODS)
from transpiler.ir.graph import Graph, Node, Span, Value
from transpiler.ir.layout import CHANNELS_FIRST, is_channels_first
from transpiler.ir.program import ModelDef, Program
from transpiler.frontend_ast.torch.expressions import TorchExpressions
from transpiler.frontend_ast.torch.graph_build import TorchGraphBuilding
from transpiler.frontend_ast.torch.module_params import TorchModuleParams
from transpiler.frontend_ast.torch.module_names import module_names
from transpiler.frontend_ast.torch.module_edits import refusals_in
from transpiler.frontend_ast.torch.statements import TorchStatements
from transpiler.frontend_ast.torch.lines import split_statement_lines
from transpiler.frontend_ast.torch.model_sites import makes_optimizer as _makes_optimizer, placed as _placed, \
    program_function_statements as _program_function_statements
from transpiler.frontend_ast.torch.siblings import Sibling, read_siblings
from transpiler.frontend_ast.torch.tensor_calls import TorchTensorCalls
from transpiler.ir import sizes
from transpiler.ir.source_file import SiblingText, SourceFile


class TorchFrontend(TorchStatements, TorchModuleParams, TorchGraphBuilding, TorchTensorCalls, TorchExpressions):
    """Reads one PyTorch script into an ``ir.Program``."""

    def __init__(self, source: str, path: str = "<string>", keep_imports: frozenset = frozenset()):
        self.source = source
        self.path = path
        try:
            self.module = cst_fast.parse(source)
        except cst.ParserSyntaxError as exc:
            raise FrontendError(f"syntax error: {exc.message}", Span(path, exc.raw_line, exc.raw_column + 1)) from None
        # (classes main.py imports from a sibling file are read from it: siblings.py)
        original = self.module
        self.module, split = split_statement_lines(self.module)  # (``a; b``: two statements, lines.py)
        self.module, siblings = read_siblings(path, self.module, keep_imports)
        self.siblings = siblings
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.positions = cst_positions(self.wrapper)
        self.node_files: dict[cst.CSTNode, Sibling] = {}
        if siblings or split:  # (the script's own nodes keep their lines in the script, not in the spliced module)
            self.positions = dict(self.positions)
            self.positions.update(cst_positions(MetadataWrapper(original, unsafe_skip_copy=True)))
            self.positions.update((new, self.positions[old]) for new, old in split.items())
        for sib in siblings:
            self.positions.update(sib.positions)
            self.node_files.update((n, sib) for n in sib.positions)
        self.source_file = SourceFile(path, source, self.module, self.positions,  # (what printers read)
                                      [SiblingText(s.path, s.lines, s.positions) for s in siblings], (1, 1))
        self.program = Program(path, source, "torch")
        self.globals = Env()
        self.classes: dict[str, ClassRef] = {}
        self.functions: dict[str, FunctionRef] = {}
        self.comments = collect_comments(source)
        self.lines = source.splitlines()
        self.graph: Graph | None = None
        self.names: dict[str, int] = {}
        self.depth = 0
        self.frozen_bias_hh: set[Mod] = set()  # recurrent layers whose bias_hh is frozen (Mod: identity-hashed)
        self.var_depth: dict = {}  # Value → the call depth its ``var`` was given at
        self.stubbed_builders: set[str] = set()
        #: ``model = nn.Linear(...)`` at module level: the builder printed for it → the statement
        self.layer_models: dict[str, cst.CSTNode] = {}
        self.cur_builder: str | None = None
        self.warned: set[str] = set()
        self.layer_tokens: dict[str, LayerToken] = {}
        self.root_span: Span | None = None
        self.cur_span: Span | None = None
        #: while an initialisation statement runs: the nn.init calls it made on something
        #: other than a module's own parameter (None: not in one)
        self.init_calls: list[str] | None = None
        #: functions of the script run by initialisation code (``model.apply(weights_init)``):
        #: those whose every run was translated into the layers' initializers, and the others
        self.init_functions: dict[str, bool] = {}
        self._init_running: set[str] = set()
        self.linear_names: dict[str, str] = {}  # F.linear's weight key → its Dense layer's name
        self.root_mod: Mod | None = None  # the model whose graph is being built
        self.part_inputs: dict[Mod, list] = {}  # submodule → the values it was first called on
        self.method_calls: dict[str, list[Value]] = {}  # its own methods forward calls: their inputs
        self.ran_methods: set[cst.FunctionDef] = set()  # the method definitions interpreted

    # -- entry ---------------------------------------------------------------------------
    def run(self, prepare=None) -> Program:
        """Bind the module's names, find the models, build one graph per model; ``prepare``
        (the target's passes) runs on the program before its training code is read, so that
        what the code reads of the models (the layouts of their outputs) is the final one."""
        for stmt in self.module.body:
            self._bind_toplevel(stmt)
        self.cur_span: Span | None = None
        self.program.from_torch.stubbed_models = []
        for name, mod, builder, args, var in self._find_models():
            try:
                self._build_model(name, mod, builder, args, var)
            except (Unsupported, FrontendError) as exc:
                span = getattr(exc, "span", None) or self.cur_span or mod.span
                held = refusals_in(self, mod)
                if held and held not in str(exc):
                    exc = type(exc)(*((str(exc) + held, span) if isinstance(exc, FrontendError) else (str(exc) + held,)))
                if args and builder is None and var is None:
                    # (a class nothing builds, tried for its constructor's sizes: not a model of
                    # the program; its class is the marked stub, with the reason)
                    reason = str(exc) if str(exc).startswith("built for") else \
                        f"built for its constructor's sizes, {exc} ({span})"
                    self.program.from_torch.unbuilt_classes[name] = reason
                    continue
                self._stub_model(name, builder, str(exc), span)
        self.program.class_builders = class_builders(self)
        if prepare is not None:
            prepare(self.program)
        self._report_unsupported_statements()
        local = self.program.from_torch.local_torch_bindings  # (torch imports in functions)
        self.program.from_torch.torch_bindings = self._torch_names() | local
        self.program.scope = module_names(self)
        return self.program

    # -- module level ----------------------------------------------------------------
    def _span(self, node: cst.CSTNode) -> Span:
        try:
            pos = self.positions[node]
        except KeyError:
            return Span(self.path, 1, 1)
        sib = self.node_files.get(node)
        return Span(sib.path if sib else self.path, pos.start.line, pos.start.column + 1, pos.end.line)

    def source_line(self, span: Span) -> str:
        """The stripped text of ``span``'s line (in the script or the sibling file it names)."""
        lines = next((s.lines for s in self.node_files.values() if s.path == span.file), self.lines)
        return lines[span.line - 1].strip() if 0 < span.line <= len(lines) else ""

    def _err(self, node: cst.CSTNode, message: str) -> FrontendError:
        return FrontendError(message, self._span(node))

    def _stub_model(self, name: str, builder: str | None, message: str, span: Span) -> None:
        line = self.source_line(span)
        self.program.model_stub(span, builder or name, f"{name}: {message}", line)
        if builder:
            self.stubbed_builders.add(builder)
        self.program.from_torch.stubbed_models.append({"name": name, "builder": builder, "message": message,
                                                    "span": span, "line": line})

    def _bind_toplevel(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.ClassDef):
            base = None
            is_module = False
            for arg in stmt.bases:
                try:
                    b = self._eval(arg.value, self.globals)
                except (FrontendError, Unsupported):
                    continue
                if isinstance(b, Ref) and b.path in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                    is_module = True
                elif isinstance(b, Ref) and b.path in zoo_nn.CLASSES:  # (class M(nn.Transformer): torch's definition)
                    base, is_module = zoo_nn.zoo_class(self, b.path), True
                elif isinstance(b, ClassRef):
                    base, is_module = b, b.is_module
                elif isinstance(b, Ref) and module_inherit.torch_layer(b):  # (class Linear(Bottle, nn.Linear))
                    is_module = True
            ref = ClassRef(stmt, kind="module" if is_module else "plain", base=base)
            self.classes[stmt.name.value] = ref
            self.globals.vars[stmt.name.value] = ref
        elif isinstance(stmt, cst.FunctionDef):
            ref = FunctionRef(stmt)
            self.functions[stmt.name.value] = ref
            self.globals.vars[stmt.name.value] = ref
        elif isinstance(stmt, cst.Try):  # (``try: from torch.x import f`` ``except ImportError: ...``)
            from transpiler.frontend_ast.torch.import_fallbacks import bind_fallback_imports

            bind_fallback_imports(self, stmt)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    self._exec_import(small, self.globals)
                elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                    try:
                        value = self._eval(small.value, self.globals)
                    except (FrontendError, Unsupported, Exception):  # noqa: BLE001 - unknown at module level
                        value = Unknown("not static")
                    if isinstance(value, (Mod, Tensor)):
                        value = Unknown("built at module level")
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for t in targets:
                        try:
                            self._assign(t, value, self.globals)
                        except Unsupported:  # ``mod.attr = f`` at module level: nothing a model reads
                            pass

    def _exec_import(self, node, env: Env) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                if alias.asname is not None:
                    env.vars[alias.asname.name.value] = Ref(full)
                else:
                    head = full.split(".")[0]
                    env.vars[head] = Ref(head)
        else:
            if node.module is None or isinstance(node.names, cst.ImportStar):
                return
            mod = _dotted(node.module)
            for alias in node.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else _dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                env.vars[local] = Ref(f"{mod}.{name}")

    def _torch_names(self) -> set[str]:
        """Module-level names bound to torch (imports and what is built from them)."""
        return {k for k, v in self.globals.vars.items() if isinstance(v, Ref) and v.path.split(".")[0] in
                ("torch", "torchvision")}

    # -- finding models ---------------------------------------------------------------
    def _find_models(self):
        found = []
        used_classes: set[str] = set()
        words = set(self.classes) | {"nn", "Sequential"}
        # a helper that takes arguments (``make_layers(cfg)``) and builds modules: a builder
        # calling it builds a model too
        helpers = {name: fn for name, fn in self.functions.items()
                   if any(p.default is None for p in fn.node.params.params)}
        while True:
            more = {name for name, fn in helpers.items() if name not in words and _mentions(fn.node, words)}
            if not more:
                break
            words |= more
        for fn in self.functions.values():
            if not all(p.default is not None for p in fn.node.params.params) or fn.node.params.star_arg \
                    not in (None, cst.MaybeSentinel.DEFAULT) or not _mentions(fn.node, words):
                continue
            if _returns_nothing(fn.node):
                continue
            self.graph = None
            try:
                # sizes with provenance: the builder's parameters by name
                args = {p.name.value: sizes.named(self._eval(p.default, self.globals), p.name.value)
                        for p in fn.node.params.params}
                result = self._call_function(fn, [], dict(args), fn.node)
            except Unsupported as exc:
                if _mentions(fn.node, {n for n, c in self.classes.items() if c.is_module} | {"nn"}) and \
                        not _trains(fn.node) and not _makes_optimizer(fn.node):
                    # (a program function, which trains or makes the optimizer too, is not a builder)
                    self._stub_model(fn.node.name.value, fn.node.name.value, str(exc),
                                     self.cur_span or self._span(fn.node))
                    self.stubbed_builders.add(fn.node.name.value)
                continue
            except (FrontendError, RecursionError, KeyError, TypeError, ValueError, IndexError):
                continue
            if isinstance(result, Mod):
                found.append((fn.node.name.value, result, fn.node.name.value, args, None))
                used_classes.update(_class_names_in(result))
        if found:
            return found
        for stmt in list(self.module.body) + _program_function_statements(self):
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
                assign = stmt.body[0]
                call = _placed(assign.value)  # (``Net(...).to(device)``: the model is Net(...))
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) \
                        and call.func.value in self.classes and len(assign.targets) == 1 \
                        and isinstance(assign.targets[0].target, cst.Name):
                    cls_name, sized = call.func.value, None
                    try:
                        mod = self._eval(call, self.globals)
                    except (Unsupported, FrontendError) as exc:  # (built from values known at run time only)
                        # (its run-time arguments as named sizes: the builder takes them, lazy_inputs)
                        sized = lazy_inputs.call_sizes(self, self.classes[cls_name], call)
                        try:
                            mod = self._instantiate(self.classes[cls_name], [], dict(sized), call) \
                                if sized else None
                        except (Unsupported, FrontendError, TypeError, KeyError, IndexError, ValueError):
                            mod = None
                        if mod is None:
                            self._stub_model(cls_name, None, str(exc), getattr(exc, "span", None) or self._span(stmt))
                            continue
                    except (TypeError, KeyError, IndexError, ValueError, RecursionError):
                        continue  # (not read statically: no model here)
                    if isinstance(mod, Mod):
                        found.append((cls_name, mod, None, sized or {}, assign.targets[0].target.value))
                        if not sized:
                            self._record_class_call(call)
                elif _torch_layer_model(self, assign):  # ``model = nn.Linear(784, 10)``: the layer is the model
                    var = assign.targets[0].target.value
                    builder = f"build_{var}"
                    if builder not in self.functions and builder not in self.globals.vars and \
                            builder not in self.layer_models:  # (one per name: the first)
                        self.layer_models[builder] = stmt  # printed as a builder, the statement calls it
                        found.append((var, self._eval(assign.value, self.globals), builder, {}, var))
        if found:
            return found
        return self._class_models()

    def _class_models(self):
        """No builder and no module-level model: each module class another one does not nest
        (every one, in a library file), built with its defaults or for its constructor's sizes."""
        nested: set[str] = set()
        candidates = []
        stubbed = {m["name"] for m in self.program.from_torch.stubbed_models}
        for name, cls in self.classes.items():
            if not cls.is_module or name in stubbed:  # (the program builds it from run-time values: stubbed)
                continue
            if module_inherit.skip_mixin(self, cls):  # (no module of its own: its subclasses carry its forward)
                continue
            # a constructor of required sizes (``Net(upscale_factor)``, a library class the
            # program builds from its arguments): built for named sizes, printed as the builder's
            # parameters (lazy_inputs.constructor_sizes)
            args = None if cls.node in self.node_files else lazy_inputs.constructor_sizes(self, cls)
            try:
                mod = self._instantiate(cls, [], dict(args or {}), cls.node)
            except (FrontendError, Unsupported, TypeError, KeyError, ValueError, IndexError) as exc:
                self.program.from_torch.unbuilt_classes[name] = lazy_inputs.unbuilt_reason(cls, exc)
                continue
            for _, child in _walk(mod):
                if child is not mod and child.kind == "user":
                    nested.add(child.cls.node.name.value)
            candidates.append((name, mod, args or {}))
        # (classes another one nests: Keras layers.Layer subclasses, the others keras.Model ones)
        self.program.from_torch.nested_classes = sorted(nested)
        if lazy_inputs.is_library(self.module):  # (each class of a library file is the other files' to use)
            nested = set()
        return [(name, mod, None, args, None) for name, mod, args in candidates if name not in nested]

    def _record_class_call(self, call: cst.Call) -> None:
        """``model = Net(16, act="relu")``: the argument values the model is built for (the
        Keras builder ``Net`` accepts that call and refuses others)."""
        try:
            args = tuple(self._eval(a.value, self.globals) for a in call.args if not a.keyword and not a.star)
            kwargs = {a.keyword.value: self._eval(a.value, self.globals) for a in call.args if a.keyword}
        except Exception:  # noqa: BLE001 - (evaluated once already: not expected)
            return
        if len(args) + len(kwargs) != len(call.args):
            return  # (``*args``: not recorded)
        self.program.from_torch.class_call_args.setdefault(call.func.value, (args, kwargs))

    # -- model graphs ------------------------------------------------------------------
    def _input_specs(self, forward: cst.FunctionDef, span: Span, cls: ClassRef | None = None,
                     mod: Mod | None = None) -> list[tuple[tuple, str]]:
        names = [p.name.value for p in forward.params.params[1:] if p.default is None]
        n_inputs = len(names)
        documented = self._documented_inputs(cls, names) if cls is not None else None
        if documented:
            return documented
        shape, dtype = self._declared_input()
        if isinstance(shape, (tuple, list)) and shape and all(isinstance(s, int) for s in shape):
            shapes = [tuple(shape)]
        elif isinstance(shape, (tuple, list)) and shape and all(isinstance(s, (tuple, list)) for s in shape):
            shapes = [tuple(s) for s in shape]
        elif mod is not None and mod.kind == "user" and \
                mod.cls_name in self.program.from_torch.placeholder_params:
            shapes = []  # (built for placeholder sizes: no literal of the program is its data)
        else:
            data = self._pick_data_shape(mod) if mod is not None else self._literal_data_shapes()[:1]
            shapes = [s for s, _ in data]
            if data and "INPUT_DTYPE" not in self.globals.vars:
                dtype = data[0][1]
        if (not shapes or len(shapes) < n_inputs) and mod is not None and n_inputs == 1:
            return lazy_inputs.one_input(self, mod, forward, names, span)
        if (not shapes or len(shapes) < n_inputs) and mod is not None and mod.kind == "user" and n_inputs > 1:
            implied = lazy_inputs.inputs_by_parameter(mod, forward, names)
            if implied is not None:  # (each input: what the layer it is first handed implies)
                self.program.from_torch.lazy_inputs[self.graph.name] = (
                    " and ".join(f"{n} {lazy_inputs.describe(s, d)}" for n, (s, d, _) in zip(names, implied)),
                    f"the first layers they are handed ({', '.join(w for _, _, w in implied)}) imply")
                return [(s, d) for s, d, _ in implied]
            raise FrontendError(lazy_inputs.unknown_inputs_message(mod, forward, names), span)
        if not shapes or len(shapes) < n_inputs:
            raise FrontendError(
                "cannot tell the model's input shape: torch modules do not declare it; add a module-level "
                "INPUT_SHAPE = (C, H, W) (one example, without the batch axis) or feed the model "
                "literal-shaped data such as torch.randn(8, C, H, W)", span)
        dtypes = dtype if isinstance(dtype, (tuple, list)) else [dtype] * len(shapes)
        return [(s, str(d)) for s, d in zip(shapes[:n_inputs], dtypes)]

    def _documented_inputs(self, cls: ClassRef, names: list[str]):
        """Shapes the class docstring states, one line per input: ``Input ``x``: (N, 1, 28,
        28) float32`` (how transpiler documents the modules it generates)."""
        import re

        body = cls.node.body.body
        if not body or not isinstance(body[0], cst.SimpleStatementLine) or \
                not isinstance(body[0].body[0], cst.Expr) or \
                not isinstance(body[0].body[0].value, cst.SimpleString):
            return None
        doc = body[0].body[0].value.evaluated_value
        found = {}
        for m in re.finditer(r"Inputs?\s+``(\w+)``:\s*\(N((?:,\s*\d+)*)\)\s*(\w+)?", doc):
            dims = tuple(int(d) for d in re.findall(r"\d+", m.group(2)))
            found[m.group(1)] = (dims, m.group(3) or "float32")
        if names and all(n in found for n in names):
            return [found[n] for n in names]
        return None

    def _declared_input(self):
        """``INPUT_SHAPE``/``INPUT_DTYPE``, or ``<NAME>_INPUT_SHAPE`` for a builder
        ``build_<name>`` (``DISCRIMINATOR_INPUT_SHAPE`` for ``build_discriminator``)."""
        prefix = ""
        builder = self.cur_builder or ""
        if builder.startswith("build_") and builder != "build_model":
            prefix = builder[len("build_"):].upper() + "_"
        if prefix and f"{prefix}INPUT_SHAPE" in self.globals.vars:
            return (self.globals.vars[f"{prefix}INPUT_SHAPE"],
                    self.globals.vars.get(f"{prefix}INPUT_DTYPE", "float32"))
        return self.globals.vars.get("INPUT_SHAPE"), self.globals.vars.get("INPUT_DTYPE", "float32")

    def _literal_data_shapes(self) -> list[tuple[tuple, str]]:
        """Shapes (without the batch axis) and dtypes of the arrays the program makes with a
        literal shape (``torch.randn(64, 3, 32, 32)``, ``torch.randint(0, VOCAB, (n, SEQ_LEN))``,
        ``rng.standard_normal((96, 1, 28, 28))``), in source order; module constants count as
        literals."""
        found = []

        def literal_int(node):
            if next(nodes_of(node, cst.Call), None) is not None:
                return None  # (never run the program's functions to size data)
            try:
                value = self._eval(node, self.globals)
            except Exception:  # noqa: BLE001  (anything not a module constant)
                return None
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        class Finder(cst.CSTVisitor):
            def visit_Call(inner, call: cst.Call) -> None:  # noqa: N805
                vision = torch_vision.data_shape(self, call)
                if vision is not None:
                    found.append(vision)
                spec = self._data_maker(call)
                if spec is None:
                    return
                where, integer = spec
                positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
                size = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "size"), None)
                if size is not None:
                    dims = [size]
                elif where == "varargs":
                    dims = positional
                elif where == "last_tuple":
                    dims = [a for a in positional if isinstance(a, (cst.Tuple, cst.List))][-1:]
                else:
                    dims = positional[where:where + 1]
                if len(dims) == 1 and isinstance(dims[0], (cst.Tuple, cst.List)):
                    dims = [e.value for e in dims[0].elements]
                values = [literal_int(d) for d in dims]
                if len(values) >= 2 and all(v is not None for v in values):
                    found.append((tuple(values[1:]), "int64" if integer else "float32"))

        self.module.visit(Finder())
        return found

    def _data_maker(self, call: cst.Call):
        """``(where the shape is, integer data)`` for a call that makes random or constant
        data (``_DATA_MAKERS``, or a generator method such as ``rng.standard_normal``)."""
        try:
            func = self._eval(call.func, self.globals)
        except Exception:  # noqa: BLE001
            func = None
        if isinstance(func, Ref):
            return _DATA_MAKERS.get(func.path)
        # a method of a generator made in a function (``rng = np.random.default_rng(0)``) or in
        # place (``np.random.RandomState(0).randn(...)``)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _GENERATOR_METHODS:
            made = call.func.value
            try:
                if isinstance(made, cst.Call):  # only the generator's constructor is looked at
                    maker = self._eval(made.func, self.globals)
                    receiver = None if isinstance(maker, Ref) and maker.path.startswith("numpy.random.") else maker
                elif next(nodes_of(made, cst.Call), None) is not None:
                    return None
                else:
                    receiver = self._eval(made, self.globals)
            except Exception:  # noqa: BLE001  (a local name: a generator made in a function)
                receiver = None
            if receiver is None or isinstance(receiver, Unknown):
                return _GENERATOR_METHODS[call.func.attr.value]
        return None

    def _pick_data_shape(self, mod: Mod) -> list[tuple[tuple, str]]:
        """The literal-shaped data most likely fed to ``mod``: the first whose shape the first
        layer of the model accepts (its channels or features, integers for an Embedding),
        else the first of all."""
        found = self._literal_data_shapes()
        first = next((m.layer for _, m in _walk(mod) if m.kind == "leaf"), None)

        def accepts(shape, dtype):
            op = (first.op or "") if first is not None else ""
            if op == "embedding":
                return dtype.startswith("int")
            if dtype.startswith("int"):
                return False
            rank = next((int(c) for c in op if c.isdigit()), None) if "conv" in op else None
            if rank is not None:
                return len(shape) == rank + 1 and shape[0] in (first.in_features, None)
            return None not in shape and (first is None or first.in_features is None or shape[-1] == first.in_features)

        picked = [s for s in found if accepts(*s)][:1] or [s for s in found if None not in s[0]][:1]
        if picked and picked[0][0][0] is None:  # (DatasetFolder: the channels its loader gives: the layer's)
            picked = [((first.in_features, *picked[0][0][1:]), picked[0][1])]
        return picked

    def _build_model(self, name: str, mod: Mod, builder, args, var) -> None:
        graph = Graph(name=mod.cls.node.name.value if mod.kind == "user" else name)
        self.graph = graph
        self.cur_builder = builder
        self.layer_tokens = {}
        self.linear_names: dict[str, str] = {}
        # a container model is "called" at its constructor: that line's comments are its own
        self.root_span = mod.span if mod.kind != "user" else None
        self.names = {}
        _assign_paths(mod, "")
        self._reserve_names(mod)
        if mod.kind == "user":
            forward = mod.cls.method("forward")
            if forward is None:
                raise self._err(mod.cls.node, f"{mod.cls.node.name.value} has no forward method")
            params = [p.name.value for p in forward.params.params[1:] if p.default is None]
            specs = self._input_specs(forward, self._span(forward), mod.cls, mod)
        else:
            forward = None
            params = ["x"]
            specs = self._input_specs_for_container(mod)
        self.root_mod, self.method_calls, self.part_inputs = mod, {}, {}
        inputs = []
        for pname, (shape, dtype) in zip(params, specs):
            full = (None, *shape)
            layout = CHANNELS_FIRST.get(len(full), "NC"[:len(full)] if len(full) <= 2 else None)
            if dtype.startswith("int"):
                layout = "NC"[:len(full)] if len(full) <= 2 else None
            v = graph.new_value("input", shape=full, dtype=dtype, layout=layout)
            v.var = pname
            graph.inputs.append(v)
            inputs.append(Tensor(v))
        lazy = self.program.from_torch.lazy_inputs.get(graph.name)
        try:
            out = self._call_module(mod, inputs, {}, mod.span)
        except TypeError as exc:  # (a size of an unknown axis used where a number is needed)
            if lazy is None:  # (the batch size as a number, ``x.size(0) * x.size(1)``: never a crash)
                raise Unsupported(f"its forward computes with a value not known statically ({exc})") from None
            raise Unsupported(f"its forward needs a size this file does not fix ({exc}); the input shape "
                              f"{lazy[0]} {lazy[1]} leaves it unknown: give the input shape as "
                              "INPUT_SHAPE") from None
        outs = out if isinstance(out, (tuple, list)) else [out]
        if mod.kind == "user" and builder is None and args:
            outs = self._none_outputs(graph, mod, forward, outs)
        if not all(isinstance(o, Tensor) for o in outs):
            raise FrontendError(f"{graph.name}: forward must return tensors{_not_tensors(outs, forward)}", mod.span)
        graph.outputs = [o.value for o in outs]
        self._finish_graph(graph, mod)
        self._attach_comments(graph)
        graph.lint()
        md = ModelDef(graph, graph.name, builder=builder, builder_args=args, var=var)
        if builder in self.layer_models:
            md.construct_statement = self.source_file.sid(self.layer_models[builder])
        for method, values in list(self.method_calls.items()):
            try:
                md.methods[method] = self._method_model(mod, method, values)
            except (Unsupported, FrontendError):
                pass  # the program's calls of it stay untranslated (a stub where they are)
        if mod.kind == "user" and builder is None and args:  # (built for named constructor sizes)
            graph.from_torch.repeated_blocks = repeated_blocks.repeated_blocks(mod, args)
            try:
                lazy_inputs.check_required(mod.cls, args, self.program)
            except Unsupported as exc:  # (the class is a stub: its other methods are in it, no stubs of their own)
                raise FrontendError(str(exc), self._span(mod.cls.node)) from None
        self._report_unread_methods(mod, md)
        self.program.models.append(md)
        if lazy is not None:  # (translated without a known input shape: an assumption, reported)
            described, why = lazy
            if mod.kind == "user" and builder is None:  # a Keras subclass building on its first call
                graph.from_torch.lazy_class = described
                graph.from_torch.child_blocks = lazy_inputs.child_blocks(mod)
            self.program.warn(self._span(mod.cls.node) if mod.kind == "user" else mod.span,
                              f"{graph.name}: no input shape in this file; translated for inputs "
                              f"{described} as {why}, the sizes named by letters unknown (the Keras "
                              "model takes any)")

    def _none_outputs(self, graph, mod, forward, outs: list) -> list:
        """``return logits, loss`` with ``loss = None`` unless targets are given, of a class
        printed for its constructor's sizes: the Keras class returns the same None
        (``graph.from_torch.none_outputs``, printers/keras/subclass.py), with a warning that what
        forward computes from the optional arguments is not translated. The tensor outputs."""
        nones = [i for i, o in enumerate(outs) if o is None]
        if not nones or len(nones) == len(outs):
            return outs
        graph.from_torch.none_outputs = (len(outs), nones)
        optional = [p.name.value for p in (forward.params.params[1:] if forward else ()) if p.default is not None]
        if optional:
            self.program.warn(mod.span, f"{graph.name}: forward returns None as output "
                              f"{', '.join(str(i + 1) for i in nones)} for {', '.join(optional)} at "
                              "the default; the Keras class is translated for that call only (it takes "
                              f"no {', '.join(optional)}: what forward computes from them is not translated)")
        return [o for o in outs if o is not None]

    def _report_unread_methods(self, mod: Mod, md: ModelDef) -> None:
        """Methods of the model's classes that building it never ran (a ``train_step``, a
        ``metrics`` property) are not part of the Keras model: each is a stub (the printer
        writes a function that raises, named after the model and the method)."""
        unread, seen, resets, later = [], set(), [], []
        own = self._own_step(mod, md)
        for _, m in _walk(mod):
            if m.kind != "user" or m.cls.node in seen:
                continue
            seen.add(m.cls.node)
            init_only = _init_code_methods(m.cls.node)
            for stmt in m.cls.node.body.body:
                if not isinstance(stmt, cst.FunctionDef) or stmt in self.ran_methods:
                    continue
                name = stmt.name.value
                if name in init_only:
                    continue  # the weight initialisation ``__init__`` runs (reported with it)
                if m is mod and name in own:
                    continue  # the Keras model's own method (torch_own_step)
                if (m is mod and name in md.methods) or (name.startswith("__") and name.endswith("__")) \
                        or name == "extra_repr":  # (print(model)'s text: Keras' summary() has its own)
                    continue
                span = self._span(stmt)
                params = ", ".join(["model"] + [_code(p).rstrip(", ") for p in stmt.params.params[1:]])
                paths = reset_methods.reset_paths(stmt, m.cls.node, mod)
                if paths is not None:  # (re-initialises layers only: a function over the Keras model)
                    resets.append((name, params, span, paths))
                    continue
                message = (f"{m.cls_name}.{name} is not part of the Keras model (forward does not call it): "
                           "not translated")
                failed = md.graph.from_torch.own_step_failed
                if m is mod and failed and name in ("train_step", "test_step", "metrics"):
                    message = f"{m.cls_name}.{name}: the model's own training step is not translated ({failed})"
                elif m is mod and method_functions.plain_method(stmt) and \
                        name not in ("train_step", "test_step", "metrics"):
                    # (the model's own method over its outputs, ``GPT.generate``: read by the
                    # program reader as a function of the model, frontend_ast/torch/method_functions)
                    later.append((name, params, span, message, stmt))
                    continue
                self.program.stub(span, message, f"def {name}{_code(stmt.params).join('()')}")
                unread.append((name, params, span, message))
        md.graph.from_torch.unread_methods, md.graph.from_torch.reset_methods = unread, resets
        md.graph.from_torch.method_functions = later

    def _own_step(self, mod: Mod, md: ModelDef) -> set[str]:
        """The model's own ``train_step``/``test_step``/``metrics`` in Keras
        (``graph.from_torch.own_step``, torch_own_step): the names of the methods translated;
        when they cannot be, the reason is kept (``own_step_failed``) and each stays a stub."""
        from transpiler.frontend_ast.torch import helpers as torch_helpers
        from transpiler.frontend_ast.torch import own_step as torch_own_step

        if mod.kind != "user" or mod.cls.method("train_step") is None:
            return set()
        aliases = {k: v.path for k, v in self.globals.vars.items() if isinstance(v, Ref)}
        children = {key for key, _ in mod.children()}
        try:
            parts, composed = self._parts(mod)
            step = torch_own_step.read_own_step(mod.cls.node, torch_helpers.analyse(self.module), aliases,
                                                children - set(parts), parts=set(parts))
        except (Unsupported, FrontendError) as exc:
            md.graph.from_torch.own_step_failed = str(exc)
            return set()
        md.graph.from_torch.own_step = step
        if composed is not None:
            md.graph.from_torch.composed = composed
        return set(step.names)

    def _parts(self, mod: Mod) -> tuple[list[str], dict | None]:
        """The submodules the model's own steps call, when ``forward`` is a composition of
        them (torch_parts): their names, and ``{"parts": [(attr, graph)], "call": text}``."""
        from transpiler.frontend_ast.torch import parts as torch_parts

        kids = dict(mod.children())
        user = {k for k, m in kids.items() if m.kind == "user"}
        called = set()
        for name in ("train_step", "test_step"):
            fn = mod.cls.method(name)
            if fn is not None:
                called |= {c.func.attr.value for c in nodes_of(fn, cst.Call) if isinstance(c.func, cst.Attribute) and
                           isinstance(c.func.value, cst.Name) and c.func.value.value == "self" and
                           c.func.attr.value in user}
        if not called:
            return [], None
        order = torch_parts.composition(mod.cls.method("forward"), user)
        if order is None or not called <= set(order):
            return [], None
        classes = [kids[a].cls_name for a in order]
        if len(set(classes)) != len(classes):
            raise Unsupported("two submodules of one class called by the model's own step")
        graphs = [(attr, self._part_model(mod, attr, kids[attr])) for attr in order]
        return order, {"parts": graphs, "call": torch_parts.call_text(mod.cls.method("forward"), set(order))}

    def _part_model(self, root: Mod, attr: str, child: Mod) -> Graph:
        """The submodule ``attr`` as a model of its own (its layers named within it), on the
        inputs the model's forward first gave it."""
        values = self.part_inputs.get(child)
        if not values:
            raise Unsupported(f"self.{attr}: forward never called it on tensors")
        fn = child.cls.method("forward")
        names = [p.name.value for p in fn.params.params[1:]]
        saved = (self.graph, self.names, self.layer_tokens)
        graph = Graph(name=child.cls_name)
        self.graph, self.names, self.layer_tokens = graph, {}, {}
        _assign_paths(child, "")
        try:
            self._reserve_names(child)
            out = self._call_module(child, _graph_inputs(graph, names, values), {}, child.span)
            outs = out if isinstance(out, (tuple, list)) else [out]
            if not all(isinstance(o, Tensor) for o in outs):
                raise Unsupported(f"self.{attr} does not return tensors")
            graph.outputs = [o.value for o in outs]
            self._finish_graph(graph, child)
            self._attach_comments(graph)
            graph.lint()
        finally:
            _assign_paths(root, "")
            self.graph, self.names, self.layer_tokens = saved
        return graph

    def _finish_graph(self, graph: Graph, mod: Mod) -> None:
        _merge_bidirectional_halves(graph)
        _simplify_rnns(graph)
        _prune(graph)
        _relabel_sequences(graph)
        for node in graph.nodes:
            if len(node.inputs) > 1 and any(v.shape and v.shape[0] is not None for v in node.inputs) and \
                    any(is_channels_first(v.layout) and len(v.shape) >= 3 for v in node.inputs):
                raise FrontendError(f"{node.op}: a module's own parameter (no batch axis) broadcast against a "
                                    "channels-first feature map: its axes would need permuting for channels-last "
                                    "(not translated yet)", node.span)
        graph.from_torch.torch_children = [key for key, _ in mod.children()]  # model.named_children()
        graph.origin.input_shapes = [tuple(v.shape) for v in graph.inputs]

    def _method_model(self, mod: Mod, method: str, values: list[Value]) -> ModelDef:
        """``self.encode(x)`` in forward: the method as a model of its own, on inputs shaped
        like the ones forward gave it; its layers are the model's (same names)."""
        fn = mod.cls.method(method)
        names = [p.name.value for p in fn.params.params[1:]]
        if len(names) < len(values):
            raise Unsupported(f"{method}: called with more arguments than it takes")
        graph = Graph(name=method)
        self.graph, self.names, self.layer_tokens = graph, {}, {}
        self._reserve_names(mod)
        out = self._run_method(mod, fn, _graph_inputs(graph, names, values), {}, fn)
        outs = out if isinstance(out, (tuple, list)) else [out]
        if not all(isinstance(o, Tensor) for o in outs):
            raise Unsupported(f"{method} does not return tensors")
        graph.outputs = [o.value for o in outs]
        self._finish_graph(graph, mod)
        graph.lint()
        return ModelDef(graph, f"{mod.cls_name}.{method}")

    def _input_specs_for_container(self, mod: Mod):
        shape, dtype = self._declared_input()
        dtype = str(dtype)
        if isinstance(shape, (tuple, list)) and all(isinstance(s, int) for s in shape):
            return [(tuple(shape), dtype)]
        data = self._pick_data_shape(mod)
        first = next((m for _, m in _walk(mod) if m.kind == "leaf"), None)
        dense = first is not None and first.layer.op == "dense" and first.layer.in_features
        if data and not (dense and data[0][0][-1] != first.layer.in_features):
            return data
        # (data a first Linear cannot take is reshaped before the model: images.reshape(-1, 28 * 28))
        if dense:
            return [((first.layer.in_features,), "float32")]
        raise FrontendError("cannot tell the model's input shape: add a module-level INPUT_SHAPE = (...)",
                            mod.span)

    def _reserve_names(self, mod: Mod) -> None:
        for path, m in _walk(mod):
            if m.kind == "leaf":
                self.names.setdefault(self._layer_name(m), 0)
        for key, _ in _walk_params(mod):
            self.names.setdefault(key.replace(".", "_"), 0)

    def _layer_name(self, m: Mod) -> str:
        path = m.path or ""
        name = path.replace(".", "_")
        if not name or name[0].isdigit():
            name = f"{m.cls_name.lower()}_{name}" if name else m.cls_name.lower()
        return name

    def _fresh(self, hint: str) -> str:
        n = self.names.get(hint)
        if n is None:
            self.names[hint] = 1
            return hint
        while f"{hint}_{n}" in self.names:
            n += 1
        self.names[hint] = n + 1
        self.names[f"{hint}_{n}"] = 1
        return f"{hint}_{n}"

    # -- comments and leftovers ---------------------------------------------------------
    def _attach_comments(self, graph: Graph) -> None:
        """A comment on the ``nn.X(...)`` line in ``__init__`` (or just above it) goes with
        that layer; a comment on a ``forward`` line with the last node that line made (the
        value the line computes)."""
        used: set[int] = set()

        def lines_at(span: Span) -> list[int]:
            out = [span.line]
            ln = span.line - 1
            while ln in self.comments and self.comments[ln][1]:
                out.append(ln)
                ln -= 1
            return sorted(out)

        def attach(node: Node, span: Span) -> None:
            for ln in lines_at(span):
                if ln in self.comments and ln not in used:
                    used.add(ln)
                    node.comments.append(self.comments[ln][0])

        if self.root_span is not None:
            for ln in lines_at(self.root_span):
                if ln in self.comments and ln not in used:
                    used.add(ln)
                    graph.from_torch.comments.append(self.comments[ln][0])
        for node in graph.nodes:
            token = node.layer
            if token is not None:
                attach(node, token.span)
        last: dict[int, Node] = {}
        for node in graph.nodes:
            if node.span is not None and node.span != self.root_span:
                last[node.span.line] = node
        for line in sorted(last):
            attach(last[line], last[line].span)
        for node in graph.nodes:  # lines whose nodes a rewrite folded into this one
            for span in node.from_torch.absorbed_spans:
                attach(node, span)

    def _report_unsupported_statements(self) -> None:
        """The program around the models (data, optimizer, loss, the training loop, saving)
        is read into the training configuration (``torch_training``); what it cannot
        translate is a stub with its line."""
        from transpiler.frontend_ast.torch.training import read_training

        consumed = {md.builder for md in self.program.models if md.builder} | self.stubbed_builders
        skip = set()
        for stmt in self.module.body:
            if isinstance(stmt, cst.ClassDef) and self.classes.get(stmt.name.value) and \
                    self.classes[stmt.name.value].is_module:
                skip.add(self.source_file.sid(stmt))
            elif isinstance(stmt, cst.FunctionDef) and stmt.name.value in consumed:
                skip.add(self.source_file.sid(stmt))
            elif isinstance(stmt, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                skip.add(self.source_file.sid(stmt))
        self.program.from_torch.training_facts = read_training(self, skip)


# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------
def class_builders(frontend: "TorchFrontend") -> dict[str, str]:
    """Model classes whose builder is ``def build_model(): return Net()``: ``Net()`` in the
    program builds the same model (class name → builder name)."""
    out: dict[str, str] = {}
    for md in frontend.program.models:
        ref = frontend.functions.get(md.builder) if md.builder else None
        if ref is None or ref.node.params.params or ref.node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
            continue
        body = [s for s in ref.node.body.body if not (isinstance(s, cst.SimpleStatementLine) and
                                                       isinstance(s.body[0], cst.Expr))]  # (a docstring)
        if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and \
                isinstance(body[0].body[0], cst.Return) and isinstance(body[0].body[0].value, cst.Call):
            call = body[0].body[0].value
            if isinstance(call.func, cst.Name) and call.func.value == md.class_name and not call.args:
                out.setdefault(md.class_name, md.builder)
    return out


def read_torch(source: str, path: str = "<string>") -> Program:
    """Parse a PyTorch script into a Program."""
    return run_torch_frontend(source, path).program


def run_torch_frontend(source: str, path: str = "<string>", prepare=None) -> TorchFrontend:
    """The frontend that read ``source``: a sibling file none of whose imported classes the
    script builds (or tries to build) as a model, and none of whose functions it hands a model,
    keeps its import (the script is read again without it)."""
    frontend = TorchFrontend(source, path)
    frontend.run(prepare)
    built = {md.class_name for md in frontend.program.models} | \
        {m["name"] for m in frontend.program.from_torch.stubbed_models}  # (stubbed there: reported there)
    unbuilt = frozenset(s.path for s in frontend.siblings if not (s.names & built) and not s.functions)
    if unbuilt:
        frontend = TorchFrontend(source, path, unbuilt)
        frontend.run(prepare)
    return frontend


def _torch_layer_model(fe, assign: cst.Assign) -> bool:
    """``model = nn.Linear(...)`` / ``nn.Sequential(...)`` / ``torchvision.models.resnet18()`` at
    module level, the model being an ``nn`` layer or container or a torchvision network itself
    (whose first use a training loop or a call shows)."""
    if not (isinstance(assign.value, cst.Call) and len(assign.targets) == 1 and
            isinstance(assign.targets[0].target, cst.Name)):
        return False
    try:
        func = fe._eval(assign.value.func, fe.globals)
    except Exception:  # noqa: BLE001 - not a static reference
        return False
    from transpiler.frontend_ast.torch import zoo

    if not (isinstance(func, Ref) and (func.path.startswith("torch.nn.") and func.path.count(".") == 2
                                       or zoo.is_constructor(func.path))):
        return False
    try:
        mod = fe._eval(assign.value, fe.globals)
    except Exception:  # noqa: BLE001 - built from run-time values: not read here
        return False
    return isinstance(mod, Mod) and not (mod.kind == "leaf" and mod.layer is None) and \
        _mentions_model_use(fe.module, assign.targets[0].target.value)


def _mentions_model_use(module: cst.Module, var: str) -> bool:
    """Does the program train or call ``var`` (``var.parameters()``, ``var(x)``)?"""
    text = module.code
    return f"{var}.parameters()" in text or f"{var}(" in text


def _not_tensors(outs, forward) -> str:
    """What of forward's result is no tensor: ``(logits, None)`` when ``targets=None`` (a loss
    computed in forward only when given targets), traced for the defaults of its optional
    arguments."""
    bad = [f"output {i + 1} is {'None' if o is None else type(o).__name__}" for i, o in enumerate(outs)
           if not isinstance(o, Tensor)]
    optional = [f"{p.name.value}={_code(p.default)}" for p in (forward.params.params[1:] if forward else ())
                if p.default is not None]
    traced = f", traced for {', '.join(optional)}" if optional else ""
    return f" ({'; '.join(bad)}{traced}; a Keras model's outputs are tensors)" if bad else ""

