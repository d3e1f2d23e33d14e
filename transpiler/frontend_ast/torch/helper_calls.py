"""Calls of a torch script's training helpers (``torch_helpers``) → Keras' compile/fit/evaluate/
predict, as ``TrainingStatement`` facts of the ``TrainingReader``.

``fit(model, optimizer, loss_fn, x, y, epochs=2, batch_size=20, metrics=[("accuracy", 0,
accuracy_fn)], verbose=2)`` becomes ``model.fit(x, y, ...)`` with a ``model.compile(optimizer=...,
loss=..., metrics=[...])`` before the first fit or evaluate of each model; ``evaluate(...)`` and
``predict(...)`` become ``model.evaluate``/``model.predict``. A model with several outputs takes
one loss per output (``[loss_a, loss_b]``), ``loss_weights=[...]`` and metrics labelled after their
output (``("label_accuracy", 0, fn)``): ``compile(loss=[...], loss_weights=[...], metrics=[[...],
[...]])``. An optimizer made by a recognised
optimizer class (Keras' Adam in torch) is an ``optimizer_object``; a loss function variable a
``loss_object``. A variable that only feeds the recognised calls is dropped (its value moves
into compile), and so is each helper definition all of whose uses were recognised; a helper
used otherwise is read (and stubbed) as before.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Any

import libcst as cst

from transpiler.cst_fast import references, target_names

from transpiler.frontend_ast.torch import helpers as torch_helpers
from transpiler.frontend_ast.torch.helpers import Helper, METRIC_NAMES
from transpiler.ir import training as T
from transpiler.ir.code_literals import bare_argument


@dataclass(eq=False)
class HelperRefV:
    """A recognised helper's name used as a value (a loss function, an optimizer class)."""

    helper: Helper
    name: str
    node: cst.Name


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


class HelperCalls:
    def __init__(self, reader):
        self.r = reader
        self.helpers = torch_helpers.analyse(reader.fe.module)
        self.recognised: set = set()  # stable ids (ir.source_file.NodeId) of Name nodes whose use a fact replaces
        self.compiled: dict[str, dict] = {}  # model variable → its compile fact's config
        self.variables: list[tuple] = []  # (scope node, name, statement, target node)
        self._parents: dict | None = None  # call → the np.transpose(call, perm) around it

    # -- hooks of the reader ---------------------------------------------------------
    def name(self, node: cst.Name):
        helper = self.helpers.get(node.value)
        if helper is not None and helper.kind in ("optimizer_class", "loss"):
            return HelperRefV(helper, node.value, node)
        return None

    def assigned(self, target, value, stmt) -> None:
        """``optimizer = KerasAdam(...)`` / ``loss_fn = a_loss_function`` (or a list of them, one per
        output): may be dropped."""
        from transpiler.frontend_ast.torch.reader_values import OptimizerV

        if isinstance(target, cst.Name) and stmt is not None and (isinstance(value, (HelperRefV, OptimizerV))
                                                                   or _loss_list(value)) and \
                len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1:
            scope = self.r.cur_function or self.r.fe.module
            self.variables.append((scope, target.value, stmt, target))

    def construct(self, ref: HelperRefV, node: cst.Call, args):
        """``KerasAdam(model.parameters(), lr=...)``: the optimizer with Keras' epsilon."""
        if ref.helper.kind != "optimizer_class":
            return None
        pos = [a.value for a, _ in args if a.keyword is None and not a.star]
        vals = [v for a, v in args if a.keyword is None and not a.star]
        kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}
        if ref.helper.config == "KerasRMSprop":
            return self._rmsprop(ref, node, pos, vals, kw)
        value = self.r.optimizer(ref.helper.config, node, pos, vals, kw)
        value.config.epsilon_after_bias_correction = False  # the class's step moves it before
        self.recognised.add(self.r.sid(ref.node))
        self.recognised.add(self.r.sid(node))
        return value

    def _rmsprop(self, ref: HelperRefV, node: cst.Call, pos, vals, kw):
        """Keras' RMSprop written as a torch optimizer: its arguments are Keras' (``rho``),
        its defaults the class's own."""
        from transpiler.frontend_ast.torch.reader_values import OptimizerV, ParamsV
        from transpiler.frontend_ast.torch.modules import Unsupported

        names, defaults = torch_helpers.rmsprop_arguments(ref.helper.node)
        if not vals or not isinstance(vals[0], ParamsV) or len(pos) - 1 > len(names) or set(kw) - set(names):
            raise Unsupported(f"{ref.name}(...): only model.parameters() and its own arguments are translated")
        given = {**defaults, **dict(zip(names, pos[1:])), **kw}
        h = {k: self.r.static(v, f"{ref.name}({k}=...)") for k, v in given.items()}
        hyper = dict(T.OPTIMIZER_DEFAULTS["rmsprop"])
        hyper.update(learning_rate=h.get("lr", hyper["learning_rate"]), rho=h.get("rho", hyper["rho"]),
                     epsilon=h.get("eps", hyper["epsilon"]), momentum=h.get("momentum", hyper["momentum"]),
                     centered=h.get("centered", hyper["centered"]))
        opt = T.Optimizer("rmsprop", hyper)  # Keras' own algorithm: no torch variant flags
        self.r.fact(node, "optimizer_object", opt, model=vals[0].model.name)
        self.recognised.add(self.r.sid(ref.node))
        self.recognised.add(self.r.sid(node))
        return OptimizerV(opt, vals[0].model, node, model_text=vals[0].text)

    def loss_object_def(self, fn: cst.FunctionDef) -> T.Loss | None:
        """``def loss_fn(target, output): return a_loss_function(output, target).mean()`` (how
        a Keras loss object is written in torch): the loss it computes, or None."""
        params = fn.params
        if len(params.params) != 2 or any(p.default is not None for p in params.params) or \
                not isinstance(params.star_arg, cst.MaybeSentinel) or params.kwonly_params or params.star_kwarg:
            return None
        target, output = (p.name.value for p in params.params)
        body = [s for s in fn.body.body if not (isinstance(s, cst.SimpleStatementLine) and
                                                isinstance(s.body[0], cst.Expr) and
                                                isinstance(s.body[0].value, cst.SimpleString))]
        if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or \
                not isinstance(body[0].body[0], cst.Return):
            return None
        value = body[0].body[0].value
        if not (isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) and
                value.func.attr.value == "mean" and isinstance(value.func.value, cst.Call)):
            return None
        inner = value.func.value
        helper = self.helpers.get(inner.func.value) if isinstance(inner.func, cst.Name) else None
        if helper is None or helper.kind != "loss" or [_code(a.value) for a in inner.args] != [output, target] \
                or any(a.keyword is not None for a in inner.args):
            return None
        self.recognised.add(self.r.sid(inner.func))
        return helper.config

    def call(self, fn_node: cst.FunctionDef, node: cst.Call, args):
        helper = self.helpers.get(fn_node.name.value)
        if helper is not None and helper.kind == "loader" and isinstance(node.func, cst.Name):
            return self.loader(helper, node)
        if helper is not None and helper.kind == "call_model" and isinstance(node.func, cst.Name):
            return self.call_model(helper, node, args)
        if helper is None or helper.kind not in ("fit", "evaluate", "predict", "fit_own_step",
                                                 "evaluate_own_step") or not isinstance(node.func, cst.Name):
            return None
        bound = helper.bind(node)
        if bound is None:
            return None
        values = {a.value: v for a, v in args}
        got = {role: values.get(expr) for role, expr in bound.items()}
        reader = getattr(self, helper.kind)
        return reader(helper, node, bound, got)

    def loader(self, helper: Helper, node: cst.Call):
        """``make_loader(x, y, batch_size=64, shuffle=True)``: a DataLoader over a TensorDataset
        of those arrays (None when an argument has no role or an array is a list of them)."""
        from transpiler.frontend_ast.torch.reader_values import DatasetV, LoaderV

        bound = helper.bind(node)
        if bound is None:
            return None
        arrays = [bound[f"arrays{i}"] for i in range(len(bound)) if f"arrays{i}" in bound]
        if not arrays or any(isinstance(a, (cst.List, cst.Tuple)) or _code(bare_argument(a)) == "None" for a in arrays):
            return None
        loader = LoaderV(DatasetV(arrays, node), node, batch_size=bound.get("batch_size"),
                         shuffle=bound.get("shuffle"), drop_last=None)
        self.r.loaders.append(loader)
        self.r.fact(node, "loader_object", {"arrays": [self.r.sid(a) for a in arrays],
                                            "batch_size": self.r.sid(loader.batch_size) if loader.batch_size else None,
                                            "shuffle": self.r.sid(loader.shuffle) if loader.shuffle else None,
                                            "drop_last": None})
        self.recognised.add(self.r.sid(node.func))
        return loader

    def call_model(self, helper: Helper, node: cst.Call, args):
        """``call_model(model, x, training=True)`` (model_call_helper.py): Keras'
        ``model(x, training=True)`` on arrays, the model read as the reader reads a call of it
        (None, the call read as before, when an argument has no role: ``**kwargs`` it passes on,
        an unpacked argument, a mode known only when the program runs)."""
        from transpiler.frontend_ast.torch.reader_values import ModelV

        roles = helper.roles
        if not args or any(a.star for a, _ in args) or args[0][0].keyword is not None:
            return None
        model = args[0][1]
        flags = {roles["training"]: "training", roles.get("grad"): "grad"}
        kw = {flags.get(a.keyword.value): a.value for a, _ in args if a.keyword is not None}
        if None in kw or not isinstance(model, ModelV) or model.md is None:
            return None
        training = self.r.static(kw["training"], "training") if "training" in kw else _default(helper, "training")
        if not isinstance(training, bool):
            return None
        inputs = [a.value for a, _ in args[1:] if a.keyword is None]
        if not inputs:
            return None
        # the call as the model's own (its fact and value), Keras' form kept: model(x, training=...)
        value = self.r.model_call(model, node, [(cst.Arg(v), val) for v, (a, val) in zip(inputs, args[1:])])
        fact = self.r.facts.get(self.r.sid(node))
        if fact is not None:
            fact.config.update(model=self.r.sid(args[0][0].value), training=training, as_call=True)
        self.recognised.add(self.r.sid(node.func))
        return value

    # -- the calls -----------------------------------------------------------------------
    def _model(self, got) -> Any:
        from transpiler.frontend_ast.torch.reader_values import ModelV

        model = got.get("model")
        if not isinstance(model, ModelV) or model.md is None or not model.var:
            return None
        return model

    def _losses(self, helper: Helper, got, n_outputs: int) -> list[T.Loss] | None:
        """One loss per output: the loss (one output) or the list of them (several: the helper
        zips them with the outputs, so a single loss would train the first output only)."""
        from transpiler.frontend_ast.torch.reader_values import LossV, TupleV

        value = got.get("loss")
        items = value.items if isinstance(value, TupleV) and n_outputs > 1 else [value]
        if len(items) != n_outputs:
            return None
        losses = []
        for item in items:
            if isinstance(item, HelperRefV) and item.helper.kind == "loss":
                loss = item.helper.config
            elif isinstance(item, LossV):
                loss = item.config
            else:
                return None
            if helper.logits:  # the model's final activation was skipped for a loss on logits
                if loss.from_logits:
                    loss = replace(loss, from_logits=False)
                elif n_outputs == 1:
                    return None  # (of several outputs, those without one are returned as they are)
            losses.append(loss)
        return losses

    def _metrics(self, bound, n_outputs: int) -> list[list[str]] | None:
        """``[("accuracy", 0, accuracy_fn), ...]`` → the Keras metric names of each output; of
        several outputs, each label is the output's name and the metric's (``"label_accuracy"``)."""
        node = bound.get("metrics")
        names: list[list[str]] = [[] for _ in range(n_outputs)]
        if node is None:
            return names
        if not isinstance(node, (cst.List, cst.Tuple)):
            return None
        for el in node.elements:
            item = el.value
            if not isinstance(item, cst.Tuple) or len(item.elements) != 3:
                return None
            label, index, fn = (e.value for e in item.elements)
            if not isinstance(label, cst.SimpleString) or not isinstance(index, cst.Integer) or \
                    not isinstance(fn, cst.Name) or not 0 <= int(index.value) < n_outputs:
                return None
            helper = self.helpers.get(fn.value)
            kind = None if helper is None else helper.config if helper.kind == "metric" else \
                helper.config.kind if helper.kind == "loss" else None
            name = _metric_name(label.evaluated_value, METRIC_NAMES.get(kind, set()), n_outputs > 1)
            if kind is None or name is None:
                return None
            names[int(index.value)].append(name)
        return names

    def _loss_weights(self, bound, n_outputs: int) -> list[float] | None | bool:
        """The loss weights (None: not given; False: not a literal list, one per output)."""
        node = bound.get("loss_weights")
        if node is None:
            return None
        try:
            weights = ast.literal_eval(_code(node))
        except (ValueError, SyntaxError):
            return False
        if not isinstance(weights, (list, tuple)) or len(weights) != n_outputs or \
                not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights):
            return False
        return [float(w) for w in weights]

    def _static(self, bound, role: str, default):
        node = bound.get(role)
        return default if node is None else self.r.static(node, role)

    def _data(self, bound, role: str) -> T.Code | None:
        node = bound.get(role)
        return None if node is None else T.Code(_code(node), self.r.sid(node))

    def _compile(self, model: str, md, losses: list[T.Loss], metrics: list[list[str]], optimizer, loss_node,
                 loss_weights=None) -> bool:
        """The compile before the model's first fit/evaluate (False: it differs from the one
        already made)."""
        done = self.compiled.get(model)
        if done is not None:
            c = done["compile"]
            if c.losses != losses or c.metrics != metrics or c.loss_weights != loss_weights or \
                    (optimizer is not None and done["optimizer_node"] is not None and
                     done["optimizer_node"] is not optimizer.node):
                return False
            if optimizer is not None and c.optimizer is None:
                return False  # evaluated before it was trained: a second compile would reset it
            return True
        stmt = self._statement()
        if stmt is None:
            return False
        compile_ = T.Compile(optimizer.config if optimizer is not None else None, losses,
                             loss_weights, metrics)
        config = {"compile": compile_, "optimizer_var": optimizer.var if optimizer is not None else None,
                  "optimizer_node": optimizer.node if optimizer is not None else None,
                  "loss_node": loss_node, "loss_var": loss_node.value if isinstance(loss_node, cst.Name) and
                  loss_node.value not in self.helpers else None,
                  "inline": set()}
        self.compiled[model] = config
        self.r.fact(stmt, "helper_compile", config, model=model)
        self.r.facts[self.r.sid(stmt)].model_def = md
        return True

    def _statement(self):
        stack = self.r.stmt_stack
        return stack[-1] if stack and isinstance(stack[-1], cst.SimpleStatementLine) else None

    def _done(self, node: cst.Call, bound, kind: str, model, config) -> None:
        self.recognised.add(self.r.sid(node.func))
        for expr in bound.values():
            for n in _names(expr):
                self.recognised.add(self.r.sid(n))
        self.r.fact(node, kind, config, model=model.var)
        self.r.facts[self.r.sid(node)].model_def = model.md

    def _uses_loss(self, got, bound) -> None:
        value = got.get("loss")
        for item in value.items if _loss_list(value) else [value]:
            if isinstance(item, HelperRefV):
                self.recognised.add(self.r.sid(item.node))

    def fit(self, helper: Helper, node, bound, got):
        from transpiler.frontend_ast.torch.reader_values import OptimizerV

        optimizer = got.get("optimizer")
        if not isinstance(optimizer, OptimizerV) or "y" not in bound:
            return None
        return self._compiled_call(helper, node, bound, got, optimizer, lambda: T.Fit(
            self._data(bound, "x"), self._data(bound, "y"),
            batch_size=self._static(bound, "batch_size", 32), epochs=self._static(bound, "epochs", 1),
            verbose=self._static(bound, "verbose", "auto"),
            validation_split=self._static(bound, "validation_split", 0.0),
            validation_data=self._data(bound, "validation_data"), shuffle=self._static(bound, "shuffle", True)))

    def fit_own_step(self, helper: Helper, node, bound, got):
        """``fit_train_step(model, x, ...)``: Keras' fit over the model's own train_step (which
        the model's Keras class has, torch_own_step); compiled where ``model.optimizer`` is set."""
        model = self._own_step_model(got)
        if model is None:
            return None
        return self._own_call(node, bound, model, "helper_fit", T.Fit(
            self._data(bound, "x"), self._data(bound, "y"),
            batch_size=self._static(bound, "batch_size", 32), epochs=self._static(bound, "epochs", 1),
            verbose=self._static(bound, "verbose", "auto"), shuffle=self._static(bound, "shuffle", True)))

    def evaluate_own_step(self, helper: Helper, node, bound, got):
        """``evaluate_test_step(model, x, y, ...)``: Keras' evaluate over the model's own test_step."""
        model = self._own_step_model(got)
        if model is None or "test_step" not in model.md.graph.from_torch.own_step.names:
            return None
        return self._own_call(node, bound, model, "helper_evaluate", T.Evaluate(
            self._data(bound, "x"), self._data(bound, "y"), batch_size=self._static(bound, "batch_size", 32),
            verbose=0, return_dict=self._static(bound, "return_dict", False)))

    def _own_step_model(self, got):
        model = self._model(got)
        return model if model is not None and model.md.graph.from_torch.own_step else None

    def _own_call(self, node, bound, model, kind: str, config):
        from transpiler.frontend_ast.torch.reader_values import OTHER

        self._done(node, bound, kind, model, config)
        return OTHER

    def own_optimizer(self, target: cst.Attribute, value, stmt) -> bool:
        """``model.optimizer = KerasAdam(model.parameters(), ...)`` for a model whose own
        train_step reads ``self.optimizer``: Keras' ``model.compile(optimizer=...)``."""
        from transpiler.frontend_ast.torch.reader_values import ModelV, OptimizerV

        if target.attr.value != "optimizer" or not isinstance(value, OptimizerV) or stmt is None or \
                len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
            return False
        model = self.r.peek(target.value, self.r.cur_scope)
        if not isinstance(model, ModelV) or model.md is None or not model.md.graph.from_torch.own_step:
            return False
        self.r.fact(stmt, "own_compile", {"model": _code(target.value)}, model=model.name)
        return True

    def evaluate(self, helper: Helper, node, bound, got):
        return self._compiled_call(helper, node, bound, got, None, lambda: T.Evaluate(
            self._data(bound, "x"), self._data(bound, "y"), batch_size=self._static(bound, "batch_size", 32),
            verbose=0, return_dict=self._static(bound, "return_dict", False)))

    def _compiled_call(self, helper: Helper, node, bound, got, optimizer, config):
        """fit/evaluate: the model's compile (made before its first call) and the call itself."""
        from transpiler.frontend_ast.torch.reader_values import OTHER

        model = self._model(got)
        n_outputs = len(model.md.graph.outputs) if model is not None else 0
        losses = self._losses(helper, got, n_outputs)
        metrics = self._metrics(bound, n_outputs)
        weights = self._loss_weights(bound, n_outputs)
        if model is None or losses is None or metrics is None or weights is False or \
                not self._compile(model.var, model.md, losses, metrics, optimizer, bound["loss"], weights):
            return None
        self._uses_loss(got, bound)
        self._done(node, bound, f"helper_{helper.kind}", model, config())
        return OTHER

    def predict(self, helper: Helper, node, bound, got):
        from transpiler.frontend_ast.torch.reader_values import OTHER

        model = self._model(got)
        if model is None or helper.logits:
            return None
        config = {"predict": T.Predict(self._data(bound, "x"), batch_size=self._static(bound, "batch_size", 32)),
                  "outer": None}
        outer = self._outer_transpose(node)
        if outer is not None and len(model.md.graph.outputs) > 1:
            return None  # a transpose of a list of outputs
        if outer is not None:  # np.transpose(predict(...), perm): the fact replaces the transpose too
            self.recognised.add(self.r.sid(node.func))
            config["outer"] = outer[1]
            self._done(outer[0], bound, "helper_predict", model, config)
        else:
            self._done(node, bound, "helper_predict", model, config)
        return OTHER  # numpy arrays (the helper returns them so), as Keras' predict does

    def _imported_path(self, func) -> str | None:
        """The dotted path ``func`` names through the script's imports (``np.transpose`` after
        ``import numpy as np``: numpy.transpose), None when it names no import."""
        from transpiler.frontend_ast.torch.values import Ref

        dotted = torch_helpers._dotted(func)
        head, _, rest = (dotted or "").partition(".")
        ref = self.r.fe.globals.vars.get(head) if head else None
        return ref.path + (f".{rest}" if rest else "") if isinstance(ref, Ref) else None

    def _outer_transpose(self, node: cst.Call):
        """(the ``np.transpose(node, perm)`` call around ``node``, perm) or None."""
        if self._parents is None:
            self._parents = {}
            for call in torch_helpers._calls(self.r.fe.module):
                if self._imported_path(call.func) == "numpy.transpose" and len(call.args) == 2 and \
                        isinstance(call.args[0].value, cst.Call) and call.args[1].keyword is None:
                    self._parents[call.args[0].value] = call
        parent = self._parents.get(node)
        if parent is None:
            return None
        try:
            perm = ast.literal_eval(_code(parent.args[1].value))
        except (ValueError, SyntaxError):
            return None
        return (parent, tuple(perm)) if isinstance(perm, (tuple, list)) else None

    # -- at the end ------------------------------------------------------------------------
    def finish(self) -> set[str]:
        """Drop the variables and helper definitions only recognised calls used; the names
        of the helpers that stay (to be read as before)."""
        for scope, name, stmt, target in self.variables:
            refs = [n for n in _uses(scope, name) if n is not target]
            if refs and all(self.r.sid(n) in self.recognised for n in refs):
                self.r.fact(stmt, "drop", f"{name}: its value moved into model.compile")
                for config in self.compiled.values():
                    if config["optimizer_var"] == name or config["loss_var"] == name:
                        config["inline"].add(name)
                    opt = config["compile"].optimizer
                    if config["optimizer_var"] == name and opt.kind == "sgd" and opt.schedule is None:
                        # only the recognised fit steps it, at its one rate: torch's momentum on
                        # gradients and Keras' on rate-scaled steps are the same numbers then
                        opt.momentum_on_gradients = False
            else:
                value = stmt.body[0].value
                loss = next((c["compile"].losses[0] for c in self.compiled.values() if c["loss_var"] == name), None)
                if isinstance(value, cst.Name) and loss is not None:  # a loss function kept in a variable
                    self.r.fact(value, "loss_object", loss)
        for md in self.r.program.models:  # the helpers the model's own steps used (torch_own_step)
            own = md.graph.from_torch.own_step
            if own is not None:  # (the Name nodes own_step saw: their stable ids here, and out of the graph printers read)
                self.recognised.update(self.r.sid(n) for n in own.recognised)
                own.recognised = []
        kept = set()
        names = {n: h for n, h in self.helpers.items()}
        droppable = set(names)
        refs = _references(self.r.fe.module, set(names))
        changed = True
        while changed:
            changed = False
            for name in sorted(droppable):
                if any(owner not in droppable and self.r.sid(n) not in self.recognised for owner, n in refs.get(name, [])):
                    droppable.discard(name)
                    changed = True
        for name, helper in names.items():
            if name in droppable and refs.get(name):
                self.r.fact(helper.node, "drop", f"{name}: a training helper, now Keras' own")
            else:
                kept.add(name)
        return kept


def _default(helper: Helper, role: str):
    """The default value of ``helper``'s keyword parameter of ``role`` (a literal), else None."""
    name = helper.roles.get(role)
    for p in helper.node.params.kwonly_params:
        if p.name.value == name:
            try:
                return ast.literal_eval(_code(p.default))
            except (ValueError, SyntaxError):
                return None
    return None


def _loss_list(value) -> bool:
    """A list of recognised loss functions (one per output of a model)."""
    from transpiler.frontend_ast.torch.reader_values import TupleV

    return isinstance(value, TupleV) and bool(value.items) and all(
        isinstance(v, HelperRefV) and v.helper.kind == "loss" for v in value.items)


def _metric_name(label: str, names: set[str], prefixed: bool) -> str | None:
    """The Keras metric name a log label stands for: the label itself, or (``prefixed``: a
    model of several outputs) the longest of ``names`` it ends with after ``<output>_``."""
    if not prefixed:
        return label if label in names else None
    found = [n for n in names if label.endswith("_" + n) and len(label) > len(n) + 1]
    return max(found, key=len) if found else None


def _names(node) -> list[cst.Name]:
    """The Name nodes under ``node`` that refer to a binding (not attribute or keyword names)."""
    return references(node)


def _uses(scope, name: str) -> list[cst.Name]:
    """The Name nodes of ``name`` in ``scope`` (a function or the module); at module level, the
    functions that bind a ``name`` of their own are left out."""
    if isinstance(scope, cst.FunctionDef):
        return [n for n in _names(scope.body) if n.value == name]
    out = []
    for stmt in scope.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and name in _bound(stmt):
            continue
        out += [n for n in _names(stmt) if n.value == name]
    return out


def _bound(node) -> set[str]:
    """Names a definition binds itself: parameters, assignment, loop and comprehension targets."""
    found: set[str] = set()

    def targets(t) -> None:
        found.update(target_names(t))

    class V(cst.CSTVisitor):
        def visit_Param(self, n: cst.Param) -> None:
            found.add(n.name.value)

        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            targets(n.target)

        def visit_For(self, n: cst.For) -> None:
            targets(n.target)

        def visit_CompFor(self, n: cst.CompFor) -> None:
            targets(n.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            targets(n.target)

    node.visit(V())
    return found


def _references(module: cst.Module, names: set[str]) -> dict[str, list]:
    """name → [(the top-level definition the reference sits in, or None; the Name node)],
    definitions' own names and parameters left out."""
    out: dict[str, list] = {}
    for stmt in module.body:
        owner = stmt.name.value if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else None
        body = stmt.body if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else stmt
        extra = []
        if isinstance(stmt, cst.FunctionDef):
            extra = [p.default for p in stmt.params.params if p.default is not None] + \
                [d.decorator for d in stmt.decorators]
        for part in [body] + extra:
            for n in _names(part):
                if n.value in names:
                    out.setdefault(n.value, []).append((owner, n))
    return out
