"""Print the training program of a PyTorch script (ir.training facts) as Keras 3.

The statements around the model keep their shape; what the torch frontend recognised is
rewritten in place by one libcst transformer:

* optimizer, loss and scheduler objects → ``keras.optimizers.*`` (torch's defaults made
  explicit, its algorithm variants kept by small subclasses where Keras computes
  otherwise), ``keras.losses.*``, ``keras.callbacks.*``;
* the usual training loop → ``model.compile(...)`` + ``model.fit(x, y, batch_size=,
  epochs=, shuffle=, validation_data=, callbacks=)`` with channels-first arrays permuted
  once where they enter;
* data code → numpy (``torch.from_numpy(a)`` → ``a``, ``t.argmax(dim=1)`` →
  ``t.argmax(axis=1)``), ``model(x)`` outside training → ``model.predict(x, verbose=0)``,
  ``torch.save(model.state_dict(), p)`` → ``model.save_weights(p)`` (``*.weights.h5``);
* a statement that still uses PyTorch becomes a marked stub quoting it, reported with
  its line.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.ir import training as T
from transpiler.ir.layout import Layout, channels_first_of, channels_last_of, is_channels_first, is_channels_last
from transpiler.ir.program import ModelDef, Program, output_perm
from transpiler.ir.source_file import NodeId, SourceFile
from transpiler.printers import runtime_source
from transpiler.printers.keras import def_headers
from transpiler.printers.keras import helper_calls as keras_helper_calls
from transpiler.printers.keras.array_spelling import array_text, numpy_tree
from transpiler.printers.keras import optimizers as keras_optimizers
from transpiler.printers.code import Namespace, comment_text, lit

LOSS_CLASSES = {"sparse_categorical_crossentropy": "SparseCategoricalCrossentropy",
                "binary_crossentropy": "BinaryCrossentropy", "mean_squared_error": "MeanSquaredError",
                "mean_absolute_error": "MeanAbsoluteError", "huber": "Huber",
                "categorical_crossentropy": "CategoricalCrossentropy", "kl_divergence": "KLDivergence"}
OPTIMIZER_CLASSES = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop", "adagrad": "Adagrad",
                     "adadelta": "Adadelta", "adamax": "Adamax", "nadam": "Nadam"}
KERAS_BETAS = (0.9, 0.999)

#: runtime modules (transpiler/runtime/keras/) holding the helpers generated programs use
RUNTIME_MODULES = ("keras.data", "keras.optimizers", "keras.losses", "keras.training", "keras.vision",
                   "keras.distributions", "keras.modules", "keras.autograd", "keras.arrays", "keras.downloads", "keras.named_params")


def helper_sources(name: str, copier: runtime_source.Copier) -> list[str]:
    """The source of runtime helper ``name`` (``TorchAdamW``: TorchAdam, renamed) and of the
    runtime definitions it uses that ``copier``'s program does not hold yet (a shared base)."""
    if name == "TorchAdamW":
        stem = name[len("Torch"):]
        return copier.take("keras.optimizers", "TorchAdam", rename={"TorchAdam": name, "Adam": stem})
    module = next((m for m in RUNTIME_MODULES if runtime_source.defines(m, name)), None)
    if module is None:
        raise KeyError(f"no runtime helper {name} in transpiler/runtime/keras/")
    return copier.take(module, name)


def variables_text(model_text: str, variables: list[tuple[str, int]]) -> str:
    """Keras variables by (layer name, index in layer.weights): ``[model.get_layer("fc").weights[0], ...]``."""
    return "[" + ", ".join(f'{model_text}.get_layer("{layer}").weights[{i}]' for layer, i in variables) + "]"


def _listed(group: T.KerasVariables) -> str:
    return group.text or variables_text(group.model, group.variables)


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _atom(text: str) -> str:
    """``text`` as an operand: parenthesised unless it is a primary expression."""
    try:
        expr = cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return f"({text})"
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer,
                         cst.Float, cst.List, cst.Dict, cst.ConcatenatedString)) or expr.lpar:
        return text
    if isinstance(expr, cst.Tuple) and expr.lpar:
        return text
    return f"({text})"


def _num(value) -> str:
    if isinstance(value, T.Code):
        return value.text
    return lit(value)


def input_perm(md: ModelDef | None, index: int) -> tuple | None:
    """The permutation a source-layout array needs to enter input ``index`` of the Keras model."""
    if md is None:
        return None
    graph = md.graph
    layouts = graph.layouts.inputs or [v.layout for v in graph.inputs]
    source = graph.origin.input_shapes
    if index >= len(layouts) or not source:
        return None
    layout = layouts[index]
    if layout and is_channels_last(layout) and tuple(source[index]) != tuple(graph.inputs[index].shape):
        return Layout(channels_first_of(layout), layout).perm
    return None


def target_perm(md: ModelDef | None, index: int, loss: T.Loss) -> tuple | None:
    """Targets of a loss on a feature-map output enter in the Keras output's layout."""
    if loss.kind in ("sparse_categorical_crossentropy", "nll"):
        return None
    perm = output_perm(md, index)
    if perm is None:
        return None
    src = md.graph.layouts.outputs[index]
    return Layout(src, channels_last_of(src)).perm if is_channels_first(src) else None


class ProgramPrinter:
    """Renders the statements of a torch script's training program as Keras code."""

    def __init__(self, program: Program, source: SourceFile):
        self.program = program
        self.source = source  # (the torch script, read-only)
        # by the stable id (ir/source_file.py) of the node each replaces
        self.facts: dict[NodeId, T.TrainingStatement] = program.from_torch.training_facts
        self.torch_names = set(program.from_torch.torch_bindings)
        self.updated: dict[NodeId, cst.CSTNode] = {}  # a node's printed form, by its stable id
        self.helpers: list[str] = []
        self.imports: set[str] = set()
        self.notes: list[str] = []
        self.names = Namespace(set(program.scope.names))
        self.classes: list[str] = []  # classes the statements need (a trainer), printed before them
        self.tape_splits: dict[NodeId, cst.CSTNode] = {}  # backward() statement → its printed first node
        self._module_names: set[str] | None = None

    def module_names(self) -> set[str]:
        """Every name the source mentions (a generated name takes none of them)."""
        if self._module_names is None:
            self._module_names = {n.value for n in nodes_of(self.source.module, cst.Name)}
        return self._module_names

    def need(self, helper: str) -> None:
        if helper not in self.helpers:
            self.helpers.append(helper)
            if helper in ("ArrayLoader", "DatasetLoader", "random_split", "DistributedSampler"):
                self.imports.add("import numpy as np")

    def helper_texts(self) -> list[str]:
        copier = runtime_source.Copier()  # (each definition once, its dependencies first)
        return [text.strip("\n") + "\n" for name in self.helpers for text in helper_sources(name, copier)]

    # -- statements -------------------------------------------------------------------
    def render(self, stmt: cst.CSTNode) -> str:
        rewriter = _Rewriter(self)
        new = stmt.visit(rewriter)
        if isinstance(new, cst.FlattenSentinel):
            return "".join(_code(s) for s in new.nodes)
        if isinstance(new, cst.RemovalSentinel):
            return ""
        return _code(new)

    def ref(self, node_id: NodeId | None, fallback: str = "") -> str:
        """The rendered code of the source expression whose stable id is ``node_id``."""
        if node_id is None:
            return fallback
        if node_id in self.updated:
            return _code(self.updated[node_id])
        original = self.source.node(node_id)
        if original is None:
            return fallback
        new = original.visit(_Rewriter(self))
        return _code(new)

    def code(self, value) -> str:
        if isinstance(value, T.Code):
            return self.ref(value.ref, value.text) if value.ref is not None else value.text
        return lit(value)

    # -- expression facts ---------------------------------------------------------------
    # long: one case per training-statement kind, each a few lines
    def expression(self, ts: T.TrainingStatement) -> str:
        kind = ts.kind
        cfg = ts.config
        if kind == "vision":  # (frontend_ast/torch/vision.py)
            from transpiler.printers.keras.vision_data import expression as vision_expression

            return vision_expression(self, cfg)
        if kind == "runtime_expr":  # a generated runtime helper's call (frontend_ast/torch/reader_io.py)
            for helper in cfg["helpers"]:
                self.need(helper)
            self.imports.add("import numpy as np")
            # the name the script imported from torch is the generated helper's now
            self.torch_names = set(self.torch_names) - set(cfg["helpers"])
            return cfg["template"].format(*[self.ref(p) for p in cfg["parts"]])
        if kind == "device_expr":  # (frontend_ast/torch/plumbing.py)
            self.note(cfg["note"])
            for helper in cfg.get("helpers", ()):
                self.need(helper)
            return cfg["text"]
        if kind == "array_expr":
            template = array_text(cfg)  # (the functions it marks: ir/array_functions.py, ir/tensor_functions.py)
            if "np." in template:
                self.imports.add("import numpy as np")
            if "math." in template:
                self.imports.add("import math")
            return template.format(*[_atom(self.ref(p)) for p in cfg.parts])
        if kind == "model_call":
            return self.model_call(ts)
        if kind == "loss_call":
            loss = self.ref(cfg["loss"]) if cfg["loss"] is not None else self.loss_expr(cfg["config"])
            output = self.ref(cfg["output"])
            if cfg.get("output_perm"):  # (a channels-last feature map: torch's layout, as the target's)
                output = f"keras.ops.transpose({output}, {lit(tuple(cfg['output_perm']))})"
            return f"{_atom(loss)}({self.ref(cfg['target'])}, {output})"
        if kind == "loss_object":
            return self.loss_expr(cfg)
        if kind == "optimizer_object":
            return self.optimizer_expr(cfg)
        if kind in ("helper_fit", "helper_evaluate", "helper_predict"):
            return keras_helper_calls.expression(self, ts)
        if kind == "keras_variables":
            return variables_text(ts.model, cfg)
        if kind == "schedule_object":
            return self.schedule_expr(cfg)
        if kind == "callback_object":
            return self.plateau_expr(cfg)
        if kind == "dataset_object":
            self.need("ArrayDataset")
            return f"ArrayDataset({', '.join(self.ref(p) for p in cfg.parts)})"
        if kind in ("loader_object", "map_loader_object"):
            # a DataLoader over a TensorDataset (arrays) or over a map-style Dataset (items)
            cls = "ArrayLoader" if kind == "loader_object" else "SampledLoader" if cfg.get("sampler") else \
                "DatasetLoader"
            if kind == "loader_object":
                self.need("ArrayDataset")
            self.need("ArrayLoader")  # (DatasetLoader's base class too)
            if cls == "SampledLoader":
                self.need("DatasetLoader")
            self.need(cls)
            if "arrays" in cfg:  # a loader helper of the script called on arrays
                self.need("ArrayDataset")
                args = [f"ArrayDataset({', '.join(self.ref(a) for a in cfg['arrays'])})"]
            else:
                args = [self.ref(cfg["dataset"])]
            for key in ("batch_size", "shuffle", "drop_last", "sampler"):
                if cfg.get(key) is not None:
                    args.append(f"{key}={self.ref(cfg[key])}")
            return f"{cls}({', '.join(args)})"
        if kind == "split_object":
            self.need("Subset")
            if cfg["helper"] == "random_split":
                self.need("random_split")
            # the name the script imported from torch is the generated helper's now
            self.torch_names = set(self.torch_names) - {cfg["helper"]}
            return f"{cfg['helper']}({', '.join(self.ref(a) for a in cfg['args'])})"
        if kind == "seed":
            return f"keras.utils.set_random_seed({self.code(cfg) if cfg is not None else '0'})"
        if kind == "summary":
            return f"{ts.model}.summary()"
        if kind == "learning_rate":
            return f"[float({cfg}.learning_rate)]"
        if kind == "activation":
            x = self.ref(cfg["x"])
            op = cfg["op"]
            if op == "sigmoid":
                return f"keras.ops.convert_to_numpy(keras.ops.sigmoid({x}))"
            axis = self.ref(cfg["axis"]) if cfg["axis"] is not None else "-1"
            return f"keras.ops.convert_to_numpy(keras.ops.{op}({x}, axis={axis}))"
        if kind in ("save_weights", "load_weights", "set_weights"):
            model, arg = (self.ref(p) for p in cfg.parts)
            return f"{_atom(model)}.{kind}({arg})"
        if kind == "get_weights":
            return f"{_atom(self.ref(cfg.parts[0]))}.get_weights()"
        if kind == "load_model":  # a whole model a torch.save(model, path) of the script wrote (model_files.py)
            return f"keras.models.load_model({_atom(self.ref(cfg.parts[0]))})"
        if kind == "read_weights":
            self.need("read_weights")
            return f"read_weights({cfg['factory']}, {self.ref(cfg['path'])})"
        if kind == "load_checkpoint":
            self.need("read_weights")
            items = [f"{lit(key)}: read_weights({factory}, {self.path_for(cfg, new)})"
                     for key, factory, new in cfg["entries"]]
            return "{" + ", ".join(items) + "}"
        if kind == "save_snapshot":
            self.need("save_weights_copy")
            state, path = (self.ref(p) for p in cfg.parts)
            return f"save_weights_copy({ts.model}, {state}, {path})"
        raise ValueError(f"no Keras form for {kind}")

    def model_call(self, ts: T.TrainingStatement) -> str:
        cfg = ts.config
        md = ts.model_def
        model = _atom(self.ref(cfg["model"]))
        if cfg.get("method"):  # the model's own method: a Keras model over its layers
            from transpiler.printers.keras.printer import method_function

            model = f"{method_function(*cfg['method'])}({model})"
        inputs = []
        keras_layout = cfg.get("keras_layout") or [False] * len(cfg["inputs"])
        for i, node_id in enumerate(cfg["inputs"]):
            text = self.ref(node_id)
            perm = input_perm(md, i) if not keras_layout[i] else None
            if perm is not None:
                self.imports.add("import numpy as np")
                text = f"np.transpose({text}, {lit(perm)})"
            inputs.append(text)
        arg = inputs[0] if len(inputs) == 1 else f"[{', '.join(inputs)}]"
        if cfg.get("live") and cfg.get("any_rank"):  # (one sample without a batch axis too, as torch takes)
            self.need("call_module")
            return f"call_module({model}, {arg}, training={cfg['training']})"
        if cfg.get("live"):  # a tensor of the training step: it stays a Keras tensor
            return f"{model}({arg}, training={cfg['training']})"
        n_out = len(md.graph.outputs) if md is not None else 1
        nones = md.graph.from_torch.none_outputs if md is not None else None
        if cfg.get("as_call"):  # Keras' own call on arrays (the torch side's call_model helper)
            out = f"{model}({arg}, training={cfg['training']})"
        elif nones and output_perm(md, 0) is None:
            # (``return logits, None``: the Keras model returns None too, which predict cannot
            # batch; a call in the same mode, its tensors as arrays)
            return (f"[None if t is None else keras.ops.convert_to_numpy(t) for t in "
                    f"{model}({arg}, training={bool(cfg['training'])})]")
        elif cfg["training"] and n_out > 1:  # several outputs: a list of arrays, as predict gives
            out = f"[keras.ops.convert_to_numpy(t) for t in {model}({arg}, training=True)]"
        elif cfg["training"]:
            out = f"keras.ops.convert_to_numpy({model}({arg}, training=True))"
        else:
            out = f"{model}.predict({arg}, verbose=0)"
        if cfg.get("export_onnx") is not None:  # (torch.onnx._export: the file written, the outputs returned)
            self.note("torch.onnx._export writes the model as ONNX and returns its outputs on the example input: "
                      "Keras' export writes the model for its own inputs (the TensorFlow backend needs the "
                      "tf2onnx package); the call (first: the model built) gives the outputs")
            out = f'({out}, {model}.export({self.ref(cfg["export_onnx"])}, format="onnx"))[0]'
        perm = output_perm(md, 0) if n_out == 1 else None
        if perm is not None:
            self.imports.add("import numpy as np")
            out = f"np.transpose({out}, {lit(perm)})"
        return out

    # -- objects ------------------------------------------------------------------------
    def optimizer_expr(self, opt: T.Optimizer) -> str:
        return keras_optimizers.optimizer_expr(self, opt)

    def param_group_lines(self, ts: T.TrainingStatement) -> list[str]:
        """A loop sorting ``named_parameters()`` into lists, run statically: the lists of Keras
        variables it makes."""
        lines = ["# the parameter groups of the PyTorch loop over named_parameters(), by layer:"]
        return lines + [f"{name} = {variables_text(ts.model, variables)}" for name, variables in ts.config.items()]

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def loss_expr(self, loss: T.Loss) -> str:
        kind = loss.kind
        args = []
        if kind == "sparse_categorical_crossentropy" and loss.params.get("label_smoothing"):
            self.need("SparseCategoricalCrossentropyWithSmoothing")
            args = [f"label_smoothing={self.code(loss.params['label_smoothing'])}"]
            if not loss.from_logits:
                args.append("from_logits=False")
            cls = "SparseCategoricalCrossentropyWithSmoothing"
        elif kind == "nll":
            self.need("NLLLoss")
            cls = "NLLLoss"
        elif kind == "kl_divergence" and loss.params.get("log_input"):
            self.need("KLDivergenceFromLogProbabilities")
            cls = "KLDivergenceFromLogProbabilities"
        else:
            cls = f"keras.losses.{LOSS_CLASSES[kind]}"
            if kind in ("sparse_categorical_crossentropy", "binary_crossentropy", "categorical_crossentropy") and \
                    loss.from_logits:
                args.append("from_logits=True")
            if kind == "huber":
                args.append(f"delta={self.code(loss.params.get('delta', 1.0))}")
            if "ignore_class" in loss.params:  # (torch's ignore_index)
                args.append(f"ignore_class={self.code(loss.params['ignore_class'])}")
            if kind == "binary_crossentropy" and not loss.from_logits:
                self.note("torch's BCELoss clamps log(p) at -100, Keras clips p to [1e-7, 1 - 1e-7]: equal "
                          "unless a probability is within 1e-7 of 0 or 1")
        if loss.reduction == "sum":
            args.append('reduction="sum"')
        return f"{cls}({', '.join(args)})"

    def schedule_fn(self, s: T.Schedule, var: str) -> str:
        """The rate as a lambda of ``var`` (the epoch or the step, 0-based)."""
        p = s.params
        lr0 = self.code(p["initial_learning_rate"])
        if s.kind == "exponential_decay":
            ratio = f"{var} // {self.code(p['decay_steps'])}" if p.get("staircase") else \
                f"{var} / {self.code(p['decay_steps'])}"
            if not p.get("staircase") and p["decay_steps"] == 1:
                return f"lambda {var}: {lr0} * {_num(p['decay_rate'])} ** {var}"
            return f"lambda {var}: {lr0} * {_num(p['decay_rate'])} ** ({ratio})"
        if s.kind == "piecewise_constant_decay":
            milestones = [b + 1 for b in p["boundaries"]]
            return f"lambda {var}: {lr0} * {_num(p['gamma'])} ** sum({var} >= m for m in {lit(milestones)})"
        if s.kind == "cosine_annealing":
            self.imports.add("import math")
            eta = float(p["eta_min"])
            cos = f"(1 + math.cos(math.pi * {var} / {self.code(p['t_max'])})) / 2"
            if eta == 0.0:
                return f"lambda {var}: {lr0} * {cos}"
            return f"lambda {var}: {lit(eta)} + ({lr0} - {lit(eta)}) * {cos}"
        if s.kind == "lambda":
            factor: T.Code = p["factor"]
            original = self.source.node(factor.ref)
            if isinstance(original, cst.Lambda) and len(original.params.params) == 1 and \
                    not original.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
                rendered = cst.parse_expression(self.ref(factor.ref))
                param = rendered.params.params[0].name.value
                return f"lambda {param}: {lr0} * {_atom(_code(rendered.body))}"
            return f"lambda {var}: {lr0} * {_atom(self.code(factor))}({var})"
        if s.kind == "linear":  # torch's LinearLR: the factor moves linearly over total_iters, then stays
            total = self.code(p["total_iters"])
            start, end = _num(p["start_factor"]), _num(p["end_factor"])
            return f"lambda {var}: {lr0} * ({start} + ({end} - {start}) * min({var}, {total}) / {total})"
        if s.kind == "constant":  # torch's ConstantLR: factor until total_iters, then 1
            return f"lambda {var}: {lr0} * ({_num(p['start_factor'])} if {var} < {self.code(p['total_iters'])} else 1.0)"
        if s.kind == "sequential":  # torch's SequentialLR: part i from milestone i on, restarted at 0
            parts = [self.schedule_fn(part, var) for part in p["schedules"]]
            starts = [0] + list(p["milestones"])
            text = f"({parts[-1]})({var} - {starts[-1]})"
            for part, begin, end in reversed(list(zip(parts[:-1], starts[:-1], starts[1:]))):
                shifted = var if begin == 0 else f"{var} - {begin}"
                text = f"({part})({shifted}) if {var} < {end} else {text}"
            return f"lambda {var}: {text}"
        if s.kind == "one_cycle":
            self.need("one_cycle_rate")
            self.imports.add("import math")
            args = [var, self.code(p["max_lr"]), self.code(p["total_steps"])]
            defaults = {"pct_start": 0.3, "anneal_strategy": "cos", "div_factor": 25.0, "final_div_factor": 1e4,
                        "three_phase": False}
            args += [f"{k}={lit(p[k])}" for k, d in defaults.items() if p[k] != d]
            return f"lambda {var}: one_cycle_rate({', '.join(args)})"
        raise ValueError(s.kind)

    def schedule_expr(self, s: T.Schedule) -> str:
        if s.per == "manual":
            self.need("StepSchedule")
            return f"StepSchedule({s.optimizer}, {self.schedule_fn(s, 'steps')})"
        if s.per == "epoch":
            self.note("the scheduler was stepped once per epoch: LearningRateScheduler sets the rate when "
                      "each epoch begins")
            return f"keras.callbacks.LearningRateScheduler({self.schedule_fn(s, 'epoch')})"
        self.need("BatchLearningRateScheduler")
        return f"BatchLearningRateScheduler({self.schedule_fn(s, 'step')})"

    def plateau_expr(self, cb: T.Callback) -> str:
        p = cb.params
        args = [f"monitor={lit(p['monitor'])}", f"factor={_num(p['factor'])}", f"patience={_num(p['patience'])}",
                f"mode={lit(p['mode'])}", f"min_delta={_num(p['min_delta'])}", f"cooldown={_num(p['cooldown'])}",
                f"min_lr={_num(p['min_lr'])}"]
        self.note("torch's ReduceLROnPlateau(patience=n) lowers the rate after n epochs without improvement "
                  "have passed, Keras' at the n-th: patience + 1")
        if p.get("relative_min_delta"):
            self.note(f"torch's threshold is relative (better means < best * (1 - {p['min_delta']})), Keras' "
                      "min_delta absolute: they differ only for improvements that small")
            self.program.warn(None, "ReduceLROnPlateau: torch's relative threshold became Keras' absolute "
                                    f"min_delta={p['min_delta']}")
        return f"keras.callbacks.ReduceLROnPlateau({', '.join(args)})"

    # -- the training loop ----------------------------------------------------------
    def training_loop(self, ts: T.TrainingStatement, stmt: cst.For) -> list[str]:
        loop: T.TrainingLoop = ts.config
        md = ts.model_def
        c, f = loop.compile, loop.fit
        loss = c.losses[0]
        span = ts.span
        lines = []
        text = (f"the training loop (lines {span.line}-{span.end_line}) is model.fit: it batches the arrays, "
                "steps the optimizer and reports the loss per epoch")
        if loop.absorbed:
            text += f"; its logs stand for the loop's own code: {', '.join(loop.absorbed)}"
        lines += comment_lines(text)
        loss_text = loop.loss if loop.loss else self.loss_expr(loss)
        compile_args = [f"optimizer={loop.optimizer}", f"loss={loss_text}"]
        metrics = [self.metric(m, loss) for m in (c.metrics[0] if c.metrics else [])]
        if metrics:
            compile_args.append(f"metrics=[{', '.join(metrics)}]")
        lines.append(f"{loop.model}.compile({', '.join(compile_args)})")
        x = self.code(f.x)
        perm = input_perm(md, 0)
        if perm is not None:
            self.imports.add("import numpy as np")
            x = f"np.transpose({x}, {lit(perm)})"
        y = self.code(f.y)
        tperm = target_perm(md, 0, loss)
        if tperm is not None:
            y = f"np.transpose({y}, {lit(tperm)})"
        args = [x, y, f"batch_size={self.code(f.batch_size)}", f"epochs={self.code(f.epochs)}",
                f"shuffle={self.code(f.shuffle)}"]
        if loop.validation is not None:
            vx, vy = (self.code(v) for v in loop.validation)
            if perm is not None:
                vx = f"np.transpose({vx}, {lit(perm)})"
            if tperm is not None:
                vy = f"np.transpose({vy}, {lit(tperm)})"
            args.append(f"validation_data=({vx}, {vy})")
        callbacks = list(loop.callbacks)
        if loop.early_stopping is not None:
            callbacks.append(self.early_stopping_expr(loop.early_stopping))
        if callbacks:
            args.append(f"callbacks=[{', '.join(callbacks)}]")
        args.append(f"verbose={self.code(f.verbose)}")
        fit = f"{loop.model}.fit({', '.join(args)})"
        if loop.after:
            history = self.fresh("history")
            lines.append(f"{history} = {fit}")
            for var, meaning in loop.after.items():
                if meaning == "best_val_loss":
                    lines.append(f'{var} = min({history}.history["val_loss"])')
                elif meaning == "best_weights":
                    lines.append(f"{var} = {loop.model}.get_weights()  # EarlyStopping restored the best epoch's "
                                 "weights")
        else:
            lines.append(fit)
        return lines

    def early_stopping_expr(self, cb: T.Callback) -> str:
        p = cb.params
        args = [f"monitor={lit(p['monitor'])}", f"patience={self.code(p['patience'])}"]
        if p.get("min_delta"):
            args.append(f"min_delta={self.code(p['min_delta'])}")
        if p.get("restore_best_weights"):
            args.append("restore_best_weights=True")
        return f"keras.callbacks.EarlyStopping({', '.join(args)})"

    def metric(self, name: str, loss: T.Loss) -> str:
        if name == "binary_accuracy":
            return "keras.metrics.BinaryAccuracy(threshold=0.0)" if loss.from_logits else '"binary_accuracy"'
        if name == "mean_absolute_error":
            return '"mae"'
        return lit(name)

    def fresh(self, hint: str) -> str:
        return self.names.fresh(hint)

    def path_for(self, cfg: dict, new_name: str) -> str:
        """The checkpoint path expression with its file name literal renamed to ``new_name``."""
        prefix, quote = cfg["quotes"]  # (of the file name literal, which may be "m" ".pt")
        saved = self.facts.get(cfg["literal"])
        self.facts[cfg["literal"]] = T.TrainingStatement(
            "array_expr", "", T.ArrayExpr(f"{prefix}{quote}{new_name}{quote}"))
        try:
            node = self.source.node(cfg["path"])
            return _code(node.visit(_Rewriter(self, record=False)))
        finally:
            if saved is None:
                del self.facts[cfg["literal"]]
            else:
                self.facts[cfg["literal"]] = saved

    def checkpoint_lines(self, ts: T.TrainingStatement) -> list[str]:
        cfg = ts.config
        keys = ", ".join(repr(key) for key, _m, _n in cfg["entries"])
        lines = comment_lines(f"a checkpoint dict ({keys}): one Keras weights file per model")
        return lines + [f"{_atom(self.ref(model))}.save_weights({self.path_for(cfg, new)})"
                        for key, model, new in cfg["entries"]]

    # -- custom training steps ------------------------------------------------------
    def step_lines(self, ts: T.TrainingStatement, stmt) -> list[str]:
        cfg = ts.config
        source = _code(stmt).strip()
        if isinstance(stmt, cst.SimpleStatementLine):
            source = _code(stmt.body[0]).strip()
        if ts.kind == "zero_grad":
            return [f"{cfg['grads']} = None  " + comment_text(f"# {source}")]
        if cfg.get("simple"):  # the canonical Keras step: one tape.gradient, one apply_gradients
            model = cfg["models"][0][0] if ts.kind == "backward" else cfg["model"]
            if ts.kind == "backward" and cfg.get("recorded"):
                self.need("RecordingTape")
                self.need("autograd_tape")
                self.imports.add("import tensorflow as tf")
                why = ("backward() of a loss built from forward passes of earlier calls: "
                       f"{cfg['tape']} has recorded them since the last update, as torch's autograd does")
                return comment_lines(why) + [f"{cfg['grads']} = {cfg['tape']}.gradient({self.ref(cfg['loss'])}, "
                                             f"{model}.trainable_variables)"]
            if ts.kind == "backward":
                return [f"{cfg['grads']} = {cfg['tape']}.gradient({self.ref(cfg['loss'])}, "
                        f"{model}.trainable_variables)"]
            return [f"{cfg['optimizer']}.apply_gradients(zip({cfg['grads']}, {model}.trainable_variables))"]
        if ts.kind == "backward":
            self.need("accumulate_gradients")
            self.imports.add("import tensorflow as tf")
            loss = self.ref(cfg["loss"])
            lines = [comment_text(f"# {source}")]
            for model, grads in cfg["models"]:
                lines.append(f"{grads} = accumulate_gradients({cfg['tape']}, {loss}, {model}, {grads})")
            return lines
        self.need("apply_gradients")
        return [f"apply_gradients({cfg['tape']}, {cfg['optimizer']}, {cfg['model']}, {cfg['grads']})  "
                + comment_text(f"# {source}")]

    def tape_loop(self, ts: T.TrainingStatement, loop: cst.For) -> cst.For:
        """The loop body runs under one persistent GradientTape (torch records every step);
        a step of one model (zero_grad, backward, step) is the canonical Keras step: the
        statements up to backward() under a tape, then tape.gradient and apply_gradients."""
        self.imports.add("import tensorflow as tf")
        cfg = ts.config
        body = list(loop.body.body)
        # a function's setup before its step (models, optimizers) stays outside the tape
        count = sum(len(n.nodes) if isinstance(n, cst.FlattenSentinel) else 1
                    for n in (self.updated.get(i) for i in cfg.get("setup", ())) if n is not None)
        setup, body = body[:count], body[count:]
        rest: list = []
        if cfg.get("split") is not None:
            text = ("a custom training step (not the usual loop for fit: " + cfg["why"] + "): backward() is "
                    "the tape's gradient, step() applies it")
            split = self.tape_splits[cfg["split"]]
            at = next(i for i, s in enumerate(body) if s is split)
            body, rest, persistent = body[:at], body[at:], ""
        else:
            text = ("a custom training step: the body runs under a GradientTape; backward() takes the "
                    "gradients, step() applies them (not the usual loop for fit: " + cfg["why"] + ")")
            persistent = "persistent=True"
        lead = [cst.EmptyLine(comment=cst.Comment(c)) for c in comment_lines(text)]
        if body:
            body[0] = body[0].with_changes(leading_lines=[ln for ln in body[0].leading_lines
                                                          if not isinstance(ln, cst.EmptyLine) or ln.comment])
        tape = cst.With(items=[cst.WithItem(item=cst.parse_expression(f"tf.GradientTape({persistent})"),
                                            asname=cst.AsName(name=cst.Name(cfg["tape"])))],
                        body=cst.IndentedBlock(body=body or [cst.SimpleStatementLine([cst.Pass()])]),
                        leading_lines=lead)
        return loop.with_changes(body=loop.body.with_changes(body=setup + [tape] + rest))

    # -- stubs --------------------------------------------------------------------------
    def stub_def(self, fn: cst.FunctionDef, message: str) -> list[str]:
        """A function left for a human: its source quoted, a body that raises."""
        lines = self.stub_lines(fn, message)
        return lines[:-1] + [_def_header(fn), "    " + lines[-1]]

    def stub_lines(self, stmt: cst.CSTNode, message: str) -> list[str]:
        span = self.source.span(stmt)
        bare = stmt.with_changes(leading_lines=[]) if hasattr(stmt, "leading_lines") else stmt
        original = _code(bare).strip("\n").splitlines()
        lines = comment_lines(f"not translated ({message}); translate by hand:")
        lines += [comment_text(f"# | {ln}") if ln.strip() else "# |" for ln in _dedent(original)]
        lines.append(f"raise NotImplementedError({lit(f'transpiler: {span}: {message}')})")
        return lines


def comment_lines(text: str, width: int = 88) -> list[str]:
    """``# transpiler: text`` wrapped into comment lines of at most ``width`` characters."""
    import textwrap

    wrapped = textwrap.wrap(f"transpiler: {text}", width - 2, break_long_words=False, break_on_hyphens=False)
    return [comment_text("# " + line) for line in wrapped]


def _def_header(fn: cst.FunctionDef) -> str:
    return f"def {fn.name.value}({_code(fn.params)}):"


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    cut = min(indents) if indents else 0
    return [ln[cut:] if len(ln) >= cut else ln for ln in lines]


def _statements(lines: list[str]) -> list[cst.BaseStatement]:
    module = cst.parse_module("\n".join(lines) + "\n")
    body = list(module.body)
    if module.header and body:
        body[0] = body[0].with_changes(leading_lines=list(module.header) + list(body[0].leading_lines))
    return body


def _self_assignment(stmt: cst.SimpleStatementLine) -> bool:
    """``x = x`` / ``a, b = a, b`` (and nothing else on the line)."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign) or len(stmt.body[0].targets) != 1:
        return False
    target, value = stmt.body[0].targets[0].target, stmt.body[0].value
    if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple):
        return len(target.elements) == len(value.elements) and all(
            isinstance(t.value, cst.Name) and _code(t.value) == _code(v.value)
            for t, v in zip(target.elements, value.elements))
    return isinstance(target, cst.Name) and _code(target) == _code(value)


class _Rewriter(cst.CSTTransformer):
    """Applies the facts bottom-up; statements still using torch become stubs."""

    def __init__(self, printer: ProgramPrinter, record: bool = True):
        super().__init__()
        self.p = printer
        self.record = record
        self.guarded = 0  # inside a function or the main block: a stub may raise
        self.held: dict[NodeId, list[str]] = {}  # notes of earlier statements, for this one (not its body)

    def on_visit(self, node) -> bool:
        if _guards(node):
            self.guarded += 1
        if isinstance(node, cst.BaseCompoundStatement) and self.p.notes:
            self.held[self.p.source.sid(node)] = list(self.p.notes)
            self.p.notes.clear()
        ts = self.p.facts.get(self.p.source.sid(node))
        # a statement replaced whole: what is inside it is not printed (nor checked)
        return ts is None or ts.kind not in ("training_loop", "stub", "drop", "param_groups", "source", "loss_def")

    def on_leave(self, original, updated):
        p = self.p
        if _guards(original):
            self.guarded -= 1
        sid = p.source.sid(original)
        ts = p.facts.get(sid)
        result = updated
        if ts is not None:
            result = self.apply(ts, original, updated)
        elif isinstance(original, cst.SimpleStatementLine) or isinstance(original, (cst.For, cst.If, cst.While,
                                                                                    cst.With, cst.FunctionDef)):
            result = self.check(original, updated)
        if isinstance(result, cst.SimpleStatementLine) and _self_assignment(result) and \
                not _self_assignment(original):
            result = cst.RemovalSentinel.REMOVE  # ``xb = xb.to(device)``: nothing left to do
        if isinstance(result, cst.IndentedBlock) and not result.body:
            result = result.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        if isinstance(result, cst.CSTNode) and self.record:
            p.updated[sid] = result
        if sid in self.held:
            p.notes[:0] = [n for n in self.held.pop(sid) if n not in p.notes]
        if isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and p.notes and \
                not isinstance(result, cst.RemovalSentinel):
            result = self.with_notes(result)
        return result

    def with_notes(self, result):
        notes = [cst.EmptyLine(comment=cst.Comment(line)) for n in self.p.notes for line in comment_lines(n)]
        self.p.notes.clear()
        if isinstance(result, cst.FlattenSentinel):
            nodes = list(result.nodes)
            nodes[0] = nodes[0].with_changes(leading_lines=list(nodes[0].leading_lines) + notes)
            return cst.FlattenSentinel(nodes)
        return result.with_changes(leading_lines=list(result.leading_lines) + notes)

    def apply(self, ts: T.TrainingStatement, original, updated):
        p = self.p
        kind = ts.kind
        if kind == "stub":
            return self.keep_leading(original, _statements(self.stub_for(original, ts.config)))
        if kind == "source":  # a statement rewritten by the frontend (a Dataset class)
            self.p.imports.add("import numpy as np")
            if isinstance(ts.config, dict):  # (and the generated classes it uses: frontend_ast/torch/data.py)
                for helper in ts.config["helpers"]:
                    self.p.need(helper)
                return numpy_tree(ts.config["node"])
            return numpy_tree(ts.config)
        if kind == "device_drop":  # (frontend_ast/torch/plumbing.py)
            p.note(ts.config)
            return cst.RemovalSentinel.REMOVE
        if kind == "note":  # a statement kept, with what the reader inferred about it (frontend_ast/torch/tensor_params)
            p.note(ts.config)
            return self.check(original, updated)
        if kind == "drop":
            if isinstance(original, cst.Decorator):
                return cst.RemovalSentinel.REMOVE
            return cst.RemovalSentinel.REMOVE
        if kind == "unwrap":
            if ts.config:
                p.note(ts.config)
            body = list(updated.body.body)
            return self.keep_leading(original, body) if body else cst.RemovalSentinel.REMOVE
        if kind == "training_loop":
            return self.keep_leading(original, _statements(p.training_loop(ts, original)))
        if kind == "loss_def":  # the function a Keras loss object was written as: the object
            return self.keep_leading(original, _statements([f"{original.name.value} = {p.loss_expr(ts.config)}"]))
        if kind == "save_checkpoint":
            return self.keep_leading(original, _statements(p.checkpoint_lines(ts)))
        if kind in ("zero_grad", "backward", "optimizer_step"):
            result = self.keep_leading(original, _statements(p.step_lines(ts, original)))
            if kind == "backward" and ts.config.get("simple"):  # where the tape's block ends
                p.tape_splits[p.source.sid(original)] = result.nodes[0]
            return result
        if kind == "tape_loop":
            return p.tape_loop(ts, updated)
        if kind == "train_step_fit":
            from transpiler.printers.keras.train_step import train_step_fit

            class_text, lines = train_step_fit(p, ts, original, updated, p.module_names())
            p.classes.append(class_text)
            return self.keep_leading(original, _statements(lines))
        if kind == "param_groups":
            return self.keep_leading(original, _statements(p.param_group_lines(ts)))
        if kind == "own_compile":  # ``model.optimizer = ...`` for the model's own train_step
            value = _code(updated.body[0].value)
            return self.keep_leading(original, _statements([f"{ts.config['model']}.compile(optimizer={value})"]))
        if kind == "helper_compile":  # model.compile(...) before the statement's first fit/evaluate
            return self.keep_leading(original, _statements([keras_helper_calls.compile_line(p, ts)]) +
                                     [updated.with_changes(leading_lines=[])])
        text = p.expression(ts)
        new = cst.parse_expression(_atom(text) if _needs_parens(original) else text)
        if isinstance(original, cst.BaseExpression) and original.lpar:
            new = new.with_changes(lpar=original.lpar, rpar=original.rpar) if not new.lpar else new
        return new

    def keep_leading(self, original, body: list):
        if not body:
            return cst.RemovalSentinel.REMOVE
        lead = list(getattr(original, "leading_lines", []))
        body[0] = body[0].with_changes(leading_lines=lead + list(body[0].leading_lines))
        return cst.FlattenSentinel(body)

    def check(self, original, updated):
        """The safety net: a statement (or a compound statement's header) that still names
        torch is not translated."""
        names = self.p.torch_names
        if not names:
            return updated
        if isinstance(updated, cst.SimpleStatementLine):
            probe = updated
        elif isinstance(updated, (cst.For,)):
            probe = cst.Tuple([cst.Element(updated.target), cst.Element(updated.iter)])
        elif isinstance(updated, (cst.If, cst.While)):
            probe = updated.test
        elif isinstance(updated, cst.FunctionDef):  # (what runs when the def runs)
            updated, dropped = def_headers.strip_torch_annotations(updated, names)
            if dropped:
                self.p.note(f"{updated.name.value}(): its PyTorch annotations ({', '.join(sorted(dropped))}) are left out")
            probe = def_headers.header_probe(updated)
        else:
            probe = cst.Tuple([cst.Element(i.item) for i in updated.items])
        used = def_headers.names_in(probe, names)
        if not used:
            return updated
        message = f"uses PyTorch ({', '.join(sorted(used))}) in a way that is not translated to Keras yet"
        span = self.p.source.span(original)
        line = self.p.source.line(span)
        self.p.program.stub(span, message, line)
        return self.keep_leading(original, _statements(self.stub_for(original, message)))

    def stub_for(self, original, message: str) -> list[str]:
        """A marked stub that raises when it runs; at module level (where raising would break
        importing the script) a class or function raises when used, a statement stays a comment."""
        p = self.p
        if isinstance(original, cst.FunctionDef):
            return p.stub_def(original, message)
        lines = p.stub_lines(original, message)
        if isinstance(original, cst.ClassDef):
            return lines[:-1] + [f"class {original.name.value}:", "    def __init__(self, *args, **kwargs):",
                                 "        " + lines[-1]]
        if self.guarded == 0:  # (the comment needs a statement to stay in the output)
            return lines[:-1] + ["pass"]
        return lines


def _guards(node) -> bool:
    """Code under ``node`` runs only when called (a function) or as a script (the main block)."""
    return isinstance(node, cst.FunctionDef) or (isinstance(node, cst.If) and "__main__" in _code(node.test))


def _needs_parens(original) -> bool:
    return False


def print_statement(printer: ProgramPrinter, stmt: cst.CSTNode) -> str:
    """The Keras code for one top-level statement of the torch script."""
    return printer.render(stmt)

