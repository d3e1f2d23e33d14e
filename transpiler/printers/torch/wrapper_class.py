"""A ``keras.Model`` subclass that wraps other models (a GAN's generator and discriminator, a
distiller's teacher and student, a diffusion model's network) as a torch class.

Such a class is not a network of its own: Keras never builds it from an input shape, it
holds models it was handed and trains them with its own ``compile()`` and ``train_step()``.
Its torch form keeps the class, its methods and its attribute names:

* the base becomes ``nn.Module``; the held models (``self.generator = generator``) are
  already torch modules, so assigning them registers them;
* ``compile()`` keeps its signature; each optimizer it stores is bound there to the
  parameters the step updates with it (``self.d_optimizer.apply_gradients(zip(grads,
  self.discriminator.trainable_variables))`` → ``self.d_optimizer =
  d_optimizer(self.discriminator.parameters())``): the caller hands in *factories*
  (``functools.partial(torch.optim.Adam, lr=...)``), as Keras builds an optimizer on its
  first update. ``super().compile(optimizer=..., loss=...)`` sets ``self.optimizer`` and
  ``self.loss`` the same way; a class without ``compile()`` gets Keras' own;
* every ``tf.GradientTape`` block becomes the step of the optimizers its gradients go to
  (``zero_grad()`` where the tape opened, ``loss.backward()`` for ``tape.gradient``,
  ``step()`` for ``apply_gradients``; several gradients of one tape restrict each
  ``backward`` to its parameters); a gradient used as a value (a gradient penalty) is
  ``torch.autograd.grad`` with ``create_graph=True``; ``tape.watch(x)`` makes ``x``
  require gradients;
* ``call()`` is ``forward()``; Keras/TensorFlow tensor math goes through the table of
  loss_functions.py; ``keras.metrics.Mean`` trackers become the ``Mean`` helper.

A method with something that has no torch form becomes a marked stub (its source as a
comment, a body that raises), reported; the rest of the class still runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.printers.code import comment_text, docstring
from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.printers.torch.custom_step import _KERAS_ONLY, tracker_expr
from transpiler.printers.torch.loss_functions import Untranslatable


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _is_call_to(node, attr: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == attr


def _self_attr(node) -> str | None:
    """``self.<name>`` → name."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


class _Params(cst.CSTTransformer):
    """``X.trainable_variables`` / ``X.trainable_weights`` → the parameters of X that train."""

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value in ("trainable_variables", "trainable_weights"):
            return cst.parse_expression(f"[p for p in {_code(updated.value)}.parameters() if p.requires_grad]")
        return updated


def params_text(expr: cst.BaseExpression) -> str:
    """The torch parameters a Keras variable list names (for an optimizer: ``X.parameters()``)."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("trainable_variables", "trainable_weights"):
        return f"{_code(expr.value)}.parameters()"
    return _code(expr.visit(_Params()))


def _assignments(fn: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Local names a method binds once, to what (``trainable_vars = self.trainable_variables``)."""
    out: dict[str, cst.BaseExpression] = {}
    for assign in nodes_of(fn, cst.Assign):
        if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
            name = assign.targets[0].target.value
            out[name] = assign.value if name not in out else None
    return {k: v for k, v in out.items() if v is not None}


def _zip_args(call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``zip(grads, vars)`` (apply_gradients' argument) → (grads, vars)."""
    arg = call.args[0].value if call.args else None
    if isinstance(arg, cst.Call) and isinstance(arg.func, cst.Name) and arg.func.value == "zip" and len(arg.args) == 2:
        return arg.args[0].value, arg.args[1].value
    return None


def optimizer_params(cls: cst.ClassDef) -> dict[str, str]:
    """Each optimizer attribute the class's methods apply gradients with → the parameters it
    updates (``{"d_optimizer": "self.discriminator.parameters()"}``).

    Raises:
        Untranslatable: an optimizer applied to different variable lists, or to a list the
        reader cannot name.
    """
    out: dict[str, str] = {}
    for fn in (s for s in cls.body.body if isinstance(s, cst.FunctionDef)):
        local = _assignments(fn)
        for call in nodes_of(fn, cst.Call):
            if not _is_call_to(call, "apply_gradients"):
                continue
            attr = _self_attr(call.func.value)
            pair = _zip_args(call)
            if attr is None or pair is None:
                raise Untranslatable(f"{_code(call)} (apply_gradients of an optimizer that is not an attribute, "
                                     "or not on zip(gradients, variables))")
            variables = pair[1]
            if isinstance(variables, cst.Name) and variables.value in local:
                variables = local[variables.value]
            text = params_text(variables)
            if "trainable" in text or "parameters()" not in text:
                raise Untranslatable(f"{_code(call)} (the variables are not a model's trainable variables)")
            if out.setdefault(attr, text) != text:
                raise Untranslatable(f"self.{attr} applied to two different variable lists")
    return out


@dataclass
class _Gradient:
    """One ``g = tape.gradient(target, sources)`` of a method."""

    stmt: cst.SimpleStatementLine
    tape: cst.With
    target: str
    sources: cst.BaseExpression
    grads: str | None
    optimizer: str | None = None  # the optimizer its gradients are applied with
    suffix: str = ""  # ``tape.gradient(y, [x])[0]``: the subscript after the call


@dataclass
class _Tapes:
    """What each tape block of a method leads to."""

    gradients: list[_Gradient] = field(default_factory=list)
    persistent: set[int] = field(default_factory=set)
    names: set[str] = field(default_factory=set)  # the names tapes are bound to
    positions: list[int] = field(default_factory=list)  # of the gradients, in source order

    def of(self, with_: cst.With) -> list[_Gradient]:
        return [g for g in self.gradients if g.tape is with_]


def _is_tape(item: cst.WithItem, aliases: dict[str, str]) -> bool:
    if not isinstance(item.item, cst.Call):
        return False
    path = torch_loss_functions.resolve(item.item.func, aliases)
    return bool(path) and path.endswith("GradientTape")


def _scan_tapes(fn: cst.FunctionDef, aliases: dict[str, str]) -> _Tapes:
    """The tapes of a method in source order, each ``tape.gradient`` paired with the tape
    block that recorded it (the latest block binding that name) and the optimizer its
    result goes to."""
    found = _Tapes()
    current: dict[str, cst.With] = {}
    applies: list[tuple[int, str, str]] = []  # (position, gradients' name, optimizer), in source order
    position = [0]

    class Walk(cst.CSTVisitor):
        def visit_With(self, node: cst.With) -> None:
            for item in node.items:
                if _is_tape(item, aliases) and item.asname is not None:
                    current[_code(item.asname.name)] = node
                    found.names.add(_code(item.asname.name))
                    if any(a.keyword is not None and a.keyword.value == "persistent" for a in item.item.args):
                        found.persistent.add(id(node))

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            position[0] += 1
            small = node.body[0] if len(node.body) == 1 else None
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if _is_call_to(value, "apply_gradients") and _zip_args(value) is not None \
                    and isinstance(_zip_args(value)[0], cst.Name):
                applies.append((position[0], _zip_args(value)[0].value, _code(value.func.value)))
                return
            suffix = ""
            if isinstance(value, cst.Subscript):  # ``tape.gradient(y, [x])[0]``
                suffix = _code(value.with_changes(value=cst.Name("_")))[1:]
                value = value.value
            if not (_is_call_to(value, "gradient") and isinstance(value.func.value, cst.Name)
                    and value.func.value.value in current):
                return
            grads = None
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                grads = small.targets[0].target.value
            if len(value.args) < 2:
                raise Untranslatable(f"{_code(value)} (tape.gradient with one argument)")
            found.gradients.append(_Gradient(node, current[value.func.value.value], _code(value.args[0].value),
                                             value.args[1].value, grads, None, suffix))
            found.positions.append(position[0])

    fn.visit(Walk())
    for g, at in zip(found.gradients, found.positions):  # the first apply_gradients of these gradients
        rebound = [p for h, p in zip(found.gradients, found.positions) if p > at and h.grads == g.grads]
        end = min(rebound) if rebound else position[0] + 1
        mine = [opt for p, name, opt in applies if name == g.grads and at < p < end]
        g.optimizer = mine[0] if mine else None
    return found


def _sources_text(sources: cst.BaseExpression) -> tuple[str, bool]:
    """The tensors a gradient is taken with respect to, and whether Keras returns a list."""
    if isinstance(sources, (cst.List, cst.Tuple)):
        return _code(sources), True
    if isinstance(sources, cst.Attribute) and sources.attr.value in ("trainable_variables", "trainable_weights"):
        return _code(sources.visit(_Params())), True
    return f"[{_code(sources)}]", False


class _StepRewrite(cst.CSTTransformer):
    """The tapes, gradients and apply_gradients of one method, in torch autograd."""

    def __init__(self, fn: cst.FunctionDef, aliases: dict[str, str]):
        self.aliases = aliases
        self.tapes = _scan_tapes(fn, aliases)
        self.by_stmt = {id(g.stmt): g for g in self.tapes.gradients}
        self.tape_names: set[str] = set(self.tapes.names)
        uses: dict[str, int] = {}
        for name in nodes_of(fn, cst.Name):
            uses[name.value] = uses.get(name.value, 0) + 1
        bound: dict[str, int] = {}
        for g in self.tapes.gradients:
            if g.optimizer is not None:
                bound[g.grads] = bound.get(g.grads, 0) + 1
        for g in self.tapes.gradients:
            if g.optimizer is not None and uses.get(g.grads, 0) != 2 * bound[g.grads]:  # bound, then zipped
                raise Untranslatable(f"{g.grads} (the gradients are changed or read before apply_gradients)")

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body: list[cst.BaseStatement] = []
        for old, stmt in zip(original.body, updated.body):
            if isinstance(old, cst.With) and all(_is_tape(item, self.aliases) for item in old.items):
                optimizers = list(dict.fromkeys(g.optimizer for g in self.tapes.of(old) if g.optimizer))
                lines = [cst.parse_statement(f"{opt}.zero_grad()  # the tape's gradients start from zero")
                         for opt in optimizers]
                inner = list(stmt.body.body)
                if lines:
                    lines[0] = lines[0].with_changes(leading_lines=old.leading_lines)
                elif inner:
                    inner[0] = inner[0].with_changes(leading_lines=[*old.leading_lines, *inner[0].leading_lines])
                body += lines + inner
                continue
            gradient = self.by_stmt.get(id(old))
            if gradient is not None:
                body.append(self._gradient(gradient, stmt))
                continue
            body.append(self._statement(stmt))
        return updated.with_changes(body=body)

    def _gradient(self, g: _Gradient, stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        if g.optimizer is not None:
            if g.suffix:
                raise Untranslatable(f"{g.grads} (a part of the gradients applied)")
            several = len([o for o in self.tapes.of(g.tape) if o.optimizer]) > 1 or id(g.tape) in self.tapes.persistent
            if several:  # each backward() only into the parameters its optimizer updates
                text = f"{g.target}.backward(inputs={_sources_text(g.sources)[0]}, retain_graph=True)"
            else:
                text = f"{g.target}.backward()"
            return stmt.with_changes(body=[cst.Expr(cst.parse_expression(text))])
        sources, listed = _sources_text(g.sources)
        target = g.target if re.fullmatch(r"[\w.]+", g.target) else f"({g.target})"
        text = f"torch.autograd.grad({target}.sum(), {sources}, create_graph=True)"
        text = (text if listed else f"{text}[0]") + g.suffix
        small = stmt.body[0]
        if isinstance(small, cst.Assign):
            return stmt.with_changes(body=[small.with_changes(value=cst.parse_expression(text))])
        return stmt.with_changes(body=[cst.Expr(cst.parse_expression(text))])

    def _statement(self, stmt):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return stmt
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if _is_call_to(value, "apply_gradients"):
            return stmt.with_changes(body=[cst.Expr(cst.parse_expression(f"{_code(value.func.value)}.step()"))])
        if _is_call_to(value, "watch") and isinstance(value.func.value, cst.Name) \
                and value.func.value.value in self.tape_names and len(value.args) == 1:
            return stmt.with_changes(body=[cst.Expr(cst.parse_expression(
                f"{_code(value.args[0].value)}.requires_grad_(True)  # the tape watches it"))])
        return stmt

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return _Params().leave_Attribute(original, updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """``training=`` goes: ``train()``/``eval()`` set every module's mode."""
        args = [a for a in updated.args if not (a.keyword is not None and a.keyword.value == "training")]
        if len(args) != len(updated.args) and args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=args)


@dataclass
class WrapperContext:
    """What the printer knows beyond the class's source."""

    aliases: dict[str, str]
    loss_call: object  # (kind, from_logits) -> per-sample loss function name
    optimizer_factory: object  # T.Optimizer -> a factory expression (functools.partial(...))
    loss_object: object  # T.Loss -> a (y_true, y_pred) callable expression
    trackers: dict[str, str] = field(default_factory=dict)  # attribute -> torch expression
    objects: dict[str, str] = field(default_factory=dict)  # attribute -> torch expression (losses, optimizers)
    stubs: list[tuple[str, str]] = field(default_factory=list)  # (method, reason)
    uses_f: bool = False
    own_methods: dict = field(default_factory=dict)  # attribute -> methods of the script's own object it holds


#: Keras Model methods a torch module does not have (``self.ema_network.predict(...)`` in a
#: wrapper's method would fail when run); ``summary()`` becomes ``print(module)``
_MODEL_ONLY_METHODS = frozenset({"predict", "predict_on_batch", "fit", "evaluate", "train_on_batch",
                                 "test_on_batch", "get_weights", "set_weights", "count_params", "save",
                                 "save_weights", "load_weights", "get_layer", "compile"})


class _HeldModelCalls(cst.CSTTransformer):
    """``self.<attr>.summary()`` → ``print(self.<attr>)``; a Keras-only Model method called on
    an attribute (a held model: a torch module in the output; or a value the reader does not
    know, a model handed to ``__init__``) is named, the caller refuses the method. An attribute
    holding the script's own object calls its own methods."""

    def __init__(self, own_methods: dict):
        self.own_methods = own_methods
        self.refused: list[str] = []

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        attr = _self_attr(func.value) if isinstance(func, cst.Attribute) else None
        if attr is None or func.attr.value in self.own_methods.get(attr, ()):
            return updated
        if func.attr.value == "summary" and not original.args:
            return cst.parse_expression(f"print({_code(func.value)})")
        if func.attr.value in _MODEL_ONLY_METHODS:
            self.refused.append(f"{_code(func)}() (Keras' Model method: the held model is a torch module)")
        return updated


def _super_call(stmt, method: str) -> cst.Call | None:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return None
    call = stmt.body[0].value
    if _is_call_to(call, method) and isinstance(call.func.value, cst.Call) and \
            isinstance(call.func.value.func, cst.Name) and call.func.value.func.value == "super":
        return call
    return None


def _bind(attr: str, value: str, params: dict[str, str]) -> str:
    """``self.<attr> = <value>`` for an optimizer attribute: the factory made over its parameters."""
    return f"self.{attr} = {value}({params.get(attr, 'self.parameters()')})"


def _init_body(fn: cst.FunctionDef, ctx: WrapperContext) -> cst.FunctionDef:
    """``super().__init__(**kwargs)`` → ``super().__init__()``; trackers and the loss/optimizer
    objects the reader recognised → their torch expressions."""
    body = []
    for stmt in fn.body.body:
        if _super_call(stmt, "__init__") is not None:
            body.append(cst.parse_statement("super().__init__()").with_changes(leading_lines=stmt.leading_lines))
            continue
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            attr = _self_attr(small.targets[0].target)
            expr = ctx.trackers.get(attr) or ctx.objects.get(attr)
            if expr is not None:
                body.append(stmt.with_changes(body=[small.with_changes(value=cst.parse_expression(expr))]))
                continue
        body.append(stmt)
    return fn.with_changes(body=fn.body.with_changes(body=body))


def _compile_body(fn: cst.FunctionDef, params: dict[str, str], objects: dict[str, str]) -> cst.FunctionDef:
    """The class's own compile(): each optimizer it stores bound to its parameters; Keras'
    compile (``super().compile(...)``) sets ``self.optimizer`` and ``self.loss``."""
    body, pending = [], []
    for stmt in fn.body.body:
        call = _super_call(stmt, "compile")
        if call is not None:
            lines = []
            for i, arg in enumerate(call.args):
                key = arg.keyword.value if arg.keyword is not None else ("optimizer", "loss")[i] if i < 2 else None
                if arg.star:
                    continue  # (**kwargs: Keras' other compile options)
                if key == "optimizer":
                    lines.append(_bind("optimizer", _code(arg.value), params))
                elif key == "loss":
                    lines.append(f"self.loss = {_code(arg.value)}")
                elif key is not None:
                    lines.append(comment_text(f"# compile({key}=...): not kept (the step's own trackers are the "
                                              "metrics; torch runs the step eagerly)"))
            notes = [cst.EmptyLine(comment=cst.Comment(ln)) for ln in lines if ln.startswith("#")]
            new = [cst.parse_statement(ln) for ln in lines if not ln.startswith("#")]
            pending = [*stmt.leading_lines, *notes]  # (on the next statement when nothing stands here)
            if new:
                new[0] = new[0].with_changes(leading_lines=pending)
                pending = []
            body += new
            continue
        if pending:
            stmt = stmt.with_changes(leading_lines=[*pending, *stmt.leading_lines])
            pending = []
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            attr = _self_attr(small.targets[0].target)
            value = objects.get(attr) if isinstance(small.value, cst.Call) else None  # (made here)
            if attr in params:
                body.append(cst.parse_statement(_bind(attr, value or _code(small.value), params)).with_changes(
                    leading_lines=stmt.leading_lines))
                continue
            if value is not None:
                body.append(stmt.with_changes(body=[small.with_changes(value=cst.parse_expression(value))]))
                continue
        body.append(stmt)
    if not body:
        body = [cst.SimpleStatementLine([cst.Pass()], leading_lines=pending)]
    return fn.with_changes(body=fn.body.with_changes(body=body))


def _keras_compile(params: dict[str, str]) -> str:
    return "\n".join([
        "def compile(self, optimizer=None, loss=None, metrics=None, **kwargs):",
        "    " + docstring("Keras' Model.compile: the optimizer (a factory) made over the parameters the "
                           "step updates, and the loss the step reads as self.loss."),
        "    if optimizer is not None:",
        f"        {_bind('optimizer', 'optimizer', params)}",
        "    self.loss = loss"])


def _stub_method(fn: cst.FunctionDef, cls: str, reason: str) -> cst.FunctionDef:
    text = _code(fn.with_changes(leading_lines=(), decorators=()))
    comments = [comment_text(f"# TODO(transpiler): {cls}.{fn.name.value}() is not translated: {reason}")]
    comments += ["# " + ln if ln.strip() else "#" for ln in text.rstrip().splitlines()]
    msg = f"transpiler: {cls}.{fn.name.value}() is not translated yet: {reason}"
    body = cst.parse_module(f"raise NotImplementedError({msg!r})\n").body[0]
    head = [cst.EmptyLine(comment=cst.Comment(c)) for c in comments]
    return fn.with_changes(body=cst.IndentedBlock([body.with_changes(leading_lines=head)]))


def _translate_method(fn: cst.FunctionDef, cls: cst.ClassDef, params: dict[str, str], ctx: WrapperContext,
                      own: frozenset[str]) -> cst.FunctionDef:
    name = fn.name.value
    if name == "__init__":
        fn = _init_body(fn, ctx)
    elif name == "compile":
        fn = _compile_body(fn, params, {**ctx.objects, **ctx.trackers})
    else:
        fn = fn.with_changes(body=fn.body.visit(_StepRewrite(fn, ctx.aliases)))
        if name == "call":
            fn = fn.with_changes(name=cst.Name("forward"))
    if name != "__init__" and any(isinstance(c.func, cst.Name) and c.func.value == "super" for c in nodes_of(fn, cst.Call)):
        raise Untranslatable("super() (Keras' own implementation)")
    held = _HeldModelCalls(ctx.own_methods)
    fn = fn.with_changes(body=fn.body.visit(held))
    if held.refused:
        raise Untranslatable(held.refused[0])
    new, uses_f = torch_loss_functions.translate_function(fn, ctx.aliases, ctx.loss_call)
    for attr in nodes_of(new, cst.Attribute):
        if _self_attr(attr) in _KERAS_ONLY and attr.attr.value not in own:
            raise Untranslatable(f"self.{attr.attr.value} (Keras' own)")
    ctx.uses_f = ctx.uses_f or uses_f
    return new


def translate_class(cls: cst.ClassDef, ctx: WrapperContext, report) -> str:
    """The wrapper class in torch (its text). ``report(method, reason)`` is told of every
    method left a stub."""
    name = cls.name.value
    try:
        params = optimizer_params(cls)
    except Untranslatable as exc:
        params = {}
        report("compile", str(exc))
    own = frozenset(s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef))
    body = []
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.FunctionDef):
            body.append(stmt)
            continue
        try:
            body.append(_translate_method(stmt, cls, params, ctx, own))
        except Untranslatable as exc:
            report(stmt.name.value, str(exc))
            body.append(_stub_method(stmt, name, str(exc)))
    extra = []
    if "compile" not in own:
        extra.append(_keras_compile(params))
    if "metrics" not in own:
        extra.append("@property\ndef metrics(self):\n    " + docstring(
            "Keras' Model.metrics: the trackers fit() resets at each epoch (this model has none).") + "\n    return []")
    for text in extra:
        body.append(cst.parse_module(text + "\n").body[0].with_changes(leading_lines=[cst.EmptyLine()]))
    new = cls.with_changes(bases=[cst.Arg(cst.parse_expression("nn.Module"))], keywords=[],
                           body=cls.body.with_changes(body=body))
    return _code(new)
