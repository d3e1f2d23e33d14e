"""The usual PyTorch training loop → ``ir.training.TrainingLoop`` (compile + fit).

Recognised shape (names are the program's own)::

    for epoch in range(EPOCHS):                 # or a single pass over the loader
        model.train()                           # running sums set to constants
        for xb, yb in train_loader:             # enumerate(loader) too
            optimizer.zero_grad()               # or model.zero_grad()
            out = model(xb)                     # optional
            loss = criterion(out, yb)           # a loss object or F.<loss>(...)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)   # optional
            optimizer.step()
            scheduler.step()                    # per step (optional)
            running += loss.item() * xb.size(0) # reporting (absorbed)
        scheduler.step() / scheduler.step(val_loss)                  # per epoch
        model.eval(); with torch.no_grad(): val_loss = criterion(model(x_val), y_val).item()
        test_loss, acc = evaluate(model, test_loader, criterion)    # a user function
        print(...)
        if val_loss < best: best, state, bad = val_loss, copy.deepcopy(model.state_dict()), 0
        else: bad += 1; if bad >= patience: break                    # early stopping

A loop over phases (``for phase in ["train", "val"]``, the transfer-learning tutorial's
``train_model``) is specialised per phase by ``torch_phases`` and read as this shape, the
second phase as the evaluation.

The arrays of the training ``TensorDataset`` become fit's ``x``/``y``, the evaluated data
``validation_data``, the running sums and prints are what fit reports itself (listed in
``absorbed``), accuracy (or MAE) computed for reporting becomes a metric. Anything else
in the loop raises ``NotStandard`` with the line that differs.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from transpiler.cst_fast import statement_blocks
from transpiler.frontend_ast.keras.frontend import _names_in
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.reader_values import (
    LOSSES, DatasetV, FuncV, LoaderV, LossV, ModelV, NotStandard, OptimizerV, SchedulerV, StateV, TorchRef,
    _code, _root_names, transforms_batch)
from transpiler.ir.code_literals import bare_argument, dotted_name as _dotted
from transpiler.ir import training as T

_EVALUATION_PHASE = object()  # where a phase loop's evaluation phase runs among the epoch's statements
CLIP_FUNCTIONS = {"torch.nn.utils.clip_grad_norm_": "global_clipnorm",
                  "torch.nn.utils.clip_grad.clip_grad_norm_": "global_clipnorm",
                  "torch.nn.utils.clip_grad_value_": "clipvalue",
                  "torch.nn.utils.clip_grad.clip_grad_value_": "clipvalue"}


def _call_of(stmt) -> cst.Call | None:
    """The call of an expression statement ``f(...)``."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


def _method_call(stmt) -> tuple[str, str, cst.Call] | None:
    """``obj.name(...)`` as a statement: (obj's source, name, call)."""
    call = _call_of(stmt)
    if call is not None and isinstance(call.func, cst.Attribute):
        obj = _dotted(call.func.value)
        if obj is not None:
            return obj, call.func.attr.value, call
    return None


def _assign(stmt) -> tuple[list, cst.BaseExpression] | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
        return [t.target for t in stmt.body[0].targets], stmt.body[0].value
    return None


def _names_assigned(node) -> set[str]:
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            out.update(_target_names(n.target))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            out.update(_target_names(n.target))

        def visit_For(self, n: cst.For) -> None:
            out.update(_target_names(n.target))

    node.visit(V())
    return out


def _target_names(t) -> set[str]:
    if isinstance(t, cst.Name):
        return {t.value}
    if isinstance(t, (cst.Tuple, cst.List)):
        return set().union(*[_target_names(e.value) for e in t.elements]) if t.elements else set()
    return set()


def _is_print(stmt) -> bool:
    call = _call_of(stmt)
    return call is not None and isinstance(call.func, cst.Name) and call.func.value == "print"


def _only_prints(stmt) -> bool:
    """``print(...)``, or an ``if`` whose branches only print."""
    if _is_print(stmt):
        return True
    if isinstance(stmt, cst.If):
        return all(all(_only_prints(s) for s in b) for b in statement_blocks(stmt))
    return False


class LoopReader:
    """Reads one ``for`` statement with a ``backward()`` in it."""

    def __init__(self, reader, loop: cst.For, scope):
        self.r = reader
        self.loop = loop
        self.scope = scope
        self.absorbed: list[str] = []
        self.report_nodes: list[cst.CSTNode] = []
        self.val_x = self.val_y = None
        self.val_loss_vars: set[str] = set()
        self.callbacks: list[str] = []
        self.early: T.Callback | None = None
        self.after: dict[str, str] = {}
        self.best_var = self.state_var = None
        self.mode_after: bool | None = None
        self.origin: dict[int, cst.CSTNode] = {}  # a specialised node → the source node it stands for
        self.phases = None  # the PhaseReader of a loop over training/evaluation phases

    def peek(self, node, scope=None):
        """What ``node`` holds, read without recording anything (the loop is replaced whole)."""
        return self.r.peek(node, scope or self.scope)

    def line(self, node) -> int:
        return self.r.fe._span(self.origin.get(self.r.sid(node), node)).line

    def kind(self, name: str):
        return self.scope.lookup(name)

    # -- entry ------------------------------------------------------------------------
    def read(self) -> T.TrainingLoop:
        loop = self.loop
        if loop.orelse is not None:
            raise NotStandard("a for/else loop")
        items = self.peek(loop.iter, self.scope) if not isinstance(loop.iter, cst.Call) or \
            not (isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range") else None
        if _loader_of(items) is not None:  # one pass over the loader: a single epoch
            epochs: Any = 1
            pre, inner, post = [], loop, []
        else:
            epochs = self.epochs(loop)
            body = list(loop.body.body)
            inners = [i for i, s in enumerate(body) if isinstance(s, cst.For) and _has_backward_stmt(s)]
            if len(inners) != 1:
                raise NotStandard("the epoch loop does not hold exactly one loop over batches with backward()")
            pre, inner, post = body[:inners[0]], body[inners[0]], body[inners[0] + 1:]
            if phase_names(inner) is not None:  # for phase in ["train", "val"]: ...
                self.phases = PhaseReader(self, inner)
                train_pre, inner, train_post = self.phases.split()
                pre, post = pre + train_pre, train_post + [_EVALUATION_PHASE] + post
        step = self.batch_loop(inner)
        for stmt in pre:
            self.pre_statement(stmt, step)
        for stmt in post:
            if stmt is _EVALUATION_PHASE:
                self.phases.read_evaluation(step)
            else:
                self.post_statement(stmt, step)
        self.check_reads_after(step)
        model: ModelV = step["model"]
        opt: OptimizerV = step["optimizer"]
        loss: LossV = step["loss"]
        if step.get("clip"):
            key, value = step["clip"]
            opt.config.clip[key] = value
        metrics = self.metrics(loss.config)
        loader: LoaderV = step["loader"]
        if _code(loader.drop_last) not in ("None", "False") if loader.drop_last is not None else False:
            raise NotStandard("DataLoader(drop_last=True): Keras' fit keeps the last partial batch")
        via = step.get("loader_code")
        x = [self.array_code(loader.dataset, i, via) for i in step["x"]]
        y = self.array_code(loader.dataset, step["y"], via)
        if len(x) != 1:
            raise NotStandard("a model with several inputs")
        fit = T.Fit(x=x[0], y=y, batch_size=self.loader_setting(loader, loader.batch_size, "batch_size", via, 1),
                    epochs=epochs, shuffle=self.loader_setting(loader, loader.shuffle, "shuffle", via, False),
                    verbose=2)
        validation = None
        if self.val_x is not None and self.val_y is not None:
            validation = (self.val_x, self.val_y)
            fit.validation_data = T.Code(f"({self.val_x.text}, {self.val_y.text})")
        elif self.val_loss_vars and (self.early is not None or step.get("plateau")):
            raise NotStandard("the validation data the loop evaluates could not be told")
        if (self.early is not None or any(self.kind(c).plateau for c in self.callbacks if self.kind(c))) \
                and validation is None:
            raise NotStandard("early stopping / ReduceLROnPlateau on a value other than a validation loss")
        compile_ = T.Compile(opt.config, [loss.config], None, [metrics])
        if self.mode_after is not None:
            model.training = self.mode_after
        if self.state_var:
            self.scope.vars[self.state_var] = StateV(model, snapshot=True)
        return T.TrainingLoop(compile_, fit, model=step["model_var"], optimizer=opt.var or "optimizer",
                              loss=loss.var, validation=validation, callbacks=self.callbacks,
                              early_stopping=self.early, after=self.after, absorbed=self.absorbed)

    def epochs(self, loop: cst.For) -> Any:
        it = loop.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
            raise NotStandard(f"the epoch loop runs over {_code(it)!r}, not range(epochs)")
        args = [a.value for a in it.args]
        if len(args) == 1:
            return _value(self.r, args[0], None)
        if len(args) == 2:
            start, stop = args
            if isinstance(start, cst.Integer) and int(start.value) == 0:
                return _value(self.r, stop, None)
            if isinstance(start, cst.Integer) and int(start.value) == 1 and isinstance(stop, cst.BinaryOperation) \
                    and isinstance(stop.operator, cst.Add) and _code(bare_argument(stop.right)) == "1":
                return _value(self.r, stop.left, None)
            return T.Code(f"{_code(stop)} - {_code(start)}")
        raise NotStandard("range() with a step as the epoch loop")

    # -- the batch loop ---------------------------------------------------------------
    def batch_loop(self, inner: cst.For) -> dict:
        it, target = inner.iter, inner.target
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate":
            it = it.args[0].value
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                raise NotStandard("enumerate(loader) must unpack into (i, batch)")
            target = target.elements[1].value
        loader = self.peek(it, self.scope) if isinstance(it, (cst.Name, cst.Attribute, cst.Subscript)) else None
        if not isinstance(loader, LoaderV):
            raise NotStandard(f"the batches come from {_code(it)!r}, not a DataLoader over a TensorDataset")
        if inner.orelse is not None:
            raise NotStandard("a for/else batch loop")
        names = _batch_names(target)
        body = list(inner.body.body)
        unpack = _unpacks(body[0], target) if body and isinstance(target, cst.Name) else None
        if unpack is not None:  # ``for data in loader: inputs, labels = data``
            names, body = unpack, body[1:]
        if names is None or len(names) != len(loader.dataset.arrays):
            raise NotStandard(f"the batch {_code(target)!r} does not unpack the dataset's "
                              f"{len(loader.dataset.arrays)} arrays")
        step: dict[str, Any] = {"loader": loader, "loader_code": it, "batch": {n: i for i, n in enumerate(names)},
                                "outputs": set()}
        seen: list[str] = []
        for stmt in body:
            seen.append(self.batch_statement(stmt, step))
        order = [s for s in seen if s in ("zero_grad", "backward", "clip", "step")]
        if "zero_grad" not in order:
            raise NotStandard("the gradients are never zeroed (zero_grad): gradients accumulate over batches")
        if order.count("backward") != 1 or order.count("step") != 1:
            raise NotStandard("one backward() and one optimizer step per batch are expected")
        expected = ["zero_grad", "backward", "clip", "step"] if "clip" in order else ["zero_grad", "backward", "step"]
        if order != expected:
            raise NotStandard(f"the step runs {', '.join(order)}; expected {', '.join(expected)}")
        for key in ("model", "loss", "optimizer"):
            if key not in step:
                raise NotStandard(f"no {key} found in the batch loop")
        if step["optimizer"].model is not step["model"]:
            raise NotStandard("the optimizer does not train the model the loop calls")
        return step

    def batch_statement(self, stmt, step: dict) -> str:
        if _is_pass(stmt):
            return "pass"
        mc = _method_call(stmt)
        if mc is not None:
            obj, name, call = mc
            kind = self.kind(obj.split(".")[0]) if "." not in obj else None
            if name == "zero_grad" and isinstance(kind, (OptimizerV, ModelV)):
                return "zero_grad"
            if name == "backward" and obj == step.get("loss_var") and not call.args:
                return "backward"
            if name == "step" and isinstance(kind, OptimizerV):
                step["optimizer"] = kind
                if call.args:
                    raise NotStandard("optimizer.step(closure)")
                return "step"
            if name == "step" and isinstance(kind, SchedulerV):
                self.scheduler(obj, kind, "step", call, step)
                return "scheduler"
            if name in ("train", "eval") and isinstance(kind, ModelV):
                return "mode"
        call = _call_of(stmt)
        if call is not None:
            func = self.peek(call.func, self.scope) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
            if isinstance(func, TorchRef) and func.path in CLIP_FUNCTIONS:
                step["clip"] = self.clip(func.path, call, step)
                return "clip"
        assign = _assign(stmt)
        if assign is not None:
            targets, value = assign
            if len(targets) == 1 and isinstance(targets[0], cst.Name):
                name = targets[0].value
                if self.model_call(value, step) is not None:
                    step["outputs"].add(name)
                    return "forward"
                loss = self.loss_of(value, step)
                if loss is not None:
                    step["loss"], step["loss_var"] = loss, name
                    return "loss"
        if transforms_batch(stmt, step["batch"]):
            # (``images = images.reshape(-1, 784)``: the batch changes before the model sees it)
            raise NotStandard(f"line {self.line(stmt)}: {_code(stmt).strip()!r} transforms a batch array "
                              "(fit passes the arrays as they are)")
        if self.is_report(stmt, step):
            self.absorb(stmt, "the running sums")
            return "report"
        raise NotStandard(f"line {self.line(stmt)}: {_code(stmt).strip()!r} in the batch loop")

    def model_call(self, value, step: dict) -> list | None:
        """``model(xb)`` on batch arrays: the indices of the arrays it reads."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        kind = self.kind(value.func.value)
        if not isinstance(kind, ModelV):
            return None
        idx = []
        for arg in value.args:
            if arg.keyword is not None or arg.star or not isinstance(arg.value, cst.Name) or \
                    arg.value.value not in step["batch"]:
                raise NotStandard(f"the model reads {_code(value)!r}; expected batch arrays")
            idx.append(step["batch"][arg.value.value])
        if "model" in step and step["model"] is not kind:
            raise NotStandard("two models in one batch loop (a custom train step)")
        step["model"], step["model_var"], step["x"] = kind, value.func.value, idx
        return idx

    def loss_of(self, value, step: dict) -> LossV | None:
        if not isinstance(value, cst.Call):
            return None
        func = self.peek(value.func, self.scope) if isinstance(value.func, (cst.Name, cst.Attribute)) else None
        args = [a for a in value.args if a.keyword is None]
        if isinstance(func, LossV):
            loss = func
            if len(value.args) != 2:
                raise NotStandard("the loss object is called with other than (output, target)")
        elif isinstance(func, TorchRef) and func.path.startswith("torch.nn.functional.") and \
                func.path.split(".")[-1] in LOSSES:
            kw = {a.keyword.value: self.r.static(a.value, a.keyword.value) for a in value.args if a.keyword}
            try:
                config = self.r.loss_config(func.path.split(".")[-1], kw, [])
            except Unsupported as exc:
                raise NotStandard(str(exc)) from None
            loss = LossV(config, value)
        else:
            return None
        if len(args) != 2:
            raise NotStandard("the loss is called with other than (output, target)")
        out, target = args[0].value, args[1].value
        if getattr(func, "keras_order", False):  # Keras' loss object: (target, output)
            out, target = target, out
        if isinstance(out, cst.Name) and out.value in step["outputs"]:
            pass
        elif self.model_call(out, step) is None:
            raise NotStandard(f"the loss reads {_code(out)!r}; expected the model's output")
        if not isinstance(target, cst.Name) or target.value not in step["batch"]:
            raise NotStandard(f"the loss target {_code(target)!r} is not a batch array")
        step["y"] = step["batch"][target.value]
        return loss

    def clip(self, path: str, call: cst.Call, step: dict) -> tuple[str, Any]:
        args = [a for a in call.args if a.keyword is None]
        kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        params = args[0].value if args else kw.get("parameters")
        value = args[1].value if len(args) > 1 else kw.get("max_norm", kw.get("clip_value"))
        if params is None or value is None or not (isinstance(params, cst.Call) and isinstance(params.func,
                                                                                                cst.Attribute)
                                                   and params.func.attr.value == "parameters"):
            raise NotStandard("gradient clipping of something other than model.parameters()")
        norm = kw.get("norm_type") or (args[2].value if len(args) > 2 else None)
        if norm is not None and _code(norm) not in ("2", "2.0"):
            raise NotStandard(f"clip_grad_norm_(norm_type={_code(norm)})")
        return CLIP_FUNCTIONS[path], _value(self.r, value, None)

    def is_report(self, stmt, step: dict) -> bool:
        """A statement that only accumulates numbers for reporting (``total += ...``), or an
        ``if`` that prints them now and then and resets them (``if i % 100 == 99: print(...);
        running = 0.0``)."""
        if _only_prints(stmt) or (isinstance(stmt, cst.If) and stmt.orelse is None and all(
                _only_prints(s) or self.is_report(s, step) for s in stmt.body.body) and
                not _reads_model(stmt.test, self.scope)):
            self.report_nodes.append(stmt)
            return True
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                continue
            if isinstance(small, cst.Assign) and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in small.targets):
                continue
            return False
        self.report_nodes.append(stmt)
        return True

    def absorb(self, stmt, what: str) -> None:
        text = f"{what} (line {self.line(stmt)})"
        if not any(a.startswith(what) for a in self.absorbed):
            self.absorbed.append(text)

    def scheduler(self, var: str, sched: SchedulerV, where: str, call: cst.Call, step: dict) -> None:
        if sched.plateau is not None:
            if where != "epoch" or len(call.args) != 1:
                raise NotStandard("ReduceLROnPlateau must be stepped once per epoch with the monitored value")
            arg = call.args[0].value
            if not (isinstance(arg, cst.Name) and arg.value in self.val_loss_vars):
                raise NotStandard(f"ReduceLROnPlateau.step({_code(arg)}): only a validation loss is translated")
            step["plateau"] = True
        else:
            if call.args:
                raise NotStandard("scheduler.step(epoch) with an argument")
            if sched.state_read:
                raise NotStandard("the program saves or restores the scheduler's state (state_dict): the "
                                  "scheduler the program steps itself")
            sched.schedule.per = where
        if sched.optimizer is not step.get("optimizer", sched.optimizer):
            raise NotStandard("a scheduler of another optimizer")
        if var not in self.callbacks:
            self.callbacks.append(var)

    # -- around the batch loop -------------------------------------------------------
    def pre_statement(self, stmt, step: dict) -> None:
        if _is_pass(stmt):
            return
        mc = _method_call(stmt)
        if mc is not None and mc[1] in ("train", "eval") and isinstance(self.kind(mc[0]), ModelV):
            if mc[1] == "eval":
                raise NotStandard("the model trains in eval mode")
            return
        assign = _assign(stmt)
        if assign is not None and all(isinstance(t, (cst.Name, cst.Tuple)) for t in assign[0]) and \
                not _reads_model(assign[1], self.scope):
            self.absorb(stmt, "the running sums")
            return
        if _only_prints(stmt):
            self.absorb(stmt, "the prints")
            return
        raise NotStandard(f"line {self.line(stmt)}: {_code(stmt).strip()!r} before the batch loop")

    def post_statement(self, stmt, step: dict) -> None:
        if _is_pass(stmt):
            return
        mc = _method_call(stmt)
        if mc is not None:
            obj, name, call = mc
            kind = self.kind(obj)
            if name in ("train", "eval") and isinstance(kind, ModelV):
                self.mode_after = name == "train"
                return
            if name == "step" and isinstance(kind, SchedulerV):
                self.scheduler(obj, kind, "epoch", call, step)
                return
        if _only_prints(stmt):
            self.report_nodes.append(stmt)
            self.absorb(stmt, "the prints")
            return
        if isinstance(stmt, cst.With) and self.is_no_grad(stmt):
            for inner in stmt.body.body:
                self.evaluation(inner, step)
            self.absorb(stmt, "the evaluation")
            return
        if isinstance(stmt, cst.If) and self.early_stopping(stmt, step):
            return
        if isinstance(stmt, cst.For):
            self.evaluation(stmt, step)
            self.absorb(stmt, "the evaluation")
            return
        assign = _assign(stmt)
        if assign is not None and self.evaluation(stmt, step, strict=False):
            self.absorb(stmt, "the evaluation")
            return
        raise NotStandard(f"line {self.line(stmt)}: {_code(stmt).strip()!r} after the batch loop")

    def is_no_grad(self, stmt: cst.With) -> bool:
        if len(stmt.items) != 1:
            return False
        item = stmt.items[0].item
        func = item.func if isinstance(item, cst.Call) else item
        ref = self.peek(func, self.scope) if isinstance(func, (cst.Name, cst.Attribute)) else None
        return isinstance(ref, TorchRef) and ref.path in ("torch.no_grad", "torch.inference_mode")

    def evaluation(self, stmt, step: dict, strict: bool = True) -> bool:
        """Validation code: model calls on data that is not the training batch, loss and
        metric values of them, an evaluation loop over another loader, or a call of the
        user's evaluation function with the model and a loader."""
        model_var = step["model_var"]
        if isinstance(stmt, cst.For):
            loader = self.peek(stmt.iter, self.scope) if isinstance(stmt.iter, (cst.Name, cst.Attribute, cst.Subscript)) else None
            names = _batch_names(stmt.target)
            if not isinstance(loader, LoaderV) or names is None:
                raise NotStandard(f"line {self.line(stmt)}: an evaluation loop over {_code(stmt.iter)!r}")
            xi, yi = self.loader_roles(stmt, names, model_var)
            self.set_validation(self.array_code(loader.dataset, xi, stmt.iter),
                                self.array_code(loader.dataset, yi, stmt.iter))
            self.report_nodes.append(stmt)
            return True
        if isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Assign, cst.AugAssign))
                                                            for s in stmt.body):
            for small in stmt.body:
                self.evaluation_assign(small, step, model_var)
            self.report_nodes.append(stmt)
            return True
        if _only_prints(stmt):
            self.report_nodes.append(stmt)
            return True
        if strict:
            raise NotStandard(f"line {self.line(stmt)}: {_code(stmt).strip()!r} in the evaluation")
        return False

    def evaluation_assign(self, small, step: dict, model_var: str) -> None:
        value = small.value
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        # a call of the user's evaluation function: f(model, loader, ...)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            fn = self.peek(value.func, self.scope)
            if isinstance(fn, FuncV):
                kinds = [self.peek(a.value, self.scope) for a in value.args]
                loaders = [k for k in kinds if isinstance(k, LoaderV)]
                if any(k is step["model"] for k in kinds) and len(loaders) == 1:
                    ds = loaders[0].dataset
                    if len(ds.arrays) != 2:
                        raise NotStandard("an evaluation function over a dataset of other than (x, y)")
                    self.set_validation(self.array_code(ds, 0), self.array_code(ds, 1))
                    saved = type(self.r.used_loaders)(self.r.used_loaders)
                    self.r.read_function(fn.node, kinds, {})  # its code stays in the program
                    self.r.used_loaders = saved  # the call is fit's now: the loader it read is not used
                    self.report_nodes.append(fn.node)
                    first = targets[0]
                    if isinstance(first, cst.Tuple):
                        first = first.elements[0].value
                    if isinstance(first, cst.Name):
                        self.val_loss_vars.add(first.value)
                    return
        calls = _model_calls(value, model_var)
        for call in calls:
            if len(call.args) != 1:
                raise NotStandard("a validation call of the model with several inputs")
            arg = call.args[0].value
            if _names_in(arg) & set(step["batch"]):
                raise NotStandard("the evaluation reads the training batch")
            self.set_validation(x=T.Code(_code(arg), self.r.sid(arg)))
        target = _loss_target(value, self.scope, self.r)
        if target is not None:
            self.set_validation(y=T.Code(_code(target), self.r.sid(target)))
            for t in targets:
                if isinstance(t, cst.Name):
                    self.val_loss_vars.add(t.value)
        if not calls and target is None and _reads_model(value, self.scope):
            raise NotStandard(f"{_code(value)!r} in the evaluation")

    def loader_roles(self, loop: cst.For, names: list[str], model_var: str) -> tuple[int, int]:
        """Which batch array is the model's input and which the target, in an evaluation loop."""
        xi = yi = None
        for call in _model_calls(loop, model_var):
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in names:
                    xi = names.index(arg.value.value)
        for n in names:
            if names.index(n) != xi:
                yi = names.index(n)
        if xi is None or yi is None:
            raise NotStandard("the evaluation loop's input and target could not be told apart")
        return xi, yi

    def set_validation(self, x: T.Code | None = None, y: T.Code | None = None) -> None:
        for attr, value in (("val_x", x), ("val_y", y)):
            if value is None:
                continue
            old = getattr(self, attr)
            if old is not None and old.text != value.text:
                raise NotStandard(f"the loop evaluates on two data sets ({old.text} and {value.text})")
            setattr(self, attr, value)

    def early_stopping(self, stmt: cst.If, step: dict) -> bool:
        """``if val < best: best, state, bad = val, deepcopy(model.state_dict()), 0
        else: bad += 1; if bad >= patience: break``."""
        test = stmt.test
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and
                isinstance(test.comparisons[0].operator, cst.LessThan) and isinstance(test.left, cst.Name)):
            return False
        value, best = test.left.value, test.comparisons[0].comparator
        min_delta: Any = 0.0
        if isinstance(best, cst.BinaryOperation) and isinstance(best.operator, cst.Subtract) and \
                isinstance(best.left, cst.Name):
            min_delta, best = _value(self.r, best.right, None), best.left
        if not isinstance(best, cst.Name) or value not in self.val_loss_vars:
            return False
        best_var = best.value
        counter = state = None
        for small in [s for line in stmt.body.body for s in getattr(line, "body", [])]:
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                return False
            tgt, val = small.targets[0].target, small.value
            pairs = list(zip(tgt.elements, val.elements)) if isinstance(tgt, cst.Tuple) and \
                isinstance(val, cst.Tuple) and len(tgt.elements) == len(val.elements) else [(tgt, val)]
            for t, v in pairs:
                t = getattr(t, "value", t)
                v = getattr(v, "value", v)
                if not isinstance(t, cst.Name):
                    return False
                if t.value == best_var and isinstance(v, cst.Name) and v.value == value:
                    continue
                if isinstance(v, cst.Integer) and v.value == "0":
                    counter = t.value
                    continue
                if _is_state_copy(v, step["model_var"]):
                    state = t.value
                    continue
                return False
        orelse = stmt.orelse
        if not isinstance(orelse, cst.Else) or counter is None:
            return False
        inc, check = (list(orelse.body.body) + [None, None])[:2]
        if len(orelse.body.body) != 2 or not (isinstance(inc, cst.SimpleStatementLine) and
                                               isinstance(inc.body[0], cst.AugAssign) and
                                               _code(inc.body[0].target) == counter and
                                               _code(bare_argument(inc.body[0].value)) == "1"):
            return False
        if not (isinstance(check, cst.If) and isinstance(check.test, cst.Comparison) and
                _code(check.test.left) == counter and len(check.test.comparisons) == 1 and
                isinstance(check.test.comparisons[0].operator, cst.GreaterThanEqual) and check.orelse is None):
            return False
        body = list(check.body.body)
        if not body or not (isinstance(body[-1], cst.SimpleStatementLine) and isinstance(body[-1].body[-1],
                                                                                            cst.Break)):
            return False
        if not all(_only_prints(s) for s in body[:-1]) or len(body[-1].body) != 1:
            return False
        patience = _value(self.r, check.test.comparisons[0].comparator, None)
        self.early = T.Callback("early_stopping", {"monitor": "val_loss", "patience": patience,
                                                   "min_delta": min_delta, "mode": "min",
                                                   "restore_best_weights": state is not None})
        self.best_var, self.state_var = best_var, state
        self.absorb(stmt, "early stopping")
        return True

    # -- the loop's variables after it ---------------------------------------------
    def check_reads_after(self, step: dict) -> None:
        assigned = _names_assigned(self.loop)
        holder = self.r.cur_function if self.r.cur_function is not None else self.r.fe.module
        end = self.r.fe._span(self.loop).end_line or self.line(self.loop)
        later: set[str] = set()

        class Reads(cst.CSTVisitor):
            def visit_Name(inner, n: cst.Name) -> None:  # noqa: N805
                span = self.r.fe._span(n)
                if span.line > end:
                    later.add(n.value)

        holder.visit(Reads())
        for name in sorted(assigned & later):
            if name == self.best_var:
                self.after[name] = "best_val_loss"
            elif name == self.state_var:
                self.after[name] = "best_weights"
            elif _reassigned_before_read(holder, name, end, self.r.fe):
                continue
            else:
                raise NotStandard(f"{name!r}, set in the loop, is read after it")

    # -- metrics ------------------------------------------------------------------------
    def metrics(self, loss: T.Loss) -> list[str]:
        """The metric the loop computes for reporting: accuracy (argmax == target, or a
        threshold on the logits), or the mean absolute error."""
        text = " ".join(_code(n) for n in self.report_nodes)
        out = []
        compares = "==" in text or ".eq(" in text
        # the predicted class: argmax, or the indices of max over the class dim (``_, p = out.max(1)``)
        predicted = "argmax" in text or re.search(r"\bmax\(\s*(dim\s*=\s*)?1\s*\)|torch\.max\(\s*[\w.]+\s*,\s*"
                                                 r"(dim\s*=\s*)?1\s*\)", text)
        if compares and predicted:
            out.append("accuracy")
        elif compares and (">" in text) and loss.kind == "binary_crossentropy":
            out.append("binary_accuracy")
        if (".abs()" in text or "abs(" in text or "l1_loss" in text) and loss.kind != "mean_absolute_error":
            out.append("mean_absolute_error")
        return out

    def array_code(self, ds: DatasetV, index: int, loader: cst.BaseExpression | None = None) -> T.Code:
        """Code for array ``index`` of ``ds`` that reads the same array in this scope: the
        expression the dataset was made of, else through the ``loader`` expression the loop
        reads (a function given the loader does not see its caller's arrays)."""
        node = ds.arrays[index]
        if ds.vision:  # (the generated VisionDataset / ImageFolder holds them)
            if ds.var is not None and self.r.same_binding(ds.var, self.scope, None):
                return T.Code(f"{ds.var}.arrays[{index}]")
            if loader is not None and isinstance(loader, (cst.Name, cst.Attribute, cst.Subscript)):
                return T.Code(f"{_code(loader)}.dataset.arrays[{index}]")
            raise NotStandard(f"the dataset {_code(ds.node)!r} is not visible where the loop runs")
        plain = isinstance(node, (cst.Name, cst.Subscript, cst.Attribute))
        if not plain and ds.var is not None and self.r.same_binding(ds.var, self.scope, None):
            return T.Code(f"{ds.var}.arrays[{index}]")
        if (not plain and ds.var is None) or (
                plain and all(self.r.same_binding(n.value, self.scope, ds) for n in _root_names(node))):
            return T.Code(_code(node), self.r.sid(node))
        if loader is not None and isinstance(loader, (cst.Name, cst.Attribute, cst.Subscript)):
            return T.Code(f"{_code(loader)}.dataset.arrays[{index}]")
        raise NotStandard(f"the arrays of {_code(ds.node)!r} are not visible where the loop runs")

    def loader_setting(self, loader: LoaderV, value, attribute: str, via, default: Any) -> Any:
        """The loader's ``batch_size``/``shuffle`` as a literal, else as code that reads the same
        value here (through the loader when the caller's name is not visible)."""
        found = _value(self.r, value, default)
        if not isinstance(found, T.Code) or all(
                self.r.same_binding(n, self.scope, loader.dataset) for n in _free_names(value)):
            return found
        if via is not None and isinstance(via, (cst.Name, cst.Attribute, cst.Subscript)):
            return T.Code(f"{_code(via)}.{attribute}")
        raise NotStandard(f"the loader's {attribute} {_code(value)!r} is not visible where the loop runs")


def _free_names(node) -> set[str]:
    """The variables an expression reads (not attribute names, not keywords):
    ``train_kwargs`` of ``train_kwargs.get("batch_size", 1)``."""
    attrs = {n.attr for n in _walk_nodes(node, cst.Attribute)}
    keywords = {a.keyword for a in _walk_nodes(node, cst.Arg) if a.keyword is not None}
    return {n.value for n in _walk_nodes(node, cst.Name) if n not in attrs and n not in keywords}


def _walk_nodes(node, kind):
    from transpiler.cst_fast import nodes_of

    return list(nodes_of(node, kind))


def _unpacks(stmt, target: cst.Name) -> list[str] | None:
    """The names of ``a, b = target`` (a batch unpacked in the loop's first statement)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign) \
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].value, cst.Name) and \
            stmt.body[0].value.value == target.value:
        return _batch_names(stmt.body[0].targets[0].target)
    return None


def _is_pass(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in stmt.body)


def _loader_of(value):
    return value if isinstance(value, LoaderV) else None


def _has_backward_stmt(stmt) -> bool:
    from transpiler.frontend_ast.torch.reader_values import _has_backward

    return _has_backward(stmt)


def _batch_names(target) -> list[str] | None:
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return [e.value.value for e in target.elements]
    return None


def _value(r, node, default: Any) -> Any:
    """A literal's value, else the expression as ``Code``."""
    if node is None:
        return default
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Float):
        return float(node.value.replace("_", ""))
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, (cst.Integer, cst.Float)):
        return -_value(r, node.expression, default)
    return T.Code(_code(node), r.sid(node))


def _reads_model(node, scope) -> bool:
    names = _names_in(node)
    return any(isinstance(scope.lookup(n), (ModelV, OptimizerV)) for n in names)


def _model_calls(node, model_var: str) -> list[cst.Call]:
    out = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            if isinstance(n.func, cst.Name) and n.func.value == model_var:
                out.append(n)

    node.visit(V())
    return out


def _loss_target(value, scope, reader):
    """The target of a loss computed in ``value`` (``criterion(pred, y_val)``), if any."""
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            args = [a for a in n.args if a.keyword is None]
            if len(args) != 2:
                return
            if isinstance(n.func, cst.Name) and isinstance(scope.lookup(n.func.value), LossV):
                found.append(args[1].value)
            elif isinstance(n.func, (cst.Name, cst.Attribute)):
                path = _dotted(n.func)
                ref = reader.peek(n.func, scope) if path else None
                if isinstance(ref, TorchRef) and ref.path.startswith("torch.nn.functional.") and \
                        ref.path.split(".")[-1] in LOSSES:
                    found.append(args[1].value)

    value.visit(V())
    return found[0] if found else None


def _is_state_copy(node, model_var: str) -> bool:
    """``copy.deepcopy(model.state_dict())``."""
    return isinstance(node, cst.Call) and _dotted(node.func) in ("copy.deepcopy", "deepcopy") and \
        len(node.args) == 1 and _code(bare_argument(node.args[0].value)) == f"{model_var}.state_dict()"


def _reassigned_before_read(holder, name: str, end: int, fe) -> bool:
    """``name`` is assigned again after the loop before anything reads it."""
    events = []

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            if name in _target_names(n.target):
                events.append((fe._span(n).line, "set"))

        def visit_For(self, n: cst.For) -> None:  # a loop variable of a later loop
            if name in _target_names(n.target):
                events.append((fe._span(n.target).line, "set"))

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                events.append((fe._span(n).line, "read"))

    holder.visit(V())
    after = sorted((ln, kind) for ln, kind in events if ln > end)
    reads = [ln for ln, kind in after if kind == "read"]
    sets = [ln for ln, kind in after if kind == "set"]
    return bool(sets) and (not reads or min(sets) <= min(reads))


from transpiler.frontend_ast.torch.phases import PhaseReader, phase_names  # noqa: E402  (it reads this module)

__all__ = ["LoopReader", "DatasetV", "Unsupported"]
