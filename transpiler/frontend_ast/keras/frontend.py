"""Keras source → ir.Program, by abstract interpretation of the user's code.

libcst parses the file (comments survive); the shared interpreter (frontend_ast/interp/, with
this reader's hooks in keras_expressions.py) walks the builder functions with their default arguments, evaluating Python-object arguments itself
(tuples, arithmetic, ``widths[0]``, ``config["hidden"]``, ``2 if downsample else 1``,
loops with static trip counts, helper functions that take and return tensors) and
asking astroid for module-level values it cannot see directly. Keras calls become IR
nodes; everything else is recorded as untouched Python.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import libcst as cst

from transpiler import cst_fast
from transpiler.frontend_ast.statement_lines import read_split
from transpiler.frontend_ast.keras import data_utils
from transpiler.frontend_ast.keras import calls as keras_calls
from transpiler.frontend_ast.keras import layers as keras_layers
from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops
from transpiler.frontend_ast.keras import training as keras_training
from transpiler.frontend_ast.interp import (
    ArgumentError, Break, ClassRef, Continue, Env, FunctionRef, Return, Unknown, code_of)
from transpiler.frontend_ast.keras.expressions import KerasExpressions
from transpiler.frontend_ast.keras.lazy import KerasLazyModels
from transpiler.frontend_ast.keras.lazy_inputs import KerasLazyInputs
from transpiler.ir.identity import IdentityMap
from transpiler.frontend_ast.keras.layers import BoundArgs, LayerSpec, Unsupported
from transpiler.frontend_ast.keras.builder_sites import KerasBuilderSites
from transpiler.frontend_ast.keras.names import KerasNames
from transpiler.frontend_ast.keras.graph_names import KerasGraphNames
from transpiler.frontend_ast.keras.recovery import KerasRecovery
from transpiler.frontend_ast.keras.shared_models import KerasSharedModels
from transpiler.frontend_ast.keras.dot_layer import KerasDotLayers
from transpiler.frontend_ast.keras.runtime_sizes import KerasRuntimeSizes
from transpiler.frontend_ast.keras.constants_class import KerasConstantClasses
from transpiler.frontend_ast.keras.statements import KerasStatements
from transpiler.frontend_ast.keras.user_classes import KerasSubclasses
from transpiler.frontend_ast.keras.wrappers import KerasWrappers
from transpiler.frontend_ast.keras.support import (
    _not_static, _names_in, _custom_step, _called_names, _dims, _user_classes_in, _local_names,
    what_it_is, _camel, _syntax_error, _static_name, _has_tensor)
from transpiler.frontend_ast.keras.training_facts import KerasTrainingFacts
from transpiler.frontend_ast.keras.values import (  # (ArrayVal, FrontendError, collect_comments: re-exported)
    FrontendError, _regularizer, _regularizer_factors, ArrayVal, LambdaVal, DotLayerObj, LambdaLayerObj,
    LayerObj, TensorVal, ModelObj, ModelHandle, ModuleRef, UserObj, is_keras_binding, collect_comments)
from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph, IRError, Node, Span, Value
from transpiler.ir.layout import default_layout
from transpiler.ir.modules import ModuleScope
from transpiler.ir.naming import keras_auto_name
from transpiler.ir.shapes import infer_node, spatial_axes
from transpiler.ir.source_file import SourceFile
from transpiler.ir.program import ModelDef, Program
from transpiler.ir import sizes
from transpiler.frontend_ast.size_names import SIZE_ARGUMENTS, name_module_constants, runtime_leaks, \
    runtime_sizes_of, runtime_sizes_of_node


class KerasFrontend(KerasLazyInputs, KerasGraphNames, KerasRecovery, KerasSharedModels, KerasDotLayers, KerasRuntimeSizes, KerasConstantClasses, KerasBuilderSites, KerasNames,
                    KerasStatements, KerasWrappers, KerasSubclasses, KerasLazyModels, KerasTrainingFacts, KerasExpressions):
    """Reads one Keras source file into an ir.Program."""

    MAX_LOOP = 10_000
    #: longer loops that build no layers are read once, abstractly
    DATA_LOOP = 64

    def __init__(self, source: str, path: str = "<string>", runtime_sizes: bool = True):
        self.path = path
        #: a size the program computes when it runs becomes a constructor argument (else: refused)
        self.runtime_sizes = runtime_sizes
        self.source = source
        self.lines = source.splitlines()
        try:
            module = cst_fast.parse(source)
        except cst.ParserSyntaxError as exc:
            raise _syntax_error(source, path, exc) from None
        self.wrapper, self.positions = read_split(module)  # (``a; b``: two statements, statement_lines.py)
        self.module = self.wrapper.module
        self.source_file = SourceFile(path, source, self.module, self.positions)  # (what printers read)
        self.program = Program(path=path, source=source, framework="keras")
        self.scratch = Graph("scratch")
        self.globals = Env()
        self.uids: dict[str, int] = {}
        self.scope_stack: list[str] = []
        self.scope_counts: dict[str, int] = {}
        self.stmt_stack: list[int] = []
        self.keras_statements: set[int] = set()
        self.builder_calls: set[int] = set()
        self.models: list[tuple[ModelObj, str | None, str | None, dict]] = []
        self.comments = collect_comments(source)
        self._astroid_module = None
        self.function_defs: dict[str, cst.FunctionDef] = {}
        self.untranslated: list[tuple[Span, str]] = []
        self.training_models: IdentityMap[Any] = IdentityMap()
        self.value_stmts: IdentityMap[Any] = IdentityMap()
        self._stmt_nodes: list = []
        self.model_defs: IdentityMap[ModelDef] = IdentityMap()
        self.inlined_helpers: set[str] = set()
        # the statements that called the helper functions being interpreted (``outputs =
        # block(inputs)``): they only built the model when the layers made inside are its nodes
        self.helper_call_stmts: list[int] = []
        #: per helper call being read (as helper_call_stmts): whether a model tensor is among its arguments
        self.helper_tensor_args: list[bool] = []
        self.visited_functions: set[str] = set()
        #: the functions a translated builder called (read there with its arguments, not alone)
        self.builder_reached: set[str] = set()
        self.failed_builders: set[str] = set()  # reported once, not again from main()
        self.call_sites: list[Span] = []  # helper calls below the model-building function
        self.module_uids: dict[str, int] = {}
        self.builder_uids: dict[str, dict[str, int]] = {}
        self.self_stack: list[UserObj] = []  # the instance whose method runs
        self.method_stack: list[str] = []  # (and that method's name)
        self.user_classes: dict[str, ClassRef] = {}
        self.module_stack: list[tuple[ModuleScope, int]] = []  # the module scopes a call runs in
        self.seq = 0  # construction order of layers and user objects
        self.probing = False  # reading a builder function (run(): each one in turn)
        #: module-level statements bound before the builders are read: what they recorded
        self.module_layer_stmts: dict[int, tuple] = {}
        self.module_layers: dict[int, tuple] = {}  # those binding layers: (names, layers)

    # -- entry point --------------------------------------------------------------
    def run(self) -> Program:
        """Interpret the module and every builder function; return the Program."""
        self.globals.set("__name__", "__transpiler__")
        self._definitions_pass()
        name_module_constants(self.module, self.globals)  # sizes with provenance
        self.module_uids = dict(self.uids)
        module_layer_uids = self._bind_module_layers()
        builders: dict[str, FunctionRef] = {}
        self.builders = builders
        for stmt in self.module.body:
            site = None  # a builder with required parameters: read with its call's arguments
            if isinstance(stmt, cst.FunctionDef) and self._read_at_call_site(stmt):  # (builder_sites.py)
                site = self._call_site_arguments(stmt.name.value)
            if isinstance(stmt, cst.FunctionDef) and (self._all_defaults(stmt) or site is not None):
                fn = self.globals.vars.get(stmt.name.value)
                if not isinstance(fn, FunctionRef):
                    continue
                mark, tmark, seen = len(self.models), len(self.program.training), set(self.visited_functions)
                self.probing = True
                # Keras names layers from per-session counters: a builder called after
                # keras.backend.clear_session() starts them afresh (after the module-level
                # layers importing the script made).
                self.uids = dict(module_layer_uids)
                try:
                    result, args = self._call_function(fn, *(site or ([], {})), builder_probe=True)
                except (Unsupported, FrontendError) as exc:
                    del self.models[mark:]
                    del self.program.training[tmark:]
                    if site is not None and sizes.carries_runtime([*site[0], *site[1].values()]):
                        continue  # (a run-time argument that is not a size, a model: read at its call)
                    self.failed_builders.add(stmt.name.value)
                    if self._constructs_layers(stmt) or _called_names(stmt) & set(self.user_classes):
                        span = getattr(exc, "span", None) or self._span(stmt)
                        if self._constructs_models(stmt):
                            self.program.model_stub(span, stmt.name.value, f"{stmt.name.value}: {exc}",
                                                    self._line(span))
                        else:
                            self.program.stub(span, f"{stmt.name.value}: {exc}", self._line(span))
                        self.program.from_keras.failures[stmt.name.value] = span
                    continue
                finally:
                    self.probing = False
                del self.models[mark:]
                if isinstance(result, ModelObj) and result.user is not None and result.graph is None \
                        and not self._unbuilt_subclass(result, stmt):  # (built from its first use, or reported)
                    result = None
                if isinstance(result, ModelObj) and result.from_builder:
                    result = None  # ``return build_mlp(64)``: that builder's model, not a new one
                if not isinstance(result, ModelObj):
                    del self.program.training[tmark:]  # probed, not a builder: read again later
                else:
                    for statement in self.program.training[tmark:]:
                        statement.builder = stmt.name.value  # e.g. compile() inside the builder
                if isinstance(result, ModelObj):
                    self.builder_reached |= self.visited_functions - seen - {stmt.name.value}  # (its helpers)
                    self.builder_uids[stmt.name.value] = {
                        k: n - module_layer_uids.get(k, 0) for k, n in self.uids.items()}
                    builders[stmt.name.value] = fn
                    self._register_model(result, builder=stmt.name.value, var=None, args=self._structural_args(stmt, args))
        self._interpret_rest(builders)
        self._finish_models()
        self._shared_model_warnings()
        self._builder_layer_statements()
        unbuilt = [st for st in self.program.training if self._unbuilt_model_of(st) is not None]
        for statement in unbuilt:  # a model never built: nothing to train
            unbuilt_model = self._unbuilt_model_of(statement)
            name = unbuilt_model.user.cls.node.name.value if unbuilt_model.user else unbuilt_model.var or "Sequential"
            self.program.stub(statement.span, f"model.{statement.kind}(): {name} is never built with a "
                                              "static input shape, so it was not translated",
                              self._line(statement.span))
        self.program.training = [st for st in self.program.training if st not in unbuilt]
        for statement in self.program.training:
            statement.model_def = self._model_def_of(self.training_models.get(statement))
        self._finish_wrappers()  # (wrappers.py: the models each wrapper holds)
        self.program.from_keras.keras_names = sorted(
            name for name, value in self.globals.vars.items()
            if is_keras_binding(value) or type(value) is LayerObj)  # (a layer: its statement goes with its model)
        self.program.from_keras.untranslated = list(self.untranslated)
        self.program.from_keras.inlined_helpers = sorted(self.inlined_helpers - set(builders))
        return self.program

    def _definitions_pass(self) -> None:
        """Bind what the script defines (imports, functions, classes, constants) without
        running it: statements that build models or call the script's own functions wait
        for the second pass, once the builders are known."""
        functions = {stmt.name.value for stmt in self.module.body if isinstance(stmt, cst.FunctionDef)}
        for stmt in self.module.body:
            if isinstance(stmt, cst.If):
                continue
            if isinstance(stmt, cst.SimpleStatementLine) and not isinstance(stmt.body[0], (cst.Import, cst.ImportFrom)):
                calls = _called_names(stmt)
                keras_bound = {n for n in calls if is_keras_binding(self.globals.vars.get(n))}
                if calls & functions or calls & set(self.user_classes) or keras_bound or self._uses_keras(stmt):
                    continue
            if not isinstance(stmt, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef)):
                continue
            try:
                self._exec_stmt(stmt, self.globals, top=True)
            except (Unsupported, FrontendError, Return, Break, Continue):
                pass

    def _bind_module_layers(self) -> dict[str, int]:
        """Bind the module-level layers and models a builder uses (``augment =
        keras.Sequential([...])`` above ``def build_model()``), as importing the script would
        before anything calls the builder; without them the builder cannot be read. The
        second pass keeps these objects (the builder's model holds them) and replays what
        their statements recorded at the statement's place (``self.module_layer_stmts``).

        Returns the auto-name counters they took.
        """
        functions = {s.name.value for s in self.module.body if isinstance(s, cst.FunctionDef)}
        used: set[str] = set()
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and self._all_defaults(stmt):
                used |= _names_in(stmt.body) | _names_in(stmt.params)  # (defaults: kernel_initializer=kernel_init)
        saved_uids, self.uids = self.uids, {}
        for stmt in self.module.body:
            if not (isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign)):
                continue
            targets = {t.target.value for t in stmt.body[0].targets if isinstance(t.target, cst.Name)}
            calls = _called_names(stmt)
            if not targets & used or any(n in self.globals.vars for n in targets) \
                    or calls & functions or calls & set(self.user_classes):
                continue
            mark, tmark, dmark = len(self.models), len(self.program.training), len(self.program.diagnostics)
            uids = dict(self.uids)
            try:
                self._exec_stmt(stmt, self.globals, top=True)
            except (Unsupported, FrontendError, Return, Break, Continue):
                for name in targets:
                    self.globals.vars.pop(name, None)  # read again, and reported, in the second pass
                self.uids = uids
                ok = False
            else:
                ok = True
            recorded = (self.models[mark:], self.program.training[tmark:], self.program.diagnostics[dmark:],
                        {k: n - uids.get(k, 0) for k, n in self.uids.items()})
            del self.models[mark:]
            del self.program.training[tmark:]
            del self.program.diagnostics[dmark:]
            if ok:
                self.module_layer_stmts[id(stmt)] = recorded
                if all(isinstance(self.globals.vars.get(n), LayerObj) for n in targets):
                    self.module_layers[self.source_file.sid(stmt)] = (targets, [self.globals.vars[n] for n in targets])
        taken, self.uids = self.uids, saved_uids
        return taken

    def _builder_layer_statements(self) -> None:
        """The module-level layer statements the output leaves out: layers only translated
        builders hold (their modules do the work) and no other module-level code names."""
        held = {id(node.from_keras.layer) for md in self.program.models if md.builder
                for node in md.graph.nodes}
        named: set[str] = set()
        for stmt in self.module.body:
            if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and \
                    self.source_file.sid(stmt) not in self.module_layers:
                named |= _names_in(stmt)
        drop = {sid for sid, (names, objs) in self.module_layers.items()
                if all(id(o) in held for o in objs) and not names & named}
        if drop:
            self.program.from_keras.builder_layer_statements = drop

    def _replay_module_layer_stmt(self, stmt: cst.CSTNode) -> None:
        """What a statement run by ``_bind_module_layers`` recorded, at its place in the script."""
        models, training, diagnostics, uids = self.module_layer_stmts[id(stmt)]
        for entry in models:
            self._register_model(*entry)
        self.program.training.extend(training)
        for diag in diagnostics:
            self.program._add(diag)
        for k, n in uids.items():
            self.uids[k] = self.uids.get(k, 0) + n

    def _interpret_rest(self, builders: dict[str, FunctionRef]) -> None:
        """Interpret the ``__main__`` block, then non-builder functions it did not reach
        (``main()`` with required arguments), for models built inline.

        Each function runs once, in the order the script would run it, so inline models
        are found once and Keras' name counters continue from the module-level ones.
        A function or block that fails keeps none of its models: a half-built model
        would be a silent mistake, the stub says what to finish by hand.
        """
        self.uids = dict(self.module_uids)
        self.globals.set("__name__", "__main__")
        self.visited_functions = set()
        # the script, top to bottom, as `python script.py` would run it
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if id(stmt) in self.module_layer_stmts:
                self._replay_module_layer_stmt(stmt)
                continue
            mark = len(self.models)
            try:
                self._exec_stmt(stmt, self.globals)
            except (Unsupported, FrontendError) as exc:
                # a model this statement was still building (`model.add(...)`) is dropped too:
                # a half-built model would be a silent mistake
                touched = {id(v) for name, v in self.globals.vars.items()
                           if isinstance(v, ModelObj) and name in _names_in(stmt)}
                lost = self.models[mark:] + [e for e in self.models[:mark] if id(e[0]) in touched]
                del self.models[mark:]
                self.models = [entry for entry in self.models if id(entry[0]) not in touched]
                span = getattr(exc, "span", None) or self._span(stmt)
                self.program.stub(span, str(exc), self._line(span))
                self._missed_models(stmt, lost)
            except (Return, Break, Continue):
                pass
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value not in builders \
                    and stmt.name.value not in self.visited_functions and stmt.name.value not in self.failed_builders \
                    and stmt.name.value not in self.builder_reached:
                fn = self.globals.vars.get(stmt.name.value)
                if self._helper_of_failed(stmt.name.value):
                    continue  # (a factory the failed builders call: their stubs cover it)
                if isinstance(fn, FunctionRef) and self._constructs_models(stmt):
                    mark = len(self.models)
                    try:
                        self._call_function(fn, [Unknown()] * self._n_required(stmt), {},
                                            builder_probe=False)
                    except (Unsupported, FrontendError) as exc:
                        del self.models[mark:]
                        span = getattr(exc, "span", None) or self._span(stmt)
                        self.program.model_stub(span, stmt.name.value, f"{stmt.name.value}: {exc}",
                                                self._line(span))

    def _helper_of_failed(self, name: str) -> bool:
        """``name`` is called only by builders that failed (``create_mlp(...)(x)`` in them): not
        a model of the program on its own, never probed with unknown arguments."""
        callers = {s.name.value for s in self.module.body if isinstance(s, cst.FunctionDef)
                   and s.name.value != name and name in _called_names(s)}
        return bool(callers) and callers <= self.failed_builders

    # -- helpers for spans and source ---------------------------------------------
    def _span(self, node: cst.CSTNode) -> Span:
        try:
            pos = self.positions[node]
        except KeyError:
            return Span(self.path, 0, 0)
        return Span(self.path, pos.start.line, pos.start.column + 1, pos.end.line)

    def _line(self, span: Span | None) -> str:
        if span is None or not 1 <= span.line <= len(self.lines):
            return ""
        return self.lines[span.line - 1].strip()

    def _err(self, node: cst.CSTNode, message: str) -> FrontendError:
        return FrontendError(message, self._span(node))

    @staticmethod
    def _all_defaults(fn: cst.FunctionDef) -> bool:
        p = fn.params
        return all(param.default is not None for param in p.params) and not p.posonly_params \
            and all(param.default is not None for param in p.kwonly_params)

    @staticmethod
    def _n_required(fn: cst.FunctionDef) -> int:
        return sum(1 for p in fn.params.params if p.default is None)

    @staticmethod
    def _is_main_guard(stmt: cst.If) -> bool:
        return "__name__" in cst.Module([]).code_for_node(stmt.test) if isinstance(stmt, cst.If) else False

    def _code_of(self, node: cst.CSTNode) -> str:
        """``node``'s source text, generated once per node (loops ask again and again)."""
        cache = self.__dict__.setdefault("_code_cache", {})
        key = id(node)
        if key not in cache:
            cache[key] = (node, code_of(node))  # the node keeps its id alive
        return cache[key][1]

    def _constructs_layers(self, node: cst.CSTNode, env: Env | None = None) -> bool:
        """``node`` builds layers (its names resolved in ``env``, not its text: keras/names.py)."""
        return self._builds_layers(node, env)

    def _constructs_models(self, node: cst.CSTNode) -> bool:
        return self._makes_models(node)

    def _lambda_layer(self, args, kwargs, span: Span) -> LambdaLayerObj:
        """``layers.Lambda(function, output_shape=..., arguments={...}, name=...)``."""
        function = args[0] if args else kwargs.get("function")
        if not isinstance(function, (LambdaVal, FunctionRef)) or (isinstance(function, LambdaVal) and
                                                                  function.env is None):
            raise Unsupported("layers.Lambda of something other than a lambda or a function of the script")
        if kwargs.get("mask") is not None:
            raise Unsupported("layers.Lambda(mask=...) is not translated")
        arguments = kwargs.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise Unsupported("layers.Lambda(arguments=...) not known statically")
        self._mark_keras()
        return LambdaLayerObj(function, dict(arguments), span)

    def _call_lambda(self, layer: LambdaLayerObj, args, kwargs, span: Span):
        """The Lambda's function on its input: its ops go where the layer is called (a
        Lambda holds no weights, Keras saves nothing for it)."""
        if len(args) != 1 or set(kwargs) - {"training", "mask"} or kwargs.get("mask") is not None:
            raise Unsupported("a Lambda layer called with more than its input")
        fn = layer.function
        if isinstance(fn, FunctionRef):
            result, _ = self._call_function(fn, [args[0]], dict(layer.arguments), builder_probe=False)
            return result
        params = fn.node.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None or \
                params.kwonly_params or not params.params:
            raise Unsupported("a Lambda's lambda with *args, **kwargs or keyword-only parameters")
        env = Env(fn.env)
        extra = dict(layer.arguments)
        for i, param in enumerate(params.params):
            name = param.name.value
            if i == 0:
                value = args[0]
            elif name in extra:
                value = extra.pop(name)
            elif param.default is not None:
                value = self._eval(param.default, fn.env)
            else:
                raise Unsupported(f"a Lambda's lambda: no value for its parameter {name!r}")
            env.set(name, value)
        if extra:
            raise Unsupported(f"layers.Lambda(arguments=...): {', '.join(sorted(extra))} not a parameter")
        return self._eval(fn.node.body, env)

    def _call_function(self, fn: FunctionRef, args, kwargs, builder_probe: bool):
        """Interpret a user function with bound arguments; returns (result, bound args)."""
        env = Env(fn.env)
        try:
            env.vars.update(self._bind_arguments(fn.node, args, kwargs, fn.env))
        except ArgumentError as exc:
            what = f"missing argument {exc.name!r}" if exc.kind == "missing" else "too many arguments"
            raise self._err(fn.node, f"{fn.node.name.value}(): {what}") from None
        params = fn.node.params
        star = {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
        bound = {k: v for k, v in env.vars.items() if k not in star}
        if builder_probe:  # sizes with provenance: the builder's parameters by name
            for pname, value in bound.items():  # (a run-time size passed: remembered, issue 18)
                bound[pname] = sizes.named(value, pname, arg=value if sizes.carries_runtime(value) else None)
                env.set(pname, bound[pname])
        name = fn.node.name.value
        self.visited_functions.add(name)
        if not builder_probe and self.scope_stack:
            self.inlined_helpers.add(name)
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1
        self.scope_stack.append(name if builder_probe else f"{name}{self.scope_counts[name]}")
        self.__dict__.setdefault("param_stack", []).append(set(bound))  # (shared_models.py: given models)
        saved_stmts, saved_sites = self.stmt_stack, self.call_sites
        self.stmt_stack = [] if builder_probe else saved_stmts
        calling = not builder_probe and bool(saved_stmts) and saved_stmts[-1] is not None
        if calling:
            self.helper_call_stmts.append(saved_stmts[-1])
            self.helper_tensor_args.append(_has_tensor(list(bound.values())))
            if self.helper_tensor_args[-1]:  # (a helper building part of a model at module level: it goes
                self.inlined_helpers.add(name)  # with the model's statements unless the script calls it elsewhere)
        if builder_probe:
            self.call_sites = []
        try:
            self._exec_block(fn.node.body.body, env)
            result = None
        except Return as ret:
            result = ret.value
        finally:
            self.scope_stack.pop()
            self.param_stack.pop()
            self.stmt_stack, self.call_sites = saved_stmts, saved_sites
            if calling:
                self.helper_call_stmts.pop()
                self.helper_tensor_args.pop()
        return result, bound

    def _mark_keras(self) -> None:
        if self.stmt_stack:
            self.keras_statements.add(self.stmt_stack[-1])

    # -- layers -------------------------------------------------------------------
    def _construct_layer(self, cls_name: str, args, kwargs, span: Span) -> LayerObj:
        reg = keras_layers.lookup(cls_name)
        if reg is None:
            raise Unsupported(keras_layers.unsupported_reason(cls_name))
        names = reg.signature.names
        # run-time sizes (issue 18 item 1): ``Dense(num_classes)`` with num_classes from the data
        args = [self._runtime_size(a) if i < len(names) and names[i] in SIZE_ARGUMENTS else a for i, a in enumerate(args)]
        kwargs = {k: self._runtime_size(v) if k in SIZE_ARGUMENTS else v for k, v in kwargs.items()}
        positional = [(names[i] if i < len(names) else f"#{i + 1}", a) for i, a in enumerate(args)]
        unknown = [k for k, v in positional + list(kwargs.items())
                   if _not_static(v) and k not in keras_layers.INITIALIZER_KWARGS
                   and k not in keras_layers.TRAINING_KWARGS]
        if unknown:
            raise FrontendError(f"{cls_name}: argument(s) {', '.join(unknown)} cannot be decided statically "
                                f"(computed at run time)", span)
        explicit = kwargs.get("name")
        input_shape = kwargs.get("input_shape")
        if input_shape is None and kwargs.get("batch_input_shape") is not None:
            input_shape = tuple(kwargs["batch_input_shape"])[1:]
        if input_shape is None and kwargs.get("input_dim") is not None and cls_name != "Embedding":
            input_shape = (kwargs["input_dim"],)
        declared = set(reg.signature.names)
        layer_kwargs = {k: v for k, v in kwargs.items() if k in declared or (
            k not in keras_layers.COMMON_KWARGS and k not in keras_layers.INITIALIZER_KWARGS
            and k not in keras_layers.TRAINING_KWARGS)}
        bound = BoundArgs(cls_name, reg.signature, list(args), layer_kwargs)
        try:
            spec = reg.fn(bound)
            spec.attrs = ops_table.get(spec.op).complete_attrs(spec.attrs)
        except TypeError as exc:  # an argument of the wrong kind, e.g. Dense("8")
            raise FrontendError(f"{cls_name}: {exc}", span) from None
        extra = [k for k in bound.unused() if bound.values[k] != reg.signature.defaults.get(k)
                 and k not in keras_layers.INITIALIZER_KWARGS  # (recorded below)
                 and not (k in keras_layers.TRAINING_KWARGS and k in kwargs)]  # (read or reported below)
        if extra:
            raise Unsupported(f"{cls_name}: argument(s) {', '.join(extra)} not supported")
        for key in sorted(set(bound.values) & keras_layers.INITIALIZER_KWARGS - set(kwargs)):
            if bound.values[key] != reg.signature.defaults.get(key):  # given by position
                spec.initializers[key] = bound.values[key]
        for key in sorted(set(kwargs) & keras_layers.TRAINING_KWARGS):
            factors = _regularizer_factors(kwargs[key]) if key.endswith("_regularizer") and \
                key != "activity_regularizer" else None
            if factors is not None:
                spec.regularizers[key] = factors  # added to the training loss (torch printer)
            elif kwargs[key] is not None:
                self.program.warn(span, f"{cls_name}: {key} is not translated (affects training only)",
                                  self._line(span))
        for key in sorted(set(kwargs) & keras_layers.INITIALIZER_KWARGS):
            spec.initializers[key] = kwargs[key]
        spec.attrs = ops_table.get(spec.op).complete_attrs(spec.attrs)
        if spec.inner is not None:
            spec.attrs["layer"]["attrs"] = ops_table.get(spec.inner.op).complete_attrs(spec.inner.attrs)
        if explicit is None:
            keras_name = self._auto_name(reg.canonical_class)
        else:
            keras_name = explicit
        layer = LayerObj(spec=spec, cls_name=cls_name, keras_name=keras_name, span=span,
                         explicit_name=explicit, input_shape=tuple(input_shape) if input_shape else None,
                         scope=self._scope(), frozen=kwargs.get("trainable") is False)
        if layer.frozen and spec.op.startswith("batch_norm"):
            self.program.warn(span, keras_layers.FROZEN_BATCH_NORM.format(cls_name), self._line(span))
        layer.stmt = self.stmt_stack[-1] if self.stmt_stack else None
        layer.made_in = self.module_stack[-1][0] if self.module_stack else None
        self.seq += 1
        layer.seq = self.seq
        return layer

    def _scope(self) -> str:
        """The outermost helper call under the builder (``residual_block3``), or ''."""
        return self.scope_stack[1] if len(self.scope_stack) > 1 else ""

    def _auto_name(self, cls_name: str) -> str:
        prefix = keras_auto_name(cls_name)
        n = self.uids.get(prefix, 0)
        self.uids[prefix] = n + 1
        return prefix if n == 0 else f"{prefix}_{n}"

    def _make_input(self, kind: str, args, kwargs, span: Span) -> TensorVal:
        shape = kwargs.get("shape", args[0] if args else None)
        if shape is None and kwargs.get("batch_shape") is not None:
            shape = tuple(kwargs["batch_shape"])[1:]
        if shape is None and kwargs.get("input_shape") is not None:
            shape = kwargs["input_shape"]
        if shape is None or isinstance(shape, Unknown):
            pending = self._pending_input(shape, kwargs, span)  # (None, *x.shape[2:]): its first layer decides
            if pending is not None:
                return pending
            raise FrontendError("Input: the shape must be known statically", span)
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(self._runtime_size(d) for d in shape)  # an axis computed at run time: its expression
        if any(isinstance(d, Unknown) for d in shape) or not all(
                d is None or isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise FrontendError("Input: the shape must be known statically", span)  # (x.shape[1], ...)
        shape = (None, *shape)
        dtype = kwargs.get("dtype") or "float32"
        dtype = dtype.path.rsplit(".", 1)[-1] if isinstance(dtype, ModuleRef) else dtype  # dtype=tf.int64
        value = self.scratch.new_value("input", shape=shape, dtype=str(dtype),
                                       layout=default_layout(len(shape)))
        value.var = kwargs.get("name")
        self.value_stmts[value] = self.stmt_stack[-1] if self.stmt_stack else None
        self.scratch.inputs.append(value)
        return TensorVal(value)

    def _apply_anonymous(self, spec: LayerSpec, inputs, span: Span, hint: str, adapt_key: str | None = None):
        spec.attrs = ops_table.get(spec.op).complete_attrs(spec.attrs)
        # (a lookup, adapted at run time or not: a layer of its own, named after its class, so that
        # the module holding it, a helper's block too, has it as an attribute)
        cls_name = spec.attrs.get("kind", "") if spec.op == "index_lookup" else ""
        layer = LayerObj(spec=spec, cls_name=cls_name, keras_name=adapt_key or "", span=span, hint=hint,
                         scope=self._scope(), owner=self.self_stack[-1] if self.self_stack else None)
        layer.adapt_key = adapt_key
        return self._call_layer(layer, [inputs if len(inputs) > 1 else inputs[0]], {}, span)

    def _warn_fixed_mode(self, kwargs, what: str, span: Span) -> None:
        """``layer(x, training=False)``: Keras fixes the mode of that call; the torch module
        follows model.train()/eval(). Said, since training then differs."""
        fixed = kwargs.get("training")
        if isinstance(fixed, bool):
            differs = "predictions differ" if fixed else "training differs"
            self.program.warn(span, f"{what}(..., training={fixed}): the fixed mode is not translated (the "
                                    f"torch module follows model.train()/eval(): {differs} where it has "
                                    "dropout, noise or batch normalization)", self._line(span))

    def _call_layer(self, layer: LayerObj, args, kwargs, span: Span):
        self._warn_fixed_mode(kwargs, layer.cls_name or layer.spec.op, span)
        # the call's tensors (several for attention layers) and Keras' masks: keras_calls
        args = self._decide_pending(layer.spec.op, layer.spec.attrs, list(args))  # Input(shape=(None, *x.shape[2:]))
        call = keras_calls.bind_call(layer.spec, layer.cls_name, list(args), dict(kwargs))
        inputs = call.tensors
        if not all(isinstance(t, TensorVal) for t in inputs):
            raise FrontendError(f"{layer.cls_name or layer.spec.op}: called on something that is not a tensor "
                                f"({what_it_is(inputs)})", span)
        spec = layer.spec
        if not self.self_stack and ops_table.get(spec.op).params and \
                not any(keras_tensor_ops.batched(t.value) for t in inputs):
            self._constant_layer_call(layer, span)
        elif layer.constant_call:
            raise Unsupported(f"{layer.cls_name or spec.op}: called on the model's tensors after a call on constants "
                              "only (ops.arange): the same weights would be a constant and trained; not translated yet")
        attrs = {**spec.attrs, **call.attrs} if call.attrs else spec.attrs
        values = [t.value for t in inputs] + call.mask_inputs + self._initial_states(layer, call.states)
        for warning in call.warnings:
            self.program.warn(span, warning, self._line(span))
        if self.self_stack:  # a call() runs on tensors: a layer unsetting their masks is seen after it
            for t in call.clears:
                t.mask = None
        try:  # how many outputs: the op's shape rule says (an LSTM's states, a split's parts)
            n_out = self._probe_outputs(spec.op, attrs, values)
        except (IRError, TypeError, ValueError, IndexError) as exc:  # e.g. Conv1D on an image
            raise FrontendError(f"{layer.cls_name or spec.op}: {exc}", span) from None
        node = self.scratch.add_node(spec.op, layer.hint or spec.op, values, n_out,
                                     attrs=attrs, span=span, source_name=layer.keras_name or None)
        node.from_keras.layer = layer  # (the reader's own object: only frontend_ast/keras reads it)
        node.layer = layer.ref  # (the IR's: what everything after the reader reads)
        node.from_keras.stmt = self.stmt_stack[-1] if self.stmt_stack else None
        node.from_keras.call_stmts = tuple(self.helper_call_stmts)
        node.from_keras.top_stmt = self.stmt_stack[0] if self.stmt_stack else None
        node.from_keras.scopes = tuple(self.module_stack)
        if layer.cls_name:
            node.from_keras.owner_scope = layer.owner.scope if layer.owner is not None else layer.made_in
            node.from_keras.seq = layer.seq
        node.call_span = span
        if self.call_sites:
            node.from_keras.site = self.call_sites[0]  # the builder's line that led here
        if spec.initializers:
            node.from_keras.initializers = dict(spec.initializers)
        if spec.regularizers:
            node.from_keras.regularizers = dict(spec.regularizers)
        try:
            infer_node(node)
        except (IRError, TypeError, ValueError, IndexError) as exc:  # e.g. Conv1D on an image
            raise FrontendError(f"{layer.cls_name or spec.op}: {exc}", span) from None
        leaks = runtime_leaks(runtime_sizes_of_node(node).values())
        if leaks:  # (its shape rule needed the number, e.g. a 'same' padding's ceiling division)
            raise Unsupported(f"{layer.cls_name or spec.op}: a size computed at run time is used by its number "
                              f"here, which is not translated yet: {'; '.join(leaks)}")
        strides = node.attrs.get("strides")
        if node.attrs.get("padding") == "same" and isinstance(strides, tuple) and any(
                s > 1 and values[0].shape[ax] is None
                for s, ax in zip(strides, spatial_axes(values[0].layout or default_layout(len(values[0].shape))))):
            # TF's pads then depend on the length, known only at run time
            raise Unsupported(f"{layer.cls_name or spec.op}: padding='same' with strides > 1 on an axis "
                              "of unknown length is not translated yet")
        layer.nodes.append(node)
        masks = keras_calls.output_masks(spec, layer.cls_name, attrs, call, len(node.outputs))
        outputs = [TensorVal(v, m) for v, m in zip(node.outputs, masks)]
        if spec.activation is not None:
            act_op, act_attrs = spec.activation
            act = self.scratch.add_node(act_op, f"{layer.hint or spec.op}_act", [node.outputs[0]],
                                        attrs=act_attrs, span=span)
            act.from_keras.fused_into = node
            act.from_keras.scopes = node.from_keras.scopes
            infer_node(act)
            outputs[0] = TensorVal(act.outputs[0], masks[0])
        layer.__dict__.setdefault("calls", []).append((list(inputs), list(outputs)))  # (layer.output)
        if len(outputs) == 1:
            return outputs[0]
        return outputs

    def _constant_layer_call(self, layer: LayerObj, span: Span) -> None:
        """A Functional model's layer with weights called on constants only (a position embedding
        of ``ops.arange`` / ``tf.range``): Keras runs that call once, eagerly, while the model is
        built, and the model holds its result as a constant: the layer's weights are never trained
        (nor saved with the model's). The torch module holds the same layer frozen
        (``requires_grad_(False)``), so the constant is the same function of the layer's initial
        weights. A layer also called on the model's tensors is one whose weights Keras trains:
        refused."""
        what = layer.cls_name or layer.spec.op
        if getattr(layer, "calls", None):
            raise Unsupported(f"{what}: called on constants only (ops.arange) after a call on the model's tensors: "
                              "the same weights would be a constant and trained; not translated yet")
        layer.frozen = layer.constant_call = True
        self.program.warn(span, f"{what}: called on constants only (ops.arange), not on the model's tensors: Keras "
                                "computes it once when the model is built and never trains its weights (nor saves "
                                "them with the model's); the torch module's weights are constants (buffers kept out "
                                "of the state_dict) and its initial weights are torch's draw", self._line(span))

    @staticmethod
    def _initial_states(layer: LayerObj, states: list) -> list:
        """The values of an RNN call's ``initial_state`` tensors (none: []); a state the same
        layer computed (a decoding loop feeding a layer its own state) is refused."""
        what = layer.cls_name or layer.spec.op
        if not all(isinstance(t, TensorVal) for t in states):
            raise Unsupported(f"{what}(initial_state=...): a state is not a tensor")
        for t in states:
            producer = t.value.producer
            if producer is not None and producer.from_keras.layer is layer:
                raise Unsupported(f"{what}(initial_state=...) read back from the same layer's own state (a "
                                  "recurrent loop over layer calls) is not translated yet")
        return [t.value for t in states]

    @staticmethod
    def _probe_outputs(op: str, attrs: dict, inputs) -> int:
        from transpiler.ir.shapes import _RULES

        probe = Node(op, "probe", inputs, [], attrs=attrs)
        layouts = [v.layout or default_layout(len(v.shape)) for v in inputs]
        return len(_RULES[op](probe, [v.shape for v in inputs], layouts))

    # -- models -------------------------------------------------------------------
    def _make_sequential(self, args, kwargs, span: Span) -> ModelObj:
        layers = list(args[0]) if args else list(kwargs.get("layers") or [])
        layers = self._decide_sequence_input(layers)  # (Input(shape=(None, *x.shape[2:])), ConvLSTM2D, ...)
        model = ModelObj("sequential", span, name=_static_name(kwargs.get("name")))
        model.construct_statement = self.stmt_stack[-1] if self.stmt_stack else None
        model.made_under = tuple(self.stmt_stack[:-1])
        for item in layers:
            if isinstance(item, TensorVal):
                model.input_shape = tuple(item.value.shape[1:])
                model.input_dtype = item.value.dtype
                model.input_name = item.value.var
            elif isinstance(item, (LayerObj, UserObj, LambdaLayerObj)) or isinstance(item, ModelObj) and \
                    item is not model:
                model.layers.append(item)  # Keras layers, custom layers, models used as layers
            elif isinstance(item, ModelHandle) and isinstance(self._handle_model(item), ModelObj) \
                    and self._handle_model(item).user is None:
                model.layers.append(item)  # a builder's model (``get_encoder()``): called as a layer
            elif isinstance(item, data_utils.TextLayerVal):
                raise FrontendError(data_utils.text_layer_in_model(item.cls_name), item.span or span)
            else:
                raise FrontendError(f"Sequential: an element is not a layer ({what_it_is(item)})", span)
        self._register_model(model, builder=None, var=None, args={})
        return model

    def _make_functional(self, args, kwargs, span: Span, node) -> ModelObj:
        inputs = kwargs.get("inputs", args[0] if args else None)
        outputs = kwargs.get("outputs", args[1] if len(args) > 1 else None)
        if inputs is None or outputs is None:
            raise FrontendError("Model(...) needs inputs and outputs (subclassed models come later)", span)
        model = ModelObj("functional", span, name=_static_name(kwargs.get("name")))
        model.construct_statement = self.stmt_stack[-1] if self.stmt_stack else None
        model.made_under = tuple(self.stmt_stack[:-1])
        model.graph = self._extract_graph(inputs, outputs, span)
        # the statements that only built this graph go with it (the class replaces them)
        for node_ in model.graph.nodes:
            model.statements.add(node_.from_keras.stmt)
            model.statements.add(getattr(node_.from_keras.layer, "stmt", None))
            model.statements.update(node_.from_keras.call_stmts)
            # the outermost statement running it: ``z = Sampling()([z_mean, z_log_var])`` ran
            # the layer's call(), whose own statements made the nodes (but not a statement the
            # model is made under: ``model = build_model(16, 3)``)
            if node_.from_keras.top_stmt not in self.stmt_stack:
                model.statements.add(node_.from_keras.top_stmt)
        for value in model.graph.inputs:
            model.statements.add(self.value_stmts.get(value))
        for given in (inputs, outputs):  # (a list of its tensors bound by a statement of its own)
            held, stmt = self.__dict__.get("tensor_list_stmts", {}).get(id(given), (None, None))
            if held is given and stmt not in self.stmt_stack:
                model.statements.add(stmt)
        self._register_model(model, builder=None, var=None, args={})
        return model

    def _extract_graph(self, inputs, outputs, span: Span) -> Graph:
        def flat(x):
            if isinstance(x, dict):
                return [t for v in x.values() for t in flat(v)]
            if isinstance(x, (list, tuple)):
                return [t for v in x for t in flat(v)]
            if isinstance(x, TensorVal):
                return [x]
            raise FrontendError(f"Model(): inputs/outputs must be tensors ({what_it_is(x)})", span)

        in_vals = [t.value for t in flat(inputs)]
        out_vals = [t.value for t in flat(outputs)]
        if any(t.mask is not None for t in flat(outputs)):
            self.program.warn(span, "a model output carries Keras' mask (Embedding(mask_zero=True)): Keras "
                              "leaves the padded steps out of the loss and metrics in fit(); the torch "
                              "training loop counts them (training only)", self._line(span))
        needed: set[int] = set()
        stack = list(out_vals)
        in_ids = {id(v) for v in in_vals}
        while stack:
            v = stack.pop()
            if id(v) in in_ids or v.producer is None:
                if id(v) not in in_ids:
                    raise FrontendError("Model(): output depends on an input not given to the model", span)
                continue
            if id(v.producer) in needed:
                continue
            needed.add(id(v.producer))
            stack.extend(v.producer.inputs)
        graph = Graph("model", span=span)
        graph.inputs = in_vals
        graph.outputs = out_vals
        graph.nodes = [n for n in self.scratch.nodes if id(n) in needed]
        graph.from_keras.base_scopes = tuple(self.module_stack)  # the scopes around where it was built
        if isinstance(outputs, dict) and all(isinstance(t, TensorVal) for t in outputs.values()):
            graph.from_keras.output_keys = list(outputs)  # Keras returns a dict keyed like this
        return self._own_graph(graph, span)  # (shared_models.py)

    def _model_graph(self, model: ModelObj, node=None) -> Graph:
        if model.graph is None:
            if model.input_shape is None:
                first = model.layers[0] if model.layers else None
                if first is None or getattr(first, "input_shape", None) is None:
                    raise FrontendError("Sequential model without a known input shape "
                                        "(give input_shape= or keras.Input)", model.span)
                model.input_shape = first.input_shape
            x = self._make_input("Input", [model.input_shape],
                                 {"dtype": model.input_dtype, "name": model.input_name}, model.span)
            start = x
            for layer in model.layers:
                if isinstance(layer, LayerObj):
                    x = self._call_layer(layer, [x], {}, layer.span)
                elif isinstance(layer, LambdaLayerObj):
                    x = self._call_lambda(layer, [x], {}, layer.span)
                elif isinstance(layer, UserObj):
                    x = self._call_user(layer, [x], {}, model.span)
                elif isinstance(layer, ModelHandle):
                    x = self._model_as_layer(layer, [x], {}, model.span)
                elif layer.user is not None:
                    x = self._call_subclass_model(layer, [x], {}, model.span)
                else:
                    x = self._model_as_layer(layer, [x], {}, model.span)
                if isinstance(x, list):
                    x = x[0]
            model.graph = self._extract_graph(start, x, model.span)
        return model.graph

    def _register_model(self, model: ModelObj, builder, var, args) -> None:
        for i, (m, b, v, a) in enumerate(self.models):
            if m is model:
                self.models[i] = (m, builder or b, var or v, args or a)
                return
        self.models.append((model, builder, var, args))

    def _finish_model(self, model: ModelObj, builder, var, args) -> None:
        graph = self._model_graph(model)
        var_name = None
        if builder is None:
            var_name = model.var
            for name, value in self._all_bindings():
                if var_name is None and value is model:
                    var_name = name
                    break
        base = model.name or builder or var_name or "model"
        if model.user is not None:
            base = model.user.keras_name or base
        graph.name = base
        graph.span = model.span
        class_name = _camel(model.name or (builder[len("build_"):] if builder and builder.startswith("build_")
                                           and len(builder) > 6 else builder) or var_name or "Model")
        if class_name in ("Model", ""):
            class_name = "Net"
        used = _user_classes_in(graph)
        # an untranslated custom layer's class: a stub module takes its definition's place
        used |= {node.attrs["class_name"] for node in graph.nodes if node.op == "opaque_layer"}
        self._report_opaque(graph)
        if used:
            graph.from_keras.user_classes = sorted(used)
            self.program.from_keras.translated_classes.update(used)
        if model.user is not None:
            # the user's own class name: the generated module takes the subclass's place
            class_name = model.user.cls.node.name.value
            self.program.from_keras.translated_classes.add(class_name)
        else:
            class_name = self._unique_class_name(class_name)
        for node in graph.nodes:
            # layers of subclass instances are named after their attribute path (block1_conv)
            layer = node.from_keras.layer
            owner = getattr(layer, "owner", None)
            if layer is not None and owner is not None and owner.path and not layer.scope:
                layer.scope = owner.path
        self._name_nodes(graph)
        if model.user is not None:
            graph.from_keras.root_scope = model.user.scope
            for hook in ("predict_step", "compute_metrics", "compile"):
                fn = model.user.cls.method(hook)
                if fn is not None:  # Keras calls these from fit/evaluate/predict: not translated
                    span = self._span(fn)
                    self.program.stub(span, f"{class_name}.{hook}(): overriding Keras' {hook} is not translated "
                                            "yet (the generated loop does what Keras' own does)", self._line(span))
            step = _custom_step(model.user)
            if step:
                step["spans"] = {name: self._span(fn) for name, fn in step.pop("nodes").items()}
                graph.from_keras.custom_step = step
        if model.kind == "sequential" and all(isinstance(layer, LayerObj) for layer in model.layers):
            graph.from_keras.keras_layers = [layer.keras_name for layer in model.layers]  # model.layers, in order
        _local_names(graph, graph.from_keras.root_scope)
        self._attach_comments(graph)
        args = {**runtime_sizes_of(graph), **args}  # the sizes the program computes: constructor arguments
        md = ModelDef(graph=graph, class_name=class_name, builder=builder, builder_args=args,
                      var=var_name, statements={s for s in model.statements if s is not None},
                      construct_statement=model.construct_statement, made_under=model.made_under)
        self.program.models.append(md)
        self.model_defs[model] = md

    def _unique_class_name(self, name: str) -> str:
        """``name``, or ``name2``, ``name3``... when a model or a module-level name has it."""
        taken = {md.class_name for md in self.program.models} | set(self.globals.vars)
        # the module classes of earlier models too (a model used as a layer in a builder)
        taken |= {sc.class_name for md in self.program.models for node in md.graph.nodes
                  for sc, _call in (node.from_keras.scopes or ())}
        sep = "_" if name[-1:].isdigit() else ""
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = f"{name}{sep}{n}"
        return candidate

    def _all_bindings(self):
        yield from self.globals.vars.items()


def read_keras(source: str, path: str = "<string>") -> Program:
    """Parse Keras ``source`` into an ir.Program (no framework is imported)."""
    return KerasFrontend(source, path).run()
