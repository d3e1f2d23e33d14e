"""Optimizer objects of a PyTorch program as Keras ones (the ``ProgramPrinter``'s part;
printers/keras/training.py): Keras' own optimizers by default, torch's arithmetic under
``--exact`` (printers/differences.py).

Imports no deep-learning framework.
"""

from __future__ import annotations

from transpiler.ir import training as T
from transpiler.printers import differences


def _idiomatic_difference(opt: T.Optimizer) -> str | None:
    """The ``differences.TO_KERAS`` key of what Keras' own optimizer computes otherwise than
    torch's (None: the same arithmetic)."""
    if opt.kind in ("adam", "adamw") and opt.epsilon_after_bias_correction:
        return "adam_epsilon"
    if opt.kind in ("rmsprop", "adagrad") and opt.epsilon_outside_sqrt:
        return f"{opt.kind}_epsilon"
    if opt.kind == "sgd" and opt.momentum_on_gradients:
        return "sgd_momentum"
    return {"adamax": "adamax_epsilon", "nadam": "nadam_schedule"}.get(opt.kind)


# long: one argument list per optimizer kind, then the class that computes it (moved from training.py whole)
def optimizer_expr(printer, opt: T.Optimizer) -> str:
    """The Keras optimizer for ``opt``: Keras' own class with torch's hyperparameters, the
    difference listed in the report; a class computing as torch does (transpiler/runtime/keras/
    optimizers.py) under ``--exact`` or where an argument means what Keras' optimizers lack
    (a coupled L2 weight decay, dampening, lr_decay, a momentum_decay of its own). ``printer``:
    the ProgramPrinter (its ``code``, ``need``, ``note`` and ``program``)."""
    from transpiler.printers.keras.training import KERAS_BETAS, OPTIMIZER_CLASSES, _listed, _num

    h = opt.hyper
    kind = opt.kind
    cls = f"keras.optimizers.{OPTIMIZER_CLASSES[kind]}"
    args = [f"learning_rate={printer.code(h['learning_rate'])}"]
    notes = []
    if kind in ("adam", "adamw", "adamax", "nadam"):
        if (h["beta_1"], h["beta_2"]) != KERAS_BETAS:
            args += [f"beta_1={_num(h['beta_1'])}", f"beta_2={_num(h['beta_2'])}"]
        args.append(f"epsilon={printer.code(h['epsilon'])}")
        if h.get("amsgrad"):
            args.append("amsgrad=True")
    if kind == "nadam" and h.get("momentum_decay", 0.004) != 0.004:
        args.append(f"momentum_decay={printer.code(h['momentum_decay'])}")
    if kind == "adamw":
        args.append(f"weight_decay={printer.code(h['weight_decay'])}")
    if kind == "sgd":
        if h.get("momentum"):
            args.append(f"momentum={printer.code(h['momentum'])}")
        if h.get("nesterov"):
            args.append("nesterov=True")
        if h.get("dampening"):
            args.append(f"dampening={printer.code(h['dampening'])}")
    if kind == "rmsprop":
        args.append(f"rho={printer.code(h['rho'])}")
        if h.get("momentum"):
            args.append(f"momentum={printer.code(h['momentum'])}")
        if h.get("centered"):
            args.append("centered=True")
    if kind == "adagrad":
        args.append(f"initial_accumulator_value={printer.code(h['initial_accumulator_value'])}")
        if h.get("lr_decay"):
            args.append(f"lr_decay={printer.code(h['lr_decay'])}")
    if kind == "adadelta":
        args.append(f"rho={printer.code(h['rho'])}")
    if kind in ("rmsprop", "adagrad", "adadelta"):
        args.append(f"epsilon={printer.code(h['epsilon'])}")
    for key in T.CLIP_KEYS:
        if key in opt.clip:
            args.append(f"{key}={printer.code(opt.clip[key])}")
    exact = printer.program.exact  # (--exact: torch's arithmetic; else Keras' own)
    differs = _idiomatic_difference(opt)
    if differs and not exact and not opt.l2 and not h.get("dampening") and not h.get("lr_decay") and \
            h.get("momentum_decay", 0.004) == 0.004:
        differences.record(printer.program, differences.TO_KERAS, differs)
    elif kind in ("adam", "adamw") and opt.epsilon_after_bias_correction:
        cls = f"Torch{OPTIMIZER_CLASSES[kind]}"
        printer.need(cls)
        if opt.l2:
            args.append(f"l2={printer.code(opt.l2)}")
    elif kind == "sgd" and (opt.momentum_on_gradients or opt.l2 or h.get("dampening")):
        printer.need("TorchSGD")
        cls = "TorchSGD"
        if opt.l2:
            args.append(f"l2={printer.code(opt.l2)}")
    elif kind in ("rmsprop", "adagrad") and (opt.epsilon_outside_sqrt or opt.l2 or h.get("lr_decay")) or \
            kind in ("adamax", "nadam") or kind == "adadelta" and opt.l2:
        cls = f"Torch{OPTIMIZER_CLASSES[kind]}"
        printer.need(cls)
        if opt.l2:
            args.append(f"l2={printer.code(opt.l2)}")
    elif opt.l2:
        raise NotImplementedError(f"{kind} with an L2 weight decay")
    group_rates = opt.group_learning_rates
    if opt.rate_note and not exact:  # the LSTM biases' doubled rate reproduces torch's two biases
        group_rates = []
        differences.record(printer.program, differences.TO_KERAS, "lstm_bias_rate")
    elif opt.rate_note:
        notes.append(opt.rate_note + ("; exact while the gradients are not clipped (torch's norm counts "
                                      "the two biases' gradient twice)" if opt.clip else ""))
    for note in notes:
        printer.note(note)
    expr = f"{cls}({', '.join(args)})"
    if opt.no_weight_decay is not None:
        printer.need("without_weight_decay")
        expr = f"without_weight_decay({expr}, {_listed(opt.no_weight_decay)})"
    if opt.runtime_groups is not None:  # (runtime keras/named_params.py)
        printer.need("param_groups_optimizer")
        expr = f"param_groups_optimizer({expr}, {printer.ref(opt.runtime_groups)})"
    if group_rates:
        printer.need("with_learning_rates")
        groups = ", ".join(f"({_listed(v)}, {_num(scale)})" for v, scale in group_rates)
        expr = f"with_learning_rates({expr}, [{groups}])"
    return expr
