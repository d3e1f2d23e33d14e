"""A torch module's own ``train_step`` / ``test_step`` (Keras' custom-step pattern written in
torch) → the methods of its ``keras.Model`` subclass.

The torch side is what ``printers/torch/custom_step`` writes for a Keras model that overrides
``train_step``, and what a user writing Keras' pattern in torch would write::

    def train_step(self, data):
        self.optimizer.zero_grad()
        ... loss = ...
        loss.backward()
        self.optimizer.step()
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

In Keras the statements from ``zero_grad()`` to ``backward()`` run under ``with
tf.GradientTape() as tape:``; ``loss.backward()`` is ``grads = tape.gradient(loss,
self.trainable_weights)`` and ``self.optimizer.step()`` is
``self.optimizer.apply_gradients(zip(grads, self.trainable_weights))``. ``self(x)`` gets
``training=True`` (``False`` in ``test_step``); torch math becomes tensor functions through a
small table; a per-sample loss function of the script (``torch_helpers.loss_kind``) becomes the
loss function of that name, its arguments in ``(target, output)`` order; trackers made by a
``Mean`` class of the script (``update_state``/``result``/``reset_state``) become
``keras.metrics.Mean``. ``compile(optimizer=...)`` sets ``self.optimizer`` in Keras as the
generated ``model.optimizer = ...`` does in torch.

This reader records what it found (``ir.training.OwnStep``): each method's code with its tensor
math named as marks of ir/tensor_functions.py, the statements of the gradient step by index,
the trackers' arguments; the Keras printer (printers/keras/own_step.py) spells them, the tape
and ``keras.ops`` above included. It writes no target text.

Anything else raises ``Unsupported`` naming it, and the methods stay marked stubs: a call of a
submodule (``self.encoder(x)``: the Keras model has the layers inline, there is no
``self.encoder``), an attribute the Keras model would not have, torch code the table lacks.
Pure syntax: no framework is imported.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.torch.helpers import Helper
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.parts import AddTraining
from transpiler.ir.array_functions import MARK
from transpiler.ir.code_literals import dotted_name
from transpiler.ir.tensor_functions import mark
from transpiler.ir.training import OwnMethod, OwnStep

#: the methods of the module this translates (a property ``metrics`` is copied as it is)
OWN_STEP_METHODS = ("train_step", "test_step", "metrics")
_UNARY = {"exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "abs", "tanh": "tanh", "sigmoid": "sigmoid",
          "square": "square", "log1p": "log1p", "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil",
          "sign": "sign", "neg": "negative", "relu": "relu", "softplus": "softplus", "silu": "silu"}
_REDUCE = {"mean": "mean", "sum": "sum", "prod": "prod", "amax": "max", "amin": "min", "logsumexp": "logsumexp"}
_BINARY = {"maximum": "maximum", "minimum": "minimum", "matmul": "matmul", "pow": "power"}
#: what a tensor function's mark is while the method is a syntax tree (a mark is no Python
#: name): ``__tensor_function__.mean(x)``, ``$mean(x)`` in the template
_SLOT = "__tensor_function__"
#: tensor methods of torch a Keras tensor does not have (a step using one is not translated)
_TORCH_ONLY_METHODS = {"item", "numpy", "tolist", "to", "cpu", "cuda", "size", "view", "float", "long", "int",
                       "double", "unsqueeze", "squeeze", "permute", "transpose", "contiguous", "clone", "zero_",
                       "fill_", "requires_grad_", "backward", "argmax", "max", "min", "reshape", "flatten",
                       "type", "half", "bool", "chunk", "split", "expand", "repeat", "norm", "clamp", "masked_fill"}
#: T.Loss kinds → the Keras loss function of that name
_LOSS_FUNCTIONS = {"binary_crossentropy", "sparse_categorical_crossentropy", "categorical_crossentropy",
                   "mean_squared_error", "mean_absolute_error", "huber"}


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _call_stmt(stmt) -> cst.Call | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


def _is(stmt, receiver: str, method: str) -> bool:
    call = _call_stmt(stmt)
    return call is not None and isinstance(call.func, cst.Attribute) and call.func.attr.value == method and \
        (receiver == "*" or _code(call.func.value) == receiver) and not call.args


def read_own_step(cls: cst.ClassDef, helpers: dict[str, Helper], aliases: dict[str, str],
                  children: set[str], parts: set[str] = frozenset()) -> OwnStep | None:
    """The class's ``train_step``/``test_step``/``metrics`` and trackers (see ``OwnStep``),
    None when the class has no ``train_step``. ``parts`` are the submodules the Keras model
    keeps as layers of their own (torch_parts): the steps call them with ``training=``.

    Raises:
        Unsupported: naming what has no Keras form here.
    """
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    if "train_step" not in methods:
        return None
    recognised: list[cst.Name] = []  # the script's helper names used here (the helpers can go)
    trackers = _trackers(methods.get("__init__"), helpers, recognised)
    allowed = {"optimizer", "trainable_weights", *trackers, *parts, *(m for m in methods if m in OWN_STEP_METHODS)}
    out = []
    for name, fn in methods.items():  # (in the class's order)
        if name not in OWN_STEP_METHODS:
            continue
        if name == "metrics":
            if [_code(d.decorator) for d in fn.decorators] != ["property"]:
                raise Unsupported("metrics: only a property is translated")
            _check_self(fn, allowed, children)
            out.append(OwnMethod(name, _code(fn.with_changes(leading_lines=())).strip("\n")))
            continue
        written = _code(fn)
        if MARK.search(written) or _SLOT in written:
            raise Unsupported(f"{name}: its code has text that reads as a tensor-function mark")
        # (the loss functions of the script it calls, before the rewrite copies the nodes)
        recognised += [c.func for c in nodes_of(fn, cst.Call) if isinstance(c.func, cst.Name) and
                       c.func.value in helpers and helpers[c.func.value].kind == "loss"]
        fn = fn.visit(AddTraining(set(parts), str(name == "train_step"), own=True))
        new, tape = _CodeRewrite(aliases, helpers, training=name == "train_step").method(fn)
        _check_self(new, allowed, children)
        out.append(OwnMethod(name, _code(new).strip("\n").replace(f"{_SLOT}.", "$"), tape))
    return OwnStep(out, list(trackers.items()), recognised)


def _trackers(init: cst.FunctionDef | None, helpers: dict[str, Helper], recognised: list[cst.Name]) -> dict[str, str]:
    """``self.a = Mean(name="loss")`` in ``__init__`` (``Mean`` a mean-metric class of the
    script) → {"a": 'name="loss"'}."""
    found: dict[str, str] = {}
    if init is None:
        return found
    for stmt in init.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.Assign) or len(small.targets) != 1 or \
                    not isinstance(small.value, cst.Call):
                continue
            target, call = small.targets[0].target, small.value
            helper = helpers.get(dotted_name(call.func) or "")
            if helper is None or helper.kind != "mean_metric_class":
                continue
            if not (isinstance(target, cst.Attribute) and _code(target.value) == "self"):
                raise Unsupported(f"{_code(small)}: a metric tracker not kept on the model")
            if any(a.keyword is None or a.keyword.value not in ("name", "dtype") for a in call.args):
                raise Unsupported(f"{_code(call)}: only name= and dtype= are translated")
            recognised.append(call.func)
            found[target.attr.value] = ", ".join(_code(a).rstrip(", ") for a in call.args)
    return found


def _check_self(node: cst.CSTNode, allowed: set[str], children: set[str]) -> None:
    """Every ``self.<name>`` the method reads exists on the Keras model."""
    for attr in nodes_of(node, cst.Attribute):
        if not (isinstance(attr.value, cst.Name) and attr.value.value == "self"):
            continue
        name = attr.attr.value
        if name in children:
            raise Unsupported(f"self.{name}: a submodule called on its own (the Keras model has its layers "
                              f"inline, no {name!r} of its own)")
        if name not in allowed:
            raise Unsupported(f"self.{name}: not an attribute the Keras model has")


def _marked(name: str, args: str) -> cst.BaseExpression:
    """A call of the tensor function ``name`` (ir/tensor_functions.py; refused when it is not
    one) on ``args``, in the tree's form of its mark."""
    mark(name)
    return cst.parse_expression(f"{_SLOT}.{name}({args})")


class _CodeRewrite(cst.CSTTransformer):
    """torch math → tensor functions, ``self(x)`` → ``self(x, training=...)``, the script's loss
    functions → the loss functions of their kind (see the module docstring)."""

    def __init__(self, aliases: dict[str, str], helpers: dict[str, Helper], training: bool):
        self.aliases = aliases
        self.helpers = helpers
        self.training = training
        self.backward: cst.Call | None = None  # (``loss.backward()``: kept as written)

    def method(self, fn: cst.FunctionDef) -> tuple[cst.FunctionDef, tuple[int, int, int] | None]:
        """The method rewritten and, in ``train_step``, its gradient step (``OwnMethod.tape``)."""
        body = list(fn.body.body)
        tape = None
        if self.training:
            tape = self._tape(body)
            self.backward = _call_stmt(body[tape[1]])
        elif any(_is(s, "*", "backward") or _is(s, "self.optimizer", "step") for s in body):
            raise Unsupported(f"{fn.name.value}: a gradient step outside train_step")
        new = fn.with_changes(leading_lines=()).visit(self)
        left = self._torch_left(new)
        if left:
            raise Unsupported(f"{fn.name.value}: {left} has no Keras form here")
        return new, tape

    @staticmethod
    def _tape(body: list) -> tuple[int, int, int]:
        zero = [i for i, s in enumerate(body) if _is(s, "self.optimizer", "zero_grad")]
        back = [i for i, s in enumerate(body) if _is(s, "*", "backward")]
        step = [i for i, s in enumerate(body) if _is(s, "self.optimizer", "step")]
        if len(zero) != 1 or len(back) != 1 or len(step) != 1 or not zero[0] < back[0] < step[0]:
            raise Unsupported("train_step: one self.optimizer.zero_grad(), loss.backward() and "
                              "self.optimizer.step(), in that order, at the method's top level")
        if back[0] == zero[0] + 1:
            raise Unsupported("train_step: nothing is computed between zero_grad() and backward()")
        return zero[0], back[0], step[0]

    # -- expressions --------------------------------------------------------------------
    def _path(self, node) -> str | None:
        dotted = dotted_name(node)
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.aliases:
            return None
        return self.aliases[head] + (f".{rest}" if rest else "")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if (isinstance(func, cst.Name) and func.value == "self") or original is self.backward:
            return updated
        if isinstance(func, cst.Name) and func.value in self.helpers and self.helpers[func.value].kind == "loss":
            return self._loss(func.value, updated)
        path = self._path(func)
        if path is not None and (path.startswith("torch.") or path == "torch"):
            return self._function(path, updated)
        if isinstance(func, cst.Attribute) and path is None and self._path(func.value) is None and \
                not _code(func.value).startswith("self"):
            method = func.attr.value
            if method in _UNARY or method in _REDUCE or method in ("pow", "detach"):
                return self._method(method, func.value, updated)
            if method in _TORCH_ONLY_METHODS:
                raise Unsupported(f"{_code(original)}: the tensor method .{method}() is not translated here")
        return updated

    def _loss(self, name: str, call: cst.Call) -> cst.BaseExpression:
        helper = self.helpers[name]
        bound = helper.bind(call)
        if bound is None or set(bound) != {"output", "target"} or helper.config.kind not in _LOSS_FUNCTIONS:
            raise Unsupported(f"{_code(call)}: the loss function's arguments are not read")
        loss = helper.config
        extra = ", from_logits=True" if loss.from_logits else ""
        return _marked(f"losses.{loss.kind}", f"{_code(bound['target'])}, {_code(bound['output'])}{extra}")

    def _args(self, call: cst.Call, names: tuple) -> dict[str, str]:
        """Positional and keyword arguments by torch's parameter ``names``."""
        out: dict[str, str] = {}
        for i, arg in enumerate(call.args):
            if arg.star:
                raise Unsupported(f"{_code(call)}: unpacked arguments")
            key = arg.keyword.value if arg.keyword is not None else (names[i] if i < len(names) else None)
            if key is None or key not in names:
                raise Unsupported(f"{_code(call)}: argument {key or i} is not translated")
            out[key] = _code(arg.value)
        return out

    def _reduce(self, fn: str, x: str, args: dict[str, str]) -> cst.BaseExpression:
        extra = (f", axis={args['dim']}" if "dim" in args else "") + \
            (f", keepdims={args['keepdim']}" if "keepdim" in args else "")
        return _marked(fn, f"{x}{extra}")

    def _function(self, path: str, call: cst.Call) -> cst.BaseExpression:
        short = path.rsplit(".", 1)[-1]
        ok_module = path in (f"torch.{short}", f"torch.nn.functional.{short}")
        if ok_module and short in _UNARY:
            a = self._args(call, ("input",))
            return _marked(_UNARY[short], a["input"])
        if ok_module and short in _REDUCE:
            a = self._args(call, ("input", "dim", "keepdim"))
            return self._reduce(_REDUCE[short], a["input"], a)
        if ok_module and short in _BINARY:
            a = self._args(call, ("input", "other") if short != "pow" else ("input", "exponent"))
            second = a.get("other", a.get("exponent"))
            return _marked(_BINARY[short], f"{a['input']}, {second}")
        if ok_module and short in ("softmax", "log_softmax"):
            a = self._args(call, ("input", "dim"))
            return _marked(short, f"{a['input']}, axis={a['dim']}")
        if ok_module and short in ("clamp", "clip"):
            a = self._args(call, ("input", "min", "max"))
            low, high = a.get("min", 'float("-inf")'), a.get("max", 'float("inf")')
            return _marked("clip", f"{a['input']}, {low}, {high}")
        raise Unsupported(f"{path}() in the model's own {'train' if self.training else 'test'}_step is not "
                          "translated yet")

    def _method(self, method: str, recv: cst.BaseExpression, call: cst.Call) -> cst.BaseExpression:
        x = _code(recv)
        if method == "detach" and not call.args:
            return _marked("stop_gradient", x)
        if method in _REDUCE:
            return self._reduce(_REDUCE[method], x, self._args(call, ("dim", "keepdim")))
        if method == "pow":
            a = self._args(call, ("exponent",))
            return _marked("power", f"{x}, {a['exponent']}")
        if call.args:
            raise Unsupported(f"{_code(call)}: arguments of .{method}() are not translated")
        return _marked(_UNARY[method], x)

    def _torch_left(self, fn: cst.FunctionDef) -> str | None:
        """The first name of the rewritten method that still refers to torch."""
        for attr in [*nodes_of(fn, cst.Attribute), *nodes_of(fn, cst.Name)]:
            path = self._path(attr)
            if path is not None and path.split(".")[0] == "torch":
                return _code(attr)
        return None
