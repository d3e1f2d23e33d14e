"""A training loop over phases (the PyTorch transfer-learning tutorial's ``train_model``)
read as the usual loop: the training phase's batches are fit's, the evaluation phase's
loader is fit's ``validation_data``.

Recognised shape (names are the program's own)::

    for epoch in range(EPOCHS):
        for phase in ["train", "val"]:
            if phase == "train": model.train()          # or an if-expression statement
            else: model.eval()
            running_loss = 0.0                          # running sums (reporting)
            loader = train_loader if phase == "train" else val_loader   # or loaders[phase]
            for inputs, labels in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
            if phase == "train": scheduler.step()       # as the usual loop's per-epoch step
            print(...)

The loop body is specialised for each phase (``phase`` is a string constant in it: tests
of it are decided, ``set_grad_enabled`` blocks are inlined); the first phase must then be
the usual training pass, the second an evaluation pass that only reports (no optimizer or
scheduler step, no copy of the weights). Anything else raises ``NotStandard``.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.keras.frontend import _names_in
from transpiler.frontend_ast.torch.loops import _call_of, _is_pass, _is_state_copy, _only_prints
from transpiler.frontend_ast.torch.reader_values import (
    FuncV, ModelV, NotStandard, OptimizerV, SchedulerV, TorchRef, _code, _has_backward)
from transpiler.ir.code_literals import dotted_name as _dotted


def phase_names(loop) -> list[str] | None:
    """The phases of ``for phase in ["train", "val"]`` (a literal list or tuple of strings)."""
    if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and
            isinstance(loop.iter, (cst.List, cst.Tuple)) and loop.iter.elements):
        return None
    names = []
    for el in loop.iter.elements:
        if not isinstance(el, cst.Element) or not isinstance(el.value, cst.SimpleString):
            return None
        names.append(el.value.evaluated_value)
    return names


class PhaseReader:
    """Specialises a phase loop's body for each phase and splits it for ``LoopReader``."""

    def __init__(self, loop_reader, loop: cst.For):
        self.lr = loop_reader
        self.loop = loop
        self.var = loop.target.value
        self.names = phase_names(loop)

    # -- deciding the phase tests ---------------------------------------------------------
    def test(self, node, phase: str):
        """``phase == "x"`` / ``!=`` → a bool; ``phase == "x" and rest`` → False or ``rest``;
        None when ``node`` does not test the phase."""
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and \
                isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            left, right = node.left, node.comparisons[0].comparator
            if isinstance(right, cst.Name) and isinstance(left, cst.SimpleString):
                left, right = right, left
            if isinstance(left, cst.Name) and left.value == self.var and isinstance(right, cst.SimpleString):
                same = right.evaluated_value == phase
                return same if isinstance(node.comparisons[0].operator, cst.Equal) else not same
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
            left = self.test(node.left, phase)
            if isinstance(left, bool):
                return node.right if left else False
        return None

    def mentions(self, node) -> bool:
        return self.var in _names_in(node)

    def substitute(self, node, phase: str):
        """``node`` with the phase variable read as its value and phase-tested
        if-expressions decided (the node itself when it does not read the phase)."""
        if not self.mentions(node):
            return node
        reader = self

        class Sub(cst.CSTTransformer):
            def leave_IfExp(self, orig, upd):
                decided = reader.test(orig.test, phase)
                return (upd.body if decided else upd.orelse) if isinstance(decided, bool) else upd

            def leave_Name(self, orig, upd):
                return cst.SimpleString(repr(phase)) if upd.value == reader.var else upd

            def leave_Attribute(self, orig, upd):
                return upd.with_changes(attr=orig.attr)

            def leave_Arg(self, orig, upd):
                return upd.with_changes(keyword=orig.keyword)

        new = node.visit(Sub())
        self.lr.origin[self.lr.r.sid(new)] = self.lr.origin.get(self.lr.r.sid(node), node)
        return new

    # -- specialising -----------------------------------------------------------------------
    def specialise(self, stmts: list, phase: str, env: dict, grad: dict) -> list:
        out: list = []
        for stmt in stmts:
            if isinstance(stmt, cst.If):
                decided = self.test(stmt.test, phase)
                if decided is True:
                    out += self.specialise(list(stmt.body.body), phase, env, grad)
                    continue
                if decided is False:
                    orelse = stmt.orelse
                    if isinstance(orelse, cst.Else):
                        out += self.specialise(list(orelse.body.body), phase, env, grad)
                    elif isinstance(orelse, cst.If):
                        out += self.specialise([orelse], phase, env, grad)
                    continue
                if decided is not None:  # ``phase == "x" and rest``
                    orig, stmt = stmt, stmt.with_changes(test=decided)
                    self.lr.origin[self.lr.r.sid(stmt)] = orig
                out.append(self.substitute(stmt, phase))
                continue
            if isinstance(stmt, cst.With) and self.grad_block(stmt):
                value = stmt.items[0].item.args[0].value
                enabled = self.test(value, phase)
                if not isinstance(enabled, bool):
                    enabled = {"True": True, "False": False}.get(_code(value).strip())
                if enabled is None:
                    raise NotStandard(f"line {self.lr.line(stmt)}: torch.set_grad_enabled({_code(value)}): "
                                      "only a test of the phase is translated")
                grad.setdefault(phase, []).append(enabled)
                out += self.specialise(list(stmt.body.body), phase, env, grad)
                continue
            if isinstance(stmt, cst.For):
                body = self.specialise(list(stmt.body.body), phase, env, grad)
                it = self.substitute(stmt.iter, phase)
                if isinstance(it, cst.Name) and it.value in env:
                    it = env[it.value]
                new = stmt.with_changes(iter=it, body=stmt.body.with_changes(body=body))
                self.lr.origin[self.lr.r.sid(new)] = stmt
                out.append(new)
                continue
            if isinstance(stmt, cst.SimpleStatementLine):
                new = self.substitute(stmt, phase)
                if new is not stmt and len(new.body) == 1 and isinstance(new.body[0], cst.Assign) and \
                        len(new.body[0].targets) == 1 and isinstance(new.body[0].targets[0].target, cst.Name):
                    env[new.body[0].targets[0].target.value] = new.body[0].value  # loader = train_loader
                out.append(new)
                continue
            if self.mentions(stmt):
                raise NotStandard(f"line {self.lr.line(stmt)}: {_code(stmt).strip()!r} reads the phase")
            out.append(stmt)
        return out

    def grad_block(self, stmt: cst.With) -> bool:
        if len(stmt.items) != 1 or not isinstance(stmt.items[0].item, cst.Call):
            return False
        call = stmt.items[0].item
        ref = self.lr.peek(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        return isinstance(ref, TorchRef) and ref.path == "torch.set_grad_enabled" and len(call.args) == 1

    # -- splitting --------------------------------------------------------------------------
    def split(self) -> tuple[list, cst.For, list]:
        """The training phase as the usual epoch body (before, batch loop, after); the
        evaluation phase is kept for ``read_evaluation``."""
        if self.loop.orelse is not None:
            raise NotStandard("a for/else loop over the phases")
        if len(self.names) != 2:
            raise NotStandard(f"{len(self.names)} phases; a training and an evaluation phase are translated")
        bodies, grads = {}, {}
        for phase in self.names:
            grad: dict = {}
            bodies[phase] = self.specialise(list(self.loop.body.body), phase, {}, grad)
            grads[phase] = grad.get(phase, [])
        train, other = self.names
        if not any(_has_backward(s) or self.steps(s, OptimizerV) for s in bodies[other]) and \
                any(self.steps(s, SchedulerV) for s in bodies[other]):
            raise NotStandard(f"a scheduler steps in the {other!r} phase; one stepped in the training phase "
                              "(per epoch or per batch) is translated")
        steppers = [p for p in self.names if any(_has_backward(s) or self.steps(s) for s in bodies[p])]
        if steppers != [train]:
            which = ", ".join(repr(p) for p in steppers) or "no phase"
            raise NotStandard(f"the optimizer steps in {which}; the first phase ({train!r}) is expected to train "
                              f"and the second ({other!r}) only to evaluate")
        if False in grads[train]:
            raise NotStandard(f"the {train!r} phase trains with gradients disabled")
        before, batches, after = self.cut(bodies[train], train)
        self.sums = [s for s in after if self.is_sum(s)]  # ``epoch_loss = running_loss / n``: reporting
        self.train_body = before, batches, [s for s in after if not any(s is t for t in self.sums)]
        self.eval_body = self.cut(bodies[other], other)
        self.eval_phase = other
        return self.train_body

    def is_sum(self, stmt) -> bool:
        """An assignment of plain numbers (no model, optimizer or function of the program)."""
        return isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Assign, cst.AugAssign)) for s in stmt.body) and not any(
            isinstance(self.lr.kind(n), (ModelV, OptimizerV, FuncV)) for n in _names_in(stmt))

    def cut(self, body: list, phase: str) -> tuple[list, cst.For, list]:
        loops = [i for i, s in enumerate(body) if isinstance(s, cst.For)]
        if len(loops) != 1:
            raise NotStandard(f"the {phase!r} phase does not hold exactly one loop over batches")
        i = loops[0]
        return body[:i], body[i], body[i + 1:]

    def steps(self, node, kinds=(OptimizerV, SchedulerV)) -> bool:
        """``node`` steps an optimizer or a scheduler (of ``kinds``)."""
        found = []
        lr = self.lr

        class V(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                if isinstance(n.func, cst.Attribute) and n.func.attr.value == "step":
                    obj = _dotted(n.func.value)
                    if obj is not None and isinstance(lr.kind(obj.split(".")[0]), kinds):
                        found.append(n)

        node.visit(V())
        return bool(found)

    # -- the evaluation phase ---------------------------------------------------------------
    def read_evaluation(self, step: dict) -> None:
        """The second phase: the model in eval mode, running sums, one loop over another
        loader calling the model (fit's ``validation_data``) and prints."""
        for stmt in self.sums:
            self.lr.report_nodes.append(stmt)
            self.lr.absorb(stmt, "the running sums")
        pre, loop, post = self.eval_body
        phase = self.eval_phase
        model_var = step["model_var"]
        modes = []
        for stmt in pre + [None] + post:
            if stmt is None:
                continue
            call = _call_of(stmt)
            if call is not None and isinstance(call.func, cst.Attribute) and \
                    isinstance(self.lr.kind(_code(call.func.value)), ModelV) and call.func.attr.value in ("train",
                                                                                                       "eval"):
                modes.append(call.func.attr.value)
                continue
            self.reporting(stmt, phase, model_var)
        if modes != ["eval"]:
            raise NotStandard(f"the {phase!r} phase does not run the model in eval mode (model.eval()) once")
        for stmt in loop.body.body:
            call = _call_of(stmt)
            if call is not None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad":
                continue  # (nothing steps on these gradients)
            if isinstance(stmt, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Assign, cst.AugAssign)) for s in stmt.body):
                continue
            raise NotStandard(f"line {self.lr.line(stmt)}: {_code(stmt).strip()!r} in the {phase!r} phase's batch loop")
        self.lr.evaluation(loop, step)
        self.lr.absorb(self.loop, f"the {phase!r} phase")

    def reporting(self, stmt, phase: str, model_var: str) -> None:
        if _is_pass(stmt) or _only_prints(stmt):
            self.lr.report_nodes.append(stmt)
            return
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Assign, cst.AugAssign)) for s in stmt.body) and model_var not in _names_in(stmt):
            self.lr.report_nodes.append(stmt)
            return
        copies = []

        class V(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                if _is_state_copy(n, model_var):
                    copies.append(n)

        stmt.visit(V())
        if copies:
            raise NotStandard(f"line {self.lr.line(stmt)}: the {phase!r} phase copies the best weights "
                              "(copy.deepcopy(model.state_dict())); fit's EarlyStopping(restore_best_weights=True) "
                              "or a ModelCheckpoint would keep them: translate by hand")
        if self.steps(stmt):
            raise NotStandard(f"line {self.lr.line(stmt)}: {_code(stmt).strip()!r} steps in the {phase!r} phase")
        raise NotStandard(f"line {self.lr.line(stmt)}: {_code(stmt).strip()!r} in the {phase!r} phase")

