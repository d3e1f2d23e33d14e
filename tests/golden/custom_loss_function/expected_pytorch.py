# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
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
    for epoch in range(epochs):
        total, seen = 0.0, 0
        sums, counts = reset_metrics(metrics)
        for batch in loader:
            batch_inputs, batch_targets = batch[:n_in], batch[n_in : n_in + n_out]
            loss, outputs = train_step(
                model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets
            )
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            update_metrics(metrics, outputs, batch_targets, sums, counts)
        logs = {
            "loss": total / seen,
            **{name: sums[name] / counts[name] for name in sums},
        }
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs} - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
            )
    return SimpleNamespace(history=history)


def keras_same_rank(y_true, y_pred):
    """Keras' loss wrappers drop (or add) a trailing axis of size 1 where the ranks differ by one."""
    if y_true.dim() == y_pred.dim() + 1 and y_true.shape[-1] == 1:
        if y_pred.dim() == 1:
            return y_true, y_pred.unsqueeze(-1)
        return y_true.squeeze(-1), y_pred
    if y_pred.dim() == y_true.dim() + 1 and y_pred.shape[-1] == 1:
        if y_true.dim() == 1:
            return y_true.unsqueeze(-1), y_pred
        return y_true, y_pred.squeeze(-1)
    return y_true, y_pred


def keras_loss(fn):
    """A Keras loss the script defines (a function fn(y_true, y_pred) or a Loss object) as the
    per-sample (output, target) loss train_step averages: the target cast to the output's
    dtype and the ranks matched as Keras does, then the object's reduction."""
    call = getattr(fn, "call", fn)
    reduction = getattr(fn, "reduction", "sum_over_batch_size")
    owner = next(
        (c for c in type(fn).__mro__ if "call" in vars(c) or "__call__" in vars(c)),
        None,
    )
    if (
        call is not fn
        and owner is not None
        and "__call__" in vars(owner)
        and owner.__name__ != "Loss"
    ):
        # a Loss subclass overriding __call__: Keras calls the object on the data as given,
        # its value is the loss
        return lambda output, target: fn(target, output)

    def loss(output, target):
        values = call(*keras_same_rank(target.to(output.dtype), output))
        if reduction == "sum":  # train_step's mean of this is Keras' sum
            return values * values.numel()
        if reduction in (
            None,
            "none",
        ):  # Keras: the gradient of the sum, the mean logged
            extra = values * (values.numel() - 1)
            return values + extra - extra.detach()
        return values

    return loss


def keras_metric(fn):
    """A Keras metric function fn(y_true, y_pred) as the per-sample (output, target) values
    fit() and evaluate() average."""

    def metric(output, target):
        return fn(target, output)

    return metric


class Loss:
    """keras.losses.Loss without Keras: a subclass's call(y_true, y_pred) gives per-sample
    losses; calling the object reduces them as Keras does."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name, self.reduction, self.dtype = name, reduction, dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = keras_same_rank(
            torch.as_tensor(y_true).to(y_pred.dtype), y_pred
        )
        values = self.call(y_true, y_pred)
        if sample_weight is not None:
            weights = torch.as_tensor(sample_weight, dtype=values.dtype)
            values = values * weights.view(-1, *[1] * (values.dim() - 1))
        if self.reduction in (None, "none"):
            return values
        total = values.sum()
        return total if self.reduction == "sum" else total / values.numel()

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


def weighted_mse(y_true, y_pred):
    """Errors on the first target count double."""
    weights = torch.tensor([2.0, 1.0])
    return torch.mean(weights * torch.square(y_true - y_pred), dim=-1)


def rmse(y_true, y_pred):
    return torch.sqrt(torch.mean(torch.square(y_pred - y_true), dim=-1))


class LogCoshLoss(Loss):
    def call(self, y_true, y_pred):
        error = y_pred - y_true
        return torch.mean(
            error + F.softplus(-2.0 * error) - torch.log(torch.as_tensor(2.0)), dim=-1
        )


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:24).

    Input ``x``: (N, 4) float32.
    Returns: (N, 2).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return x


def build_model():
    return Net()


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = np.random.rand(64, 2).astype("float32")
    model = build_model()
    optimizer = torch.optim.Adam(
        model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
    )
    loss_fn = keras_loss(weighted_mse)
    fit(
        model,
        optimizer,
        loss_fn,
        x,
        y,
        epochs=2,
        batch_size=16,
        metrics=[("rmse", 0, keras_metric(rmse))],
    )
    optimizer = torch.optim.Adam(
        model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
    )
    loss_fn = keras_loss(LogCoshLoss(reduction="sum"))
    fit(model, optimizer, loss_fn, x, y, epochs=1, batch_size=16)
