"""The runtime definitions a translated training program needs, chosen by what the
``TrainingPrinter`` recorded while printing it (``needs``, ``features``, ``datasets``, the
optimizer/loss/metric classes), each copied once with its dependencies first: a mixin of
``printers/torch/training.py``'s printer."""

from __future__ import annotations

from transpiler.printers import runtime_prune, runtime_source
from transpiler.printers.torch import data_utils, dataset_loaders
from transpiler.printers.torch.fit_loop import LOOP, fit_text
from transpiler.printers.torch.objects import CALLBACKS, LOSSES, METRICS, TRAINING


class RuntimeHelpers:
    """``_helpers()``: the runtime text of the program's training helpers (needs the printer's
    ``program``, ``needs``, ``features``, ``datasets``, ``code``, ``_fit_callbacks``,
    ``model_class``, ``optimizer_classes``, ``loss_fns``, ``metric_fns``)."""

    def _helpers(self) -> list[str]:
        # long: one flat list of the runtime helpers a program needs, in the order they are printed
        if not self.program.training:
            return []
        if not (self.needs or self.loss_fns or self.optimizer_classes or self.datasets):
            return []
        out = []
        copy = runtime_source.Copier()  # each runtime definition once, its dependencies first
        uses_logits = any(md.graph.logits_outputs for md in self.program.models)
        features = frozenset(self.features | ({"logits"} if uses_logits else set()))
        if any(v.dtype == "string" for md in self.program.models for v in getattr(md.graph, "inputs", None) or ()):
            features |= {"text"}  # (a model taking strings: make_loader keeps them as arrays of str)
        needs_loader = any(isinstance(n, tuple) or n in ("evaluate", "predict", "loader") for n in self.needs)
        if needs_loader:
            self.code.imports.add("import numpy as np")
            if ".take(" in (self.program.source or ""):  # (a DataLoader with tf.data's take())
                features |= {"take"}
                out += copy.take("torch.timeseries", "BatchLoader")
                self.code.imports.add("import itertools")
            if "text" in features:
                out.append(runtime_prune.specialise(LOOP, "text_loader", features))  # (file paths: its options)
            out.append(runtime_prune.specialise(LOOP, "make_loader", features))
            self.code.imports.add("from torch.utils.data import DataLoader, TensorDataset"
                                  + (", default_collate" if any("default_collate" in t for t in out) else ""))
        if "repeated" in self.needs:
            out += copy.take(TRAINING, "Repeated")
        if any(isinstance(n, tuple) for n in self.needs) or "evaluate" in self.needs:  # (what fit and evaluate share)
            out += [runtime_prune.specialise(LOOP, name, features) for name in ("reset_metrics", "update_metrics")]
        if any(isinstance(n, tuple) for n in self.needs):
            out.append(runtime_prune.specialise(LOOP, "train_step", features))
            self.code.imports.add("from types import SimpleNamespace")
            for n in sorted(x for x in self.needs if isinstance(x, tuple)):
                out.append(fit_text(n[1], self._fit_callbacks[n[1]], features, self.code.imports))
        if "batch_logs" in self.needs:
            out += copy.take(TRAINING, "batch_logs")
        if "mean_metric" in self.needs:
            out += copy.take(METRICS, "Mean")
        if "metric_wrapper" in self.needs:
            out += copy.take(METRICS, "MeanMetricWrapper")
        if "fit_train_step" in self.needs:
            out.append(runtime_prune.specialise(TRAINING, "fit_train_step", frozenset(self.features)))
            self.code.imports.add("from types import SimpleNamespace")
        if "evaluate_test_step" in self.needs:
            out += copy.take(TRAINING, "evaluate_test_step")
        if "custom_loss" in self.needs:
            self.code.imports.add("import torch")
            out += copy.take(LOSSES, "keras_same_rank", "keras_loss", "keras_metric")
        if "loss_class" in self.needs:
            out += copy.take(LOSSES, "Loss")
        if "schedule_class" in self.needs or "schedule_function" in self.needs:
            out += copy.take("torch.optimizers", "LearningRateSchedule")
        if "schedule_function" in self.needs:
            self.code.imports.add("import torch")
            out += copy.take("torch.optimizers", "ScheduleFunction")
        if "scheduled_optimizer" in self.needs:
            self.code.imports.add("import torch")
            out += copy.take("torch.optimizers", "scheduled")
        if "epoch_batches" in self.needs:
            out += copy.take(TRAINING, "EpochBatches")
        if "callback_objects" in self.needs or "callback_class" in self.needs:
            out += copy.take(CALLBACKS, "Callback")
        if "lambda_callback" in self.needs:
            out += copy.take(CALLBACKS, "LambdaCallback")
        if "evaluate" in self.needs:
            out.append(runtime_prune.specialise(LOOP, "evaluate", features))
        if "predict" in self.needs:
            out += copy.take(TRAINING, "predict")
        if "one_channel_layout" in self.needs:
            out += copy.take("torch.layouts", "one_channel_layout")
        if "call_model" in self.needs:
            out += copy.take(TRAINING, "call_model")
        loaders = sorted(n for n in self.datasets if n in dataset_loaders.LOADERS)
        utilities = sorted(n for n in self.datasets if n in data_utils.UTILITIES)
        if loaders or utilities:  # (one copy of what they share: get_file, fetch, ...)
            texts, imports = dataset_loaders.loader_texts(loaders, utilities)
            out += texts
            self.code.imports |= imports
        loaders += utilities
        for name in sorted(self.datasets - set(loaders)):
            rename = {"Model": self.model_class} if name == "load_model" else None
            out += copy.take(TRAINING, name, rename=rename)
            self.code.imports.add("import numpy as np")
        # KerasOptimizer, the base of the --exact classes, before them
        out += [text for _key, text in sorted(self.optimizer_classes.items(),
                                              key=lambda kv: (kv[0] != "KerasOptimizer", kv[0]))]
        out += [text for _key, text in sorted(self.loss_fns.items())]
        out += [text for _key, text in sorted(self.metric_fns.items(), key=lambda kv: kv[0][0])]
        return [h.strip("\n") + "\n" for h in out]

