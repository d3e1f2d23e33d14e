"""Keras' losses for generated PyTorch programs (Keras -> PyTorch).

Per-sample losses as Keras computes them before its 'sum_over_batch_size' mean (the
cross-entropies from logits under the Keras name, from probabilities as ``*_from_probs``),
Keras' label_smoothing around them, reductions other than the batch mean, and the wrappers
that run a script's own Keras loss (``keras_loss``, ``Loss``) on torch tensors.
Copied into generated programs by printers/torch/training.py (printers/runtime_source.py).
"""

import torch
import torch.nn.functional as F


def sparse_categorical_crossentropy(logits, target):
    """Keras' sparse_categorical_crossentropy per sample, from logits."""
    loss = F.cross_entropy(logits.flatten(0, -2), target.flatten().long(), reduction="none")
    return loss.view(logits.shape[:-1])


def sparse_categorical_crossentropy_from_probs(probs, target):
    """Keras' sparse_categorical_crossentropy per sample, on clipped probabilities."""
    log_probs = torch.log(probs.clamp(1e-7, 1 - 1e-7))
    loss = F.nll_loss(log_probs.flatten(0, -2), target.flatten().long(), reduction="none")
    return loss.view(probs.shape[:-1])


def categorical_crossentropy(logits, target):
    """Keras' categorical_crossentropy per sample (one-hot or probability targets), from logits."""
    return -(target.to(logits.dtype).view_as(logits) * F.log_softmax(logits, dim=-1)).sum(dim=-1)


def categorical_crossentropy_from_probs(probs, target):
    """Keras' categorical_crossentropy per sample, on clipped probabilities."""
    probs = probs / probs.sum(dim=-1, keepdim=True)
    return -(target.to(probs.dtype).view_as(probs) * torch.log(probs.clamp(1e-7, 1 - 1e-7))).sum(dim=-1)


def binary_crossentropy(logits, target):
    """Keras' binary_crossentropy per sample (mean over the last axis), from logits."""
    target = target.to(logits.dtype).view_as(logits)
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(dim=-1)


def binary_crossentropy_from_probs(probs, target):
    """Keras' binary_crossentropy per sample (mean over the last axis), on clipped probabilities."""
    target = target.to(probs.dtype).view_as(probs)
    return F.binary_cross_entropy(probs.clamp(1e-7, 1 - 1e-7), target, reduction="none").mean(dim=-1)


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


def mean_absolute_error(output, target):
    """Keras' mean_absolute_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).abs().mean(dim=-1)


def huber(output, target, delta=1.0):
    """Keras' Huber loss per sample (mean over the last axis)."""
    target = target.to(output.dtype).view_as(output)
    return F.huber_loss(output, target, reduction="none", delta=delta).mean(dim=-1)


def kl_divergence(output, target):
    """Keras' kl_divergence per sample (both sides clipped to [1e-7, 1])."""
    target = target.to(output.dtype).view_as(output).clamp(1e-7, 1)
    return (target * torch.log(target / output.clamp(1e-7, 1))).sum(dim=-1)


def hinge(output, target):
    """Keras' hinge loss per sample; 0/1 targets are read as -1/1 as Keras does."""
    target = target.to(output.dtype).view_as(output)
    if bool(((target == 0) | (target == 1)).all()):
        target = 2 * target - 1
    return (1 - target * output).clamp(min=0).mean(dim=-1)


def cosine_similarity(output, target):
    """Keras' cosine_similarity loss per sample (minus the cosine of the two vectors)."""
    target = target.to(output.dtype).view_as(output)
    return -(F.normalize(target, dim=-1, eps=1e-6) * F.normalize(output, dim=-1, eps=1e-6)).sum(dim=-1)


def mean_squared_logarithmic_error(output, target):
    """Keras' msle per sample: both sides floored at 1e-7, log(1 + .), squared difference."""
    target = target.to(output.dtype).view_as(output)
    return (torch.log1p(output.clamp(min=1e-7)) - torch.log1p(target.clamp(min=1e-7))).square().mean(dim=-1)


def mean_absolute_percentage_error(output, target):
    """Keras' mape per sample: 100 * |target - output| / max(|target|, 1e-7)."""
    target = target.to(output.dtype).view_as(output)
    return 100.0 * ((target - output) / target.abs().clamp(min=1e-7)).abs().mean(dim=-1)


def poisson(output, target):
    """Keras' Poisson loss per sample: output - target * log(output + 1e-7)."""
    target = target.to(output.dtype).view_as(output)
    return (output - target * torch.log(output + 1e-7)).mean(dim=-1)


def log_cosh(output, target):
    """Keras' log_cosh per sample: log(cosh(x)) as x + softplus(-2x) - log(2)."""
    x = output - target.to(output.dtype).view_as(output)
    return (x + F.softplus(-2.0 * x) - 0.6931471805599453).mean(dim=-1)  # log(2)


def categorical_crossentropy_smoothed(output, target, label_smoothing):
    """Keras' label_smoothing: the one-hot target moves towards the uniform distribution."""
    target = target.to(output.dtype).view_as(output)
    return categorical_crossentropy(output, target * (1 - label_smoothing) + label_smoothing / output.shape[-1])


def binary_crossentropy_smoothed(output, target, label_smoothing):
    """Keras' label_smoothing: the 0/1 targets are squeezed towards 0.5."""
    target = target.to(output.dtype).view_as(output)
    return binary_crossentropy(output, target * (1 - label_smoothing) + 0.5 * label_smoothing)


def keras_sum_reduction(loss_fn):
    """Keras' reduction="sum": the batch loss is the sum of the per-sample losses."""

    def summed(output, target):
        per_sample = loss_fn(output, target)
        return per_sample * per_sample.numel()  # train_step's mean of this is the sum

    return summed


def keras_none_reduction(loss_fn):
    """Keras' reduction="none" under compile(): the gradient is the batch sum's, while the
    logged loss is the batch mean (Keras' loss tracker averages the unreduced values)."""

    def unreduced(output, target):
        per_sample = loss_fn(output, target)
        extra = per_sample * (per_sample.numel() - 1)
        return per_sample + extra - extra.detach()  # value: per_sample; gradient: numel x

    return unreduced


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
    owner = next((c for c in type(fn).__mro__ if "call" in vars(c) or "__call__" in vars(c)), None)
    if call is not fn and owner is not None and "__call__" in vars(owner) and owner.__name__ != "Loss":
        # a Loss subclass overriding __call__: Keras calls the object on the data as given,
        # its value is the loss
        return lambda output, target: fn(target, output)

    def loss(output, target):
        values = call(*keras_same_rank(target.to(output.dtype), output))
        if reduction == "sum":  # train_step's mean of this is Keras' sum
            return values * values.numel()
        if reduction in (None, "none"):  # Keras: the gradient of the sum, the mean logged
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
        y_true, y_pred = keras_same_rank(torch.as_tensor(y_true).to(y_pred.dtype), y_pred)
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
