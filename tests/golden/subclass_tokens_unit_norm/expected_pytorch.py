# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A distilled ViT-like head (keras.io deit.py's shape of code): tokens made with tf.Variable
in the base class's __init__, a subclass extending it, an `if not training or flag:` test,
and UnitNormalization of the embedding (keras.io metric_learning.py)."""

import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace
import numpy as np


# Base (keras.Model subclass): translated into Distilled, where its call() now runs inline in forward()
class Distilled(nn.Module):
    """Transpiled from the Keras model ``model`` (input.py:39).

    Input ``x``: (N, 10, 4) float32.
    Returns: (N, 8).
    """

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 16)
        self.cls_token = nn.Parameter(torch.empty(1, 1, 16), requires_grad=False)
        self.dist_token = nn.Parameter(torch.empty(1, 1, 16), requires_grad=False)
        self.head = nn.Linear(16, 8)
        self.head_dist = nn.Linear(16, 8)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.zeros_(self.cls_token)
        nn.init.zeros_(self.dist_token)

    def forward(self, x):
        x_1 = self.proj(x)
        cls_token = self.cls_token.expand(x.shape[0], 1, 16)
        dist_token = self.dist_token.expand(x.shape[0], 1, 16)
        x = torch.cat([cls_token, dist_token, x_1], dim=1)
        x_2 = x[:, 0]
        a = self.head(x_2)
        x = x[:, 1]
        b = self.head_dist(x)
        if self.training:
            return F.normalize(a - b, dim=-1, eps=1e-12)
        return F.normalize((a + b) / 2.0, dim=-1, eps=1e-12)


model = Distilled()


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


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


optimizer = torch.optim.Adam(
    model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
)
loss_fn = mean_squared_error
fit(
    model,
    optimizer,
    loss_fn,
    np.random.rand(32, 10, 4),
    np.random.rand(32, 8),
    epochs=1,
    batch_size=8,
)
