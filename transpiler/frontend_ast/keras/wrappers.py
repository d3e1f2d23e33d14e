"""The Keras reader's wrapper models: ``keras.Model`` subclasses that hold other models and
train them with their own ``compile()``/``train_step()`` (GANs, distillers, diffusion and
self-supervised trainers, the "trainer pattern").

Such a model is not a network Keras builds from an input shape: it has no ``call()``, or it
is a trainer class shared by several models (constructed at more than one place). Its
``compile``/``fit``/``evaluate`` calls are recorded as training statements of the instance,
and the class is left to the printer, which translates its source (printers/torch/
wrapper_class.py). What the interpreter learns from ``__init__`` and ``compile()`` (the
optimizer, loss and tracker objects it stores) goes with it in
``program.from_keras.wrapper_classes``.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.interp import Unknown
from transpiler.frontend_ast.keras import training as keras_training
from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.training_returns import mark_returned_compiles
from transpiler.frontend_ast.keras.support import _custom_step, _tracker_metrics
from transpiler.frontend_ast.keras.values import FrontendError, ModelHandle, ModelObj, UserObj

#: methods that make a Model subclass a trainer of what it holds
_TRAINER_METHODS = ("train_step", "test_step", "compute_loss", "compile")


class KerasWrappers:
    """Mixin of KerasFrontend: Model subclasses that wrap other models."""

    def _is_wrapper(self, model: ModelObj) -> bool:
        """A subclassed model that trains what it holds, with no network of its own to build:
        no ``call()``; or models handed to it and its own ``compile()`` (a CycleGAN, a
        distiller: several optimizers and losses), or a trainer class the script constructs at
        several places (each instance holds a different model: no one torch class of a fixed
        network)."""
        user = model.user
        if user is None or model.graph is not None or user.cls.kind != "model":
            return False
        cls = user.cls
        if not any(cls.method(n) is not None for n in _TRAINER_METHODS):
            return False
        if cls.method("call") is None:
            return True
        held = [v for v in user.attrs.values() if isinstance(v, ModelHandle) or
                isinstance(v, ModelObj) and not self._made_in_class(v, user)]
        # its own compile() (other optimizers and losses than Keras' one), or shared by several models
        return bool(held) and (cls.method("compile") is not None or self._construct_sites(cls.node.name.value) > 1)

    def _construct_sites(self, name: str) -> int:
        """How many calls of ``name(...)`` the script has."""
        counts = getattr(self, "_construct_counts", None)
        if counts is None:
            counts = {}
            for call in nodes_of(self.source_file.module, cst.Call):
                if isinstance(call.func, cst.Name):
                    counts[call.func.value] = counts.get(call.func.value, 0) + 1
            self._construct_counts = counts
        return counts.get(name, 0)

    def _wrapper_call(self, model: ModelObj, method: str, args, kwargs, node: cst.Call):
        """``gan.compile(...)``, ``gan.fit(...)``, ... of a wrapper model."""
        from transpiler.ir import training as T

        user = model.user
        cls = user.cls
        receiver = cst.Module([]).code_for_node(node.func.value) if isinstance(node.func, cst.Attribute) else ""
        info = self._wrapper_info(model)
        info["instances"] = sorted(set(info["instances"]) | {receiver})
        self.program.from_keras.wrapper_instances[receiver] = cls.node.name.value
        if method != "compile":
            return self._training_call(model, method, args, kwargs, node)
        if cls.method("compile") is not None:  # the class's own compile(): what it stores
            try:
                self._run_method(user, cls.method("compile"), args, kwargs)
            except (Unsupported, FrontendError):
                pass  # (its objects are read from the arguments below)
        objects = {}
        for i, arg in enumerate(node.args):
            key = arg.keyword.value if arg.keyword is not None else i
            value = kwargs.get(key) if arg.keyword is not None else (args[i] if i < len(args) else None)
            objects[key] = self._wrapper_object(value)
            role = key if isinstance(key, str) else (("optimizer", "loss")[key] if key < 2 and
                                                      cls.method("compile") is None else None)
            if isinstance(value, str) and role in ("optimizer", "loss"):  # compile(optimizer="adam")
                try:
                    objects[key] = (role, keras_training.optimizer_config(value) if role == "optimizer"
                                    else keras_training.loss_config(value))
                except Unsupported as exc:
                    objects[key] = ("unsupported", str(exc))
        span = self._span(node)
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        self.program.training.append(T.TrainingStatement(
            "wrapper_compile", receiver, {"class": cls.node.name.value, "args": objects}, span, stmt,
            call=self.source_file.sid(node), source=cst.Module([]).code_for_node(node)))
        self._wrapper_attrs(user, info)
        for attr, metric in _tracker_metrics(user, [(a, "") for a in user.attrs]).items():
            info["tracker_metrics"].setdefault(attr, metric)  # (trackers compile() made)
        return Unknown(f"model.{method}()")

    def _wrapper_info(self, model: ModelObj) -> dict:
        user = model.user
        name = user.cls.node.name.value
        classes = self.program.from_keras.wrapper_classes
        if name not in classes:
            step = _custom_step(user) or {}
            classes[name] = {"instances": [], "span": self._span(user.cls.node),
                             "tracker_metrics": dict(step.get("tracker_metrics", {})), "objects": {}}
        self._wrapper_attrs(user, classes[name])
        held = [v for v in user.attrs.values() if isinstance(v, (ModelObj, ModelHandle))]
        self.__dict__.setdefault("_wrapper_held", {}).setdefault(name, []).extend(held)
        return classes[name]

    def _finish_wrappers(self) -> None:
        """Each wrapper class's held models, by the torch class they became (their layouts
        decide how the data enters); then the compiles of functions returning the model
        they compile (training_returns.py: read where the function's result lands)."""
        mark_returned_compiles(self.program, self.module, self._span)
        for name, held in getattr(self, "_wrapper_held", {}).items():
            mds = [self._model_def_of(obj) for obj in held]
            self.program.from_keras.wrapper_classes[name]["held"] = sorted({md.class_name for md in mds if md})

    def _wrapper_attrs(self, user, info: dict) -> None:
        """The optimizer and loss objects the instance's ``__init__``/``compile()`` stored."""
        for attr, value in user.attrs.items():
            if isinstance(value, UserObj) and value.cls.kind != "model":  # (the script's own object:
                info.setdefault("own_methods", {})[attr] = sorted(  # its methods; wrapper_class.py)
                    s.name.value for s in value.cls.node.body.body if isinstance(s, cst.FunctionDef))
            made = self._wrapper_object(value)
            if made[0] in ("optimizer", "loss"):
                info["objects"].setdefault(attr, made)

    @staticmethod
    def _wrapper_object(value) -> tuple:
        """("optimizer", T.Optimizer) / ("loss", T.Loss) / ("other", None)."""
        if isinstance(value, keras_training.TrainingObj) and value.kind in ("optimizer", "loss"):
            try:
                config = (keras_training.optimizer_config(value) if value.kind == "optimizer"
                          else keras_training.loss_config(value))
            except Unsupported as exc:
                return ("unsupported", str(exc))
            return (value.kind, config)
        return ("other", None)
