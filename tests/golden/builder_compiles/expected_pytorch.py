# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace
import numpy as np


class GetModel(nn.Module):
    """Transpiled from the Keras model built by ``get_model()`` (input.py:6).

    Input ``x``: (N, 20) float32.
    Returns: (N, 3).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self, input_dim=20, n_classes=3):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, 64)
        self.dropout1 = nn.Dropout(0.2)
        self.fc2 = nn.Linear(64, n_classes)

    def forward(self, x, return_logits=False):
        x = F.relu(self.fc1(x))
        x = self.dropout1(x)
        logits = self.fc2(x)
        if return_logits:
            return logits
        return F.softmax(logits, dim=-1)


def get_model(input_dim=20, n_classes=3):
    return GetModel(input_dim, n_classes)


X = np.random.rand(200, 20)
y = np.random.randint(3, size=200)


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
    validation_split=0.0,
    validation_data=None,
    loss_weights=None,
    shuffle=True,
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
    loader = make_loader(inputs, targets, batch_size, shuffle=shuffle)
    n_in, n_out = len(inputs), len(targets)
    history = {}
    best_val_loss, wait = float("inf"), 0
    best_state = None
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
        # EarlyStopping(monitor='val_loss', patience=2)
        if logs["val_loss"] < best_val_loss - 0.0:
            best_val_loss, wait = logs["val_loss"], 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            wait += 1
            if wait >= 2 and epoch >= 0:
                if best_state is not None:
                    model.load_state_dict(best_state)
                break
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
    """Keras' Model.evaluate: the mean loss (and metrics) over the data, in inference mode (the
    model's mode restored after)."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    was_training = model.training
    model.eval()
    total, seen = 0.0, 0
    sums, counts = reset_metrics(metrics)
    for batch in make_loader(inputs, targets, batch_size):
        batch_inputs, batch_targets = batch[: len(inputs)], batch[len(inputs) :]
        outputs = model(*batch_inputs, return_logits=True)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        loss = sum(
            w * fn(out, t).mean()
            for fn, w, out, t in zip(loss_fns, loss_weights, outputs, batch_targets)
        )
        total += loss.item() * len(batch_inputs[0])
        seen += len(batch_inputs[0])
        update_metrics(metrics, outputs, batch_targets, sums, counts)
    # Keras sets the mode per call: the model trains after this as it did before
    model.train(was_training)
    results = {
        "loss": total / seen,
        **{name: sums[name] / counts[name] for name in sums},
    }
    if return_dict:
        return results
    return results["loss"] if len(results) == 1 else list(results.values())


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


model = get_model()
# compiled in get_model()
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.001, alpha=0.9, eps=1e-07)
loss_fn = sparse_categorical_crossentropy  # on logits: the model's final activation moves into the loss
# es = keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True): it runs inside the generated fit() loop
history = fit(
    model,
    optimizer,
    loss_fn,
    X,
    y,
    epochs=3,
    batch_size=16,
    metrics=[("accuracy", 0, sparse_categorical_accuracy)],
    verbose=0,
    validation_split=0.2,
)
print(history.history.keys())
print(predict(model, X[:2]))
torch.save(model.state_dict(), "my_model.pt")
