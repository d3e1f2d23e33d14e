"""The training reader's method calls: on a model, on a tensor (numpy in the target program),
on a loss or an optimizer; ``model(x)`` and ``loss_fn(out, y)`` outside training.
"""

from __future__ import annotations

import os

import libcst as cst

from transpiler.frontend_ast.torch.data import DTYPE_NAMES as CAST_DTYPES
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.tensor_params import unknown_method
from transpiler.ir import training as T
from transpiler.ir.code_literals import dotted_name as _dotted
from transpiler.frontend_ast.torch.reader_values import (
    _code, Arr, CAST_METHODS, ChildrenV, ChildV, COMPARE_METHODS, DatasetV, IDENTITY_METHODS, keras_children,
    LiveV, LoadedV, LoaderV, LossV, LossValueV, ModelAttrV, ModelV, NUMPY_UNARY, OptimizerV, OTHER, Other,
    ParamsV, ParamV, REDUCE_METHODS, ScalarV, SchedulerV, Scope, StateV, TupleV, V)
from transpiler.ir.code_literals import bare_argument


class ReaderMethods:
    """Mixin of ``TrainingReader`` (reader_methods)."""

    # -- methods ----------------------------------------------------------------------
    def method(self, obj: V, name: str, node: cst.Call, args, scope: Scope) -> V:
        recv = node.func.value
        if isinstance(obj, LiveV):
            from transpiler.frontend_ast.torch.steps import live_method

            return live_method(self, obj, name, node, args)
        if isinstance(obj, Arr):
            return self.tensor_method(name, recv, node, args)
        if isinstance(obj, ModelV):
            return self.model_method(obj, name, node, args)
        if isinstance(obj, ModelAttrV):
            return self.parameter_method(obj, name, node, args)
        if isinstance(obj, ParamV):
            if name == "numel":
                self.array(node, "int($prod({0}.shape))", [recv])
                return OTHER
            raise Unsupported(f"parameter method .{name}()")
        if isinstance(obj, ParamsV):
            raise Unsupported(f"parameters().{name}()")
        if isinstance(obj, ChildV):
            raise Unsupported(f"{_code(node.func)}(): a child module's methods are not translated to its Keras layer")
        if isinstance(obj, LossValueV):
            if name == "item":
                self.array(node, "float({0})", [recv])
                return OTHER
            if name in ("detach", "cpu") or (name == "to" and len(args) == 1 and not self._dtype_arg(args[0])):
                self.array(node, "{0}", [recv])
                return LossValueV()
            if name in ("sum", "mean") and not args:  # (of a per-sample loss, or a scalar's own value)
                self.array(node, f"${name}({{0}})", [recv], tensors=True)
                return LossValueV()
            if name == "backward":
                raise Unsupported("loss.backward() outside a recognised training loop")
            raise Unsupported(f"loss value method .{name}()")
        if isinstance(obj, OptimizerV):
            if name == "state_dict" and not args:
                self.runtime_expr(node, "optimizer_state({0})", [recv], ["optimizer_state"])
                return OTHER
            if name == "load_state_dict" and len(args) == 1 and obj.model_text.isidentifier():
                self.runtime_expr(node, f"load_optimizer_state({{0}}, {obj.model_text}, {{1}})",
                                  [recv, args[0][0].value], ["load_optimizer_state"])
                return OTHER
            raise Unsupported(f"optimizer.{name}() outside a recognised training loop")
        if isinstance(obj, SchedulerV):
            return _scheduler_method(self, obj, name, node, recv, args)
        if isinstance(obj, (StateV, LoadedV)):
            raise Unsupported(f"state_dict.{name}() is not translated (Keras keeps weights as a list)")
        if isinstance(obj, LossV):
            if name == "forward":
                return self.loss_call(obj, node, args)
            if name in ("cpu", "cuda") or (name == "to" and len(args) == 1 and not self._dtype_arg(args[0])):
                self.array(node, "{0}", [recv])  # (Keras places the computation itself)
                return obj
            raise Unsupported(f"loss object method .{name}()")
        if isinstance(obj, (LoaderV, DatasetV)):
            raise Unsupported(f"{type(obj).__name__[:-1]} method .{name}()")
        if isinstance(obj, TupleV) and name in ("index", "count"):
            return OTHER
        if isinstance(obj, Other) and name == "deepcopy" and _dotted(recv) == "copy" and args and \
                isinstance(args[0][1], StateV):
            arg = args[0][0].value
            if not (isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute)):
                raise Unsupported("a copy of a state_dict held in a variable")
            self.fact(node, "get_weights", T.ArrayExpr("", (self.sid(arg.func.value),)))
            return StateV(args[0][1].model, snapshot=True)
        from transpiler.frontend_ast.torch.layout_boundary import other_file_function

        made = other_file_function(self, recv, node, args)
        if made is not None:
            return made
        message = unknown_method(self, name, recv, args, guessed=type(obj) is Other and self.guessing)
        if message is not None:
            raise Unsupported(message)
        return OTHER

    def _dtype_arg(self, arg) -> bool:
        """Whether a ``.to(x)`` argument is a torch dtype (a cast) rather than a device."""
        path = _dotted(arg[0].value) or ""
        return path.split(".")[0] in self.torch_names() and path.split(".")[-1] in CAST_DTYPES

    # long: one case per nn.Module method (modes, parameters, state, casts, device moves, walks)
    def model_method(self, model: ModelV, name: str, node: cst.Call, args) -> V:
        recv = node.func.value
        if model.md is None and model.elsewhere and not os.path.isfile(model.elsewhere) and name not in (
                "parameters", "to", "cpu", "cuda", "float", "train", "eval", "state_dict", "load_state_dict"):
            return OTHER  # (a model whose class is a marked stub: the program stops where it is built)
        if model.md is None and not model.elsewhere and _defines_method(self.fe, model.name, name):
            return OTHER  # (the class's own method, of a model this file stubs: the program stops where it is built)
        if name in ("eval", "train") and _defines_method(self.fe, model.name, name):
            return self._own_mode_method(model, name, node, args)
        if name in ("eval", "train"):
            if args and _code(args[0][0].value) not in ("True", "False"):
                # the mode of every later call would be a guess (Keras takes training= per call)
                raise Unsupported(f"model.{name}({_code(args[0][0].value)}): a mode known only when the "
                                  "program runs is not translated")
            model.training = name == "train" and not (args and _code(bare_argument(args[0][0].value)) == "False")
            self.array(node, "{0}", [recv])  # Keras sets training/inference per call
            return model
        if name == "parameters":
            self.array(node, "{0}.trainable_weights", [recv])
            return ParamsV(model, _code(recv))
        if name == "state_dict":
            # (what a checkpoint of it holds; ``torch.save(model.state_dict(), p)`` replaces the
            # whole call: frontend_ast/torch/reader_io)
            self.array(node, "{0}.get_weights()", [recv])
            return StateV(model)
        if name == "load_state_dict":
            src = args[0][1] if args else None
            if isinstance(src, LoadedV):
                self.fact(node, "load_weights", T.ArrayExpr("", (self.sid(recv), self.sid(src.path))), model=model.name)
                if src.model is None:
                    self.checkpoint_path(src.path)
                return OTHER
            if isinstance(src, StateV) and src.snapshot:
                self.fact(node, "set_weights", T.ArrayExpr("", (self.sid(recv), self.sid(args[0][0].value))), model=model.name)
                return OTHER
            if type(src) is Other and args:  # (a checkpoint's entry: what get_weights() made)
                self.runtime_expr(node, "load_model_state({0}, {1})", [recv, args[0][0].value], ["load_model_state"])
                return OTHER
            raise Unsupported("load_state_dict() of something other than torch.load(path) or a saved copy")
        if name in ("double", "half") and not args:  # (runtime keras.modules.cast_model)
            dtype = "float64" if name == "double" else "float16"
            line = self.stmt_stack[-1] if self.stmt_stack else None
            whole = isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and \
                isinstance(line.body[0], cst.Expr) and line.body[0].value is node and isinstance(recv, cst.Name)
            # (a statement of its own: the name is bound to the cast model, torch cast it in place)
            template = f'({{0}} := cast_model({{0}}, "{dtype}"))' if whole else f'cast_model({{0}}, "{dtype}")'
            self.runtime_expr(node, template, [recv], ["cast_model"])
            return model
        if name in ("to", "cpu", "cuda", "float"):
            self.array(node, "{0}", [recv])
            return model
        if name == "share_memory" and not args:
            line = self.stmt_stack[-1] if self.stmt_stack else None
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and \
                    isinstance(line.body[0], cst.Expr) and line.body[0].value is node:
                self.fact(line, "device_drop", f"dropped {_code(node)}: one process holds the Keras model")
            else:
                self.array(node, "{0}", [recv])
            return model
        if name == "forward":
            return self.model_call(model, node, args)
        if name == "zero_grad":
            raise Unsupported("model.zero_grad() outside a recognised training loop")
        if name in ("children", "named_children") and not args:
            names = keras_children(model.md)
            var = "name" if _code(recv) != "name" else "child"
            listed = "(" + ", ".join(repr(n) for n in names) + ("," if len(names) == 1 else "") + ")"
            item = f"({var}, {{0}}.get_layer({var}))" if name == "named_children" else f"{{0}}.get_layer({var})"
            self.array(node, f"[{item} for {var} in {listed}]", [recv])
            return ChildrenV(name == "named_children")
        if name == "named_parameters" and self.optimizer_args:
            return OTHER  # in a parameter group: read statically (parameter_groups)
        if model.md is None and model.elsewhere:  # (a method of the class the other file translates)
            return OTHER
        if model.md is None:  # (a model the program gives when it runs: frontend_ast/torch/runtime_params)
            from transpiler.frontend_ast.torch import runtime_params

            walked = runtime_params.walk(self, model, name, node)
            if walked is not None:
                return walked
        if model.md is not None and name in model.md.methods:
            # the model's own method: a Keras model over its layers (keras_printer.method_function)
            model.md.called_methods.add(name)
            return self.model_call(model, node, args, method=name)
        raise Unsupported(f"model.{name}() is not translated to Keras yet")

    def _own_mode_method(self, model: ModelV, name: str, node: cst.Call, args) -> V:
        """The class's own ``train(x_pos, x_neg)`` (or ``eval``), which overrides nn.Module's
        ``train(mode)``: a call of that method."""
        if model.md is not None and name in model.md.methods:
            model.md.called_methods.add(name)
            return self.model_call(model, node, args, method=name)
        if model.md is None:  # (a marked stub, or another file's class: called as written)
            return OTHER
        raise Unsupported(f"model.{name}(): the class's own {name} method is not translated to Keras yet")

    # long: one case per tensor method (casts, shape queries, reductions in both spellings)
    def tensor_method(self, name: str, recv, node: cst.Call, args, receiver_node=None, parts=None) -> V:
        parts = [] if parts is None else parts
        pos = [a.value for a, _ in args if a.keyword is None]
        kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}

        def p(n) -> str:
            parts.append(n)
            return "{%d}" % (len(parts) - 1)

        r = p(recv)

        def done(template: str, result: V = None) -> V:
            self.array(node, template, parts)
            return Arr() if result is None else result

        if name in IDENTITY_METHODS:
            return done(r)
        if name in CAST_METHODS:
            return done(f'{r}.astype("{CAST_METHODS[name]}")')
        if name == "type" and pos:
            return done(f"{r}.astype({p(pos[0])})")
        if name == "clone":
            return done(f"{r}.copy()")
        if name == "size":
            return done(f"{r}.shape[{p(pos[0])}]" if pos else f"{r}.shape", OTHER)
        if name == "dim":
            return done(f"{r}.ndim", OTHER)
        if name in ("numel", "nelement"):
            return done(f"{r}.size", OTHER)
        if name in ("item", "tolist"):
            return done(f"{r}.{name}()", OTHER)
        if name in REDUCE_METHODS or name in ("max", "min"):
            # (torch takes numpy's spellings too: axis=, keepdims=)
            dim = kw.get("dim") or kw.get("axis") or (pos[0] if pos else None)
            keep = kw.get("keepdim") or kw.get("keepdims") or (pos[1] if len(pos) > 1 else None)
            if name in ("max", "min") and dim is not None:
                # torch returns (values, indices): .values / [0] is the numpy reduction
                parent = self._parent_attribute(node)
                if parent is None:  # the pair itself (``_, predicted = torch.max(out, 1)``)
                    keeps = f", keepdims={p(keep)}" if keep is not None else ""
                    axis = p(dim)
                    return done(f"({r}.{name}(axis={axis}{keeps}), {r}.arg{name}(axis={axis}{keeps}))",
                                TupleV([Arr(), Arr()]))
                attr, holder = parent
                fn = name if attr == "values" else f"arg{name}"
                self.array(holder, f"{r}.{fn}(axis={p(dim)}" + (f", keepdims={p(keep)}" if keep is not None
                                                                  else "") + ")", parts)
                return Arr()
            fn = name
            extra = ""
            if name in ("std", "var"):
                unbiased = kw.get("unbiased")
                correction = kw.get("correction")
                if correction is not None:
                    extra = f", ddof={p(correction)}"
                elif unbiased is None or _code(bare_argument(unbiased)) != "False":
                    extra = ", ddof=1"  # torch's std/var are unbiased by default
            if name == "amax":
                fn = "max"
            if name == "amin":
                fn = "min"
            if name in ("logsumexp", "norm", "median"):
                raise Unsupported(f"tensor method .{name}()")
            args_text = []
            if dim is not None:
                args_text.append(f"axis={p(dim)}")
            if keep is not None:
                args_text.append(f"keepdims={p(keep)}")
            template = f"{r}.{fn}({', '.join(args_text)}{extra})" if args_text else f"{r}.{fn}({extra[2:]})"
            return done(template)
        if name in COMPARE_METHODS:
            return done(f"({r} {COMPARE_METHODS[name]} {p(pos[0])})")
        if name in NUMPY_UNARY:
            return done(f"{NUMPY_UNARY[name]}({r})")
        if name == "sigmoid":
            return done(f"1 / (1 + $exp(-{r}))")
        if name == "relu":
            return done(f"$maximum({r}, 0)")
        if name in ("clamp", "clip", "clamp_"):
            lo = kw.get("min") or (pos[0] if pos else None)
            hi = kw.get("max") or (pos[1] if len(pos) > 1 else None)
            return done(f"$clip({r}, {p(lo) if lo is not None else 'None'}, {p(hi) if hi is not None else 'None'})")
        if name in ("view", "reshape"):
            shape = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
            return done(f"{r}.reshape({shape})")
        if name == "permute":
            dims = p(pos[0]) if len(pos) == 1 else "(" + ", ".join(p(a) for a in pos) + ")"
            return done(f"{r}.transpose({dims})")
        if name == "transpose":
            return done(f"$swapaxes({r}, {p(pos[0])}, {p(pos[1])})")
        if name == "unsqueeze":
            return done(f"$expand_dims({r}, {p(pos[0] if pos else kw['dim'])})")
        if name == "squeeze":
            return done(f"{r}.squeeze({p(pos[0] if pos else kw['dim'])})" if (pos or "dim" in kw) else f"{r}.squeeze()")
        if name == "flatten":
            if not pos and not kw:
                return done(f"{r}.reshape(-1)")
            start = pos[0] if pos else kw.get("start_dim")
            if _code(bare_argument(start)) == "1" and len(pos) <= 1:
                return done(f"{r}.reshape(len({r}), -1)")
            raise Unsupported(f".flatten({', '.join(_code(a) for a in pos)}) is not translated")
        if name in ("fill_", "copy_", "zero_", "add_", "sub_", "mul_", "div_"):
            from transpiler.frontend_ast.torch.tensor_params import in_place

            return done(*in_place(self, name, recv, node, r, pos, p))
        if name in ("round", "cumsum", "nonzero", "sort", "argsort", "any", "all", "ravel"):
            return done(f"{r}.{name}(" + ", ".join(p(a) for a in pos) + ")")
        if name == "softmax" or name == "log_softmax":
            axis = kw.get("dim") or (pos[0] if pos else None)
            parts.clear()
            self.fact(node, "activation", {"op": name, "x": self.sid(recv), "axis": self.sid(axis) if axis is not None else None})
            return Arr()
        from transpiler.frontend_ast.torch.tensor_params import array_method

        made = array_method(name, r, pos, kw, p)  # (or Unsupported)
        if len(made) == 3 and made[2] is None:  # (a sparse tensor's method: dense here)
            from transpiler.frontend_ast.torch.tensor_params import dense_note

            dense_note(self)
            return done(*made[:2])
        if len(made) == 3:  # a generated helper's call
            self.runtime_expr(node, made[0], parts, made[2])
            return made[1]
        return done(*made)

    def _parent_attribute(self, call: cst.Call):
        """For ``x.max(dim=1).values`` (or ``[0]``): ('values' | 'indices', the outer node)."""
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        if stmt is None:
            return None
        found = []

        class Finder(cst.CSTVisitor):
            def visit_Attribute(self, n: cst.Attribute) -> None:
                if n.value is call and n.attr.value in ("values", "indices"):
                    found.append((n.attr.value, n))

            def visit_Subscript(self, n: cst.Subscript) -> None:
                if n.value is call and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index) and \
                        isinstance(n.slice[0].slice.value, cst.Integer):
                    found.append(("values" if n.slice[0].slice.value.value == "0" else "indices", n))

        stmt.visit(Finder())
        return found[0] if found else None

    # -- model and loss calls ---------------------------------------------------------
    def model_call(self, model: ModelV, node: cst.Call, args, method: str | None = None) -> V:
        """``model(x)``, or ``model.encode(x)`` (``method``: one of the model's own methods)."""
        if model.md is None and model.elsewhere:
            from transpiler.frontend_ast.torch.untranslated_models import layout_free, stubbed_in_own_file

            keras_layout = all(isinstance(v, LiveV) and v.permuted for _, v in args)  # (a Keras model's map)
            layouts = os.path.isfile(model.elsewhere) and not layout_free(model.elsewhere) and not keras_layout
            if layouts and stubbed_in_own_file(model.elsewhere, model.name):
                # (the program stops where it builds the model, at its class's stub: the call is
                # written for what the program hands it, torch's layout)
                self._stubbed_class_note(model, node)
                return self.untranslated_call(model, node, args)
            if layouts:
                raise Unsupported(f"{_code(node.func)}(...): a {model.name} model, whose class is translated in "
                                  f"{os.path.basename(model.elsewhere)} with channels-last layers: the layout "
                                  "of its inputs is not known here")
            return self.untranslated_call(model, node, args)
        if any(a.keyword is not None or a.star for a, _ in args):
            if model.md is None:  # (its class's translation is a marked stub: the call as written)
                return self.untranslated_call(model, node, args)
            raise Unsupported("a model called with keyword or unpacked arguments")
        inputs = [a.value for a, _ in args]
        live = bool(self.live) and not self.no_grad
        md = model.md.methods[method] if method else model.md
        self.fact(node, "model_call", {"inputs": [self.sid(i) for i in inputs],
                                       "model": self.sid(node.func.value) if method else self.sid(node.func),
                                       "method": method and (model.md, method),
                                       "training": model.training and not self.no_grad,
                                       "grad": not self.no_grad, "live": live,
                                       # (a torch module takes one sample without a batch axis too)
                                       "any_rank": self.recording and len(inputs) == 1,
                                       "keras_layout": [isinstance(v, LiveV) for _, v in args]},
                  model=model.name)
        if not self.quiet:
            self.facts[self.sid(node)].model_def = md
        n_out = len(md.graph.outputs) if md is not None else 1
        if live:
            from transpiler.ir.program import output_perm

            outs = [LiveV(output_perm(md, i) is not None, output_perm(md, i)) for i in range(n_out)]
        else:
            outs = [Arr() for _ in range(n_out)]
        return outs[0] if n_out == 1 else TupleV(outs)

    def _stubbed_class_note(self, model: ModelV, node: cst.Call) -> None:
        line = self.stmt_stack[-1] if self.stmt_stack else None
        if line is not None and self.sid(line) not in self.facts:
            self.fact(line, "note", f"{_code(node.func)}(...): its class {model.name} is a marked stub in "
                      f"{os.path.basename(model.elsewhere)} (the program stops where it builds it); a hand "
                      "translation of it takes the inputs as this call hands them, in torch's channels-first "
                      "layout, and returns its outputs in that layout")

    def untranslated_call(self, model: ModelV, node: cst.Call, args) -> V:
        """``model(x)`` of a model whose class another file (or a marked stub) translates, its
        inputs in the same layout in both frameworks: the call as written, its outputs Keras
        tensors in a training step (called in training mode there), arrays elsewhere."""
        live = bool(self.live) and not self.no_grad
        unknown = [_code(a.value) for a, v in args if not isinstance(v, (Arr, LiveV))]
        permuted = any(isinstance(v, LiveV) and v.permuted for _, v in args)
        if live and unknown:  # (its step would run on values this file does not translate)
            where = os.path.basename(model.elsewhere) if model.elsewhere and os.path.isfile(model.elsewhere) \
                else model.elsewhere or "this file, as a marked stub"
            raise Unsupported(f"{_code(node.func)}(...) in a training step: {', '.join(unknown)} is not data this "
                              f"file shows to be arrays (a {model.name} model, its class translated in {where})")
        if live and not any(a.keyword is not None and a.keyword.value == "training" for a, _ in args):
            self.array(node, "{0}(" + ", ".join("{%d}" % (i + 1) for i in range(len(args))) + ", training=True)",
                       [node.func] + [a.value for a, _ in args]) if all(a.keyword is None and not a.star
                                                                          for a, _ in args) else None
        if permuted and not live:
            raise Unsupported(f"{_code(node.func)}(...) of a feature map the Keras model returns channels-last, "
                              "outside a training step")
        return LiveV(permuted) if live else OTHER

    def loss_call(self, loss: LossV, node: cst.Call, args) -> V:
        pos = [a.value for a, _ in args if a.keyword is None]
        if len(pos) != 2 or len(args) != 2:
            raise Unsupported("a loss object called with other than (output, target)")
        output, target = (pos[1], pos[0]) if loss.keras_order else (pos[0], pos[1])
        values = [v for _, v in args]
        out_v, target_v = (values[1], values[0]) if loss.keras_order else (values[0], values[1])
        self.fact(node, "loss_call", {"loss": self.sid(node.func), "output": self.sid(output), "target": self.sid(target),
                                      "config": loss.config, "output_perm": back_to_torch_layout(out_v, target_v)})
        return ScalarV() if self.live and not self.no_grad else LossValueV()


def back_to_torch_layout(output: V, target: V) -> tuple | None:
    """A loss of a model output the Keras model returns channels-last (a feature map in a
    training step) and a target in torch's layout: the permutation giving the output torch's
    layout back (the loss then pairs the same elements as torch's)."""
    if not (isinstance(output, LiveV) and output.permuted) or (isinstance(target, LiveV) and target.permuted):
        return None
    if output.perm is None:
        raise Unsupported("a loss of a feature map the Keras model returns channels-last, in another layout "
                          "than the target's")
    return tuple(output.perm)



def _scheduler_method(reader, obj, name: str, node, recv, args):
    """A scheduler's method outside a recognised fit loop: ``get_last_lr()``; ``step()`` of the
    program's own loop (a custom training loop: the Keras object steps the same schedule and
    sets the optimizer's rate); ``state_dict()`` / ``load_state_dict(state)`` of a checkpoint
    (the StepSchedule's step count: the program steps the schedule itself then, loops.py keeps
    it out of fit)."""
    if name == "get_last_lr":
        reader.fact(node, "learning_rate", obj.optimizer.var or "optimizer")
        return OTHER
    arity = {"step": 0, "state_dict": 0, "load_state_dict": 1}.get(name)
    if arity is None or len(args) != arity or obj.schedule is None or not obj.optimizer.var:
        raise Unsupported(f"scheduler.{name}() outside a recognised training loop")
    obj.schedule.per = "manual"
    obj.schedule.optimizer = obj.optimizer.var
    obj.state_read = obj.state_read or name != "step"
    reader.array(node, f"{{0}}.{name}({'{1}' if args else ''})", [recv] + [a[0].value for a in args])
    return OTHER


def _defines_method(frontend, class_name: str, name: str) -> bool:
    """Whether the module class ``class_name`` (or a base class this file defines) has its own
    method ``name``: ``def train(self, x_pos, x_neg)`` replaces nn.Module's ``train(mode)``."""
    ref = getattr(frontend, "classes", {}).get(class_name)
    seen = 0
    while ref is not None and seen < 32:
        if any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in ref.node.body.body):
            return True
        ref, seen = ref.base, seen + 1
    return False
