# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace

x = np.random.rand(64, 5).astype("float32")
y = np.random.rand(64, 1).astype("float32")


def make_loader(inputs, targets=None, batch_size=32, shuffle=False, sample_weight=None):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches."""
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    if sample_weight is not None:
        arrays.append(sample_weight)
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        tensors.append(tensor.float() if tensor.is_floating_point() else tensor.long())
    return DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle)


def train_step(
    model,
    optimizer,
    loss_fns,
    loss_weights,
    inputs,
    targets,
    sample_weight=None,
    clipnorm=None,
    clipvalue=None,
    global_clipnorm=None,
):
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
        if sample_weight is not None:
            per_sample = per_sample * sample_weight.view(
                -1, *[1] * (per_sample.dim() - 1)
            )
        loss = loss + weight * per_sample.mean()  # Keras' sum_over_batch_size
    loss.backward()
    if clipvalue is not None:
        torch.nn.utils.clip_grad_value_(model.parameters(), clipvalue)
    if clipnorm is not None:  # Keras clips each variable's gradient on its own
        for parameter in model.parameters():
            torch.nn.utils.clip_grad_norm_(parameter, clipnorm)
    if global_clipnorm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), global_clipnorm)
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
    validation_split=0.0,
    validation_data=None,
    shuffle=True,
    class_weight=None,
    sample_weight=None,
    initial_epoch=0,
    scheduler=None,
    **clip,
):
    """Keras' Model.fit as a loop: running means per epoch, printed per epoch."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    if validation_split:
        # Keras holds out the LAST fraction of the arrays, before any shuffling
        split = int(len(inputs[0]) * (1 - validation_split))
        validation_data = ([a[split:] for a in inputs], [a[split:] for a in targets])
        inputs, targets = [a[:split] for a in inputs], [a[:split] for a in targets]
    if class_weight is not None:
        labels = np.asarray(targets[0])
        labels = (
            labels.argmax(-1)
            if labels.ndim > 1 and labels.shape[-1] > 1
            else labels.reshape(-1)
        )
        sample_weight = np.array(
            [class_weight[int(c)] for c in labels], dtype="float32"
        )
    loader = make_loader(
        inputs, targets, batch_size, shuffle=shuffle, sample_weight=sample_weight
    )
    n_in, n_out = len(inputs), len(targets)
    history = {}
    for epoch in range(initial_epoch, epochs):
        total, seen = 0.0, 0
        sums = {name: 0.0 for name, _, _ in metrics}
        counts = {name: 0 for name, _, _ in metrics}
        for batch in loader:
            batch_inputs, batch_targets = batch[:n_in], batch[n_in : n_in + n_out]
            weights = batch[-1] if sample_weight is not None else None
            loss, outputs = train_step(
                model,
                optimizer,
                loss_fns,
                loss_weights,
                batch_inputs,
                batch_targets,
                weights,
                **clip,
            )
            if scheduler is not None:
                scheduler.step()
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            for name, index, metric in metrics:
                values = metric(outputs[index], batch_targets[index])
                sums[name] += values.sum().item()
                counts[name] += values.numel()
        logs = {
            "loss": total / seen,
            **{name: sums[name] / counts[name] for name in sums},
        }
        if validation_data is not None:
            results = evaluate(
                model,
                loss_fns,
                *validation_data,
                batch_size=batch_size,
                metrics=metrics,
                loss_weights=loss_weights,
                return_dict=True,
            )
            logs.update({f"val_{key}": value for key, value in results.items()})
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs} - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
            )
    return SimpleNamespace(history=history)


@torch.no_grad()
def evaluate(
    model,
    loss_fns,
    x,
    y,
    batch_size=32,
    metrics=(),
    loss_weights=None,
    return_dict=False,
):
    """Keras' Model.evaluate: the mean loss (and metrics) over the data, in inference mode."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    model.eval()
    total, seen = 0.0, 0
    sums = {name: 0.0 for name, _, _ in metrics}
    counts = {name: 0 for name, _, _ in metrics}
    for batch in make_loader(inputs, targets, batch_size):
        batch_inputs, batch_targets = batch[: len(inputs)], batch[len(inputs) :]
        outputs = model(*batch_inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        loss = sum(
            w * fn(out, t).mean()
            for fn, w, out, t in zip(loss_fns, loss_weights, outputs, batch_targets)
        )
        total += loss.item() * len(batch_inputs[0])
        seen += len(batch_inputs[0])
        for name, index, metric in metrics:
            values = metric(outputs[index], batch_targets[index])
            sums[name] += values.sum().item()
            counts[name] += values.numel()
    results = {
        "loss": total / seen,
        **{name: sums[name] / counts[name] for name in sums},
    }
    if return_dict:
        return results
    return results["loss"] if len(results) == 1 else list(results.values())


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


train_ds = make_loader(x, y, batch_size=8)


class Net(nn.Module):
    """Transpiled from the Keras model ``model`` (input.py:7).

    Input ``x``: (N, 5) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 4)
        self.fc2 = nn.Linear(4, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return x


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = mean_squared_error
fit(model, optimizer, loss_fn, x, y, epochs=2, batch_size=8, shuffle=False)
