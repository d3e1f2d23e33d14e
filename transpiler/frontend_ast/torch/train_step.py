"""A custom training step in a loop of the usual shape → a Keras ``train_step`` run by ``fit``.

``torch_steps`` reads a loop whose step ``compile`` cannot express (a loss written in the
loop, two models and optimizers as in a GAN) statement by statement. When the loop
around that step has the usual shape, the Keras program is what one writes by hand: a
``keras.Model`` that holds the step as its ``train_step`` and ``fit`` that runs it::

    for epoch in range(EPOCHS):           # or one pass over the loader
        model.train()                     # running sums set to constants, prints
        for xb, yb in loader:             # a DataLoader over a TensorDataset; enumerate too
            <the step>                    # zero_grad / backward / step, any math
            running += loss.item()        # reporting (fit's logs stand for it)
        print(...)                        # prints

Any other statement around the step, a name the step sets that the program reads after
the loop, the epoch or batch index read by the step: the loop stays a custom loop
(``None`` with the reason).
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from transpiler.frontend_ast.torch.helper_calls import _names
from transpiler.frontend_ast.torch.helpers import _walk
from transpiler.frontend_ast.torch.loops import (
    LoopReader, _batch_names, _is_pass, _method_call, _names_assigned, _only_prints, _reassigned_before_read,
    _target_names, _value)
from transpiler.frontend_ast.torch.reader_values import (
    LoaderV, ModelV, NotStandard, OptimizerV, _code, transforms_batch)

BUILTINS = frozenset(dir(builtins))


def _reads(node: cst.CSTNode) -> list[str]:
    """The names ``node`` reads, in order of first appearance (attribute names, keyword
    names and the names an assignment binds are not reads; ``a[i] = v`` reads a and i)."""
    bound = {n for t in _walk(node) if isinstance(t, cst.AssignTarget) and
             isinstance(t.target, (cst.Name, cst.Tuple, cst.List)) for n in _names(t.target)}
    return list(dict.fromkeys(n.value for n in _names(node) if n not in bound))


def _is_running_sum(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name) for s in stmt.body)


def _loader_of(reader, node, scope):
    """``(loader, index name)`` of ``for ... in loader`` / ``in enumerate(loader)``."""
    index = None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "enumerate" \
            and len(node.args) == 1:
        node = node.args[0].value
        index = True
    loader = reader.peek(node, scope) if isinstance(node, (cst.Name, cst.Attribute)) else None
    return (loader if isinstance(loader, LoaderV) else None), index


# long: a checklist of the conditions for fit() running train_step, each with its own refusal
def read_fit_shape(reader, loop: cst.For, owner: cst.For, scope, why: str) -> tuple[dict | None, str]:
    """The facts of ``fit`` running the step as a ``train_step``, or ``(None, reason)``."""
    if loop.orelse is not None or owner.orelse is not None:
        return None, "a for/else loop"
    if owner is loop:
        epochs: Any = 1
        pre: list = []
        post: list = []
    else:
        body = list(loop.body.body)
        if owner not in body:
            return None, "the batch loop is not directly inside the epoch loop"
        try:
            epochs = LoopReader(reader, loop, scope).epochs(loop)
        except NotStandard as exc:
            return None, str(exc)
        i = body.index(owner)
        pre, post = body[:i], body[i + 1:]
    loader, enumerated = _loader_of(reader, owner.iter, scope)
    if loader is None:
        return None, f"the batches come from {_code(owner.iter)!r}, not a DataLoader over a TensorDataset"
    target = owner.target
    index_names: set[str] = set()
    if enumerated:
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
            return None, "enumerate(loader) that does not unpack into (i, batch)"
        index_names = _target_names(target.elements[0].value)
        target = target.elements[1].value
    names = _batch_names(target)
    if names is None or len(names) != len(loader.dataset.arrays):
        return None, f"the batch {_code(target)!r} does not unpack the dataset's arrays"

    # the statements: the step, and what only reports
    inner = list(owner.body.body)
    report = [s for s in inner if _only_prints(s)]
    step = [s for s in inner if s not in report and not _is_running_sum(s)]
    step_reads = set().union(*[set(_reads(s)) for s in step]) if step else set()
    for s in inner:
        if _is_running_sum(s) and s not in report:
            if {t.target.value for t in s.body} & step_reads:
                step.append(s)  # a sum the step itself reads is the step's
            else:
                report.append(s)
    step.sort(key=inner.index)
    for s in step:  # fit's batches are tensors: numpy's methods (images.reshape(-1, 784)) are not theirs
        if transforms_batch(s, names):
            return None, f"line {reader.fe._span(s).line}: {_code(s).strip()!r} transforms a batch array"
    if index_names & step_reads or (not isinstance(loop.target, cst.Name) and loop is not owner):
        return None, "the step reads the batch index"
    if loop is not owner and _target_names(loop.target) & step_reads:
        return None, "the step reads the epoch"
    for stmt in pre:
        if _is_pass(stmt) or _only_prints(stmt):
            continue
        mc = _method_call(stmt)
        if mc is not None and mc[1] == "train" and isinstance(reader.peek(mc[2].func.value, scope), ModelV):
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, cst.Assign) and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in s.targets)
                and not (set(_reads(s.value)) - {"True", "False", "None"}) for s in stmt.body):
            if not (_names_assigned(stmt) & step_reads):
                continue
        return None, f"line {reader.fe._span(stmt).line}: {_code(stmt).strip()!r} before the batch loop"
    for stmt in post:
        mc = _method_call(stmt)
        if _is_pass(stmt) or _only_prints(stmt) or (mc is not None and mc[1] in ("train", "eval") and isinstance(
                reader.peek(mc[2].func.value, scope), ModelV)):
            continue
        return None, f"line {reader.fe._span(stmt).line}: {_code(stmt).strip()!r} after the batch loop"

    # the step is one call of train_step: no jumps out of it, no state carried between batches
    if any(isinstance(n, (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.Global, cst.Nonlocal))
           for s in step for n in _walk(s)):
        return None, "break/continue/return in the batch loop"
    assigned = set().union(*[_names_assigned(s) for s in step]) if step else set()
    bound: set[str] = set(names)
    for s in step:
        carried = [n for n in _reads(s) if n in assigned and n not in bound]
        if carried:
            return None, f"the step carries {carried[0]!r} from one batch to the next"
        bound |= _names_assigned(s)
    # what the loop sets (its running sums too, which go with it) must not be read after it
    assigned_anywhere = _names_assigned(loop)
    holder = reader.cur_function if reader.cur_function is not None else reader.fe.module
    end = reader.fe._span(loop).end_line or reader.fe._span(loop).line
    later: set[str] = set()

    class Later(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if reader.fe._span(n).line > end:
                later.add(n.value)

    holder.visit(Later())
    for name in sorted(assigned_anywhere & later):
        if not _reassigned_before_read(holder, name, end, reader.fe):
            return None, f"{name!r}, set in the loop, is read after it"

    # the names the step reads from the function around it: the trainer's attributes
    free = []
    for name in [n for s in step for n in _reads(s)]:
        if name in assigned or name in names or name in free or name in BUILTINS:
            continue
        where = scope
        while where is not None and where.parent is not None and name not in where.vars:
            where = where.parent
        if where is not None and where.parent is not None:
            free.append(name)
    # models first, then optimizers, then the rest (each in the order the step reads them)
    kinds = [ModelV, OptimizerV]
    free.sort(key=lambda n: next((i for i, k in enumerate(kinds) if isinstance(scope.lookup(n), k)), len(kinds)))
    # what fit logs: the step's values the reporting code reads, else the losses backward() starts from
    reported = [n for s in pre + report + post for n in _reads(s)]
    running = {t.target.value for s in report if _is_running_sum(s) for t in s.body}
    logged = [n for n in dict.fromkeys(reported) if n in assigned and n not in running]
    absorbed = []
    sums = [s for s in report if _is_running_sum(s)]
    if sums:
        absorbed.append(f"the running sums (line {reader.fe._span(sums[0]).line})")
    prints = [s for s in report + pre + post if _only_prints(s)]
    if prints:
        absorbed.append(f"the prints (line {reader.fe._span(prints[0]).line})")
    ds = loader.dataset
    # (read through the loader where the caller's names are not visible: a function given it)
    via = owner.iter.args[0].value if enumerated and isinstance(owner.iter, cst.Call) and owner.iter.args \
        else owner.iter
    lr = LoopReader(reader, loop, scope)
    try:
        arrays = [lr.array_code(ds, i, via) for i in range(len(ds.arrays))]
        settings = {key: lr.loader_setting(loader, getattr(loader, key), key, via, default)
                    for key, default in (("batch_size", 1), ("shuffle", False), ("drop_last", False))}
    except NotStandard as exc:
        return None, str(exc)
    config = {
        "why": why, "free": free, "batch": [names, isinstance(target, cst.Tuple) or isinstance(target, cst.List)],
        "arrays": arrays, **settings, "loader": loader,
        "epochs": epochs, "owner": reader.sid(owner), "step": [reader.sid(s) for s in step],
        "report": [reader.sid(s) for s in report], "logged": logged, "absorbed": absorbed,
        "function": reader.cur_function.name.value if reader.cur_function is not None else None,
    }
    return config, ""
