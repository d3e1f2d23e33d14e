"""Functions and classes of a torch script that do what Keras' compile/fit/evaluate/predict do,
recognised by their structure (not by their names): the torch side of a Keras training program.

A script translated from Keras (and many hand-written ones) trains through helpers:

* a *loader* function: returns ``DataLoader(TensorDataset(...arrays...), batch_size=B,
  shuffle=S)`` over arrays that come from its parameters;
* a *step* function: ``optimizer.zero_grad()``, the model called on a batch, a loss
  function called on its output and the target, ``loss.backward()``, ``optimizer.step()``;
* a *fit* function: ``for epoch in range(E): for batch in <a loader over x, y>: <a step
  on model, optimizer, loss>``, optionally metrics, a report under ``if verbose:``, a
  validation split or validation data evaluated per epoch;
* an *evaluate* function: the model and the loss over a loader of x, y, no gradient step;
* a *predict* function: the model over a loader of x only, no loss;
* *loss* and *metric* functions: one per-sample torch computation (``F.cross_entropy(...,
  reduction="none")``, ``(out - t).pow(2).mean(dim=-1)``, ``argmax(...) == t``, ...);
* an *optimizer class*: ``torch.optim.Adam`` whose ``step`` moves epsilon before the bias
  correction (Keras' Adam).

``analyse(module)`` finds them; each ``Helper`` says which parameter plays which role
(``roles``), so a call site binds its arguments to a Keras call's. Pure syntax: imports no
deep-learning framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.ir import training as T
from transpiler.ir.code_literals import dotted_name as _dotted
from transpiler.ir.code_literals import bare_argument
from transpiler.frontend_ast.torch.model_call_helper import model_call_roles

#: functional losses (torch.nn.functional.<name>) per sample: canonical kind, from logits
_F_LOSSES = {"cross_entropy": ("sparse_categorical_crossentropy", True),
             "binary_cross_entropy_with_logits": ("binary_crossentropy", True),
             "binary_cross_entropy": ("binary_crossentropy", False),
             "huber_loss": ("huber", False), "mse_loss": ("mean_squared_error", False),
             "l1_loss": ("mean_absolute_error", False)}
#: metric kinds a per-sample metric function computes, and the Keras names that log as them
METRIC_NAMES = {"accuracy": {"accuracy", "acc", "sparse_categorical_accuracy", "categorical_accuracy",
                             "binary_accuracy"},
                "mean_absolute_error": {"mae", "mean_absolute_error"},
                "mean_squared_error": {"mse", "mean_squared_error"}}


@dataclass
class Helper:
    """One recognised function (or optimizer class): ``kind`` and its parameters' roles."""

    kind: str  # loader, step, fit, evaluate, predict, loss, metric, metric_state, optimizer_class,
    # call_model, model_input (model_call_helper.py)
    node: Any
    params: list[str] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)  # role → parameter name
    config: Any = None  # loss: T.Loss; metric: its kind; optimizer_class: the torch base class
    logits: bool = False  # fit/evaluate: the model is called with return_logits=True

    def bind(self, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        """Role → argument expression of ``call``; None when an argument has no role (or is
        unpacked)."""
        by_param: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(call.args):
            if arg.star:
                return None
            if arg.keyword is not None:
                name = arg.keyword.value
            elif i < len(self.params):
                name = self.params[i]
            else:
                return None
            if name not in self.params or name in by_param:
                return None
            by_param[name] = arg.value
        role_of = {p: r for r, p in self.roles.items()}
        if any(p not in role_of for p in by_param):
            return None
        return {role_of[p]: v for p, v in by_param.items()}


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _calls(node) -> list[cst.Call]:
    found: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            found.append(n)

    node.visit(V())
    return found


def _method_calls(node, method: str) -> list[cst.Call]:
    return [c for c in _calls(node) if isinstance(c.func, cst.Attribute) and c.func.attr.value == method]


def _param_names(fn: cst.FunctionDef) -> list[str] | None:
    p = fn.params
    if isinstance(p.star_arg, cst.Param) or p.star_kwarg is not None or p.kwonly_params or p.posonly_params:
        return None
    return [x.name.value for x in p.params]


class Flow:
    """Which parameters each local name of a function holds data from (assignments,
    ``for`` targets and comprehensions; element-wise through ``zip`` and tuples; an
    index, a slice bound, ``len()``/``isinstance()`` and a condition carry no data)."""

    def __init__(self, fn: cst.FunctionDef, params: list[str]):
        self.params = set(params)
        self.of: dict[str, set[str]] = {p: {p} for p in params}
        for _ in range(3):  # names assigned from names assigned later (loops)
            fn.body.visit(_FlowVisitor(self))

    def expr(self, node, local: dict | None = None) -> set[str]:
        local = local or {}
        if isinstance(node, cst.Name):
            if node.value in local:
                return set(local[node.value])
            return set(self.of.get(node.value, ()))
        if isinstance(node, cst.Subscript):
            return self.expr(node.value, local)
        if isinstance(node, cst.Call):
            name = _dotted(node.func)
            if name in ("len", "isinstance", "int", "float", "range", "print"):
                return set()
            out = set()
            if isinstance(node.func, cst.Attribute):
                out |= self.expr(node.func.value, local)
            for a in node.args:
                out |= self.expr(a.value, local)
            return out
        if isinstance(node, cst.IfExp):
            return self.expr(node.body, local) | self.expr(node.orelse, local)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            inner = dict(local)
            comp = node.for_in
            while comp is not None:
                self.bind(comp.target, comp.iter, inner, local)
                comp = comp.inner_for_in
            return self.expr(node.elt, inner)
        if isinstance(node, cst.DictComp):
            inner = dict(local)
            self.bind(node.for_in.target, node.for_in.iter, inner, local)
            return self.expr(node.value, inner)
        if isinstance(node, (cst.Attribute,)):
            return self.expr(node.value, local)
        out = set()
        for child in node.children:
            if isinstance(child, cst.BaseExpression) or isinstance(child, (cst.Element, cst.Arg, cst.DictElement,
                                                                           cst.StarredElement)):
                out |= self.expr(child, local)
        return out

    def bind(self, target, value, into: dict, local: dict | None = None) -> None:
        """Bind ``target`` to ``value`` (a ``for`` iterable when ``into`` is a loop's)."""
        if isinstance(target, cst.Name):
            into[target.value] = into.get(target.value, set()) | self.expr(value, local)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            names = [e.value for e in target.elements]
            parts = None
            if isinstance(value, cst.Call) and _dotted(value.func) == "zip" and len(value.args) == len(names):
                parts = [a.value for a in value.args]
            elif isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(names):
                parts = [e.value for e in value.elements]
            for i, t in enumerate(names):
                self.bind(t, parts[i] if parts is not None else value, into, local)

    def assign(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.of[target.value] = self.of.get(target.value, set()) | self.expr(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            new: dict = {}
            self.bind(target, value, new)
            for k, v in new.items():
                self.of[k] = self.of.get(k, set()) | v

    def one(self, node) -> str | None:
        found = self.expr(node)
        return next(iter(found)) if len(found) == 1 else None


class _FlowVisitor(cst.CSTVisitor):
    def __init__(self, flow: Flow):
        self.flow = flow

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.flow.assign(t.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.flow.assign(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self.flow.assign(node.target, node.iter)

    def visit_Call(self, node: cst.Call) -> None:
        # items.append(v) / items.extend(v) / items.insert(i, v): items holds v's data
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and node.args and \
                f.attr.value in ("append", "extend", "insert"):
            self.flow.assign(f.value, node.args[-1].value)

    def visit_FunctionDef(self, node) -> bool:
        return False


class Analyser:
    def __init__(self, module: cst.Module):
        self.defs: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef):
                self.defs[stmt.name.value] = stmt
            elif isinstance(stmt, cst.ClassDef):
                self.classes[stmt.name.value] = stmt
        self.helpers: dict[str, Helper] = {}

    def run(self) -> dict[str, Helper]:
        for name, cls in self.classes.items():
            base = optimizer_class(cls)
            if base is not None:
                self.helpers[name] = Helper("optimizer_class", cls, config=base)
            elif is_mean_metric_class(cls):
                self.helpers[name] = Helper("mean_metric_class", cls)
        for order in (("loader", "step", "loss", "metric", "metric_state"), ("evaluate", "predict"), ("fit",),
                      ("fit_own_step", "evaluate_own_step")):
            for name, fn in self.defs.items():
                if name in self.helpers:
                    continue
                for kind in order:
                    helper = getattr(self, kind)(fn)
                    if helper is not None:
                        self.helpers[name] = helper
                        break
        for name, fn in self.defs.items():  # Keras' model(x, training=...) on arrays (model_call_helper.py)
            found = None if name in self.helpers else model_call_roles(fn, self.defs)
            if found is not None:
                roles, convert = found
                self.helpers[name] = Helper("call_model", fn, [roles["model"]], roles, config=convert)
                if convert is not None and convert not in self.helpers:
                    self.helpers[convert] = Helper("model_input", self.defs[convert])
        return self.helpers

    def _helper_call(self, node, kind: str) -> tuple[cst.Call, Helper] | None:
        for c in _calls(node):
            h = self.helpers.get(_dotted(c.func) or "")
            if h is not None and h.kind == kind:
                return c, h
        return None

    # -- the pieces ---------------------------------------------------------------
    def loader(self, fn: cst.FunctionDef) -> Helper | None:
        params = _param_names(fn)
        returns = [s for s in _returns(fn)]
        if params is None or len(returns) != 1 or not isinstance(returns[0], cst.Call):
            return None
        call = returns[0]
        if (_dotted(call.func) or "").split(".")[-1] != "DataLoader" or not call.args:
            return None
        flow = Flow(fn, params)
        dataset = call.args[0].value
        if not isinstance(dataset, cst.Call) or (_dotted(dataset.func) or "").split(".")[-1] != "TensorDataset":
            return None
        arrays = [p for p in params if p in flow.expr(dataset)]
        kw = {a.keyword.value: a.value for a in call.args[1:] if a.keyword is not None}
        roles = {f"arrays{i}": p for i, p in enumerate(arrays)}
        for key in ("batch_size", "shuffle"):
            if key in kw:
                p = flow.one(kw[key])
                if p is None:
                    return None
                roles[key] = p
        if not arrays or "batch_size" not in roles or len(call.args) - 1 != len(kw):
            return None
        return Helper("loader", fn, params, roles)

    def step(self, fn: cst.FunctionDef) -> Helper | None:
        params = _param_names(fn)
        if params is None or not _method_calls(fn, "backward"):
            return None
        flow = Flow(fn, params)
        opts = {flow.one(c.func.value) for c in _method_calls(fn, "step")} & \
            {flow.one(c.func.value) for c in _method_calls(fn, "zero_grad")}
        opts.discard(None)
        model = self._model_calls(fn, flow)
        if len(opts) != 1 or model is None:
            return None
        roles = {"optimizer": opts.pop(), "model": model[0]}
        loss = self._loss_param(fn, flow, {roles["model"], roles["optimizer"]})
        if loss is None or not model[1]:
            return None
        roles["loss"] = loss
        roles["inputs"] = model[1]
        targets = self._loss_targets(fn, flow, roles)
        if targets is None:
            return None
        roles["targets"] = targets
        weights = self._loss_weights(fn, flow, roles)
        if weights:
            roles["loss_weights"] = weights
        return Helper("step", fn, params, roles, logits=model[2])

    def _model_calls(self, fn, flow: Flow) -> tuple[str, str | None, bool] | None:
        """(the model parameter, the parameter its inputs come from, called with
        return_logits=True): the parameter called with array data, the same one each time."""
        found = set()
        for c in _calls(fn):
            if isinstance(c.func, cst.Name) and c.func.value in flow.params and \
                    c.func.value not in self.defs:
                pos = [a for a in c.args if a.keyword is None]
                kw = {a.keyword.value: a.value for a in c.args if a.keyword is not None}
                if len(pos) == 2 and not kw:
                    continue  # (output, target): a loss
                logits = "return_logits" in kw and _code(bare_argument(kw["return_logits"])) == "True"
                if set(kw) - {"return_logits"}:
                    return None
                src = set().union(*[flow.expr(a.value) for a in pos]) if pos else set()
                found.add((c.func.value, next(iter(src)) if len(src) == 1 else None, logits))
        return found.pop() if len(found) == 1 else None

    def _loss_param(self, fn, flow: Flow, taken: set) -> str | None:
        """The parameter whose functions are called on (output, target)."""
        found = set()
        for c in _calls(fn):
            pos = [a for a in c.args if a.keyword is None]
            if len(pos) == 2 and len(c.args) == 2 and isinstance(c.func, cst.Name):
                src = self._called(fn, c.func.value, flow)
                if len(src) == 1 and not src & taken:
                    found |= src
        return found.pop() if len(found) == 1 else None

    def _called(self, fn, name: str, flow: Flow) -> set[str]:
        """The parameters a called name holds (through ``zip`` loops and comprehensions)."""
        for node in _comprehensions_and_fors(fn):
            local: dict = {}
            targets = node.for_in.target if not isinstance(node, cst.For) else node.target
            iters = node.for_in.iter if not isinstance(node, cst.For) else node.iter
            flow.bind(targets, iters, local)
            if name in local:
                return {p for p in local[name] if p in flow.params}
        return {p for p in flow.of.get(name, set()) if p in flow.params}

    def _zip_partner(self, fn, flow: Flow, param: str, position_of) -> str | None:
        """The parameter zipped with ``param`` whose loop variable ``position_of`` picks."""
        for node in _comprehensions_and_fors(fn):
            target = node.target if isinstance(node, cst.For) else node.for_in.target
            it = node.iter if isinstance(node, cst.For) else node.for_in.iter
            if not (isinstance(it, cst.Call) and _dotted(it.func) == "zip" and isinstance(target, cst.Tuple)):
                continue
            sources = [flow.expr(a.value) for a in it.args]
            names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
            if {param} not in sources:
                continue
            picked = position_of(node, names)
            if picked is not None and picked < len(sources) and len(sources[picked]) == 1:
                return next(iter(sources[picked]))
        return None

    def _loss_targets(self, fn, flow: Flow, roles: dict) -> str | None:
        """The parameter the loss's second argument comes from."""
        for c in _calls(fn):
            if isinstance(c.func, cst.Name) and len(c.args) == 2 and \
                    roles["loss"] in self._called(fn, c.func.value, flow):
                arg = c.args[1].value
                if isinstance(arg, cst.Name):
                    src = self._called(fn, arg.value, flow)
                    if len(src) == 1:
                        return next(iter(src))
        return None

    def _loss_weights(self, fn, flow: Flow, roles: dict) -> str | None:
        """The parameter zipped with the losses whose items multiply each loss."""
        def multiplier(node, names):
            for op in _binary_ops(node):
                if isinstance(op.operator, cst.Multiply) and isinstance(op.left, cst.Name) and \
                        op.left.value in names and _calls(op.right):
                    return names.index(op.left.value)
            return None
        return self._zip_partner(fn, flow, roles["loss"], multiplier)

    def loss(self, fn: cst.FunctionDef) -> Helper | None:
        params = _param_names(fn)
        if params is None or len(params) != 2 or _calls_defs(fn, self.defs):
            return None
        config = loss_kind(fn)
        return Helper("loss", fn, params, {"output": params[0], "target": params[1]}, config=config) \
            if config is not None else None

    def metric(self, fn: cst.FunctionDef) -> Helper | None:
        params = _param_names(fn)
        if params is None or len(params) != 2 or _calls_defs(fn, self.defs):
            return None
        kind = metric_kind(fn)
        return Helper("metric", fn, params, config=kind) if kind is not None else None

    def metric_state(self, fn: cst.FunctionDef) -> Helper | None:
        """The running metric values fit and evaluate share (the generated ``reset_metrics`` /
        ``update_metrics``, runtime/torch/loop.py): a function whose every loop and
        comprehension iterates one parameter, the metrics, as ``(name, output index, metric)``
        triples, that calls no function of the script and computes no gradient step. Its
        ``metrics`` role lets fit and evaluate read the metrics they hand it (``_metrics``);
        its other parameters are its own."""
        params = _param_names(fn)
        if not params or _calls_defs(fn, self.defs) or _method_calls(fn, "backward") or _method_calls(fn, "step"):
            return None
        loops = [n for n in _walk(fn.body) if isinstance(n, (cst.For, cst.CompFor))]
        metrics = {_triples_of(loop, params) for loop in loops}
        if len(metrics) != 1 or None in metrics:
            return None
        (found,) = metrics
        roles = {"metrics": found, **{f"own_{p}": p for p in params if p != found}}
        return Helper("metric_state", fn, params, roles)

    def _loader_roles(self, fn, flow: Flow, loop: cst.For) -> dict | None:
        """The roles of ``fn``'s parameters that the loader ``loop`` iterates comes from."""
        it = loop.iter
        if isinstance(it, cst.Name):  # loader = make_loader(...); for batch in loader
            assigned = [s for s in _assigns(fn) if isinstance(s.targets[0].target, cst.Name)
                        and s.targets[0].target.value == it.value and len(s.targets) == 1]
            if len(assigned) != 1:
                return None
            it = assigned[0].value
        found = self._helper_call(it, "loader") if isinstance(it, cst.Call) else None
        if found is None or found[0] is not it:
            return None
        call, loader = found
        bound = loader.bind(call)
        if bound is None:
            return None
        roles = {}
        for role, value in bound.items():
            p = flow.one(value)
            if p is None:
                return None
            roles[role] = p
        return roles

    def _iterates_loader(self, fn, flow: Flow, within=None) -> tuple[cst.For, dict] | None:
        for node in _fors(within if within is not None else fn.body):
            roles = self._loader_roles(fn, flow, node)
            if roles is not None:
                return node, roles
        return None

    def _flag(self, fn, flow: Flow, body_test) -> str | None:
        """A parameter tested alone by ``if p:`` whose body ``body_test`` accepts."""
        for node in _ifs(fn):
            if isinstance(node.test, cst.Name) and node.test.value in flow.params and body_test(node.body):
                return node.test.value
        return None

    def _metrics(self, fn, flow: Flow) -> str | None:
        """The parameter holding the metrics' ``(name, output index, metric)`` triples: iterated
        by a loop of ``fn``'s, or handed to a ``metric_state`` helper."""
        for node in _fors(fn.body):
            p = flow.one(node.iter)
            if p is not None and _triples_of(node, [p]) == p:
                return p
        for call, helper in ((c, self.helpers.get(_dotted(c.func) or "")) for c in _calls(fn)):
            bound = helper.bind(call) if helper is not None and helper.kind == "metric_state" else None
            p = flow.one(bound["metrics"]) if bound and "metrics" in bound else None
            if p is not None and isinstance(bound["metrics"], cst.Name) and bound["metrics"].value == p:
                return p
        return None

    def evaluate(self, fn: cst.FunctionDef) -> Helper | None:
        return self._inference(fn, "evaluate")

    def predict(self, fn: cst.FunctionDef) -> Helper | None:
        return self._inference(fn, "predict")

    def _inference(self, fn: cst.FunctionDef, kind: str) -> Helper | None:
        params = _param_names(fn)
        if params is None or _method_calls(fn, "backward") or _method_calls(fn, "step") or \
                any(self.helpers.get(_dotted(c.func) or "", Helper("", None)).kind in ("step", "fit")
                    for c in _calls(fn)):
            return None
        flow = Flow(fn, params)
        model = self._model_calls(fn, flow)
        found = None
        for c in _calls(fn):  # the loader, iterated by a loop or a comprehension
            h = self.helpers.get(_dotted(c.func) or "")
            if h is not None and h.kind == "loader":
                bound = h.bind(c)
                if bound is None or found is not None:
                    return None
                found = {r: flow.one(v) for r, v in bound.items()}
        if model is None or found is None or None in found.values():
            return None
        roles = {"model": model[0], "x": found.get("arrays0"), "batch_size": found.get("batch_size")}
        if roles["x"] is None or roles["batch_size"] is None:
            return None
        metrics = self._metrics(fn, flow)
        loss = self._loss_param(fn, flow, {roles["model"], metrics})
        if kind == "predict":
            if loss is not None or "arrays1" in found:
                return None
            return Helper("predict", fn, params, roles, logits=model[2])
        if loss is None or "arrays1" not in found:
            return None
        roles.update(loss=loss, y=found["arrays1"])
        if metrics:
            roles["metrics"] = metrics
        weights = self._loss_weights(fn, flow, roles)
        if weights:
            roles["loss_weights"] = weights
        ret = self._flag(fn, flow, lambda body: all(
            isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Return) for s in body.body))
        if ret:
            roles["return_dict"] = ret
        return Helper("evaluate", fn, params, roles, logits=model[2])

    def fit(self, fn: cst.FunctionDef) -> Helper | None:
        params = _param_names(fn)
        if params is None:
            return None
        flow = Flow(fn, params)
        epochs_loop = next((f for f in _fors(fn.body) if isinstance(f.iter, cst.Call) and
                            _dotted(f.iter.func) == "range" and len(f.iter.args) == 1), None)
        if epochs_loop is None:
            return None
        epochs = flow.one(epochs_loop.iter.args[0].value)
        inner = self._iterates_loader(fn, flow, epochs_loop.body)
        if epochs is None or inner is None:
            return None
        loop, loader = inner
        found = self._helper_call(loop.body, "step")
        if found is None:
            return None
        call, step = found
        bound = step.bind(call)
        if bound is None:
            return None
        roles = {"epochs": epochs, "x": loader.get("arrays0"), "y": loader.get("arrays1"),
                 "batch_size": loader.get("batch_size")}
        if "shuffle" in loader:
            roles["shuffle"] = loader["shuffle"]
        for role in ("model", "optimizer", "loss", "loss_weights"):
            if role in bound:
                p = flow.one(bound[role])
                if p is None:
                    return None
                roles[role] = p
        if None in roles.values() or not {"model", "optimizer", "loss"} <= set(roles):
            return None
        metrics = self._metrics(fn, flow)
        if metrics:
            roles["metrics"] = metrics
        verbose = self._flag(fn, flow, lambda body: all(_is_print(s) for s in body.body))
        if verbose:
            roles["verbose"] = verbose
        evaluation = self._helper_call(epochs_loop.body, "evaluate")
        if evaluation is not None:  # validation data, evaluated after each epoch
            starred = [a.value for a in evaluation[0].args if a.star == "*"]
            if len(starred) == 1 and isinstance(starred[0], cst.Name) and starred[0].value in flow.params:
                roles["validation_data"] = starred[0].value
                split = self._flag(fn, flow, lambda body: any(
                    isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == roles["validation_data"]
                        for t in s.body[0].targets) for s in body.body))
                if split:
                    roles["validation_split"] = split
        return Helper("fit", fn, params, roles, logits=step.logits)

    def fit_own_step(self, fn: cst.FunctionDef) -> Helper | None:
        """Keras' fit over the model's own ``train_step`` (the first parameter's)."""
        return self._own_step_loop(fn, "train_step", "fit_own_step",
                                   ("x", "y", "epochs", "batch_size", "verbose", "shuffle"))

    def evaluate_own_step(self, fn: cst.FunctionDef) -> Helper | None:
        """Keras' evaluate over the model's own ``test_step``."""
        return self._own_step_loop(fn, "test_step", "evaluate_own_step", ("x", "y", "batch_size", "return_dict"))

    def _own_step_loop(self, fn, method: str, kind: str, names: tuple) -> Helper | None:
        """A function that calls ``<its first parameter>.<method>(batch)`` in a loop over a
        loader of its ``x`` (and ``y``) and resets the model's metrics: the parameters of
        Keras' fit/evaluate by their names (the generated ``fit_train_step`` /
        ``evaluate_test_step``, torch_custom_step)."""
        params = _param_names(fn)
        if not params or len(params) < 2 or params[1] != "x" or set(params[1:]) - set(names):
            return None
        model = params[0]
        calls = [c for c in _method_calls(fn, method) if isinstance(c.func.value, cst.Name) and
                 c.func.value.value == model]
        if len(calls) != 1 or not any(_code(c.func.value) == "metric" for c in _method_calls(fn, "reset_state")):
            return None
        if not any(c is calls[0] for loop in _fors(fn.body) for c in _calls(loop)):
            return None
        roles = {"model": model, **{p: p for p in params[1:]}}
        return Helper(kind, fn, params, roles)


def is_mean_metric_class(cls: cst.ClassDef) -> bool:
    """Keras' ``metrics.Mean`` written in torch: a class with ``update_state``, ``result``
    and ``reset_state`` whose ``result`` is a total over a count."""
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    if not {"update_state", "result", "reset_state", "__init__"} <= set(methods):
        return False
    init = _param_names(methods["__init__"]) or []
    text = _code(methods["result"])
    return init[:2] == ["self", "name"] and "self.total" in text and "self.count" in text


# -- per-sample loss and metric functions ----------------------------------------------
def loss_kind(fn: cst.FunctionDef) -> T.Loss | None:
    """The Keras loss a per-sample loss function computes (``T.Loss``), or None."""
    calls = _calls(fn)
    names = {_short(c) for c in calls}
    for c in calls:
        short = _short(c)
        if short in _F_LOSSES or short == "nll_loss":
            kw = {a.keyword.value: a.value for a in c.args if a.keyword is not None}
            red = kw.get("reduction")
            if not isinstance(red, cst.SimpleString) or red.evaluated_value != "none":
                return None
            if set(kw) - {"reduction", "delta"}:
                return None
            if short == "nll_loss":
                if "log" not in names:
                    return None
                return T.Loss("sparse_categorical_crossentropy", False)
            kind, logits = _F_LOSSES[short]
            params = {}
            if "delta" in kw:
                return None  # a delta other than 1.0 is a partial() at the call site
            if kind in ("mean_squared_error", "mean_absolute_error", "huber", "binary_crossentropy") and \
                    not _means_last_axis(fn):
                return None
            return T.Loss(kind, logits, params)
    if "log_softmax" in names and _sums_last_axis(fn):
        return T.Loss("categorical_crossentropy", True)
    if "log" in names and _sums_last_axis(fn) and "sum" in names:
        return T.Loss("categorical_crossentropy", False)
    if _means_last_axis(fn) and ("pow" in names or _has_power(fn)):
        return T.Loss("mean_squared_error", False)
    if _means_last_axis(fn) and "abs" in names:
        return T.Loss("mean_absolute_error", False)
    return None


def metric_kind(fn: cst.FunctionDef) -> str | None:
    """"accuracy" (an arg-max or threshold compared with the target) or a regression error."""
    names = {_short(c) for c in _calls(fn)}
    compares = [n for n in _walk(fn) if isinstance(n, cst.Comparison) and
                any(isinstance(c.operator, cst.Equal) for c in n.comparisons)]
    if compares and ("argmax" in names or any(isinstance(n, cst.Comparison) and any(
            isinstance(c.operator, cst.GreaterThan) for c in n.comparisons) for n in _walk(fn)) or "float" in names):
        return "accuracy"
    loss = loss_kind(fn)
    if loss is not None and loss.kind in ("mean_absolute_error", "mean_squared_error"):
        return loss.kind
    return None


#: the arguments a Keras-RMSprop class takes (torch's optimizer signature, Keras' names)
_RMSPROP_PARAMS = {"lr", "rho", "eps", "momentum", "centered"}


def optimizer_class(cls: cst.ClassDef) -> str | None:
    """``torch.optim.<Adam/AdamW>`` subclass whose ``step`` adds epsilon before the bias
    correction (sets ``group["eps"]`` to epsilon / sqrt(1 - beta_2 ** step)): the base name;
    ``"KerasRMSprop"`` for a ``torch.optim.Optimizer`` whose step is Keras' RMSprop (a
    moving average of squared gradients, the gradient over sqrt(average + epsilon))."""
    if len(cls.bases) != 1:
        return None
    base = _dotted(cls.bases[0].value) or ""
    if base == "torch.optim.Optimizer":
        return "KerasRMSprop" if _keras_rmsprop(cls) else None
    if not base.startswith("torch.optim.") or base.split(".")[-1] not in ("Adam", "AdamW"):
        return None
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    if [m.name.value for m in methods] != ["step"]:
        return None
    for node in _walk(methods[0]):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
            key = node.targets[0].target.slice[0].slice
            value = node.value
            if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString) and \
                    key.value.evaluated_value == "eps" and isinstance(value, cst.BinaryOperation) and \
                    isinstance(value.operator, cst.Divide) and isinstance(value.right, cst.Call) and \
                    (_dotted(value.right.func) or "").endswith("sqrt") and "betas" in _code(value.right) and \
                    _has_power(value.right):
                return base.split(".")[-1]
    return None


def _keras_rmsprop(cls: cst.ClassDef) -> bool:
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    if set(methods) != {"__init__", "step"}:
        return False
    params = _param_names(methods["__init__"])
    if params is None or params[:2] != ["self", "params"] or not set(params[2:]) <= _RMSPROP_PARAMS or \
            any(p.default is None for p in methods["__init__"].params.params[2:]):
        return False
    step = methods["step"]
    if not _method_calls(step, "addcmul_"):  # v = rho * v + (1 - rho) * g * g
        return False
    # epsilon inside the square root: (v + group["eps"]).sqrt() (or through a name)
    sums = {}
    for node in _walk(step):
        if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Name) and \
                isinstance(node.value, cst.BinaryOperation) and isinstance(node.value.operator, cst.Add) and \
                '"eps"' in _code(node.value.right):
            sums[node.targets[0].target.value] = node.value
    for c in _method_calls(step, "sqrt"):
        inner = c.func.value
        if isinstance(inner, cst.Name) and inner.value in sums or \
                isinstance(inner, cst.BinaryOperation) and '"eps"' in _code(inner):
            return True
    return False


def rmsprop_arguments(cls: cst.ClassDef) -> tuple[list[str], dict[str, cst.BaseExpression]]:
    """The parameters of a Keras-RMSprop class's ``__init__`` after ``params``, and their defaults."""
    init = next(s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__")
    params = init.params.params[2:]
    return [p.name.value for p in params], {p.name.value: p.default for p in params}


# -- small syntax helpers --------------------------------------------------------------
def _walk(node) -> list:
    """``node`` and the nodes under it in source order (the first loop, the first ``if``
    matter here; ``cst_fast.walk`` is faster but not in source order)."""
    out: list = []

    class V(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            out.append(n)
            return True

    node.visit(V())
    return out


def _short(call: cst.Call) -> str:
    """The called function's or method's own name (``F.cross_entropy`` → cross_entropy)."""
    f = call.func
    return f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""


def _returns(fn: cst.FunctionDef) -> list:
    return [n.value for n in _walk(fn.body) if isinstance(n, cst.Return) and n.value is not None]


def _assigns(fn) -> list[cst.Assign]:
    return [n for n in _walk(fn.body) if isinstance(n, cst.Assign)]


def _triples_of(loop: cst.For | cst.CompFor, params: list[str]) -> str | None:
    """The parameter ``loop`` (a statement or a comprehension's) iterates as triples (``for
    name, index, metric in metrics``)."""
    if isinstance(loop.iter, cst.Name) and loop.iter.value in params and isinstance(loop.target, cst.Tuple) \
            and len(loop.target.elements) == 3:
        return loop.iter.value
    return None


def _fors(node) -> list[cst.For]:
    return [n for n in _walk(node) if isinstance(n, cst.For)]


def _ifs(node) -> list[cst.If]:
    return [n for n in _walk(node) if isinstance(n, cst.If)]


def _binary_ops(node) -> list[cst.BinaryOperation]:
    return [n for n in _walk(node) if isinstance(n, cst.BinaryOperation)]


def _comprehensions_and_fors(fn) -> list:
    return [n for n in _walk(fn.body) if isinstance(n, (cst.For, cst.ListComp, cst.GeneratorExp, cst.SetComp,
                                                        cst.DictComp))]


def _calls_defs(fn, defs: dict) -> bool:
    return any(_dotted(c.func) in defs for c in _calls(fn))


def _is_print(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and _dotted(s.value.func) == "print"
        for s in stmt.body)


def _last_axis_call(fn, method: str) -> bool:
    for c in _method_calls(fn, method):
        for a in c.args:
            if (a.keyword is None or a.keyword.value == "dim") and _code(bare_argument(a.value)) == "-1":
                return True
    return False


def _means_last_axis(fn) -> bool:
    return _last_axis_call(fn, "mean")


def _sums_last_axis(fn) -> bool:
    return _last_axis_call(fn, "sum")


def _has_power(node) -> bool:
    return any(isinstance(n.operator, cst.Power) for n in _binary_ops(node))


def analyse(module: cst.Module) -> dict[str, Helper]:
    """The module-level functions and classes of ``module`` that are training helpers."""
    return Analyser(module).run()
