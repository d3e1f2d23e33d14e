"""The training reader's training objects: losses (``nn.*Loss`` and the functional ones),
``torch.optim`` optimizers with their parameter groups, ``lr_scheduler`` schedules.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from transpiler.frontend_ast.torch import param_groups as pg
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.ir import training as T
from transpiler.frontend_ast.torch.reader_values import (
    _code, Arr, GroupV, LOSSES, LossValueV, ModelV, OPTIMIZER_IGNORED, OPTIMIZERS,
    OPTIMIZERS_WITHOUT_KERAS, OptimizerV, ParamsV,
    PER_SAMPLE_SCALAR, SCHEDULERS, SchedulerV, V)
from transpiler.ir.code_literals import bare_argument


class ReaderObjects:
    """Mixin of ``TrainingReader`` (reader_objects)."""

    def functional_loss(self, short: str, node: cst.Call, pos, vals, kw) -> V:
        """``F.cross_entropy(out, y)`` in data code: the loss computed on arrays."""
        if len(pos) < 2:
            raise Unsupported(f"F.{short} without (output, target)")
        if short in ("mse_loss", "l1_loss"):  # elementwise: numpy says it directly
            reduction = self.string_value(kw["reduction"]) if "reduction" in kw else "mean"
            if reduction not in ("mean", "sum", "none"):
                raise Unsupported(f"F.{short}(reduction={_code(kw['reduction'])})")
            diff = "$abs({0} - {1})" if short == "l1_loss" else "({0} - {1}) ** 2"
            template = diff if reduction == "none" else f"({diff}).{reduction}()" if short != "l1_loss" \
                else f"{diff}.{reduction}()"
            self.array(node, template, [pos[0], pos[1]])
            return Arr()
        loss = self.loss_config(short, {k: self.static(v, k) for k, v in kw.items()}, [])
        self.fact(node, "loss_call", {"loss": None, "output": self.sid(pos[0]), "target": self.sid(pos[1]), "config": loss})
        return LossValueV()

    # -- objects ----------------------------------------------------------------------
    def loss_config(self, name: str, kw: dict, pos: list) -> T.Loss:
        if pos:
            raise Unsupported(f"{name}: positional arguments are not translated")
        kind, from_logits = LOSSES[name]
        reduction = kw.pop("reduction", "mean")
        for legacy in ("size_average", "reduce"):
            if kw.pop(legacy, None) is not None:
                raise Unsupported(f"{name}({legacy}=...) (deprecated) is not translated")
        params: dict[str, Any] = {}
        smoothing = kw.pop("label_smoothing", 0.0)
        if smoothing:
            params["label_smoothing"] = smoothing
        ignore = kw.pop("ignore_index", -100)
        if ignore != -100:
            # Keras' ignore_class: the targets of that class count for nothing, the mean is over
            # the others (as torch's); not with label smoothing or NLL (their generated classes)
            if kind != "sparse_categorical_crossentropy" or smoothing or not from_logits:
                raise Unsupported(f"{name}(ignore_index={_shown(ignore)}) "
                                  "is not translated" + (" with label smoothing" if smoothing else ""))
            params["ignore_class"] = ignore
        if kind == "huber":
            delta = kw.pop("delta", 1.0)
            beta = kw.pop("beta", 1.0)
            if name in ("SmoothL1Loss", "smooth_l1_loss") and beta != 1.0:
                raise Unsupported(f"{name}(beta={beta}): smooth L1 with beta != 1 is Huber(delta=beta) / beta")
            params["delta"] = float(delta) if not isinstance(delta, T.Code) else delta
        if kind == "kl_divergence":
            log_target = kw.pop("log_target", False)
            if log_target:
                raise Unsupported(f"{name}(log_target=True) is not translated")
            params["log_input"] = True
            if reduction == "batchmean":
                reduction = "mean"
            elif reduction == "sum":
                pass
            else:
                raise Unsupported(f"{name}(reduction={_shown(reduction)}) averages over the classes too; "
                                  "use reduction='batchmean' (the KL divergence per sample)")
        if kw:
            raise Unsupported(f"{name}: argument(s) {', '.join(sorted(kw))} not translated")
        if isinstance(reduction, T.Code) or reduction not in ("mean", "sum"):
            raise Unsupported(f"{name}(reduction={_shown(reduction)}) is not translated (only 'mean' and 'sum')")
        if reduction == "sum" and kind not in PER_SAMPLE_SCALAR:
            raise Unsupported(f"{name}(reduction='sum') sums every element; Keras sums per-sample means")
        return T.Loss(kind, from_logits, params, reduction)

    # long: one case per optimizer family's settings (and where its parameters come from)
    def optimizer(self, name: str, node: cst.Call, pos, vals, kw) -> V:
        if name in OPTIMIZERS_WITHOUT_KERAS:
            raise Unsupported(f"torch.optim.{name} ({OPTIMIZERS_WITHOUT_KERAS[name]}) has no Keras optimizer; "
                              "translate it by hand")
        if name not in OPTIMIZERS:
            raise Unsupported(f"torch.optim.{name} is not translated to Keras yet")
        kind, order, defaults = OPTIMIZERS[name]
        if not vals:
            raise Unsupported(f"torch.optim.{name} without parameters")
        params = vals[0]
        per_group = {}
        given = dict(zip(order[1:], pos[1:]))
        given.update(kw)
        values = {k: self.static(v, f"{name}({k}=...)") for k, v in given.items()}
        runtime_groups = None
        from transpiler.frontend_ast.torch.runtime_params import built_groups

        if not isinstance(params, ParamsV) and built_groups(self, pos[0]):
            runtime_groups = self.sid(pos[0])  # (groups the function builds when it runs: runtime_params)
            params = ParamsV(ModelV("model", None), _code(pos[0]))
        elif not isinstance(params, ParamsV):
            if not isinstance(pos[0], (cst.List, cst.Tuple)):
                raise Unsupported(f"torch.optim.{name}({_code(pos[0])}): only model.parameters() of a model "
                                  "built in this script is translated")
            params, shared, per_group = self.parameter_groups(name, pos[0], {**defaults, **values})
            values.update(shared)
        for key in list(values):
            if key in OPTIMIZER_IGNORED:
                if key == "maximize" and values[key]:
                    raise Unsupported(f"{name}(maximize=True) is not translated")
                values.pop(key)
        unknown = set(values) - set(defaults)
        if unknown:
            raise Unsupported(f"torch.optim.{name}: argument(s) {', '.join(sorted(unknown))} not translated")
        h = {**defaults, **values}
        hyper = dict(T.OPTIMIZER_DEFAULTS[kind])
        hyper["learning_rate"] = h["lr"]
        opt = T.Optimizer(kind, hyper, **per_group)
        opt.runtime_groups = runtime_groups
        if kind in ("adam", "adamw", "adamax", "nadam"):
            betas = h["betas"]
            if isinstance(betas, T.Code):
                raise Unsupported(f"{name}(betas=...) must be known statically")
            hyper["beta_1"], hyper["beta_2"] = float(betas[0]), float(betas[1])
            hyper["epsilon"] = h["eps"]
            if kind in ("adam", "adamw"):
                hyper["amsgrad"] = h["amsgrad"]
                opt.epsilon_after_bias_correction = True
        if kind == "nadam":
            if h["decoupled_weight_decay"]:
                raise Unsupported("NAdam(decoupled_weight_decay=True) is not translated")
            hyper["momentum_decay"] = h["momentum_decay"]
        if kind == "adamw":
            hyper["weight_decay"] = h["weight_decay"]
        elif h["weight_decay"]:
            opt.l2 = h["weight_decay"]
        if kind == "sgd":
            if h["dampening"] and h["nesterov"]:
                raise Unsupported("SGD(nesterov=True, dampening=...): torch refuses it")
            if h["dampening"] and h["momentum"]:
                hyper["dampening"] = h["dampening"]
            hyper["momentum"] = h["momentum"]
            hyper["nesterov"] = h["nesterov"]
            opt.momentum_on_gradients = bool(h["momentum"])
        if kind == "rmsprop":
            hyper["rho"] = h["alpha"]
            hyper["epsilon"] = h["eps"]
            hyper["momentum"] = h["momentum"]
            hyper["centered"] = h["centered"]
            opt.epsilon_outside_sqrt = True
            opt.momentum_on_gradients = bool(h["momentum"])
        if kind == "adadelta":
            hyper["rho"], hyper["epsilon"] = h["rho"], h["eps"]
        if kind == "adagrad":
            if h["lr_decay"]:
                hyper["lr_decay"] = h["lr_decay"]
            hyper["initial_accumulator_value"] = h["initial_accumulator_value"]
            hyper["epsilon"] = h["eps"]
            opt.epsilon_outside_sqrt = True
        self._lstm_bias_rate(opt, params)
        self.fact(node, "optimizer_object", opt, model=params.model.name)
        return OptimizerV(opt, params.model, node, model_text=params.text)

    def _lstm_bias_rate(self, opt: T.Optimizer, params) -> None:
        """torch's LSTM has two biases (``bias_ih``, ``bias_hh``) that always get the same
        gradient, so with the same optimizer state each moves by the same step and their sum
        (Keras' one bias) by twice it. Keras' bias steps at twice the rate, which reproduces
        that exactly for every optimizer here, as long as nothing treats the two biases apart:
        no weight decay (it decays each by its own value), no clipping, no parameter groups."""
        md = getattr(params.model, "md", None)
        if md is None or opt.group_learning_rates or opt.no_weight_decay is not None or opt.l2 or \
                opt.clip or opt.hyper.get("weight_decay"):
            return
        # (GRU: Keras has two too; an LSTM whose bias_hh is frozen has one bias, as Keras')
        lstm_layers = {n.source_name for n in md.graph.nodes if n.op == "lstm" and not n.from_torch.bias_hh_frozen}
        if not lstm_layers:
            return
        keys = [k for k in pg.parameter_keys(md) if ".bias_ih_l" in k or ".bias_hh_l" in k]
        biases = [v for v in pg.keras_variables(md, keys) if v[0] in lstm_layers]
        if biases:
            opt.group_learning_rates = [(T.KerasVariables(None, params.model.var or "model", biases), 2.0)]
            opt.rate_note = ("torch's LSTM has two biases that get the same gradient, so their sum (Keras' "
                             "one bias) moves twice as far per step: the LSTM biases step at twice the rate")

    def parameter_groups(self, name: str, node, defaults: dict):
        """``[{"params": decay, "weight_decay": 0.01}, {"params": no_decay, ...}]``: the model the
        groups cover (every parameter exactly once), the settings they share, and the Keras
        variables (text, variables) weight decay skips."""
        scope = self.cur_scope
        groups, texts = [], []
        for el in node.elements:
            if not isinstance(el.value, cst.Dict):
                raise Unsupported(f"torch.optim.{name}: a parameter group that is not a dict literal")
            group = {}
            for item in el.value.elements:
                key = self.string_value(item.key, scope) if isinstance(item, cst.DictElement) else None
                if key is None:
                    raise Unsupported(f"torch.optim.{name}: a parameter group's keys must be literal strings")
                if key == "params":
                    group[key] = pg.read_list(self, item.value, scope, ModelV, GroupV)
                    texts.append(_code(item.value))
                else:
                    group[key] = self.static(item.value, f"{name}(params=[{{{key!r}: ...}}])")
            if "params" not in group:
                raise Unsupported(f"torch.optim.{name}: a parameter group without params")
            groups.append(group)
        models = {g["params"].model: g["params"].model for g in groups}
        if len(models) != 1:
            raise Unsupported(f"torch.optim.{name}: parameter groups over several models")
        model = next(iter(models.values()))
        keys = [k for g in groups for k in g["params"].keys]
        if sorted(keys) != sorted(pg.parameter_keys(model.md)):
            raise Unsupported(f"torch.optim.{name}: the parameter groups do not hold every parameter of "
                              f"{model.var or 'the model'} exactly once (Keras' fit trains them all)")
        shared, excluded, scales = pg.optimizer_groups(name, groups, defaults)
        var = model.var or "model"

        def listed(keys: list[str]) -> T.KerasVariables:
            # the group's own list when it is one (``no_decay``), else the variables are listed
            text = next((t for g, t in zip(groups, texts) if g["params"].keys == keys and
                         isinstance(self.cur_scope.lookup(t), GroupV)), None)
            return T.KerasVariables(text, var, pg.keras_variables(model.md, keys))

        per_group = {"no_weight_decay": None if excluded is None else listed(excluded),
                     "group_learning_rates": [(listed(groups[i]["params"].keys), scale)
                                              for i, scale in sorted(scales.items())]}
        return ParamsV(model, var), shared, per_group

    def scheduler(self, name: str, node: cst.Call, pos, vals, kw) -> V:
        if name not in SCHEDULERS:
            raise Unsupported(f"torch.optim.lr_scheduler.{name} is not translated to Keras yet")
        if not vals or not isinstance(vals[0], OptimizerV):
            raise Unsupported(f"{name}: the first argument must be an optimizer of this script")
        opt = vals[0]
        orders = {"StepLR": ("step_size", "gamma"), "MultiStepLR": ("milestones", "gamma"),
                  "ExponentialLR": ("gamma",), "CosineAnnealingLR": ("T_max", "eta_min"),
                  "LambdaLR": ("lr_lambda",),
                  "LinearLR": ("start_factor", "end_factor", "total_iters"),
                  "ConstantLR": ("factor", "total_iters"),
                  "SequentialLR": ("schedulers", "milestones"),
                  "OneCycleLR": ("max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start",
                                 "anneal_strategy", "cycle_momentum", "base_momentum", "max_momentum",
                                 "div_factor", "final_div_factor", "three_phase"),
                  "ReduceLROnPlateau": ("mode", "factor", "patience", "threshold", "threshold_mode", "cooldown",
                                        "min_lr", "eps")}
        given = dict(zip(orders[name], pos[1:]))
        given.update(kw)
        if "last_epoch" in given or "verbose" in given:
            given.pop("verbose", None)
            if "last_epoch" in given and _code(bare_argument(given.pop("last_epoch"))) != "-1":
                raise Unsupported(f"{name}(last_epoch=...) is not translated")
        lr0 = opt.config.hyper["learning_rate"]
        sched = SchedulerV(opt, node)
        if name == "LambdaLR":
            fn = given.pop("lr_lambda")
            if given:
                raise Unsupported(f"{name}: argument(s) {', '.join(sorted(given))} not translated")
            sched.schedule = T.Schedule("lambda", {"initial_learning_rate": lr0, "factor": T.Code(_code(fn), self.sid(fn))},
                                        per="epoch")
            self.fact(node, "schedule_object", sched.schedule)
            return sched
        if name == "SequentialLR":
            return self.sequential_schedule(sched, given)
        values = {k: self.static(v, f"{name}({k}=...)") for k, v in given.items()}
        if name == "OneCycleLR":
            return self.one_cycle_schedule(sched, values)
        # (a rate's factor known at run time only, ``gamma=args.gamma``: the schedule's code reads it)
        if any(isinstance(v, T.Code) for k, v in values.items()
               if k not in ("step_size", "T_max", "patience", "total_iters", "gamma")):
            raise Unsupported(f"{name}: arguments must be known statically")
        if name == "ReduceLROnPlateau":
            p = {"mode": "min", "factor": 0.1, "patience": 10, "threshold": 1e-4, "threshold_mode": "rel",
                 "cooldown": 0, "min_lr": 0.0, "eps": 1e-8, **values}
            patience = p["patience"]
            # torch reduces after `patience` bad epochs have passed (the next bad one); Keras
            # at the patience-th bad epoch
            patience = T.Code(f"{patience.text} + 1") if isinstance(patience, T.Code) else int(patience) + 1
            sched.plateau = T.Callback("reduce_lr_on_plateau", {
                "monitor": "val_loss", "factor": float(p["factor"]), "patience": patience, "mode": p["mode"],
                "min_delta": float(p["threshold"]), "cooldown": int(p["cooldown"]), "min_lr": float(p["min_lr"]),
                "relative_min_delta": p["threshold_mode"] == "rel"})
            self.fact(node, "callback_object", sched.plateau)
            return sched
        sched.schedule = schedule = _closed_form(name, lr0, values)
        self.fact(node, "schedule_object", schedule)
        return sched

    def sequential_schedule(self, sched, given: dict) -> V:
        """``SequentialLR(optimizer, [s0, s1, ...], milestones=[m1, ...])``: from milestone m_i
        on, schedule s_i restarted at 0 (torch steps it with ``step(0)``: its closed form at 0)."""
        parts_node, milestones_node = given.pop("schedulers", None), given.pop("milestones", None)
        if given or not isinstance(parts_node, (cst.List, cst.Tuple)) or milestones_node is None:
            raise Unsupported("SequentialLR: a literal list of schedulers and milestones (only) are translated")
        milestones = self.static(milestones_node, "SequentialLR(milestones=...)")
        if isinstance(milestones, T.Code) or len(milestones) != len(parts_node.elements) - 1:
            raise Unsupported("SequentialLR: milestones must be known statically, one fewer than the schedulers")
        parts = []
        for el in parts_node.elements:
            part = self.peek(el.value, self.cur_scope)
            if not isinstance(part, SchedulerV) or part.schedule is None or part.optimizer is not sched.optimizer:
                raise Unsupported(f"SequentialLR: {_code(el.value)} is not a learning-rate schedule of the same "
                                  "optimizer")
            parts.append(part)
        for part in parts:  # the parts are this schedule now: their own statements go
            self.facts.pop(self.sid(part.node), None)
            if part.stmt is not None:
                self.fact(part.stmt, "drop", f"{part.var}: a part of the SequentialLR schedule below")
        sched.schedule = T.Schedule("sequential", {"initial_learning_rate": sched.optimizer.config.hyper[
            "learning_rate"], "schedules": [p.schedule for p in parts], "milestones": [int(m) for m in milestones]},
                                    per="epoch")
        self.fact(sched.node, "schedule_object", sched.schedule)
        return sched

    def one_cycle_schedule(self, sched, values: dict) -> V:
        """``OneCycleLR``: the rate of step t by torch's formula (``one_cycle_rate`` in the
        output); the optimizer's own rate is replaced, as torch replaces it."""
        p = {"total_steps": None, "epochs": None, "steps_per_epoch": None, "pct_start": 0.3,
             "anneal_strategy": "cos", "cycle_momentum": True, "base_momentum": 0.85, "max_momentum": 0.95,
             "div_factor": 25.0, "final_div_factor": 1e4, "three_phase": False, **values}
        if p["cycle_momentum"] is not False:
            raise Unsupported("OneCycleLR(cycle_momentum=True) also cycles the optimizer's momentum (beta_1), "
                              "which a Keras optimizer fixes when it is built; pass cycle_momentum=False or "
                              "translate by hand")
        if p["anneal_strategy"] not in ("cos", "linear") or "max_lr" not in p or \
                isinstance(p["max_lr"], (list, tuple)):
            raise Unsupported("OneCycleLR: one max_lr and anneal_strategy 'cos' or 'linear' are translated")
        total = p["total_steps"]
        if total is None:
            if p["epochs"] is None or p["steps_per_epoch"] is None:
                raise Unsupported("OneCycleLR needs total_steps or epochs and steps_per_epoch")
            e, s = p["epochs"], p["steps_per_epoch"]
            total = T.Code(f"{_text(e)} * {_text(s)}") if isinstance(e, T.Code) or isinstance(s, T.Code) \
                else int(e) * int(s)
        if any(isinstance(p[k], T.Code) for k in ("pct_start", "div_factor", "final_div_factor", "three_phase")):
            raise Unsupported("OneCycleLR: pct_start, div_factor, final_div_factor and three_phase must be "
                              "known statically")
        sched.schedule = T.Schedule("one_cycle", {
            "initial_learning_rate": sched.optimizer.config.hyper["learning_rate"], "max_lr": p["max_lr"],
            "total_steps": total, "pct_start": float(p["pct_start"]), "anneal_strategy": p["anneal_strategy"],
            "div_factor": float(p["div_factor"]), "final_div_factor": float(p["final_div_factor"]),
            "three_phase": bool(p["three_phase"])}, per="step")
        self.fact(sched.node, "schedule_object", sched.schedule)
        return sched


def _closed_form(name: str, lr0, values: dict) -> T.Schedule:
    """The schedules with a closed form in the epoch (or step) count."""
    if name == "StepLR":
        schedule = T.Schedule("exponential_decay", {"initial_learning_rate": lr0,
                                                    "decay_steps": values["step_size"],
                                                    "decay_rate": _factor(values.get("gamma", 0.1)),
                                                    "staircase": True}, per="epoch")
    elif name == "MultiStepLR":
        gamma = _factor(values.get("gamma", 0.1))
        milestones = sorted(int(m) for m in values["milestones"])
        schedule = T.Schedule("piecewise_constant_decay", {
            "initial_learning_rate": lr0, "boundaries": [m - 1 for m in milestones],
            "values": [lr0 * gamma ** i if not isinstance(lr0, T.Code) and not isinstance(gamma, T.Code) else None
                       for i in range(len(milestones) + 1)], "gamma": gamma}, per="epoch")
    elif name in ("LinearLR", "ConstantLR"):
        linear = name == "LinearLR"
        start = float(values.get("start_factor" if linear else "factor", 1.0 / 3))
        end = float(values.get("end_factor", 1.0)) if linear else 1.0
        schedule = T.Schedule("linear" if linear else "constant", {
            "initial_learning_rate": lr0, "start_factor": start, "end_factor": end,
            "total_iters": values.get("total_iters", 5)}, per="epoch")
    elif name == "ExponentialLR":
        schedule = T.Schedule("exponential_decay", {"initial_learning_rate": lr0, "decay_steps": 1,
                                                    "decay_rate": _factor(values["gamma"]), "staircase": False},
                              per="epoch")
    else:
        schedule = T.Schedule("cosine_annealing", {"initial_learning_rate": lr0, "t_max": values["T_max"],
                                                   "eta_min": float(values.get("eta_min", 0.0))}, per="epoch")
    return schedule


def _factor(value):
    """A schedule's factor: a number, or the code of one known at run time (``args.gamma``)."""
    return value if isinstance(value, T.Code) else float(value)


def _text(value) -> str:
    return value.text if isinstance(value, T.Code) else repr(value)


def _shown(value) -> str:
    """A keyword's value in a message: its source text when it is code (never the node's id,
    which changes from run to run)."""
    return value.text if isinstance(value, T.Code) else repr(value)
