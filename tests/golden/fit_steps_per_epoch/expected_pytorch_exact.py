# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import math
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace

x = np.random.rand(64, 5).astype("float32")
y = np.random.rand(64, 1).astype("float32")
x_val, y_val = x[:16], y[:16]


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
    validation_split=0.0,
    validation_data=None,
    steps_per_epoch=None,
    repeat=False,
    validation_steps=None,
    validation_batch_size=None,
    validation_freq=1,
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
    batches = EpochBatches(loader, steps_per_epoch, repeat)
    n_in, n_out = len(inputs), len(targets)
    history = {}
    for epoch in range(epochs):
        total, seen = 0.0, 0
        sums, counts = reset_metrics(metrics)
        for step, batch in batches.epoch():
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
        # Keras validates every validation_freq epochs, or in the (1-based) epochs listed
        if isinstance(validation_freq, int):
            due = (epoch + 1) % validation_freq == 0
        else:
            due = epoch + 1 in validation_freq
        if validation_data is not None and due:
            results = evaluate(
                model,
                loss_fns,
                *validation_data,
                batch_size=validation_batch_size or batch_size,
                steps=validation_steps,
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


@torch.no_grad()
def evaluate(
    model,
    loss_fns,
    x,
    y,
    batch_size=32,
    steps=None,
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
    for step, batch in enumerate(make_loader(inputs, targets, batch_size)):
        if steps is not None and step >= steps:  # Keras' evaluate(steps=...)
            break
        batch_inputs, batch_targets = batch[: len(inputs)], batch[len(inputs) :]
        outputs = model(*batch_inputs)
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


class KerasOptimizer(torch.optim.Optimizer):
    """Base of the Keras optimizers below, which update exactly as Keras' TensorFlow
    backend does (transpile --exact):
    - an Embedding table's gradient reaches a Keras optimizer one slice per token
      occurrence; squares (Adamax: absolute values) of the gradient are taken per slice,
      then summed per row (KerasEmbedding records the slices);
    - Keras tf.casts some Python-float hyperparameters, which rounds them to float32
      (Adam's betas in the bias corrections, the weight decay rate).
    A subclass writes its rule in update(p, group, state)."""

    def __init__(self, params, defaults):
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                p.keras_slices = []  # KerasEmbedding appends its gradient slices here

    @staticmethod
    def float32(value):
        """A Python float as Keras' tf.cast gives it: rounded to float32."""
        return torch.tensor(value, dtype=torch.float32).item()

    def per_occurrence(self, p, fn):
        """fn (torch.square or torch.abs) of p's gradient as Keras computes it: of each
        occurrence's slice, summed per row, for an embedding table; else fn(p.grad)."""
        if not p.keras_slices:
            return fn(p.grad)
        out = torch.zeros_like(p)
        for indices, values in p.keras_slices:
            out.index_add_(0, indices, fn(values))
        return out

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                # Keras' weight decay: decoupled, before the update
                if group["weight_decay"]:
                    p.sub_(p * self.float32(group["weight_decay"]) * group["lr"])
                self.update(p, group, self.state[p])
        return loss

    def zero_grad(self, set_to_none=True):
        super().zero_grad(set_to_none)
        for group in self.param_groups:
            for p in group["params"]:
                p.keras_slices.clear()  # they are part of the gradient


class KerasAdam(KerasOptimizer):
    """Keras' Adam update: the second moment from per-occurrence squared slices for
    embedding tables; bias corrections from the float32-rounded betas."""

    def __init__(
        self,
        params,
        lr=0.001,
        betas=(0.9, 0.999),
        eps=1e-07,
        amsgrad=False,
        weight_decay=0.0,
    ):
        super().__init__(
            params,
            dict(
                lr=lr, betas=betas, eps=eps, amsgrad=amsgrad, weight_decay=weight_decay
            ),
        )

    def update(self, p, group, state):
        if not state:
            state.update(
                step=0,
                m=torch.zeros_like(p),
                v=torch.zeros_like(p),
                v_hat=torch.zeros_like(p),
            )
        beta_1, beta_2 = group["betas"]
        state["step"] += 1
        t = state["step"]
        alpha = (
            group["lr"]
            * math.sqrt(1 - self.float32(beta_2) ** t)
            / (1 - self.float32(beta_1) ** t)
        )
        m, v = state["m"], state["v"]
        m.add_((p.grad - m) * (1 - beta_1))
        v.add_((self.per_occurrence(p, torch.square) - v) * (1 - beta_2))
        if group["amsgrad"]:
            v = torch.maximum(state["v_hat"], v, out=state["v_hat"])
        p.sub_(m * alpha / (v.sqrt() + group["eps"]))


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


train_ds = make_loader(
    x, y, batch_size=8, shuffle=True
)  # tf.data shuffle buffer → a full reshuffle each epoch


class Net(nn.Module):
    """Transpiled from the Keras model ``model`` (input.py:8).

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
optimizer = KerasAdam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07)
loss_fn = mean_squared_error
fit(
    model,
    optimizer,
    loss_fn,
    x,
    y,
    epochs=3,
    batch_size=8,
    validation_data=(x_val, y_val),
    steps_per_epoch=5,
    repeat=True,
    validation_steps=1,
    validation_freq=[1, 3],
)
