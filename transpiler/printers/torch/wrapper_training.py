"""The training statements of wrapper models (frontend_ast/keras/wrappers.py) in torch: the
class itself (printers/torch/wrapper_class.py), its ``compile(...)`` call with the optimizer
objects it hands in as factories, and ``fit``/``evaluate`` over the class's own steps."""

from __future__ import annotations

import re

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.ir import training as T
from transpiler.ir.layout import is_channels_first
from transpiler.printers.code import comment_text
from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.printers.torch import wrapper_class
from transpiler.printers.torch.custom_step import tracker_expr


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def instances(printer) -> dict[str, str]:
    """Variable of a wrapper model → its class."""
    return printer.program.from_keras.wrapper_instances


def factory(printer, opt: T.Optimizer) -> str:
    """A Keras optimizer handed to a wrapper's compile(): a factory the class calls with the
    parameters it updates (Keras builds an optimizer on its first update)."""
    if opt.clip:
        raise NotImplementedError("gradient clipping of an optimizer handed to a model's own compile()")
    text = printer.optimizer_expr("PARAMS", opt)
    made = re.match(r"^([\w.]+)\(PARAMS\.parameters\(\), (.*)\)$", text, re.S)
    if made is None:
        raise NotImplementedError(f"the optimizer {opt.kind} as a factory")
    printer.code.imports.add("import functools")
    partial = f"functools.partial({made.group(1)}, {made.group(2)})"
    if opt.schedule is not None:  # (runtime/torch/optimizers.py: the scheduler steps with the optimizer)
        printer.needs.add("scheduled_optimizer")
        return f"scheduled({partial}, {printer.schedule_lambda(opt.schedule)})"
    return partial


def loss_callable(printer, loss: T.Loss) -> str:
    """A Keras loss object: called (y_true, y_pred), the batch mean."""
    name = printer.loss_name(loss, loss.from_logits)
    return f"lambda y_true, y_pred: {name}(y_pred, y_true).mean()"


def passed_to_wrapper(printer, var: str) -> bool:
    pattern = re.compile(rf"(?<![\w.]){re.escape(var)}\b(?!\s*=(?!=))")
    return any(ts.kind == "wrapper_compile" and pattern.search(ts.source) for ts in printer.program.training)


def _own_objects(module: cst.Module, cls: cst.ClassDef) -> dict[str, list[str]]:
    """``self.<attr> = Helper(...)`` in the class's ``__init__`` where ``Helper`` is a class of
    the script without bases: attr -> Helper's method names (its own ``predict``, not Keras')."""
    classes = {s.name.value: [f.name.value for f in s.body.body if isinstance(f, cst.FunctionDef)]
               for s in module.body if isinstance(s, cst.ClassDef) and not s.bases}
    init = next((f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"), None)
    out = {}
    for assign in nodes_of(init, cst.Assign) if init is not None else ():
        value, target = assign.value, assign.targets[0].target
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in classes \
                and isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self":
            out[target.attr.value] = classes[value.func.value]
    return out


def translate_classes(printer) -> None:
    """Each wrapper class → its torch text (``printer.code.wrapper_classes``)."""
    classes = printer.program.from_keras.wrapper_classes
    if not classes or not printer.program.source:
        return
    module = cst.parse_module(printer.program.source)
    aliases = torch_loss_functions.module_aliases(module)
    for stmt in module.body:
        if not isinstance(stmt, cst.ClassDef) or stmt.name.value not in classes:
            continue
        info = classes[stmt.name.value]
        ctx = wrapper_class.WrapperContext(
            aliases, lambda kind, logits: printer.loss_name(T.Loss(kind, logits), False), None, None,
            own_methods={**_own_objects(module, stmt), **info.get("own_methods", {})})
        span = info["span"]

        def report(method, reason, name=stmt.name.value, span=span):
            if method in ("__init__", "compile", "train_step", "test_step"):
                printer.program.from_keras.wrapper_failed[name] = True
            printer.program.stub(span, f"{name}.{method}(): {' '.join(reason.split())} has no torch translation yet")

        for attr, code in _trackers(stmt):
            try:
                ctx.trackers[attr] = tracker_expr(code, aliases, info["tracker_metrics"].get(attr),
                                                  printer.metric_object_expr)
                printer.needs.add("mean_metric")
            except (torch_loss_functions.Untranslatable, NotImplementedError):
                pass  # (the __init__ line then names the Keras metric: the method is a stub)
        for attr, (kind, config) in info["objects"].items():
            try:
                if kind == "loss":
                    ctx.objects[attr] = loss_callable(printer, config)
                elif kind == "optimizer":
                    ctx.objects[attr] = factory(printer, config)
            except NotImplementedError:
                pass
        text = wrapper_class.translate_class(stmt, ctx, report)
        if ctx.uses_f:
            printer.needs.add("F")
        printer.code.wrapper_classes[stmt.name.value] = text


def _trackers(cls: cst.ClassDef) -> list[tuple[str, str]]:
    """The metric trackers ``__init__`` or ``compile()`` makes: (attribute, source)."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value in ("__init__", "compile")]
    out = []
    for stmt in (stmt for fn in methods for stmt in fn.body.body):
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call) \
                and "metrics." in _code(small.value.func):
            attr = wrapper_class._self_attr(small.targets[0].target)
            if attr:
                out.append((attr, _code(small.value)))
    return out


def statement_lines(printer, ts: T.TrainingStatement) -> list[str]:
    """``gan.compile(...)``, ``gan.fit(...)``, ``gan.evaluate(...)`` of a wrapper model."""
    cls = instances(printer).get(ts.model)
    if ts.kind == "wrapper_compile":
        return [_compile_call(printer, ts)]
    if ts.kind == "fit":
        return [_fit(printer, ts, cls)]
    if ts.kind == "evaluate":
        return [_evaluate(printer, ts, cls)]
    if ts.kind == "summary":
        return [f"print({ts.model})"]
    raise NotImplementedError(f"{ts.kind}() of {cls}, a model wrapping others with its own train_step")


def _compile_call(printer, ts: T.TrainingStatement) -> str:
    call = cst.parse_expression(ts.source)
    keras = {k for k, v in torch_loss_functions.module_aliases(cst.parse_module(printer.program.source)).items()
             if v.split(".")[0] in ("keras", "tensorflow", "tf_keras")}
    args = []
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else i
        kind, config = ts.config["args"].get(key, ("other", None))
        if not isinstance(arg.value, (cst.Call, cst.SimpleString)):
            kind = "other"  # (a variable: where it is made, an optimizer is printed as a factory)
        if kind == "optimizer":
            value = factory(printer, config)
        elif kind == "loss":
            value = loss_callable(printer, config)
        elif kind == "unsupported":
            raise NotImplementedError(config)
        else:
            value = _code(arg.value)
            used = {n.value for n in _names(arg.value)}
            if used & keras:
                raise NotImplementedError(f"the argument {value} (a Keras object)")
        args.append(arg.with_changes(value=cst.parse_expression(value)))
    return _code(call.with_changes(args=args))


def _names(node: cst.CSTNode) -> list[cst.Name]:
    from transpiler.cst_fast import nodes_of

    return list(nodes_of(node, cst.Name))


def _layout(printer, cls: str) -> str | None:
    """The channels-first layout the held models take images in (the loader permutes once)."""
    held = printer.program.from_keras.wrapper_classes.get(cls, {}).get("held", [])
    layouts = {v.layout for md in printer.program.models if md.class_name in held
               for v in md.graph.inputs[:1] if v.layout and is_channels_first(v.layout)}
    if len(layouts) > 1:
        raise NotImplementedError("models of different layouts wrapped in one model")
    if layouts:
        printer.program.warn(None, f"{cls}: the images are channels-first in torch; the axis arguments of its "
                             "train_step are kept as written")
    return next(iter(layouts), None)


def _fit(printer, ts: T.TrainingStatement, cls: str) -> str:
    from transpiler.ir import code_literals
    from transpiler.printers.torch.callbacks import _callback_object_code
    from transpiler.printers.torch.objects import OBJECT_CALLBACKS
    from transpiler.printers.torch.training import _arg_text, _to_layout

    f: T.Fit = ts.config
    others = {k for k in ("validation_split", "class_weight", "sample_weight", "steps_per_epoch", "validation_steps")
              if getattr(f, k) not in (None, 0.0, getattr(T.Fit, k, None))}
    unknown = [cb.kind for cb in f.callbacks if cb.kind not in OBJECT_CALLBACKS]
    if others or unknown or f.initial_epoch:
        raise NotImplementedError(f"fit({', '.join(sorted(others)) or 'callbacks'}=...) with the model's own "
                                  "train_step" + (f" ({', '.join(unknown)})" if unknown else ""))
    if printer.program.from_keras.wrapper_failed.get(cls):
        raise NotImplementedError(f"{cls}.train_step() is not translated")
    if printer._from_dataset(f.x, f.y, ts) is not None:
        raise NotImplementedError("fit on a tf.data pipeline with the model's own train_step")
    layout = _layout(printer, cls)
    printer.needs |= {"fit_train_step", "loader"}
    args = [ts.model, _to_layout(f.x.text, layout)]
    if f.y is not None:
        args.append(f.y.text)
    kw = {"epochs": f.epochs, "batch_size": f.batch_size}
    if f.verbose != "auto":
        kw["verbose"] = f.verbose
    if f.shuffle is not True:
        kw["shuffle"] = f.shuffle
    if f.validation_data is not None:
        parts = code_literals.list_items(f.validation_data.text)
        if parts is None or len(parts) != 2 or "def test_step(" not in printer.code.wrapper_classes.get(cls, ""):
            raise NotImplementedError("fit(validation_data=...) other than an (x, y) pair, or without the "
                                      "model's own test_step")
        kw["validation_data"] = T.Code(f"({_to_layout(parts[0], layout)}, {parts[1]})")
        printer.features.add("step_validation")
        printer.needs.add("evaluate_test_step")
    if f.callbacks:
        kw["callbacks"] = T.Code("[" + ", ".join(_callback_object_code(cb.params["code"]) for cb in f.callbacks) + "]")
        printer.features.add("step_callbacks")
        printer.needs.add("callback_class")
    return f"fit_train_step({', '.join(args + [f'{k}={_arg_text(v)}' for k, v in kw.items()])})"


def _evaluate(printer, ts: T.TrainingStatement, cls: str) -> str:
    from transpiler.printers.torch.training import _arg_text, _to_layout

    e: T.Evaluate = ts.config
    text = printer.code.wrapper_classes.get(cls, "")
    if "def test_step(" not in text or e.steps is not None:
        raise NotImplementedError(f"evaluate() of {cls} (no test_step of its own, or steps=)")
    printer.needs |= {"evaluate_test_step", "loader"}
    args = [ts.model, _to_layout(e.x.text, _layout(printer, cls))]
    if e.y is not None:
        args.append(e.y.text)
    kw = {"batch_size": e.batch_size}
    if e.return_dict:
        kw["return_dict"] = True
    return f"evaluate_test_step({', '.join(args + [f'{k}={_arg_text(v)}' for k, v in kw.items()])})"


def factory_lines(printer, ts: T.TrainingStatement) -> list[str]:
    """``opt = keras.optimizers.Adam(...)`` handed to a wrapper's compile(): its factory."""
    note = comment_text(f"# {ts.model}: made over the parameters the model's compile() gives it")
    return [note, f"{ts.model} = {factory(printer, ts.config)}"]
