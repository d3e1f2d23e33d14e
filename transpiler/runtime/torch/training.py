"""The loop helpers of generated PyTorch programs (Keras -> PyTorch) that do not vary
per program: tf.data's repeat, Keras' epoch iterator under steps_per_epoch, predict,
train_on_batch's logs, fit/evaluate over a model's own train_step/test_step,
keras.models.load_model, keras.models.clone_model and keras.utils.to_categorical.

``make_loader`` and ``Model`` are the generated program's own: the loader the printer
specialises for the program's features, and its model class (``load_model`` is copied with
``Model`` renamed to it).
"""

from types import SimpleNamespace

import numpy as np
import torch

Model = torch.nn.Module  # the program's model class (load_model is copied with its name)
#: fit_train_step's options a program may use (runtime_prune.specialise keeps those it does)
STEP_VALIDATION = STEP_CALLBACKS = True


class Repeated:
    """tf.data's .repeat(count) after .batch(): the loader's passes back to back (each
    reshuffled when the loader shuffles), as an iterable that can be looped over again."""

    def __init__(self, loader, count):
        self.loader, self.count = loader, count

    def __iter__(self):
        for _ in range(self.count):
            yield from self.loader

    def __len__(self):
        return self.count * len(self.loader)


class EpochBatches:
    """Keras' epoch iterator under fit(steps_per_epoch=...): one pass over the data spans
    epochs; an epoch takes steps_per_epoch batches and ends early where the pass ends (the
    next epoch starts a fresh pass). With ``repeat`` (tf.data's .repeat()) passes follow each
    other without a break. Without steps_per_epoch an epoch is one pass."""

    def __init__(self, loader, steps_per_epoch=None, repeat=False):
        self.loader, self.steps, self.repeat = loader, steps_per_epoch, repeat
        self.iterator, self.seen = None, 0

    def epoch(self):
        if self.steps is None:
            yield from enumerate(self.loader)
            return
        if self.iterator is None:
            self.iterator, self.seen = iter(self.loader), 0
        for step in range(self.steps):
            if self.seen == len(self.loader):
                if not self.repeat:
                    break
                self.iterator, self.seen = iter(self.loader), 0
            self.seen += 1
            yield step, next(self.iterator)
        if self.seen == len(self.loader) and not self.repeat:
            self.iterator = None


def _as_model_input(value):
    """An array Keras' model call converts: floating arrays as float32 (the model's dtype),
    other numbers as they are; tensors, lists of them and dicts kept (each converted)."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, dict):
        return {key: _as_model_input(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (np.ndarray, torch.Tensor)) for v in value):
        return type(value)(_as_model_input(v) for v in value)
    array = np.asarray(value)
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    return tensor.to(torch.get_default_dtype()) if array.dtype.kind == "f" else tensor


def call_model(model, *inputs, training=False, grad=False, **kwargs):
    """Keras' ``model(x)`` on arrays outside a training step: the arrays as tensors, the model
    in the mode Keras runs its layers in there (inference unless ``training``: a model of
    image augmentations, whose layers train by default, or ``training=True`` in the source),
    without gradients unless ``grad``; the outputs are tensors (as Keras returns), the
    model's mode restored after."""
    was_training = model.training
    model.train(training)
    try:
        with torch.set_grad_enabled(grad):
            return model(*(_as_model_input(x) for x in inputs), **kwargs)
    finally:
        model.train(was_training)


def batch_logs(history):
    """What Keras' train_on_batch returns, from a fit over one batch: the loss, or the loss
    and the metrics after it."""
    values = [logs[-1] for logs in history.history.values()]
    return values[0] if len(values) == 1 else values


@torch.no_grad()
def predict(model, x, batch_size=32):
    """Keras' Model.predict: outputs for all samples, as numpy arrays, in inference mode (the
    model's mode restored after)."""
    was_training = model.training
    model.eval()
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    batches = [model(*batch) for batch in make_loader(inputs, batch_size=batch_size)]
    # Keras sets the mode per call: the model trains after this as it did before
    model.train(was_training)
    if isinstance(batches[0], tuple):
        return [torch.cat(parts).numpy() for parts in zip(*batches)]
    return torch.cat(batches).numpy()


@torch.no_grad()
def evaluate_test_step(model, x, y=None, batch_size=32, return_dict=False):
    """Keras' Model.evaluate over the model's own test_step: the metrics reset first, the
    last batch's logs returned (the metrics' names first, then the other keys sorted)."""
    was_training = model.training
    model.eval()
    for metric in model.metrics:
        metric.reset_state()
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    for batch in make_loader(inputs, y, batch_size):
        data = batch[0] if len(batch) == 1 else tuple(batch)
        logs = model.test_step(data)
    # Keras sets the mode per call: the model trains after this as it did before
    model.train(was_training)
    logs = {key: float(value) for key, value in logs.items()}
    if return_dict:
        return logs
    names = [metric.name for metric in model.metrics if metric.name in logs]
    results = [logs[name] for name in names] + [logs[key] for key in sorted(logs) if key not in names]
    return results[0] if len(results) == 1 else results


def fit_train_step(model, x, y=None, epochs=1, batch_size=32, verbose="auto", shuffle=True,
                   validation_data=None, callbacks=()):
    """Keras' Model.fit over the model's own train_step: the metrics are reset at each
    epoch's start, and the logs of the epoch's last step are printed and kept.

    ``validation_data`` is evaluated with the model's test_step after each epoch (the
    ``val_`` logs), as Keras' fit does.

    ``callbacks`` get Keras' hooks: the model, the train and epoch begin/end with the logs."""
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    loader = make_loader(inputs, y, batch_size, shuffle=shuffle)
    history = {}
    if STEP_CALLBACKS:
        for callback in callbacks:
            callback.set_model(model)
            callback.on_train_begin({})
    for epoch in range(epochs):
        if STEP_CALLBACKS:
            for callback in callbacks:
                callback.on_epoch_begin(epoch, {})
        for metric in model.metrics:
            metric.reset_state()
        model.train()
        if STEP_CALLBACKS:
            step = 0  # (the batch hooks' index)
        for batch in loader:
            if STEP_CALLBACKS:
                for callback in callbacks:
                    callback.on_train_batch_begin(step, {})
            data = batch[0] if len(batch) == 1 else tuple(batch)
            logs = model.train_step(data)
            if STEP_CALLBACKS:
                for callback in callbacks:
                    callback.on_train_batch_end(step, {key: float(value) for key, value in logs.items()})
                step += 1
        logs = {key: float(value) for key, value in sorted(logs.items())}
        if STEP_VALIDATION:
            if validation_data is not None:
                val_x, val_y = validation_data
                val_logs = evaluate_test_step(model, val_x, val_y, batch_size=batch_size, return_dict=True)
                logs.update({f"val_{key}": value for key, value in val_logs.items()})
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(f"Epoch {epoch + 1}/{epochs} - " + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        if STEP_CALLBACKS:
            for callback in callbacks:
                callback.on_epoch_end(epoch, dict(logs))
    if STEP_CALLBACKS:
        for callback in callbacks:
            callback.on_train_end(dict(logs))
    return SimpleNamespace(history=history)


def load_model(path):
    """keras.models.load_model: the same architecture, with the weights torch.save() wrote."""
    model = Model()
    model.load_state_dict(torch.load(path, weights_only=True))
    return model


def clone_model(model):
    """keras.models.clone_model: the same architecture, freshly initialised (the weights are
    not copied; Keras builds new layers). Every module's own reset_parameters runs, the
    innermost first, so a module that initialises its layers as Keras does has the last word."""
    import copy

    clone = copy.deepcopy(model)
    for module in reversed(list(clone.modules())):
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
    return clone


def to_categorical(y, num_classes=None, dtype="float64"):
    """keras.utils.to_categorical without Keras: one-hot rows for integer labels (float64, as Keras 3)."""
    y = np.asarray(y, dtype="int64")
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    num_classes = int(y.max()) + 1 if num_classes is None else num_classes
    return np.eye(num_classes, dtype=dtype)[y]
