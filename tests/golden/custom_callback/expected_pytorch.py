# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import math
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace


def make_loader(inputs, targets=None, batch_size=32, shuffle=False):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches."""
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        # booleans (a one-hot ``y == k``) are numbers to Keras (float32), integers are indices
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        tensors.append(tensor.float() if floating else tensor.long())
    return DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle)


def reset_metrics(metrics):
    """The running sums and counts of ``metrics`` ((name, output index, metric) triples) at
    the start of an epoch or evaluation; a stateful metric object is reset."""
    return {name: 0.0 for name, _, _ in metrics}, {name: 0 for name, _, _ in metrics}


def update_metrics(metrics, outputs, targets, sums, counts):
    """Add one batch's metric values to the running ``sums`` and ``counts`` (their means are
    what Keras reports); a stateful metric object keeps its own result so far."""
    for name, index, metric in metrics:
        values = metric(outputs[index], targets[index])
        sums[name] += values.sum().item()
        counts[name] += values.numel()


def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets):
    """One optimizer step on a batch; returns the batch loss and the (detached) outputs."""
    model.train()
    optimizer.zero_grad()
    outputs = model(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    loss = 0.0
    for loss_fn, weight, output, target in zip(
        loss_fns, loss_weights, outputs, targets
    ):
        per_sample = loss_fn(output, target)
        loss = loss + weight * per_sample.mean()  # Keras' sum_over_batch_size
    loss.backward()
    optimizer.step()
    return loss.item(), tuple(output.detach() for output in outputs)


def fit(
    model,
    optimizer,
    loss_fns,
    x,
    y,
    epochs=1,
    batch_size=32,
    verbose="auto",
    metrics=(),
    callbacks=(),
    loss_weights=None,
    shuffle=True,
):
    """Keras' Model.fit as a loop: running means per epoch, printed per epoch."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    loader = make_loader(inputs, targets, batch_size, shuffle=shuffle)
    n_in, n_out = len(inputs), len(targets)
    history = {}
    # callbacks reach the optimizer as self.model.optimizer, as in Keras
    model.optimizer = optimizer
    for callback in callbacks:
        callback.set_model(model)
        callback.params = {"epochs": epochs, "steps": len(loader), "verbose": verbose}
    model.stop_training = False
    training_logs = {}
    for callback in callbacks:
        callback.on_train_begin({})
    for epoch in range(epochs):
        for callback in callbacks:
            callback.on_epoch_begin(epoch, {})
        total, seen = 0.0, 0
        sums, counts = reset_metrics(metrics)
        for step, batch in enumerate(loader):
            for callback in callbacks:
                callback.on_train_batch_begin(step, logs={})
            batch_inputs, batch_targets = batch[:n_in], batch[n_in : n_in + n_out]
            loss, outputs = train_step(
                model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets
            )
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            update_metrics(metrics, outputs, batch_targets, sums, counts)
            batch_logs = {
                "loss": total / seen,
                **{name: sums[name] / counts[name] for name in sums},
            }
            batch_logs = dict(
                sorted(batch_logs.items())
            )  # as Keras hands them to callbacks
            for callback in callbacks:
                callback.on_train_batch_end(step, logs=batch_logs)
            if not math.isfinite(loss):  # TerminateOnNaN
                print(f"Batch {step}: Invalid loss, terminating training")
                model.stop_training = True
            if model.stop_training:
                break
        logs = {
            "loss": total / seen,
            **{name: sums[name] / counts[name] for name in sums},
        }
        # Keras hands the callbacks (History too) a copy sorted by key; on_train_end another one
        training_logs, logs = logs, dict(sorted(logs.items()))
        for callback in callbacks:  # before History and the progress line, as in Keras
            callback.on_epoch_end(epoch, logs)
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs} - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
            )
        if model.stop_training:
            break
    for callback in callbacks:
        callback.on_train_end(dict(sorted(training_logs.items())))
    return SimpleNamespace(history=history)


class Callback:
    """keras.callbacks.Callback without Keras: the generated fit() calls these hooks with the
    logs Keras passes (running means within an epoch; epoch results with val_* keys)."""

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass


class LambdaCallback(Callback):
    """keras.callbacks.LambdaCallback: the functions given stand in for the hooks."""

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ):
        self.__dict__.update(kwargs)  # e.g. on_batch_end=...
        hooks = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            "on_train_batch_begin": on_train_batch_begin,
            "on_train_batch_end": on_train_batch_end,
        }
        for name, function in hooks.items():
            if function is not None:
                setattr(self, name, function)


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


class WarmupLogger(Callback):
    """Raises the learning rate over the first epochs and logs it."""

    def __init__(self, target_lr=0.1, warmup_epochs=2):
        super().__init__()
        self.target_lr = target_lr
        self.warmup_epochs = warmup_epochs

    def on_epoch_begin(self, epoch, logs=None):
        if epoch < self.warmup_epochs:
            self.model.optimizer.param_groups[0]["lr"] = (
                self.target_lr * (epoch + 1) / self.warmup_epochs
            )

    def on_epoch_end(self, epoch, logs=None):
        logs["lr"] = float(self.model.optimizer.param_groups[0]["lr"])
        if logs["loss"] < 1e-3:
            self.model.stop_training = True


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:25).

    Input ``x``: (N, 4) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return x


def build_model():
    return Net()


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = mean_squared_error
    history = fit(
        model,
        optimizer,
        loss_fn,
        x,
        y,
        epochs=4,
        batch_size=16,
        callbacks=[
            WarmupLogger(),
            LambdaCallback(on_epoch_end=lambda epoch, logs: print(epoch, logs["lr"])),
        ],
    )
    print(history.history["lr"])
