# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import functools
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:11).

    Input ``inputs``: (N, 6) float32.
    Returns: (N, 3), (N, 1).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.label = nn.Linear(8, 3)
        self.score = nn.Linear(8, 1)

    def forward(self, inputs, return_logits=False):
        x = F.relu(self.fc1(inputs))
        logits = self.label(x)
        score = self.score(x)
        if return_logits:
            return logits, score
        return F.softmax(logits, dim=-1), score


def build_model():
    return Net()


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
    outputs = model(*inputs, return_logits=True)
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


def to_categorical(y, num_classes=None, dtype="float64"):
    """keras.utils.to_categorical without Keras: one-hot rows for integer labels (float64, as Keras 3)."""
    y = np.asarray(y, dtype="int64")
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    num_classes = int(y.max()) + 1 if num_classes is None else num_classes
    return np.eye(num_classes, dtype=dtype)[y]


def categorical_crossentropy(logits, target):
    """Keras' categorical_crossentropy per sample (one-hot or probability targets), from logits."""
    return -(
        target.to(logits.dtype).view_as(logits) * F.log_softmax(logits, dim=-1)
    ).sum(dim=-1)


def categorical_crossentropy_smoothed(output, target, label_smoothing):
    """Keras' label_smoothing: the one-hot target moves towards the uniform distribution."""
    target = target.to(output.dtype).view_as(output)
    return categorical_crossentropy(
        output, target * (1 - label_smoothing) + label_smoothing / output.shape[-1]
    )


def huber(output, target, delta=1.0):
    """Keras' Huber loss per sample (mean over the last axis)."""
    target = target.to(output.dtype).view_as(output)
    return F.huber_loss(output, target, reduction="none", delta=delta).mean(dim=-1)


def keras_sum_reduction(loss_fn):
    """Keras' reduction="sum": the batch loss is the sum of the per-sample losses."""

    def summed(output, target):
        per_sample = loss_fn(output, target)
        return per_sample * per_sample.numel()  # train_step's mean of this is the sum

    return summed


if __name__ == "__main__":
    x = np.random.rand(64, 6).astype("float32")
    labels = to_categorical(np.random.randint(0, 3, size=64), 3)
    scores = np.random.rand(64, 1).astype("float32")
    model = build_model()
    optimizer = torch.optim.Adam(
        model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
    )
    loss_fn = [
        functools.partial(categorical_crossentropy_smoothed, label_smoothing=0.1),
        keras_sum_reduction(functools.partial(huber, delta=0.5)),
    ]  # on logits: the model's final activation moves into the loss
    fit(
        model,
        optimizer,
        loss_fn,
        x,
        [labels, scores],
        epochs=2,
        batch_size=16,
        loss_weights=[2.0, 0.3],
    )
