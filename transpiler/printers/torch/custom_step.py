"""A Keras model's own ``train_step`` / ``test_step`` as methods of its torch module.

Keras' ``fit`` calls ``model.train_step(data)`` once per batch; the generated
``fit_train_step`` loop does the same, so the method keeps its name, its signature and
its body. What changes inside:

* ``with tf.GradientTape() as tape:`` goes; its body stays, after
  ``self.optimizer.zero_grad()`` (the tape's gradients start from zero);
* ``grads = tape.gradient(loss, self.trainable_weights)`` becomes ``loss.backward()``;
* ``self.optimizer.apply_gradients(zip(grads, ...))`` becomes ``self.optimizer.step()``;
* ``training=`` arguments of sub-model calls go (``model.train()`` / ``model.eval()`` set
  every module's mode; ``fit_train_step`` trains, ``evaluate`` evaluates);
* Keras/TensorFlow tensor math and loss functions go through the same table as the
  script's own loss functions (``torch_loss_functions``);
* metric trackers made in ``__init__`` (``keras.metrics.Mean(name=...)``) become the
  ``Mean`` helper, which has Keras' ``update_state``/``result``/``reset_state``.

``compile(optimizer=...)`` sets ``model.optimizer`` as Keras does, so ``self.optimizer``
means the same in the method. Anything else that needs Keras (``self.compute_loss``,
``self.compiled_metrics``, ...) makes the whole method untranslatable: the caller reports
it and leaves a marked stub.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.printers.code import docstring
from transpiler.printers.torch.loss_functions import Untranslatable

#: Keras Model members a custom step may use that the torch module does not have
_KERAS_ONLY = ("compute_loss", "compiled_loss", "compiled_metrics", "compute_metrics", "distribute_strategy",
               "make_train_function", "metrics_names", "trainable_weights", "trainable_variables")

# Mean, fit_train_step and evaluate_test_step are runtime code (runtime/torch/metrics.py,
# runtime/torch/training.py), copied by TrainingPrinter._helpers.

#: methods of a keras.Model subclass that become methods of the torch module
STEP_METHODS = ("train_step", "test_step", "compute_loss")

#: what a step may read of ``self`` besides the printed module's own members: what the
#: generated code sets on the model (``compile`` → ``model.optimizer``) and nn.Module's own
#: attributes and methods
GENERATED_ATTRS = ("optimizer",)
NN_MODULE_ATTRS = ("training", "train", "eval", "forward", "parameters", "named_parameters", "buffers",
                   "named_buffers", "children", "named_children", "modules", "named_modules", "state_dict",
                   "load_state_dict", "zero_grad", "requires_grad_", "apply", "to", "cpu", "cuda", "float", "double",
                   "half", "get_submodule", "get_parameter", "get_buffer", "register_buffer", "register_parameter",
                   "add_module")


def default_step(kind: str, loss_params: list[str]) -> str:
    """Keras' own ``train_step``/``test_step`` around the model's ``compute_loss`` (called
    with keywords, as Keras calls it), logging the batch-size-weighted mean loss."""
    args = ["x=x", "y=y", "y_pred=y_pred"]
    if "sample_weight" in loss_params:
        args.append("sample_weight=None")
    if "training" in loss_params:
        args.append(f"training={kind == 'train_step'}")
    call = f"self.compute_loss({', '.join(args)})"
    if kind == "train_step":
        body = ["self.optimizer.zero_grad()", "y_pred = self(x)", f"loss = {call}", "loss.backward()",
                "self.optimizer.step()"]
        doc = "Keras' default train_step, with the model's own compute_loss."
    else:
        body = ["y_pred = self(x)", f"loss = {call}"]
        doc = "Keras' default test_step, with the model's own compute_loss."
    body += ["self.loss_tracker.update_state(loss, sample_weight=len(x))",
             'return {"loss": self.loss_tracker.result()}']
    return "\n".join([f"def {kind}(self, data):", "    " + docstring(doc), "    x, y = data"] + [f"    {b}" for b in body])


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _is_call_to(node: cst.BaseExpression, attr: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == attr


class _StepRewrite(cst.CSTTransformer):
    """The tape, gradient and apply_gradients statements of one method, in torch."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.tapes: set[str] = set()
        self.optimizer: str | None = None
        #: the names assigned so far, and whether each is a scalar (a mean over everything, ...)
        self.scalars: dict[str, bool] = {}

    def _is_tape(self, item: cst.WithItem) -> bool:
        path = torch_loss_functions.resolve(item.item.func, self.aliases) if isinstance(item.item, cst.Call) else None
        return bool(path) and path.endswith("GradientTape")

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body: list[cst.BaseStatement] = []
        for stmt in updated.body:
            if isinstance(stmt, cst.With) and all(self._is_tape(item) for item in stmt.items):
                for item in stmt.items:
                    if item.asname is not None:
                        self.tapes.add(_code(item.asname.name))
                if self.optimizer is None:
                    raise Untranslatable("a GradientTape without optimizer.apply_gradients")
                zero = cst.parse_statement(f"{self.optimizer}.zero_grad()  # the tape's gradients start from zero")
                body.append(zero.with_changes(leading_lines=stmt.leading_lines))
                body += list(stmt.body.body)
                continue
            body.append(self._statement(stmt))
        return updated.with_changes(body=body)

    def _statement(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return stmt
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if _is_call_to(value, "gradient") and _code(value.func.value) in self.tapes:
            target = value.args[0].value
            loss = _code(target)
            if not (isinstance(target, cst.Name) and self.scalars.get(target.value)):
                # TensorFlow's gradient of a tensor is the gradient of its sum (a loss per sample)
                loss = f"{loss}.sum()" if isinstance(target, (cst.Name, cst.Attribute)) else f"({loss}).sum()"
            return stmt.with_changes(body=[cst.Expr(cst.parse_expression(f"{loss}.backward()"))])
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            self.scalars[small.targets[0].target.value] = _scalar(small.value, self.scalars)
        if _is_call_to(value, "apply_gradients"):
            return stmt.with_changes(body=[cst.Expr(cst.parse_expression(f"{_code(value.func.value)}.step()"))])
        return stmt

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        """``self.trainable_variables`` (or a sub-model's) → its parameters that train."""
        if updated.attr.value in ("trainable_variables", "trainable_weights"):
            return cst.parse_expression(f"[p for p in {_code(updated.value)}.parameters() if p.requires_grad]")
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        args = [a for a in updated.args if not (a.keyword is not None and a.keyword.value == "training")]
        if len(args) != len(updated.args) and args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=args)


#: calls that return one number: reductions over every axis (no ``axis=``) and Keras' losses
#: of the model (already reduced)
_REDUCERS = ("mean", "reduce_mean", "sum", "reduce_sum", "compute_loss", "compiled_loss")


def _scalar(node: cst.BaseExpression, names: dict[str, bool]) -> bool:
    """Whether an expression is sure to be one number (``ops.mean(e) + 0.1 * ops.sum(w)``)."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Name):
        return names.get(node.value, False)
    if isinstance(node, cst.UnaryOperation):
        return _scalar(node.expression, names)
    if isinstance(node, cst.BinaryOperation):
        return _scalar(node.left, names) and _scalar(node.right, names)
    if isinstance(node, cst.Call):
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name in ("compute_loss", "compiled_loss"):
            return True
        return name in _REDUCERS and len(node.args) == 1 and node.args[0].keyword is None
    return False


def layer_attributes(graph) -> dict[str, tuple[str, str | None]]:
    """The model's own layer attributes: Keras attribute (``self.relu``) → (the node name,
    which is the attribute the torch printer gives the layer's module when it keeps one,
    and the op of the layer's ``activation=`` when there is one: the torch module leaves it
    to ``forward``). The names differ where Keras' would clash or is reserved in torch:
    ``self.model`` → ``self.model_layer``."""
    root = graph.from_keras.root_scope
    fused = {id(n.from_keras.fused_into): n.op for n in graph.nodes if n.from_keras.fused_into is not None}
    out: dict[str, tuple[str, str | None]] = {}
    for node in graph.nodes:
        local, layer = node.from_keras.local, node.layer
        if root is not None and node.from_keras.owner_scope is root and local is not None and local[1] is None \
                and getattr(layer, "attr", None) is not None:
            out.setdefault(layer.attr, (node.name, fused.get(id(node))))
    return out


class _SelfAttrs(cst.CSTTransformer):
    """``self.<keras attribute>`` → ``self.<torch attribute>``, checking that the module has it."""

    def __init__(self, members: frozenset[str], layers: dict[str, tuple[str, str | None]], stored: set[str]):
        self.members, self.layers, self.stored = members, layers, stored

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        if not (isinstance(updated.value, cst.Name) and updated.value.value == "self"):
            return updated
        name = updated.attr.value
        if name in self.layers:  # a layer of the model: its module, under the printer's name
            torch_name, activation = self.layers[name]
            if torch_name not in self.members:
                raise Untranslatable(f"self.{name} (its layer is folded into forward's code in torch: "
                                     "no module attribute)")
            if activation is not None:
                raise Untranslatable(f"self.{name} (its torch module leaves the layer's {activation} "
                                     "activation to forward's code)")
            return updated.with_changes(attr=cst.Name(torch_name))
        if name not in self.members and name not in self.stored:
            raise Untranslatable(f"self.{name} (the torch module has no such attribute)")
        return updated


def _stored_attrs(fn: cst.FunctionDef) -> set[str]:
    """The ``self.<name>`` a method assigns (``self.step = 0``)."""
    out = set()
    for assign in nodes_of(fn, cst.Assign):
        for target in assign.targets:
            for attr in nodes_of(target.target, cst.Attribute):
                if isinstance(attr.value, cst.Name) and attr.value.value == "self":
                    out.add(attr.attr.value)
    return out


def translate_method(fn: cst.FunctionDef, aliases: dict[str, str], loss_call,
                     own: frozenset[str] = frozenset(), members: frozenset[str] | None = None,
                     layers: dict[str, tuple[str, str | None]] | None = None,
                     numbers: frozenset[str] = frozenset()) -> tuple[str, bool]:
    """A custom step method in torch (its text, and whether it uses ``F``); ``own`` names the
    methods the model class defines itself. ``members`` are the names the torch module has
    (its printed attributes and methods, the trackers, ``own``); ``layers`` maps the
    model's Keras layer attributes to the printed attribute names (:func:`layer_attributes`).
    ``numbers`` are the module's constants bound to a number (``PIXELS = 28 * 28``).
    Every ``self.<name>`` the method reads must be one of them (or set by the method, by the
    generated code, or by nn.Module): a layer the torch printer folds into ``forward``
    (``F.relu``, ``x * y``) has no module to call, and a module whose Keras layer has an
    ``activation=`` does not apply it (``forward`` does).

    Raises:
        Untranslatable: naming what has no torch form.
    """
    rewrite = _StepRewrite(aliases)
    rewrite.scalars = dict.fromkeys(numbers, True)  # (module constants: numbers in any product)
    # the optimizer the tape's gradients go to (zero_grad() stands where the tape was)
    rewrite.optimizer = next((_code(c.func.value) for c in nodes_of(fn, cst.Call)
                              if _is_call_to(c, "apply_gradients")), None)
    body = fn.body.visit(rewrite)
    if any(isinstance(c.func, cst.Name) and c.func.value == "super" for c in nodes_of(fn, cst.Call)):
        raise Untranslatable("super() (Keras' own implementation)")
    new, uses_f = torch_loss_functions.translate_function(fn.with_changes(body=body), aliases, loss_call)
    for attr in nodes_of(new, cst.Attribute):
        if isinstance(attr.value, cst.Name) and attr.value.value == "self" and attr.attr.value in _KERAS_ONLY \
                and attr.attr.value not in own:  # (the model's own compute_loss is a method here too)
            raise Untranslatable(f"self.{attr.attr.value}")
    if members is not None:
        known = frozenset(members) | own | frozenset(GENERATED_ATTRS) | frozenset(NN_MODULE_ATTRS)
        new = new.visit(_SelfAttrs(known, layers or {}, _stored_attrs(fn)))
    text = _code(new.with_changes(leading_lines=()))
    if any(f"{t}." in text for t in rewrite.tapes):
        raise Untranslatable("the gradient tape is used beyond tape.gradient()")
    return text.rstrip("\n"), uses_f


def _is_self_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "self"


def _batch_size_read(node: cst.BaseExpression, names: set[str]) -> bool:
    """``ops.shape(x)[0]`` / ``tf.shape(x)[0]`` / ``x.shape[0]`` / ``len(x)`` of one of ``names``:
    the batch size, the same in either layout."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return len(node.args) == 1 and _is_name(node.args[0].value, names)
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Integer) and node.slice[0].slice.value.value == "0"):
        return False
    base = node.value
    if isinstance(base, cst.Attribute) and base.attr.value == "shape":
        return _is_name(base.value, names)
    return isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) and base.func.attr.value == "shape" \
        and len(base.args) == 1 and _is_name(base.args[0].value, names)


def _is_name(node: cst.BaseExpression, names: set[str]) -> bool:
    return isinstance(node, cst.Name) and node.value in names


def _unpacked(node: cst.BaseExpression, names: set[str]) -> cst.Name | None:
    """The data name in ``data`` / ``data[0]`` (one of ``names``), else None."""
    if _is_name(node, names):
        return node
    if isinstance(node, cst.Subscript) and _is_name(node.value, names) and len(node.slice) == 1 and \
            isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Integer):
        return node.value
    return None


def layout_free(text: str) -> bool:
    """Whether a step method (``train_step(self, data)`` source) reads its data only in ways
    that do not depend on the layout of the images: hands them to the model itself
    (``self(x, training=True)``, which takes the torch layout), reads the batch size
    (``ops.shape(x)[0]``, ``len(x)``), unpacks them (``x, y = data``, ``x = data[0]``) or
    tests their kind (``isinstance(data, tuple)``). Anything else (an axis argument, an
    index, a sub-model call) may depend on the layout: False."""
    fn = cst.parse_module(text).body[0]
    if not isinstance(fn, cst.FunctionDef) or len(fn.params.params) < 2:
        return False
    names = {fn.params.params[1].name.value}
    allowed: set[int] = set()  # ids of the Name nodes read in a layout-free way
    changed = True
    while changed:  # the names unpacked from the data, and those from them
        changed = False
        for assign in nodes_of(fn, cst.Assign):
            value = assign.value
            parts = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            sources = [_unpacked(part, names) for part in parts]
            if not sources or None in sources:
                continue
            allowed |= {id(source) for source in sources}
            for target in assign.targets:
                for name in nodes_of(target.target, cst.Name):
                    if name.value not in names:
                        names.add(name.value)
                        changed = True
    for call in nodes_of(fn, cst.Call):
        if _is_self_call(call):
            allowed |= {id(a.value) for a in call.args if _is_name(a.value, names)}
        elif isinstance(call.func, cst.Name) and call.func.value == "isinstance" and call.args:
            allowed.add(id(call.args[0].value))
    for node in [*nodes_of(fn, cst.Subscript), *nodes_of(fn, cst.Call)]:
        if _batch_size_read(node, names):
            allowed |= {id(n) for n in nodes_of(node, cst.Name) if n.value in names}
    targets = {id(n) for assign in nodes_of(fn, cst.Assign) for t in assign.targets for n in nodes_of(t.target, cst.Name)}
    # names that are no variables: attributes (``self.x``) and keywords (``training=``)
    others = {id(a.attr) for a in nodes_of(fn.body, cst.Attribute)} | \
        {id(a.keyword) for a in nodes_of(fn.body, cst.Arg) if a.keyword is not None}
    return all(id(n) in allowed or id(n) in targets or id(n) in others
               for n in nodes_of(fn.body, cst.Name) if n.value in names)


def tracker_expr(code: str, aliases: dict[str, str], metric: tuple | None = None, metric_object=None) -> str:
    """``keras.metrics.Mean(name="loss")`` → ``Mean(name="loss")``; another metric object the
    reader named (``metric``: (canonical name, label), e.g. ``SparseCategoricalAccuracy()``) →
    ``metric_object(*metric)``, the custom loop's metric object (``MeanMetricWrapper`` of the
    accuracy, Keras' ``update_state(y_true, y_pred)``/``result()``/``reset_state()``)."""
    call = cst.parse_expression(code)
    path = torch_loss_functions.resolve(call.func, aliases) if isinstance(call, cst.Call) else None
    if path and path.rsplit(".", 1)[-1] == "Mean" and ".metrics" in f".{path}":
        return _code(call.with_changes(func=cst.Name("Mean")))
    if metric is not None and metric_object is not None:
        try:
            return metric_object(*metric)
        except (NotImplementedError, KeyError) as exc:
            raise Untranslatable(f"{code} ({exc})") from None
    raise Untranslatable(f"{code} (only keras.metrics.Mean trackers and the accuracies are translated)")


def extend_class(text: str, init_lines: list[str], methods: list[str]) -> str:
    """The printed module class with ``init_lines`` at the end of ``__init__`` (before
    ``self.reset_parameters()``) and ``methods`` after ``forward``."""
    module = cst.parse_module(text)
    cls = next(s for s in module.body if isinstance(s, cst.ClassDef))
    body = list(cls.body.body)
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
            lines = list(stmt.body.body)
            at = next((k for k, s in enumerate(lines) if "self.reset_parameters()" in _code(s)), len(lines))
            lines[at:at] = [cst.parse_statement(ln) for ln in init_lines]
            body[i] = stmt.with_changes(body=stmt.body.with_changes(body=lines))
    for method in methods:
        parsed = cst.parse_module(method).body[0]
        body.append(parsed.with_changes(leading_lines=[cst.EmptyLine()]))
    index = module.body.index(cls)
    new_cls = cls.with_changes(body=cls.body.with_changes(body=body))
    return module.with_changes(body=[*module.body[:index], new_cls, *module.body[index + 1:]]).code


def module_numbers(module: cst.Module) -> frozenset[str]:
    """The names the module binds once, at its top level, to a number or arithmetic of numbers
    (``PIXELS = 28 * 28``): one number wherever a step uses them."""
    counts: dict[str, int] = {}
    numeric: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                for target in targets:
                    for name in nodes_of(target, cst.Name):
                        counts[name.value] = counts.get(name.value, 0) + 1
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name) and _scalar(small.value, dict.fromkeys(numeric, True)):
                    numeric.add(small.targets[0].target.value)
    return frozenset(n for n in numeric if counts.get(n) == 1)

