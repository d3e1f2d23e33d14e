# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""AUC/Precision/Recall metric objects (AUC logged under its own name), and a list of
callbacks bound to a name before fit()."""

import numpy as np
import math
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:9).

    Input ``x``: (N, 4) float32.
    Returns: (N, 1).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, x, return_logits=False):
        logits = self.fc1(x)
        if return_logits:
            return logits
        return torch.sigmoid(logits)


def build_model():
    return Net()


x = np.random.rand(64, 4).astype("float32")
y = (x[:, 0] > 0.5).astype("float32")


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
    for _, _, metric in metrics:
        if hasattr(metric, "reset_state"):
            metric.reset_state()
    return {name: 0.0 for name, _, _ in metrics}, {name: 0 for name, _, _ in metrics}


def update_metrics(metrics, outputs, targets, sums, counts):
    """Add one batch's metric values to the running ``sums`` and ``counts`` (their means are
    what Keras reports); a stateful metric object keeps its own result so far."""
    for name, index, metric in metrics:
        if hasattr(metric, "update_state"):
            metric.update_state(outputs[index], targets[index])
            sums[name], counts[name] = metric.result(), 1
            continue
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
    best_val_roc, wait = float("-inf"), 0
    best_state = None
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer,
        mode="min",
        factor=0.1,
        patience=1,
        threshold=0.0001,
        threshold_mode="abs",
        cooldown=0,
        min_lr=0.0,
    )
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
        # EarlyStopping(monitor='val_roc', patience=2)
        if logs["val_roc"] > best_val_roc + 0.0:
            best_val_roc, wait = logs["val_roc"], 0
        else:
            wait += 1
            if wait >= 2 and epoch >= 0:
                break
        plateau.step(logs["val_loss"])  # ReduceLROnPlateau
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


def binary_crossentropy(logits, target):
    """Keras' binary_crossentropy per sample (mean over the last axis), from logits."""
    target = target.to(logits.dtype).view_as(logits)
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(
        dim=-1
    )


class _PositiveCounts:
    """True positives, false positives and false negatives over the epoch (Precision, Recall)."""

    def __init__(self, from_logits=False):
        self.from_logits = from_logits
        self.reset_state()

    def reset_state(self):
        self.tp, self.fp, self.fn = 0.0, 0.0, 0.0

    def update_state(self, output, target):
        pred, label = thresholded(output, target, self.from_logits)
        self.tp += (pred & label).sum().item()
        self.fp += (pred & ~label).sum().item()
        self.fn += (~pred & label).sum().item()


def probabilities(output, from_logits):
    """The model's output as the probabilities a stateful metric reads: ``from_logits`` True
    (a sigmoid moved into the loss) or "softmax" (a softmax moved into the loss, over the
    last axis) gives them back, as Keras computes the metric on the activated output."""
    if from_logits == "softmax":
        return torch.softmax(output, dim=-1)
    return torch.sigmoid(output) if from_logits else output


def thresholded(output, target, from_logits):
    """(predicted positive, labelled positive) for each value of a batch, at threshold 0.5
    (``prediction > 0.5`` is positive), every value of the output counted (Keras flattens it).
    """
    pred = probabilities(output, from_logits).detach().reshape(-1) > 0.5
    return pred, target.reshape(-1).bool()


class AUC:
    """keras.metrics.AUC (ROC curve, 200 thresholds, interpolation): true/false positives
    and negatives counted at each threshold over the epoch, the area by the trapezoid rule
    between consecutive thresholds."""

    def __init__(self, num_thresholds=200, from_logits=False):
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = torch.tensor(
            [-1e-7] + inner + [1.0 + 1e-7], dtype=torch.float64
        )
        self.from_logits = from_logits
        self.reset_state()

    def reset_state(self):
        self.tp, self.fp, self.tn, self.fn = (
            torch.zeros(len(self.thresholds), dtype=torch.float64) for _ in range(4)
        )

    def update_state(self, output, target):
        pred = probabilities(output, self.from_logits).detach().double().reshape(-1, 1)
        label = target.reshape(-1, 1).bool()
        above = pred > self.thresholds
        self.tp += (above & label).sum(dim=0)
        self.fp += (above & ~label).sum(dim=0)
        self.fn += (~above & label).sum(dim=0)
        self.tn += (~above & ~label).sum(dim=0)

    def result(self):
        tpr = torch.nan_to_num(self.tp / (self.tp + self.fn))
        fpr = torch.nan_to_num(self.fp / (self.fp + self.tn))
        return ((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2).sum().item()


class Precision(_PositiveCounts):
    """keras.metrics.Precision (threshold 0.5): true positives / predicted positives over the epoch."""

    def result(self):
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0


class Recall(_PositiveCounts):
    """keras.metrics.Recall (threshold 0.5): true positives / actual positives over the epoch."""

    def result(self):
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


model = build_model()
# compiled in build_model()
optimizer = KerasAdam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07)
loss_fn = (
    binary_crossentropy  # on logits: the model's final activation moves into the loss
)
# es = keras.callbacks.EarlyStopping(monitor="val_roc", mode="max", patience=2): it runs inside the generated fit() loop
# callbacks = [...]: the callbacks run inside the generated fit() loop
history = fit(
    model,
    optimizer,
    loss_fn,
    x,
    y,
    epochs=3,
    batch_size=32,
    metrics=[
        ("roc", 0, AUC(from_logits=True)),
        ("precision", 0, Precision(from_logits=True)),
        ("recall", 0, Recall(from_logits=True)),
    ],
    verbose=2,
    validation_split=0.25,
)
