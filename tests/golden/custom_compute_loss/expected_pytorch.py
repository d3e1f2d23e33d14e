# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace


class Regressor(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:22).

    Input ``x``: (N, 8) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 16)
        self.out = nn.Linear(16, 1)
        self.loss_tracker = Mean(name="loss")

    def forward(self, x):
        x = F.relu(self.hidden(x))
        x = self.out(x)
        return x

    @property
    def metrics(self):
        return [self.loss_tracker]

    def compute_loss(
        self, x=None, y=None, y_pred=None, sample_weight=None, training=True
    ):
        return torch.mean(torch.square(y - y_pred)) + 0.01 * torch.mean(
            torch.abs(y_pred)
        )

    def train_step(self, data):
        """Keras' default train_step, with the model's own compute_loss."""
        x, y = data
        self.optimizer.zero_grad()
        y_pred = self(x)
        loss = self.compute_loss(
            x=x, y=y, y_pred=y_pred, sample_weight=None, training=True
        )
        loss.backward()
        self.optimizer.step()
        self.loss_tracker.update_state(loss, sample_weight=len(x))
        return {"loss": self.loss_tracker.result()}

    def test_step(self, data):
        """Keras' default test_step, with the model's own compute_loss."""
        x, y = data
        y_pred = self(x)
        loss = self.compute_loss(
            x=x, y=y, y_pred=y_pred, sample_weight=None, training=False
        )
        self.loss_tracker.update_state(loss, sample_weight=len(x))
        return {"loss": self.loss_tracker.result()}


def build_model():
    return Regressor()


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


class Mean:
    """Keras' metrics.Mean: the running mean of the values given to update_state."""

    def __init__(self, name="mean", dtype=None):
        self.name = name
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values = torch.as_tensor(values).detach().float()
        if sample_weight is None:
            sample_weight = torch.ones_like(values)
        sample_weight = torch.broadcast_to(
            torch.as_tensor(sample_weight).float(), values.shape
        )
        self.total += float((values * sample_weight).sum())
        self.count += float(sample_weight.sum())

    def result(self):
        return torch.tensor(self.total / self.count if self.count else 0.0)

    def reset_state(self):
        self.total, self.count = 0.0, 0.0


def fit_train_step(
    model, x, y=None, epochs=1, batch_size=32, verbose="auto", shuffle=True
):
    """Keras' Model.fit over the model's own train_step: the metrics are reset at each
    epoch's start, and the logs of the epoch's last step are printed and kept."""
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    loader = make_loader(inputs, y, batch_size, shuffle=shuffle)
    history = {}
    for epoch in range(epochs):
        for metric in model.metrics:
            metric.reset_state()
        model.train()
        for batch in loader:
            data = batch[0] if len(batch) == 1 else tuple(batch)
            logs = model.train_step(data)
        logs = {key: float(value) for key, value in sorted(logs.items())}
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs} - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
            )
    return SimpleNamespace(history=history)


@torch.no_grad()
def evaluate_test_step(model, x, y=None, batch_size=32, return_dict=False):
    """Keras' Model.evaluate over the model's own test_step: the metrics reset first, the
    last batch's logs returned (the metrics' names first, then the other keys sorted).
    """
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
    results = [logs[name] for name in names] + [
        logs[key] for key in sorted(logs) if key not in names
    ]
    return results[0] if len(results) == 1 else results


def main():
    x = np.random.rand(256, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.optimizer = torch.optim.Adam(
        model.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-07
    )  # train_step reads self.optimizer, as in Keras
    fit_train_step(model, x, y, epochs=3, batch_size=32)
    print("loss:", evaluate_test_step(model, x, y, batch_size=32))


if __name__ == "__main__":
    main()
