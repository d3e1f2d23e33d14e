"""PyTorch training program → the framework-neutral training configuration (ir.training).

The code around the model is read by a small abstract interpretation over what each
variable holds: a model (from a builder), an optimizer, a loss object, a scheduler, a
``DataLoader`` over a ``TensorDataset``, a state_dict, or array data (a torch tensor
outside the model, which the target program holds as a numpy array). Statements run in
order, user functions are read when they are called, with the kinds of their arguments.

What is recognised becomes ``TrainingStatement``s keyed by the syntax node they replace:

* objects: ``torch.optim.*`` → ``optimizer_object`` (``ir.training.Optimizer`` with
  torch's algorithm variants: coupled ``weight_decay`` is ``l2``, SGD momentum on
  gradients, epsilon placements), ``nn.*Loss`` → ``loss_object``, ``lr_scheduler.*`` →
  ``schedule_object`` (a ``Schedule`` stepped per epoch or per step, as the loop does)
  or ``callback_object`` (ReduceLROnPlateau), ``DataLoader``/``TensorDataset`` →
  ``loader_object``/``dataset_object``;
* the usual training loop (``for epoch ...: for xb, yb in loader: zero_grad; loss =
  loss_fn(model(xb), yb); backward; [clip]; step``, with per-epoch evaluation, prints,
  schedulers and early stopping around it) → one ``training_loop`` (``TrainingLoop``:
  compile + fit);
* data code: tensor functions and methods → ``array_expr`` (numpy), ``model(x)``
  outside training → ``model_call``, ``loss_fn(out, y)`` → ``loss_call``,
  ``torch.save(model.state_dict(), p)``/``load_state_dict(torch.load(p))`` →
  ``save_weights``/``load_weights``, ``torch.manual_seed`` → ``seed``, ``print(model)``
  → ``summary``; ``model.eval()``/``model.train()`` statements → ``drop``, ``with
  torch.no_grad():`` → ``unwrap``.

A statement using PyTorch in a way none of this covers becomes a ``stub`` with a
diagnostic naming the construct (file:line). Imports no deep-learning framework.
"""


from __future__ import annotations

from collections import Counter
from typing import Any

import libcst as cst

from transpiler.cst_fast import walk
from transpiler.frontend_ast.interp import AUGMENTED
from transpiler.frontend_ast.keras.frontend import _names_in
from transpiler.frontend_ast.torch import cli_args, zoo_names
from transpiler.frontend_ast.torch import param_groups as pg
from transpiler.frontend_ast.torch import data as torch_data
from transpiler.frontend_ast.torch import episodes as torch_episodes
from transpiler.frontend_ast.torch import plumbing as torch_plumbing
from transpiler.frontend_ast.torch import trainers as torch_trainers
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.reader_exprs import ReaderExpressions
from transpiler.frontend_ast.torch.reader_methods import ReaderMethods
from transpiler.frontend_ast.torch.reader_objects import ReaderObjects
from transpiler.frontend_ast.torch.reader_io import ReaderData
from transpiler.frontend_ast.torch.reader_values import (
    _child_expressions, _code, _Enumerated, _has_backward, _import_roots, _mentions,
    _variable_text, _Zipped, Arr, ChildrenV, ChildV, DatasetClassV, DatasetV, DictV, FuncV, GroupV, LiveV,
    LoadedV, LoaderV, LossV, MapDatasetV, MapLoaderV, MODEL_METHODS, ModelAttrV, ModelFactory, ModelV, NoGradV,
    NotStandard, OptimizerV, OTHER, Other, ParamsV, ParamV, SchedulerV, Scope, StateV, tensor_item, TupleV, V)
from transpiler.ir import training as T
from transpiler.ir.source_file import NodeId, SourceFile


class TrainingReader(ReaderExpressions, ReaderMethods, ReaderObjects, ReaderData):
    """Reads the program around the models of one torch script (``TorchFrontend``)."""

    def __init__(self, frontend):
        self.fe = frontend
        self.program = frontend.program
        self.source_file: SourceFile = frontend.source_file
        # by the stable id of the node (expressions and statements; ir/source_file.py)
        self.facts: dict[NodeId, T.TrainingStatement] = {}
        self.factories: dict[str, ModelFactory] = {}
        self.dataset_classes: dict[str, DatasetClassV] = {}
        for md in self.program.models:
            if md.builder:
                self.factories[md.builder] = ModelFactory(md.builder, md)
            else:
                self.factories[md.class_name] = ModelFactory(md.class_name, md)
        for cls, builder in self.program.class_builders.items():  # (Net() where build_model() is Net())
            self.factories.setdefault(cls, ModelFactory(cls, self.factories[builder].md))
        for info in self.program.from_torch.stubbed_models:
            name = info["builder"] or info["name"]
            self.factories.setdefault(name, ModelFactory(name, None))
        from transpiler.frontend_ast.torch.untranslated_models import untranslated_classes

        for name, where in untranslated_classes(frontend).items():  # (translated in another file)
            self.factories.setdefault(name, ModelFactory(name, None, where))
        self.module = Scope(None)
        self.read_functions: dict[str, V] = {}
        self.reading: set[str] = set()
        self.no_grad = 0
        self.used_loaders: Counter = Counter()  # reads of each loader outside the recognised loops
        self.used_datasets: Counter = Counter()
        self.loaders: list[LoaderV] = []
        self.datasets: list[DatasetV] = []
        self.dicts: list[DictV] = []  # dicts of loaders or datasets held in a variable
        self.stmt_stack: list[cst.CSTNode] = []
        self.cur_function: cst.FunctionDef | None = None
        self.skip_defs: set[str] = set()
        self.quiet = 0
        self.live = 0  # inside a custom training step: model outputs are Keras tensors
        self.trainer_classes: dict = {}  # name → TrainerClassV (frontend_ast/torch/trainers)
        self.plain_classes: list[cst.ClassDef] = []  # other classes using torch (read_plain_classes)
        self.recording = False  # the program's tape records from its start (frontend_ast/torch/episodes)
        self.saved: dict[str, tuple] = {}  # checkpoint file name → ("state", model) | ("dict", entries)
        self.cur_scope: Scope = self.module
        self.handled: set[NodeId] = set()  # statements a custom step replaced (backward, step...)
        self.live_blocks: set[NodeId] = set()  # the for statements whose body is a training step
        self.custom_loops: set[NodeId] = set()  # for statements read as code around a training step
        self.optimizer_args = 0  # inside an optimizer's parameter groups (read statically)
        self.guessing = 0  # inside a function nothing in the file calls (torch_plumbing.unknown_tensor_method)
        from transpiler.frontend_ast.torch.helper_calls import HelperCalls

        self.helper_calls = HelperCalls(self)  # the training helpers (fit, evaluate, ...) and their calls

    def peek(self, node, scope: Scope) -> V:
        """What ``node`` holds, without recording facts or uses (for code that is replaced whole)."""
        used = (Counter(self.used_loaders), Counter(self.used_datasets))
        self.quiet += 1
        try:
            return self.expr(node, scope)
        finally:
            self.quiet -= 1
            self.used_loaders, self.used_datasets = used

    # -- facts ------------------------------------------------------------------------
    def sid(self, node: cst.CSTNode | None) -> NodeId | None:
        """``node``'s stable id (its file and position; ir/source_file.py): what facts are keyed
        by and name the nodes they refer to (a printer finds the node by it)."""
        return self.source_file.sid(node)

    def fact(self, node: cst.CSTNode, kind: str, config: Any = None, model: str = "", source: str = "") -> None:
        if self.quiet:
            return
        ts = T.TrainingStatement(kind, model, config, span=self.fe._span(node), call=self.sid(node),
                                 source=source or _code(node))
        self.facts[self.sid(node)] = ts

    def array(self, node: cst.CSTNode, template: str, parts: list, tensors: bool = False) -> None:
        """``node`` is ``template`` of ``parts``: array code (its array functions marked,
        ir/array_functions.py) or, with ``tensors``, a training step's tensor math (its tensor
        functions marked, ir/tensor_functions.py)."""
        self.fact(node, "array_expr", T.ArrayExpr(template, tuple(self.sid(p) for p in parts), tensors))

    def stub(self, stmt: cst.CSTNode, message: str) -> None:
        span = self.fe._span(stmt)
        line = self.fe.lines[span.line - 1].strip() if 0 < span.line <= len(self.fe.lines) else ""
        # inner facts of a stubbed statement are void: the statement is quoted as it was
        for node in walk(stmt):
            self.facts.pop(self.sid(node), None)
        for name in _names_in(stmt):  # whoever finishes the stub needs the data it reads
            self.count_use(self.cur_scope.lookup(name))
        self.fact(stmt, "stub", message)
        self.program.stub(span, f"{message}", line)

    # -- entry ------------------------------------------------------------------------
    def run(self, skip: set[NodeId]) -> None:
        """Read every top-level statement not in ``skip`` (model classes, builders,
        imports), then the functions nothing called."""
        defs: list[cst.FunctionDef] = []
        if torch_episodes.needs_recording(self):  # (the model outputs of every call are Keras tensors)
            self.recording = True
            self.live += 1
        for stmt in self.fe.module.body:
            if self.sid(stmt) in skip:
                if isinstance(stmt, cst.FunctionDef):
                    self.skip_defs.add(stmt.name.value)
                continue
            if isinstance(stmt, cst.FunctionDef):
                defs.append(stmt)
                continue
            if isinstance(stmt, cst.ClassDef):
                if stmt.name.value in self.helper_calls.helpers:
                    continue  # read when its uses are known (below)
                self._class_statement(stmt)
                continue
            self.statement(stmt, self.module)
        init_only = self._model_helpers(skip, defs)
        helpers = self.helper_calls.helpers
        for fn in [d for d in defs if d.name.value not in helpers] + [None] + \
                [d for d in defs if d.name.value in helpers]:
            if fn is None:  # every caller was read: the helpers all of whose uses were recognised go
                kept = self.helper_calls.finish()
                for stmt in self.fe.module.body:
                    if isinstance(stmt, cst.ClassDef) and stmt.name.value in kept:
                        self._class_statement(stmt)
                continue
            if fn.name.value in helpers and fn.name.value not in kept:
                continue
            if fn.name.value in init_only and self.fe.init_functions.get(fn.name.value):
                # its draws are the layers' initializers now
                self.fact(fn, "drop", f"{fn.name.value}: translated into the layers' initializers")
                continue
            if fn.name.value in init_only:
                span = self.fe._span(fn)
                why = ("weight initialisation is not translated: the Keras model uses its own initialisers"
                       if fn.name.value in self.fe.init_functions else
                       "the layers it makes are written out in the Keras model's builder")
                self.fact(fn, "stub", f"{fn.name.value} only serves the model's construction ({why})")
                self.program.warn(span, f"{fn.name.value}: used only where the model is built; left as a stub")
                continue
            if fn.name.value not in self.read_functions:
                self.guessing += 1  # (nothing here calls it: its parameters' kinds are guesses)
                try:
                    self.read_function(fn, self._guess_params(fn), {})
                finally:
                    self.guessing -= 1
        from transpiler.frontend_ast.torch import method_functions

        method_functions.read_methods(self)  # (a model's own methods forward does not call: GPT.generate)
        for fn, key in torch_trainers.unread_methods(self):  # (nothing calls them: parameters unknown)
            self.guessing += 1
            try:
                self.read_function(fn, [torch_trainers.InstanceV(self.trainer_classes[key.split(".")[0]])] +
                                   self._guess_params(fn)[1:], {}, key=key)
            finally:
                self.guessing -= 1
        torch_trainers.fold_failures(self)
        torch_trainers.read_plain_classes(self)
        self._drop_unused_data()

    def _class_statement(self, stmt: cst.ClassDef) -> None:
        if torch_trainers.is_trainer_class(stmt):  # (its methods are read when called)
            self.trainer_classes[stmt.name.value] = torch_trainers.TrainerClassV(stmt)
            return
        if torch_data.is_dataset_class(stmt, self._resolve):
            try:
                arity = torch_data.item_arity(stmt)
                kept = torch_data.numpy_dataset_class(stmt, self.torch_names(), self._resolve)
            except Unsupported as exc:
                self.stub(stmt, str(exc))
                return
            self.dataset_classes[stmt.name.value] = DatasetClassV(stmt.name.value, arity)
            self.fact(stmt, "source", kept)
        elif _mentions(stmt, self.torch_names()):
            if any((self._resolve(_code(b.value)) or "").startswith("torch") for b in stmt.bases):
                # (a class deriving from a torch class, a DataLoader subclass: not a plain class)
                self.stub(stmt, f"class {stmt.name.value}: uses PyTorch outside the model (not translated)")
                return
            try:  # (a plain class making arrays of data, as a Dataset does: frontend_ast/torch/data.py)
                kept = torch_data.numpy_dataset_class(stmt, self.torch_names(), self._resolve, what="a class")
            except Unsupported:
                # (a plain class of the program using torch otherwise, AverageMeter's all_reduce: its
                # methods are read as functions nothing calls, after the program; one stub if one fails)
                self.plain_classes.append(stmt)
                return
            self.fact(stmt, "source", kept)

    def _model_helpers(self, skip: set[NodeId], defs: list) -> set[str]:
        """Functions only the model code uses (``model.apply(weights_init)``) that use torch."""
        inside: set[str] = set()
        outside: set[str] = set()
        for stmt in self.fe.module.body:
            names = _names_in(stmt)
            if self.sid(stmt) in skip and isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
                inside |= names
            elif isinstance(stmt, cst.FunctionDef):
                outside |= names - {stmt.name.value}
            elif self.sid(stmt) not in skip:
                outside |= names
        return {fn.name.value for fn in defs if fn.name.value in inside and fn.name.value not in outside
                and _mentions(fn, self.torch_names())}

    def _tensor_check(self, test, scope) -> str | None:
        """The name ``test`` checks to be a torch tensor (``isinstance(h, torch.Tensor)``) when
        the reader cannot tell what it holds (a tensor or a tuple of them: a hidden state)."""
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and \
                len(test.args) == 2 and isinstance(test.args[0].value, cst.Name) and \
                torch_plumbing._torch_path(self, test.args[1].value, scope) == "torch.Tensor" and \
                not isinstance(scope.vars.get(test.args[0].value.value), (LiveV, Arr)) and \
                test.args[0].value.value in scope.vars:
            return test.args[0].value.value
        return None

    def _guess_params(self, fn: cst.FunctionDef) -> list[V]:
        """Nothing called ``fn``: a parameter used as a model (``p.parameters()``,
        ``p.state_dict()``, ``p.eval()``) is taken for the script's model (its only one,
        else a model of unknown layout)."""
        used: set[str] = set()

        class Uses(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                if isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name) and \
                        n.func.attr.value in MODEL_METHODS:
                    used.add(n.func.value.value)

        fn.visit(Uses())
        only = self.program.models[0] if len(self.program.models) == 1 else None
        name = (only.builder or only.class_name) if only is not None else "model"
        # a parameter its body uses as a tensor (y.view(), x.bmm()) is one (frontend_ast/torch/tensor_params)
        from transpiler.frontend_ast.torch import tensor_params

        tensors = {k: v for k, v in tensor_params.tensor_parameters(fn).items() if k not in used}
        if tensors:
            self.fact(fn, "note", tensor_params.note(fn, tensors))
        return [ModelV(name, only, var=p.name.value) if p.name.value in used else
                tensor_params.TensorArgV(name=p.name.value) if p.name.value in tensors else OTHER
                for p in fn.params.params]

    def _resolve(self, dotted: str) -> str | None:
        """The full path of a dotted name through the module's imports (``Dataset`` →
        ``torch.utils.data.Dataset``); None when it is not imported."""
        head, _, rest = dotted.partition(".")
        g = self.fe.globals.vars.get(head)
        if g is None or type(g).__name__ != "Ref":
            return None
        return f"{g.path}.{rest}" if rest else g.path

    def torch_names(self) -> set[str]:
        return self.fe._torch_names()

    # -- statements -------------------------------------------------------------------
    def block(self, body, scope: Scope) -> None:
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt, scope: Scope) -> None:
        self.stmt_stack.append(stmt)
        outer, self.cur_scope = self.cur_scope, scope
        try:
            self._statement(stmt, scope)
        except Unsupported as exc:
            self.stub(stmt, str(exc))
        finally:
            self.stmt_stack.pop()
            self.cur_scope = outer

    def command_line_statement(self, stmt) -> bool:
        """``args = parser.parse_args()`` followed by the guard of the options that chose the
        model (cli_args.py); a statement reading ``models.__dict__`` over the torchvision
        networks the program builds by name (zoo_names.py). True when recorded."""
        namespace = cli_args.binds_namespace(stmt, self.fe._command_lines())
        guard = cli_args.default_guard(namespace, getattr(self.fe, "cli_reads", {})) if namespace else None
        if guard is not None:  # (options that chose the model: the translation holds their defaults')
            self.fact(stmt, "source", cst.FlattenSentinel([stmt, guard]))
            return True
        if not (isinstance(stmt, cst.SimpleStatementLine) and zoo_names.reads_namespace(self.fe, stmt)):
            return False
        networks = zoo_names.built_networks(self.fe, self.program.models, self.fe.layer_models)
        if not networks:
            raise Unsupported("torchvision.models.__dict__: the program builds no torchvision network by name")
        called = zoo_names.called_with_arguments(self.fe, stmt)
        if called is not None:
            raise Unsupported(f"{called}: a torchvision network built by name with arguments (pretrained "
                              "weights do not translate; the Keras program holds the networks built without)")
        self.fact(stmt, "source", zoo_names.rewrite(self.fe, stmt, networks))
        return True

    def _statement(self, stmt, scope: Scope) -> None:
        if self.sid(stmt) in self.handled:
            return
        sid = self.fe.source_file.sid(stmt)
        layer_model = next((md for md in self.program.models if md.construct_statement == sid and
                            md.builder in self.fe.layer_models), None)
        if layer_model is not None:  # ``model = nn.Linear(...)``: the printer calls the model's builder
            scope.vars[layer_model.var] = ModelV(layer_model.builder, layer_model, var=layer_model.var)
            if scope is not self.module:  # (in a function: the builder is printed before it)
                self.fact(stmt, "source", stmt.with_changes(body=[cst.Assign(
                    [cst.AssignTarget(cst.Name(layer_model.var))], cst.parse_expression(f"{layer_model.builder}()"))]))
            return
        if self.command_line_statement(stmt):
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, stmt, scope)
        elif isinstance(stmt, cst.For):
            if _has_backward(stmt) and self.sid(stmt) not in self.custom_loops:
                self.training_loop(stmt, scope)
                return
            if pg.iterates_parameters(stmt.iter) and isinstance(self.peek(stmt.iter.func.value, scope), ModelV) and \
                    self.peek(stmt.iter.func.value, scope).md is not None:
                self.parameter_loop(stmt, scope)
                return
            items = self.expr(stmt.iter, scope)
            self.assign(stmt.target, self.element_of(items, stmt.iter), scope)
            live = self.sid(stmt) in self.live_blocks
            self.live += live
            try:
                self.block(stmt.body.body, scope)
            finally:
                self.live -= live
            if stmt.orelse is not None:
                self.block(stmt.orelse.body.body, scope)
        elif isinstance(stmt, cst.While):
            if _has_backward(stmt):
                raise Unsupported("a training loop written as a while loop is not translated")
            self.expr(stmt.test, scope)
            self.block(stmt.body.body, scope)
        elif isinstance(stmt, cst.If):
            self.expr(stmt.test, scope)
            checked = self._tensor_check(stmt.test, scope)
            held = scope.vars.get(checked) if checked else None
            if checked:  # (``if isinstance(h, torch.Tensor):``: h is one in the body)
                from transpiler.frontend_ast.torch.tensor_params import TensorArgV

                scope.vars[checked] = TensorArgV(name=checked)
            self.block(stmt.body.body, scope)
            if checked:
                scope.vars[checked] = held
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                self.statement(orelse, scope)
            elif orelse is not None:
                self.block(orelse.body.body, scope)
        elif isinstance(stmt, cst.With):
            self.with_statement(stmt, scope)
        elif isinstance(stmt, cst.Try):
            self.block(stmt.body.body, scope)
            for handler in stmt.handlers:
                self.block(handler.body.body, scope)
            for part in (stmt.orelse, stmt.finalbody):
                if part is not None:
                    self.block(part.body.body, scope)
        elif isinstance(stmt, cst.FunctionDef):
            loss = self.helper_calls.loss_object_def(stmt)
            if loss is not None:  # Keras' loss object as the generated function: the object again
                scope.vars[stmt.name.value] = LossV(loss, stmt, var=stmt.name.value, keras_order=True)
                self.fact(stmt, "loss_def", loss)
            else:
                # (the scope it closes over: a nested function reads its caller's model, loss...)
                scope.vars[stmt.name.value] = FuncV(stmt, None if scope is self.module else scope)
        elif isinstance(stmt, cst.ClassDef):
            if _mentions(stmt, self.torch_names()):
                raise Unsupported(f"class {stmt.name.value} uses PyTorch (not translated)")
        else:
            if _mentions(stmt, self.torch_names()):
                raise Unsupported(f"{type(stmt).__name__} statement using PyTorch")

    def with_statement(self, stmt: cst.With, scope: Scope) -> None:
        grad_off, context_only = [], []
        for item in stmt.items:
            value = self.expr(item.item, scope)
            if isinstance(value, NoGradV):
                grad_off.append(item)
                continue
            if value is torch_plumbing.CONTEXT and item.asname is None:
                context_only.append(item)
                continue
            if item.asname is not None:
                self.assign(item.asname.name, OTHER, scope)
        if grad_off:
            if len(grad_off) != len(stmt.items):
                raise Unsupported("torch.no_grad() together with other context managers")
            self.fact(stmt, "unwrap")
            self.no_grad += 1
            try:
                self.block(stmt.body.body, scope)
            finally:
                self.no_grad -= 1
            return
        if context_only:
            if len(context_only) != len(stmt.items):
                raise Unsupported(f"{_code(context_only[0].item)} together with other context managers")
            self.fact(stmt, "unwrap", f"dropped {_code(context_only[0].item.func)}(...): it only lets torch.load "
                                      "unpickle the classes named")
        self.block(stmt.body.body, scope)

    def small(self, small, line: cst.SimpleStatementLine, scope: Scope) -> None:
        if isinstance(small, cst.Assign) and self.parameter_list(small, scope):
            return
        if len(line.body) == 1 and torch_plumbing.statement(self, small, line, scope):
            return
        if isinstance(small, cst.Assign):
            value = self.expr(small.value, scope)
            from transpiler.frontend_ast.torch.runtime_params import class_values

            class_values(self, small.value, scope)  # (``whitelist = (torch.nn.Linear, )``)
            for t in small.targets:
                self.assign(t.target, value, scope, line)
        elif isinstance(small, cst.AnnAssign):
            annotation = small.annotation.annotation
            if _mentions(annotation, self.torch_names()):  # ``device: torch.device = ...``
                self.fact(annotation, "device_expr", {"text": repr(_code(annotation)), "note": (
                    f"the annotation {_code(annotation)} is a string: the Keras program does not import torch")})
            if small.value is not None:
                self.assign(small.target, self.expr(small.value, scope), scope, line)
        elif isinstance(small, cst.AugAssign):
            left = self.expr(small.target, scope)
            right = self.expr(small.value, scope)
            if isinstance(small.target, cst.Name):
                op = AUGMENTED[type(small.operator)]
                scope.vars[small.target.value] = self._binop(op, left, right, small)
        elif isinstance(small, cst.Expr):
            value = small.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in ("eval", "train") and not value.args:
                obj = self.expr(value.func.value, scope)
                if isinstance(obj, ModelV):
                    obj.training = value.func.attr.value == "train"
                    self.fact(line, "drop", f"{_code(value)}: Keras sets training/inference per call")
                    return
            self.expr(value, scope)
        elif isinstance(small, cst.Return):
            result = OTHER if small.value is None else self.expr(small.value, scope)
            scope.returns.append(result)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            roots = _import_roots(small)
            if roots & {"torch", "torchvision"}:
                if len(roots - {"torch", "torchvision"}) > 0:
                    raise Unsupported("an import of torch together with other modules")
                # the names it binds are torch's: a statement still using one is a stub
                self.program.from_torch.local_torch_bindings.update(torch_plumbing.bound_names(small))
                self.fact(line, "drop", "a torch import")
        elif isinstance(small, (cst.Assert, cst.Raise, cst.Del)):
            for child in _child_expressions(small):
                self.expr(child, scope)
        elif isinstance(small, (cst.Pass, cst.Break, cst.Continue, cst.Global, cst.Nonlocal)):
            return
        else:
            if _mentions(small, self.torch_names()):
                raise Unsupported(f"{type(small).__name__} using PyTorch")

    # -- a model's parameters read or written by the program --------------------------------
    def model_attribute(self, obj, name: str, node: cst.Attribute) -> V:
        """``model.scale.center``: a parameter or buffer (its value, as numpy, when read)."""
        model, root = (obj, node.value) if isinstance(obj, ModelV) else (obj.model, obj.root)
        path = name if isinstance(obj, ModelV) else f"{obj.path}.{name}"
        if isinstance(obj, ModelV) and name == "module" and not (model.md is not None and any(
                k == "module" or k.startswith("module.") for k in (e.key for e in pg.source_plan(model.md)))):
            # (the module a DistributedDataParallel / DataParallel wrapper holds: the wrappers are
            # dropped, frontend_ast/torch/plumbing, so it is the model itself)
            self.array(node, "{0}", [node.value])
            return obj
        if model.md is None:
            raise Unsupported(f"{_code(node)}: an attribute of a model that is not translated")
        plan = {e.key: e for e in pg.source_plan(model.md)}
        if path in plan:
            (variable,) = pg.keras_variables(model.md, [path])
            self.array(node, f"$convert_to_numpy({{0}}{_variable_text(variable)})", [root], tensors=True)
            return ModelAttrV(model, path, root, path, variable)
        if any(k.startswith(path + ".") for k in plan):
            return ModelAttrV(model, path, root)
        own = torch_episodes.model_attribute(self, obj, name) if isinstance(obj, ModelV) else None
        if own is None and isinstance(obj, ModelV):  # (``self.block_size = config.block_size``)
            from transpiler.frontend_ast.torch.method_functions import constructor_attribute

            own = constructor_attribute(self, obj, name, node)
        if own is not None:
            return own
        raise Unsupported(f"{_code(node)}: reading the model's submodules or attributes is not translated "
                          "(only its parameters and buffers)")

    def parameter_method(self, obj: ModelAttrV, name: str, node: cst.Call, args) -> V:
        """``model.scale.center.copy_(x)`` → ``.assign(x)``; any other method reads the value."""
        if obj.key is None:
            raise Unsupported(f"{_code(node.func)}(): a method of a submodule is not translated")
        recv = node.func.value
        if name in ("copy_", "fill_", "zero_"):
            if name == "copy_" and len(args) != 1:
                raise Unsupported("copy_() takes one tensor")
            self.array(recv, f"{{0}}{_variable_text(obj.variable)}", [obj.root])
            if name == "copy_":
                self.array(node, "{0}.assign({1})", [recv, args[0][0].value])
            elif name == "zero_":
                self.array(node, "{0}.assign($zeros_like({0}))", [recv], tensors=True)
            else:
                self.array(node, "{0}.assign($full_like({0}, {1}))", [recv, args[0][0].value], tensors=True)
            return OTHER
        return self.tensor_method(name, recv, node, args)

    # -- parameter groups (torch_param_groups) -----------------------------------------------
    def parameter_loop(self, stmt: cst.For, scope: Scope) -> None:
        """``for name, p in model.named_parameters(): (a if ... else b).append(p)``: the lists
        it fills are read statically, printed as the Keras variables they hold."""
        lists = pg.read_loop(self, stmt, scope, ModelV, GroupV)
        for name, group in lists.items():
            scope.vars[name] = GroupV(group)
        model = next(iter(lists.values())).model if lists else None
        self.fact(stmt, "param_groups", {name: pg.keras_variables(model.md, g.keys) for name, g in lists.items()},
                  model=model.var or "model")

    def parameter_list(self, small: cst.Assign, scope: Scope) -> bool:
        """``decay, no_decay = [], []`` and ``others = [p for n, p in model.named_parameters() if
        ...]``: lists of parameters (for parameter groups). True when ``small`` was one."""
        value = small.value
        empty = [] if isinstance(value, cst.List) and not value.elements else None
        if isinstance(value, cst.Tuple) and value.elements and all(
                isinstance(e.value, cst.List) and not e.value.elements for e in value.elements):
            empty = [None] * len(value.elements)
        if empty is not None:
            groups = [GroupV(pg.Group()) for _ in (empty or [None])]
            for t in small.targets:
                self.assign(t.target, TupleV(groups) if isinstance(value, cst.Tuple) else groups[0], scope)
            return True
        if not isinstance(value, (cst.ListComp, cst.GeneratorExp)) or \
                not pg.iterates_parameters(value.for_in.iter) or \
                not isinstance(self.peek(value.for_in.iter.func.value, scope), ModelV):
            return False
        group = pg.read_list(self, value, scope, ModelV, GroupV)
        self.fact(value, "keras_variables", pg.keras_variables(group.model.md, group.keys),
                  model=group.model.var or "model")
        for t in small.targets:
            self.assign(t.target, GroupV(group), scope)
        return True

    def assign(self, target, value: V, scope: Scope, stmt=None) -> None:
        if isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)) and isinstance(value, LoadedV) and \
                value.model is None:  # (``x = ``, ``vocab.vectors = ``, ``cache[k] = torch.load(path)``)
            value = self.load_object(value)  # (what save_object wrote: a checkpoint dict, arrays)
        if isinstance(target, cst.Name) and isinstance(value, LoadedV):
            # read into memory now, as torch.load does: the file may be gone when it is used
            self.fact(value.node, "read_weights", {"factory": value.model.name, "path": self.sid(value.path)})
            value = StateV(value.model, snapshot=True)
        if isinstance(target, cst.Name):
            scope.vars[target.value] = value
            if isinstance(value, ModelV) and value.var is None:
                value.var = target.value
            for obj in (value,):
                if isinstance(obj, (OptimizerV, LossV, SchedulerV, LoaderV, DatasetV)) and obj.var is None:
                    obj.var = target.value
                    if isinstance(obj, (LoaderV, DatasetV, SchedulerV)):
                        obj.stmt = stmt
            if isinstance(value, DictV) and value.var is None and value.items and \
                    all(isinstance(v, (LoaderV, DatasetV)) for v in value.items.values()):
                value.var, value.stmt = target.value, stmt
                self.dicts.append(value)
            self.helper_calls.assigned(target, value, stmt)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.items if isinstance(value, TupleV) or isinstance(value, GroupV) and value.items else None
            for i, el in enumerate(target.elements):
                item = items[i] if items is not None and i < len(items) else (
                    LiveV(value.permuted) if isinstance(value, LiveV) else Arr() if isinstance(value, Arr) else
                    tensor_item(value))
                self.assign(el.value, item, scope)
        elif isinstance(target, cst.Attribute) and self.helper_calls.own_optimizer(target, value, stmt):
            pass
        elif isinstance(target, cst.Attribute) and torch_trainers.assigned(self, target, value, scope):
            self.expr(target.value, scope)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            self.expr(target.value, scope)
            if isinstance(target, cst.Subscript):
                self._subscript_key(target, scope)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, OTHER, scope)

    def element_of(self, items: V, node) -> V:
        """What a ``for`` loop over ``items`` binds."""
        if isinstance(items, LoaderV):
            self.used_loaders[items] += 1
            return TupleV([Arr() for _ in items.dataset.arrays])
        if isinstance(items, DatasetV):
            self.used_datasets[items] += 1
            return TupleV([Arr() for _ in items.arrays])
        if isinstance(items, (MapLoaderV, MapDatasetV)):
            arity = (items.dataset if isinstance(items, MapLoaderV) else items).arity
            return TupleV([Arr() for _ in range(arity)]) if arity > 1 else Arr()  # (0: Arr, unpacked as any)
        if isinstance(items, Arr):
            return Arr()
        if isinstance(items, ParamsV):
            return ParamV()
        if isinstance(items, ChildrenV):
            return TupleV([OTHER, ChildV()]) if items.named else ChildV()
        from transpiler.frontend_ast.torch import runtime_params

        if isinstance(items, runtime_params.NamedWalkV):
            return runtime_params.element(items)
        if isinstance(items, TupleV) and items.items and all(type(i) is type(items.items[0]) for i in items.items):
            return items.items[0]
        if isinstance(items, _Enumerated):
            return TupleV([OTHER, self.element_of(items.inner, node)])
        if isinstance(items, _Zipped):
            return TupleV([self.element_of(i, node) for i in items.inners])
        return OTHER

    # -- functions --------------------------------------------------------------------
    def read_function(self, fn: cst.FunctionDef, args: list[V], kwargs: dict[str, V], key: str = "",
                      closure: Scope | None = None) -> V:
        name = key or fn.name.value  # (a method: Class.method)
        if name in self.read_functions:
            return self.read_functions[name]
        if name in self.reading:
            return OTHER
        self.reading.add(name)
        scope = Scope(closure if closure is not None else self.module)
        bound = self._bind_arguments(fn, args, kwargs, self.module, missing=OTHER)
        guesses = self._guess_params(fn) if self.guessing else []  # (a caller's guess passed on: OTHER)
        for p, guess in zip(fn.params.params, guesses):
            if type(bound.get(p.name.value)) is Other:
                bound[p.name.value] = guess
        if not self.guessing:
            from transpiler.frontend_ast.torch.tensor_params import unknown_tensor_arguments

            unknown_tensor_arguments(self, fn, bound)
        scope.vars.update(bound)
        outer, self.cur_function = self.cur_function, fn
        saved = self.no_grad
        for dec in fn.decorators:
            value = self._decorator(dec, scope)
            if isinstance(value, NoGradV):
                self.no_grad += 1
        try:
            from transpiler.frontend_ast.torch import steps as torch_steps

            if torch_steps.steps_in_body(fn):  # one training step per call: the body under a tape
                self.statement_guard(fn, lambda: torch_steps.read_step_function(self, fn, scope))
            else:
                self.block(fn.body.body, scope)
            from transpiler.frontend_ast.torch.tensor_params import read_nested

            read_nested(self, fn, scope)  # (its own functions nothing called, as the module's)
        finally:
            self.cur_function = outer
            self.no_grad = saved
            self.reading.discard(name)
        # (a list the body appended tensors to is a result too: ``res.append(correct_k)``)
        result = next((r for r in scope.returns if not isinstance(r, Other) or isinstance(r, GroupV) and r.items),
                      OTHER)
        self.read_functions[name] = result
        return result

    def statement_guard(self, fn: cst.FunctionDef, read) -> None:
        """``read()``, or the function a marked stub when its step is not translated."""
        try:
            read()
        except Unsupported as exc:
            self.stub(fn, str(exc))

    def _decorator(self, dec: cst.Decorator, scope: Scope) -> V:
        value = self.expr(dec.decorator, scope)
        if isinstance(value, NoGradV):
            self.fact(dec, "drop", "torch.no_grad(): Keras' predict() computes no gradients")
        elif _mentions(dec, self.torch_names()):
            raise Unsupported(f"decorator {_code(dec.decorator)}")
        return value

    # -- the training loop ------------------------------------------------------------
    def training_loop(self, loop: cst.For, scope: Scope) -> None:
        from transpiler.frontend_ast.torch.loops import LoopReader

        loop_reader = LoopReader(self, loop, scope)
        try:
            result = loop_reader.read()
        except (NotStandard, Unsupported) as exc:  # not fit's loop: maybe a custom step
            from transpiler.frontend_ast.torch.steps import read_custom_loop

            if loop_reader.phases is not None:  # a loop over phases: no custom step holds it either
                names = ", ".join(repr(p) for p in loop_reader.phases.names)
                raise Unsupported(f"a training loop over the phases {names} (fit's shape: the first phase trains, "
                                  f"the second only evaluates): {exc}") from None

            read_custom_loop(self, loop, scope, str(exc))
            return
        self.fact(loop, "training_loop", result, model=result.model)
        self.facts[self.sid(loop)].model_def = scope.lookup(result.model).md if isinstance(
            scope.lookup(result.model), ModelV) else None


def read_training(frontend, skip: set[NodeId]) -> dict[NodeId, T.TrainingStatement]:
    """Recognise the training program of ``frontend``'s script; returns the facts by the stable
    id of the node each replaces (also appended to ``program.training`` in source order).
    ``skip`` holds the stable ids of the top-level statements read as the models."""
    reader = TrainingReader(frontend)
    reader.run(set(skip))
    frontend.program.training.extend(reader.facts.values())
    return reader.facts


__all__ = ["read_training", "TrainingReader"]
