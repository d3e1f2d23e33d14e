"""A PyTorch training loop of another shape → a custom training step (``ir.training``
facts the Keras printer writes with a ``tf.GradientTape``).

Used when ``torch_loops`` finds the loop is not the usual one (several models or
optimizers, a loss written in the loop, alternating updates as in a GAN). torch's
autograd is followed statement by statement: the block holding the ``backward()`` calls
runs under one persistent tape; ``m.zero_grad()`` clears the gradients gathered for
``m``, ``loss.backward()`` adds the gradient of ``loss`` for every model whose optimizer
steps on it later (before that model's next ``zero_grad``), ``optimizer.step()`` applies
them. Model outputs in the block are Keras tensors (``LiveV``): their tensor methods and
torch functions become ``keras.ops``; ``x.detach()`` is ``keras.ops.stop_gradient(x)``.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.keras.frontend import _names_in
from transpiler.frontend_ast.torch import tensor_params
from transpiler.frontend_ast.torch.episodes import TAPE
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.trainers import name_in_scope
from transpiler.frontend_ast.torch.train_step import read_fit_shape
from transpiler.frontend_ast.torch.reader_values import (tensor_template,
    CAST_METHODS, LOSSES, OTHER, DatasetV, LiveV, LoaderV, LossValueV, ModelV, OptimizerV, SampleV, ScalarV, SchedulerV, TorchRef,
    _code,
    _has_backward)
from transpiler.ir import training as T
from transpiler.ir.code_literals import dotted_name as _dotted
from transpiler.ir.code_literals import bare_argument

CLIP_FUNCTIONS = {"torch.nn.utils.clip_grad_norm_": "global_clipnorm",
                  "torch.nn.utils.clip_grad.clip_grad_norm_": "global_clipnorm",
                  "torch.nn.utils.clip_grad_value_": "clipvalue",
                  "torch.nn.utils.clip_grad.clip_grad_value_": "clipvalue"}
OPS_UNARY = {"exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "abs", "tanh": "tanh", "sigmoid": "sigmoid",
             "relu": "relu", "square": "square", "neg": "negative", "log1p": "log1p", "sin": "sin", "cos": "cos",
             "floor": "floor", "ceil": "ceil", "sign": "sign"}
OPS_REDUCE = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min", "prod": "prod", "std": "std",
              "var": "var", "max": "max", "min": "min", "logsumexp": "logsumexp"}
OPS_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "add": "+", "sub": "-",
               "mul": "*", "div": "/"}


def _statement_call(stmt):
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


def _step_block(loop: cst.For):
    """The ``for`` statement whose own body holds the ``backward()`` calls."""
    for stmt in loop.body.body:
        call = _statement_call(stmt)
        if call is not None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
            return loop
    inner = [s for s in loop.body.body if _has_backward(s)]
    if len(inner) == 1 and isinstance(inner[0], cst.For):
        return _step_block(inner[0])
    raise Unsupported("backward() inside other control flow than nested for loops")


# long: one custom step in order: collect zero_grad/backward/step events, pair them, record
def read_custom_loop(reader, loop: cst.For, scope, why: str) -> None:
    """Record the custom step's facts and read the loop's code (raises Unsupported)."""
    owner = _step_block(loop)
    events, steps, handled, tape_config = _record_step(reader, owner, scope, why)
    fit, _reason = read_fit_shape(reader, loop, owner, scope, tape_config["why"])
    if fit is not None:  # the usual loop around the step: fit runs it as a train_step
        if not fit["logged"]:
            fit["logged"] = [_code(e[4]) for e in events if e[1] == "backward" and isinstance(e[4], cst.Name)]
        for stmt in owner.body.body:
            if reader.sid(stmt) in fit["report"]:
                reader.fact(stmt, "drop", "fit's logs report the step's values")
                handled.add(reader.sid(stmt))
        fit["tape"] = tape_config
        reader.fact(loop, "train_step_fit", fit)  # (on the batch loop itself too: the fit holds the tape)
    reader.handled |= handled
    reader.live_blocks.add(reader.sid(owner))
    reader.custom_loops |= {reader.sid(n) for n in _fors(loop)}
    used = (type(reader.used_loaders)(reader.used_loaders), type(reader.used_datasets)(reader.used_datasets))
    reader.statement(loop, scope)
    if fit is not None:
        # fit batches the arrays: what the loop read of the loader and its dataset (the batch
        # loop, the prints) is gone with it, unless the step reads them itself
        fit.pop("loader")
        if not any(isinstance(scope.lookup(n), (LoaderV, DatasetV)) for n in fit["free"]):
            reader.used_loaders, reader.used_datasets = used


def steps_in_body(fn: cst.FunctionDef) -> bool:
    """Whether ``fn``'s own body (not a loop in it) calls ``backward()`` as a statement: one
    training step per call, as full-batch programs write it (``train_iter(epoch, ...)``)."""
    return any((c := _statement_call(s)) is not None and isinstance(c.func, cst.Attribute) and
               c.func.attr.value == "backward" for s in fn.body.body)


def read_step_function(reader, fn: cst.FunctionDef, scope) -> None:
    """A function whose body is one training step (``zero_grad(); out = model(x); loss =
    ...; loss.backward(); optimizer.step()``, then evaluation and prints): the body runs
    under a GradientTape as a custom loop's does; read with the model outputs live."""
    body = list(fn.body.body)
    start = next(i for i, s in enumerate(body) if _in_step(reader, s, scope))
    reader.block(body[:start], scope)  # the setup (models, optimizers, data) the step reads
    _events, _steps, handled, tape = _record_step(reader, fn, scope, "one training step per call of "
                                                  f"{fn.name.value}()", body[start:])
    tape["setup"] = [reader.sid(s) for s in body[:start]]
    reader.handled |= handled
    reader.live_blocks.add(reader.sid(fn))
    reader.live += 1
    try:
        reader.block(body[start:], scope)
    finally:
        reader.live -= 1


def _in_step(reader, stmt, scope) -> bool:
    """Whether ``stmt`` belongs to the step (runs under the tape): a ``zero_grad``/``backward``/
    ``step`` call, a statement calling a model (its outputs are what backward() differentiates),
    or one after them."""
    call = _statement_call(stmt)
    if call is not None and isinstance(call.func, cst.Attribute) and \
            call.func.attr.value in ("zero_grad", "backward", "step"):
        return True
    for node in nodes_of(stmt, cst.Call):
        try:
            if isinstance(reader.peek(node.func, scope), ModelV):
                return True
        except Unsupported:
            continue
    return False


def _record_step(reader, owner, scope, why: str, body=None):  # long: the step's events, checked, one fact each
    """The facts of the step whose statements are ``owner``'s body (a loop), or ``body`` (a
    function's statements from its step on): returns (events, steps, handled statement ids,
    the tape's config)."""
    body = list(owner.body.body) if body is None else body
    events = []  # (index, kind, model, stmt, extra)
    names: dict[int, str] = {}  # model → how this scope names it
    for i, stmt in enumerate(body):
        call = _statement_call(stmt)
        if call is None:
            if _has_backward(stmt):
                raise Unsupported(f"line {reader.fe._span(stmt).line}: backward() inside a compound statement")
            continue
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("zero_grad", "step", "backward"):
            obj = reader.peek(func.value, scope)
            name = func.attr.value
            if name == "zero_grad" and isinstance(obj, (ModelV, OptimizerV)):
                model = obj if isinstance(obj, ModelV) else obj.model
                names.setdefault(model, _code(func.value) if isinstance(obj, ModelV) else
                                 name_in_scope(scope, model, obj.model_text))
                events.append((i, "zero_grad", model, stmt, None))
            elif name == "step" and isinstance(obj, OptimizerV):
                if call.args:
                    raise Unsupported("optimizer.step(closure) is not translated")
                names.setdefault(obj.model, name_in_scope(scope, obj.model, obj.model_text))
                events.append((i, "step", obj.model, stmt, obj))
            elif name == "step" and isinstance(obj, SchedulerV):
                pass  # read with the statement: a StepSchedule the step keeps stepping
            elif name == "backward":
                if call.args:
                    raise Unsupported("backward(gradient) is not translated")
                events.append((i, "backward", None, stmt, func.value))
            continue
        try:  # (``model.train()``: a method of the model, read with the statement)
            ref = reader.peek(func, scope) if isinstance(func, (cst.Name, cst.Attribute)) else None
        except Unsupported:
            ref = None
        if isinstance(ref, TorchRef) and ref.path in CLIP_FUNCTIONS:
            events.append((i, "clip", None, stmt, (ref.path, call)))
    steps = [e for e in events if e[1] == "step"]
    if not steps or not any(e[1] == "backward" for e in events):
        unknown = [_code(c.func.value) for c in map(_statement_call, body) if c is not None and
                   isinstance(c.func, cst.Attribute) and c.func.attr.value == "step"]
        if unknown:
            raise Unsupported(f"training loop: {', '.join(unknown)} is not an optimizer the translation knows "
                              "(see its own stub)")
        raise Unsupported(f"training loop: {why}")
    for model in {e[2]: e[2] for e in steps}.values():
        text = names.get(model, "")
        if not text.replace("self.", "", 1).isidentifier():
            raise Unsupported("an optimizer of a model not held in a variable")
        if not any(e[1] == "zero_grad" and e[2] is model for e in events):
            raise Unsupported(f"{text}'s gradients are never zeroed in the loop: they accumulate over "
                              "iterations (not translated)")

    def var(model) -> str:
        return names[model]

    tape = TAPE if reader.recording else "tape"
    consumers: dict[cst.CSTNode, list] = {}
    for pos, (i, kind, _m, stmt, extra) in enumerate(events):
        if kind != "backward":
            continue
        models = []
        for j, kind2, model, _s, _e in events[pos + 1:]:
            if kind2 == "step" and model not in models and not any(
                    k == "zero_grad" and m is model and i < jj < j for jj, k, m, _, _ in events):
                models.append(model)
        if not models:
            raise Unsupported(f"line {reader.fe._span(stmt).line}: no optimizer step uses this backward()")
        consumers[stmt] = models
    # one model, zero_grad → backward(loss) → step: the canonical Keras step (the block up to
    # backward() under a tape, tape.gradient, apply_gradients) says the same
    kinds = [e[1] for e in events if e[1] != "clip"]
    simple = kinds == ["zero_grad", "backward", "step"] and events[0][2] is steps[0][2] and \
        isinstance(next(e[4] for e in events if e[1] == "backward"), cst.Name)
    if reader.recording and not simple:
        raise Unsupported("a step over forward passes of earlier calls: only zero_grad(), one backward() of a "
                          "loss variable and step() of one model are translated")
    grads = "grads"
    if simple:
        taken = _names_in(reader.cur_function if reader.cur_function is not None else reader.fe.module)
        n = 1
        while grads in taken:
            grads, n = f"grads_{n}", n + 1
    for pos, (i, kind, model, stmt, extra) in enumerate(events):
        if kind == "zero_grad" and simple:
            reader.fact(stmt, "drop", "a tape's gradients start from zero")
        elif kind == "zero_grad":
            reader.fact(stmt, "zero_grad", {"grads": f"{var(model)}_grads"})
        elif kind == "backward":
            reader.fact(stmt, "backward", {"loss": reader.sid(extra), "tape": tape, "simple": simple, "grads": grads,
                                           "recorded": reader.recording,
                                           "models": [(var(m), f"{var(m)}_grads") for m in consumers[stmt]]})
        elif kind == "step":
            reader.fact(stmt, "optimizer_step", {"tape": tape, "optimizer": _code(stmt.body[0].value.func.value),
                                                 "model": var(model), "simple": simple,
                                                 "grads": grads if simple else f"{var(model)}_grads"})
        elif kind == "clip":
            path, call = extra
            clip_models = _clip_target(reader, call, scope)
            opts = [e[4] for e in steps if e[2] is clip_models]
            if not opts:
                raise Unsupported("gradient clipping of a model no optimizer steps")
            args = [a for a in call.args if a.keyword is None]
            kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            value = args[1].value if len(args) > 1 else kw.get("max_norm", kw.get("clip_value"))
            for opt in opts:
                opt.config.clip[CLIP_FUNCTIONS[path]] = reader.static(value, "clip")
            reader.fact(stmt, "drop", "the optimizer clips the gradients itself")
    handled = {reader.sid(e[3]) for e in events}
    backward = next(e[3] for e in events if e[1] == "backward")
    stepped = list({e[2]: var(e[2]) for e in steps}.values())
    if len(stepped) > 1:  # (the reason the loop reader met first is a detail of this one)
        why = f"{' and '.join(stepped)} are trained in one step, each by its own optimizer"
    tape_config = {"tape": tape, "why": why, "split": reader.sid(backward) if simple else None}
    if not reader.recording:  # (else the program's tape records: frontend_ast/torch/episodes)
        reader.fact(owner, "tape_loop", tape_config)
    return events, steps, handled, tape_config


def _clip_target(reader, call: cst.Call, scope):
    params = call.args[0].value if call.args else None
    if isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute) and \
            params.func.attr.value == "parameters":
        model = reader.peek(params.func.value, scope)
        if isinstance(model, ModelV):
            return model
    raise Unsupported("gradient clipping of something other than model.parameters()")


def _fors(node) -> list:
    out = []

    class V(cst.CSTVisitor):
        def visit_For(self, n: cst.For) -> None:
            out.append(n)

    node.visit(V())
    return out


# -- tensors of the training step -----------------------------------------------------------
def live_method(reader, obj: LiveV, name: str, node: cst.Call, args):
    """A tensor method on a Keras tensor of the step → its tensor functions (ir/tensor_functions.py)."""
    recv = node.func.value
    pos = [a.value for a, _ in args if a.keyword is None]
    kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}
    p, done = tensor_template(reader, node, recv, obj.permuted)

    def axes_ok(what: str):
        if obj.permuted:
            raise Unsupported(f".{what}() on a feature map the Keras model returns channels-last")

    if name == "detach":
        return done("$stop_gradient({0})")
    if name == "clone" and isinstance(obj, tensor_params.TensorArgV):
        # (a parameter a caller may pass a numpy array for, which the body then changes in
        # place: ``y_neg = y.clone(); y_neg[i] = ...``: a copy, as torch's)
        return done("$convert_to_numpy({0}).copy()")
    if name in ("contiguous", "clone", "cpu", "to"):
        return done("{0}")
    if name == "item" and type(obj) is ScalarV:  # (a reduced loss)
        return done("float({0})", result=LossValueV())
    if name == "item":
        # torch's item() of any one-element tensor (a (1,) value too: float() takes only a
        # 0-d one); class indices come back as a Python int
        return done("$convert_to_numpy({0}).item()", result=LossValueV())
    if name in ("tolist", "numpy"):
        axes_ok(name)
        # (numpy(): a numpy array in the source too: its methods are numpy's, kept as written)
        return done("$convert_to_numpy({0})" + (".tolist()" if name == "tolist" else ""),
                    result=LossValueV() if name == "tolist" else OTHER)
    if name in CAST_METHODS:
        return done(f'$cast({{0}}, "{CAST_METHODS[name]}")')
    if name == "size":
        if pos and _code(bare_argument(pos[0])) != "0":
            axes_ok("size")
        return done("{0}.shape[" + p(pos[0]) + "]" if pos else "{0}.shape", result=LossValueV())
    if name in OPS_UNARY:
        return done(f"${OPS_UNARY[name]}({{0}})")
    if name == "pow":
        return done("$power({0}, " + p(pos[0]) + ")")
    if name in OPS_COMPARE:
        return done("({0} " + OPS_COMPARE[name] + " " + p(pos[0]) + ")")
    if name in OPS_REDUCE:
        dim = kw.get("dim") or (pos[0] if pos else None)
        keep = kw.get("keepdim") or (pos[1] if len(pos) > 1 else None)
        if name in ("max", "min") and dim is not None:
            raise Unsupported(f".{name}(dim) on a tensor of the training step is not translated")
        if name in ("std", "var"):
            raise Unsupported(f".{name}() on a tensor of the training step (torch's is unbiased)")
        args_text = ""
        if dim is not None:
            axes_ok(name)
            args_text += ", axis=" + p(dim)
        if keep is not None:
            args_text += ", keepdims=" + p(keep)
        return done(f"${OPS_REDUCE[name]}({{0}}{args_text})", result=ScalarV() if dim is None else None)
    if name in ("view", "reshape"):
        axes_ok(name)
        shape = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
        return done("$reshape({0}, " + shape + ")")
    if name in ("squeeze", "unsqueeze"):
        axes_ok(name)
        dim = pos[0] if pos else kw.get("dim")
        fn = "squeeze" if name == "squeeze" else "expand_dims"
        return done(f"${fn}({{0}}" + (", " + p(dim) if dim is not None else "") + ")")
    if name == "clamp":
        lo = kw.get("min") or (pos[0] if pos else None)
        hi = kw.get("max") or (pos[1] if len(pos) > 1 else None)
        return done("$clip({0}, " + (p(lo) if lo is not None else "float('-inf')") + ", " +
                    (p(hi) if hi is not None else "float('inf')") + ")")
    return tensor_params.method(reader, obj, name, node, pos, kw)  # (or a stub's Unsupported)


def live_function(reader, path: str, node: cst.Call, pos, vals, kw):
    """A torch function of Keras tensors of the step → its tensor functions (losses included)."""
    parts: list = []

    def p(n) -> str:
        parts.append(n)
        return "{%d}" % (len(parts) - 1)

    short = path.split(".")[-1]
    permuted = any(getattr(v, "permuted", False) for v in vals)

    def done(template: str, result=None):
        reader.array(node, template, parts, tensors=True)
        return LiveV(permuted) if result is None else result

    if path.startswith("torch.nn.functional.") and short in LOSSES:
        return _functional_loss(reader, short, pos, kw, p, done, vals)
    if short in OPS_UNARY and path in (f"torch.{short}", f"torch.nn.functional.{short}"):
        return done(f"${OPS_UNARY[short]}(" + p(pos[0]) + ")")
    if path in ("torch.sum", "torch.mean"):
        dim = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
        if dim is not None and permuted:
            raise Unsupported(f"{path}(dim=...) of a feature map the Keras model returns channels-last")
        return done(f"${short}(" + p(pos[0]) + (", axis=" + p(dim) if dim is not None else "") + ")")
    if path in ("torch.softmax", "torch.nn.functional.softmax", "torch.log_softmax",
                "torch.nn.functional.log_softmax"):
        dim = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
        if permuted:
            raise Unsupported(f"{path} of a feature map the Keras model returns channels-last")
        return done(f"${short}(" + p(pos[0]) + (", axis=" + p(dim) if dim is not None else "") + ")")
    if path in ("torch.cat", "torch.concat", "torch.stack"):
        dim = kw.get("dim") or (pos[1] if len(pos) > 1 else None)
        if permuted or (dim is not None and not isinstance(dim, cst.Integer)):
            raise Unsupported(f"{path} of tensors in a training step along another axis than a literal one")
        fn = "stack" if short == "stack" else "concatenate"
        return done(f"${fn}(" + p(pos[0]) + (", axis=" + p(dim) if dim is not None else "") + ")")
    if path in ("torch.pow",):
        return done("$power(" + p(pos[0]) + ", " + p(pos[1]) + ")")
    raise Unsupported(f"{path} in a training step is not translated yet")


def _functional_loss(reader, short: str, pos, kw, p, done, vals=()):
    """``F.<loss>(output, target, reduction=...)`` inside the step, elementwise then reduced (a
    channels-last feature map of the Keras model in torch's layout again, as the target is)."""
    from transpiler.frontend_ast.torch.reader_methods import back_to_torch_layout

    reduction = kw.get("reduction")
    red = "mean" if reduction is None else reader.string_value(reduction)
    if red not in ("mean", "sum", "none"):
        raise Unsupported(f"F.{short}(reduction={_code(reduction)}) is not translated")
    size = {"smooth_l1_loss": "beta", "huber_loss": "delta"}.get(short)
    extra = set(kw) - {"reduction", size}
    if extra:
        raise Unsupported(f"F.{short}: argument(s) {', '.join(sorted(extra))} not translated")
    out, target = p(pos[0]), p(pos[1])
    perm = back_to_torch_layout(vals[0], vals[1]) if len(vals) > 1 else None
    if perm is not None and (LOSSES.get(short) or ("",))[0] not in T.CLASS_INDEX_LOSSES:
        # (not the losses of class indices, T.CLASS_INDEX_LOSSES: their target has no class axis and
        # Keras' is the last one, which the channels-last output already has: a U-Net's per-pixel nll_loss)
        out = f"$transpose({out}, {perm!r})"
    if size is not None:
        # Keras' huber is the mean over the last axis: its mean is the mean over all elements
        # (equal-sized rows); smooth_l1 with beta 1 is huber with delta 1
        value = kw.get(size)
        delta = 1.0 if value is None else float(value.value) if isinstance(value, (cst.Float, cst.Integer)) else None
        if red != "mean" or delta is None or (short == "smooth_l1_loss" and delta != 1.0):
            raise Unsupported(f"F.{short} in a training step: only the mean" +
                              (" with beta=1" if short == "smooth_l1_loss" else " with a literal delta"))
        return done(f"$mean($huber({target}, {out}, delta={delta!r}))", result=ScalarV())
    per_element = {
        "binary_cross_entropy_with_logits": f"$binary_crossentropy({target}, {out}, from_logits=True)",
        "binary_cross_entropy": f"$binary_crossentropy({target}, {out})",
        "mse_loss": f"$square({out} - {target})",
        "l1_loss": f"$abs({out} - {target})",
        "cross_entropy": f"$sparse_categorical_crossentropy({target}, {out}, from_logits=True)",
        # minus the log-probability of each target class (the class axis is last in Keras)
        "nll_loss": f"-$squeeze($take_along_axis({out}, "
                    f"$expand_dims({target}, -1), axis=-1), -1)",
    }.get(short)
    if per_element is None:
        raise Unsupported(f"F.{short} in a training step is not translated yet")
    if red == "none":
        return done(per_element)
    return done(f"${red}({per_element})", result=ScalarV())


__all__ = ["read_custom_loop", "live_method", "live_function", "_dotted"]
