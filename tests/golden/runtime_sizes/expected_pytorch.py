# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Sizes known only when the program runs: the vocabulary's size and the number of classes."""

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace

text = "the quick brown fox jumps over the lazy dog " * 20
chars = sorted(set(text))
rng = np.random.default_rng(0)
x = rng.random((256, 12)).astype("float32")
y = rng.integers(0, 3, size=256)
num_classes = len(np.unique(y))


class Net(nn.Module):
    """Transpiled from the Keras model ``model`` (input.py:13).

    Input ``x``: (N, 12) float32.
    Returns: (N, num_classes).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self, len_chars, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(12, len_chars)
        self.fc2 = nn.Linear(len_chars, num_classes)

    def forward(self, x, return_logits=False):
        x = F.relu(self.fc1(x))
        logits = self.fc2(x)
        if return_logits:
            return logits
        return F.softmax(logits, dim=-1)


model = Net(len(chars), num_classes)


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


def sparse_categorical_crossentropy(logits, target):
    """Keras' sparse_categorical_crossentropy per sample, from logits."""
    loss = F.cross_entropy(
        logits.flatten(0, -2), target.flatten().long(), reduction="none"
    )
    return loss.view(logits.shape[:-1])


def sparse_categorical_accuracy(output, target):
    """1.0 where the arg-max class equals the integer target."""
    return (output.argmax(dim=-1) == target.view(output.shape[:-1]).long()).float()


optimizer = torch.optim.Adam(
    model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
)
loss_fn = sparse_categorical_crossentropy  # on logits: the model's final activation moves into the loss
fit(
    model,
    optimizer,
    loss_fn,
    x,
    y,
    epochs=2,
    batch_size=32,
    metrics=[("accuracy", 0, sparse_categorical_accuracy)],
    verbose=2,
)
print(predict(model, x[:4]).argmax(-1))
