"""Keras' metrics for generated PyTorch programs (Keras -> PyTorch).

Per-sample metric values fit() and evaluate() average (``*_from_logits``: on the
pre-activation outputs), the stateful metrics updated batch by batch (AUC, Precision,
Recall, the confusion-matrix counts, RootMeanSquaredError), and Keras' metric objects Mean and MeanMetricWrapper.
"""

import torch


def sparse_categorical_accuracy(output, target):
    """1.0 where the arg-max class equals the integer target."""
    return (output.argmax(dim=-1) == target.view(output.shape[:-1]).long()).float()


def categorical_accuracy(output, target):
    """1.0 where the arg-max class equals the one-hot target's."""
    return (output.argmax(dim=-1) == target.view_as(output).argmax(dim=-1)).float()


def binary_accuracy_from_logits(logits, target):
    """Keras' binary_accuracy (threshold 0.5 on the sigmoid, i.e. 0 on the logits)."""
    return ((logits > 0).float() == target.to(logits.dtype).view_as(logits)).float().mean(dim=-1)


def binary_accuracy(probs, target):
    """Keras' binary_accuracy (threshold 0.5)."""
    return ((probs > 0.5).float() == target.to(probs.dtype).view_as(probs)).float().mean(dim=-1)


def top_k_categorical_accuracy(output, target, k=5):
    """1.0 where fewer than k classes score above the one-hot target's class (TF's in_top_k:
    classes tied with it count as in the top k)."""
    label = target.view_as(output).argmax(dim=-1, keepdim=True)
    return ((output > output.gather(-1, label)).sum(dim=-1) < k).float()


def sparse_top_k_categorical_accuracy(output, target, k=5):
    """1.0 where fewer than k classes score above the integer target's class (TF's in_top_k:
    classes tied with it count as in the top k)."""
    label = target.view(output.shape[:-1]).long().unsqueeze(-1)
    return ((output > output.gather(-1, label)).sum(dim=-1) < k).float()


def accuracy(output, target):
    """Keras' Accuracy: how often the output equals the target exactly."""
    return (output == target.view_as(output)).float().mean(dim=-1)


def probabilities(output, from_logits):
    """The model's output as the probabilities a stateful metric reads: ``from_logits`` True
    (a sigmoid moved into the loss) or "softmax" (a softmax moved into the loss, over the
    last axis) gives them back, as Keras computes the metric on the activated output."""
    if from_logits == "softmax":
        return torch.softmax(output, dim=-1)
    return torch.sigmoid(output) if from_logits else output


class AUC:
    """keras.metrics.AUC (ROC curve, 200 thresholds, interpolation): true/false positives
    and negatives counted at each threshold over the epoch, the area by the trapezoid rule
    between consecutive thresholds."""

    def __init__(self, num_thresholds=200, from_logits=False):
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = torch.tensor([-1e-7] + inner + [1.0 + 1e-7], dtype=torch.float64)
        self.from_logits = from_logits
        self.reset_state()

    def reset_state(self):
        self.tp, self.fp, self.tn, self.fn = (torch.zeros(len(self.thresholds), dtype=torch.float64)
                                              for _ in range(4))

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


def thresholded(output, target, from_logits):
    """(predicted positive, labelled positive) for each value of a batch, at threshold 0.5
    (``prediction > 0.5`` is positive), every value of the output counted (Keras flattens it)."""
    pred = probabilities(output, from_logits).detach().reshape(-1) > 0.5
    return pred, target.reshape(-1).bool()


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


class Precision(_PositiveCounts):
    """keras.metrics.Precision (threshold 0.5): true positives / predicted positives over the epoch."""

    def result(self):
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0


class Recall(_PositiveCounts):
    """keras.metrics.Recall (threshold 0.5): true positives / actual positives over the epoch."""

    def result(self):
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


class _ConfusionCount:
    """One cell of the confusion matrix at threshold 0.5 (``prediction > 0.5`` is positive),
    counted over the epoch, every value of the output counted (Keras flattens it): the base of
    keras.metrics.TruePositives / FalsePositives / TrueNegatives / FalseNegatives, which say
    whether they count positive predictions (``PREDICTED``) of positive labels (``LABELLED``)."""

    PREDICTED = True
    LABELLED = True

    def __init__(self, from_logits=False):
        self.from_logits = from_logits
        self.reset_state()

    def reset_state(self):
        self.count = 0.0

    def update_state(self, output, target):
        pred, label = thresholded(output, target, self.from_logits)
        self.count += ((pred == self.PREDICTED) & (label == self.LABELLED)).sum().item()

    def result(self):
        return self.count


class TruePositives(_ConfusionCount):
    """keras.metrics.TruePositives: positive predictions of positive labels."""


class FalsePositives(_ConfusionCount):
    """keras.metrics.FalsePositives: positive predictions of negative labels."""

    LABELLED = False


class TrueNegatives(_ConfusionCount):
    """keras.metrics.TrueNegatives: negative predictions of negative labels."""

    PREDICTED = False
    LABELLED = False


class FalseNegatives(_ConfusionCount):
    """keras.metrics.FalseNegatives: negative predictions of positive labels."""

    PREDICTED = False


class RootMeanSquaredError:
    """keras.metrics.RootMeanSquaredError: the square root of the mean squared error over the
    epoch (each sample's mean over its values, then the mean over the samples)."""

    def __init__(self, from_logits=False):
        self.from_logits = from_logits
        self.reset_state()

    def reset_state(self):
        self.total, self.count = 0.0, 0

    def update_state(self, output, target):
        output = probabilities(output, self.from_logits).detach()
        error = (output - target.to(output.dtype).view_as(output)) ** 2
        self.total += error.reshape(len(error), -1).mean(dim=1).sum().item()
        self.count += len(error)

    def result(self):
        return (self.total / self.count) ** 0.5 if self.count else 0.0


class Mean:
    """Keras' metrics.Mean: the running mean of the values given to update_state."""

    def __init__(self, name="mean", dtype=None):
        self.name = name
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values = torch.as_tensor(values).detach().float()
        if sample_weight is None:
            sample_weight = torch.ones_like(values)
        sample_weight = torch.broadcast_to(torch.as_tensor(sample_weight).float(), values.shape)
        self.total += float((values * sample_weight).sum())
        self.count += float(sample_weight.sum())

    def result(self):
        return torch.tensor(self.total / self.count if self.count else 0.0)

    def reset_state(self):
        self.total, self.count = 0.0, 0.0


class MeanMetricWrapper(Mean):
    """Keras' metric object of a per-sample function: update_state(y_true, y_pred) adds the
    function's values, result() is their running mean, reset_state() starts again."""

    def __init__(self, fn, name="mean_metric_wrapper", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.fn = fn

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self.fn(y_pred, y_true), sample_weight)
