"""The runtime helpers (transpiler/runtime/) run as code against what they reproduce:
Keras' losses and metrics for runtime/torch, torch.optim's updates and torch.utils.data's
splits for runtime/keras."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # (before TensorFlow)

import keras  # noqa: E402

from transpiler.runtime.keras import data as keras_data  # noqa: E402
from transpiler.runtime.keras import optimizers as keras_optimizers  # noqa: E402
from transpiler.runtime.torch import callbacks, losses, metrics, training  # noqa: E402

RNG = np.random.RandomState(0)
PROBS = RNG.dirichlet(np.ones(5), size=8).astype("float32")
LOGITS = RNG.randn(8, 5).astype("float32")
ONE_HOT = np.eye(5, dtype="float32")[RNG.randint(0, 5, size=8)]
VALUES = RNG.rand(8, 3).astype("float32") + 0.1
TARGETS = RNG.rand(8, 3).astype("float32") + 0.1


def _per_sample(keras_fn, y_true, y_pred, **kw):
    return np.asarray(keras_fn(y_true, y_pred, **kw))


@pytest.mark.parametrize("name", ["mean_squared_error", "mean_absolute_error", "huber", "kl_divergence",
                                  "cosine_similarity", "mean_squared_logarithmic_error",
                                  "mean_absolute_percentage_error", "poisson", "log_cosh"])
def test_value_losses_match_keras(name):
    ours = getattr(losses, name)(torch.from_numpy(VALUES), torch.from_numpy(TARGETS)).numpy()
    theirs = _per_sample(getattr(keras.losses, name), TARGETS, VALUES)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-6)


def test_hinge_reads_zero_one_targets_as_keras():
    target = (TARGETS > 0.5).astype("float32")
    ours = losses.hinge(torch.from_numpy(VALUES - 0.5), torch.from_numpy(target)).numpy()
    np.testing.assert_allclose(ours, _per_sample(keras.losses.hinge, target, VALUES - 0.5), rtol=1e-6)


@pytest.mark.parametrize("kind", ["categorical_crossentropy", "sparse_categorical_crossentropy"])
def test_cross_entropies_match_keras_from_logits_and_probabilities(kind):
    target = ONE_HOT if kind.startswith("categorical") else ONE_HOT.argmax(-1)
    fn = getattr(keras.losses, kind)
    ours = getattr(losses, kind)(torch.from_numpy(LOGITS), torch.from_numpy(target)).numpy()
    np.testing.assert_allclose(ours, _per_sample(fn, target, LOGITS, from_logits=True), rtol=1e-5)
    ours = getattr(losses, f"{kind}_from_probs")(torch.from_numpy(PROBS), torch.from_numpy(target)).numpy()
    np.testing.assert_allclose(ours, _per_sample(fn, target, PROBS), rtol=1e-5)


def test_binary_crossentropy_and_smoothing_match_keras():
    target = (PROBS > 0.2).astype("float32")
    ours = losses.binary_crossentropy(torch.from_numpy(LOGITS), torch.from_numpy(target)).numpy()
    theirs = _per_sample(keras.losses.binary_crossentropy, target, LOGITS, from_logits=True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    ours = losses.binary_crossentropy_smoothed(torch.from_numpy(LOGITS), torch.from_numpy(target), 0.2).numpy()
    theirs = _per_sample(keras.losses.binary_crossentropy, target, LOGITS, from_logits=True, label_smoothing=0.2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    ours = losses.categorical_crossentropy_smoothed(torch.from_numpy(LOGITS), torch.from_numpy(ONE_HOT), 0.1)
    theirs = _per_sample(keras.losses.categorical_crossentropy, ONE_HOT, LOGITS, from_logits=True,
                         label_smoothing=0.1)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5)


def test_reductions_scale_as_keras():
    per_sample = losses.mean_squared_error
    out, target = torch.from_numpy(VALUES), torch.from_numpy(TARGETS)
    summed = losses.keras_sum_reduction(per_sample)(out, target).mean().item()
    theirs = float(keras.losses.MeanSquaredError(reduction="sum")(TARGETS, VALUES))
    assert summed == pytest.approx(theirs, rel=1e-5)
    out = out.clone().requires_grad_()
    unreduced = losses.keras_none_reduction(per_sample)(out, target)
    np.testing.assert_allclose(unreduced.detach().numpy(), per_sample(out, target).detach().numpy(), rtol=1e-6)
    unreduced.mean().backward()  # the gradient of the sum
    expected = 2 * (VALUES - TARGETS) / VALUES.shape[-1]
    np.testing.assert_allclose(out.grad.numpy(), expected, rtol=1e-5)


def test_loss_class_reduces_as_keras():
    class Squared(losses.Loss):
        def call(self, y_true, y_pred):
            return ((y_true - y_pred) ** 2).mean(dim=-1)

    ours = Squared()(TARGETS, torch.from_numpy(VALUES)).item()
    assert ours == pytest.approx(float(keras.losses.MeanSquaredError()(TARGETS, VALUES)), rel=1e-5)
    fn = losses.keras_loss(lambda y_true, y_pred: ((y_true - y_pred) ** 2).mean(dim=-1))  # Keras' order
    per_sample = fn(torch.from_numpy(VALUES), torch.from_numpy(TARGETS[:, :1]))  # ranks matched
    assert per_sample.shape == (8,)


@pytest.mark.parametrize("name", ["sparse_categorical_accuracy", "categorical_accuracy"])
def test_accuracies_match_keras(name):
    target = ONE_HOT if name.startswith("categorical") else ONE_HOT.argmax(-1)
    ours = getattr(metrics, name)(torch.from_numpy(LOGITS), torch.from_numpy(target)).numpy()
    np.testing.assert_array_equal(ours, np.asarray(getattr(keras.metrics, name)(target, LOGITS)))


def test_binary_accuracy_on_logits_is_the_probability_threshold():
    target = (PROBS > 0.2).astype("float32")
    probs = 1 / (1 + np.exp(-LOGITS))
    theirs = np.asarray(keras.metrics.binary_accuracy(target, probs)).reshape(8, -1).mean(-1)
    np.testing.assert_array_equal(metrics.binary_accuracy(torch.from_numpy(probs), torch.from_numpy(target)), theirs)
    np.testing.assert_array_equal(
        metrics.binary_accuracy_from_logits(torch.from_numpy(LOGITS), torch.from_numpy(target)), theirs)


def test_mean_and_wrapper_match_keras():
    ours, theirs = metrics.Mean(), keras.metrics.Mean()
    for values in (VALUES, TARGETS):
        ours.update_state(torch.from_numpy(values))
        theirs.update_state(values)
    assert float(ours.result()) == pytest.approx(float(theirs.result()), rel=1e-6)
    wrapped = metrics.MeanMetricWrapper(metrics.categorical_accuracy, name="acc")
    wrapped.update_state(torch.from_numpy(ONE_HOT), torch.from_numpy(LOGITS))
    keras_acc = keras.metrics.CategoricalAccuracy()
    keras_acc.update_state(ONE_HOT, LOGITS)
    assert float(wrapped.result()) == pytest.approx(float(keras_acc.result()))
    wrapped.reset_state()
    assert float(wrapped.result()) == 0.0


def test_lambda_callback_hooks_replace_the_defaults():
    seen = []
    cb = callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append((epoch, logs)))
    cb.on_epoch_end(3, {"loss": 1.0})
    cb.on_train_batch_end(0, logs={})  # the base class's no-op chain
    assert seen == [(3, {"loss": 1.0})]


def test_epoch_batches_span_epochs_like_keras():
    loader = list(range(5))
    batches = training.EpochBatches(loader, steps_per_epoch=3)
    epochs = [[b for _, b in batches.epoch()] for _ in range(3)]
    assert epochs == [[0, 1, 2], [3, 4], [0, 1, 2]]  # an epoch ends where the pass ends
    repeated = training.EpochBatches(loader, steps_per_epoch=3, repeat=True)
    assert [[b for _, b in repeated.epoch()] for _ in range(2)] == [[0, 1, 2], [3, 4, 0]]
    assert list(training.Repeated([1, 2], 2)) == [1, 2, 1, 2] and len(training.Repeated([1, 2], 3)) == 6


def test_random_split_sizes_follow_torch():
    dataset = keras_data.ArrayDataset(np.arange(10), np.arange(10) * 2)
    parts = keras_data.random_split(dataset, [0.34, 0.33, 0.33])
    expected = [len(p) for p in torch.utils.data.random_split(range(10), [0.34, 0.33, 0.33])]
    assert [len(p) for p in parts] == expected
    items = sorted(int(p[i][0]) for p in parts for i in range(len(p)))
    assert items == list(range(10))
    loader = keras_data.ArrayLoader(dataset, batch_size=4)
    assert [len(x) for x, _y in loader] == [4, 4, 2] and len(loader) == 3


def test_dataset_loaders_batch_items_as_torch_dataloader():
    """DatasetLoader and SampledLoader stack a map-style dataset's items as torch's default
    collate does, in the dataset's order or the sampler's."""
    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.float32(i), np.array([i * i, -i])

    def as_numpy(batches):
        return [tuple(np.asarray(t) for t in b) for b in batches]

    ours = as_numpy(keras_data.DatasetLoader(Squares(), batch_size=2))
    theirs = as_numpy(torch.utils.data.DataLoader(Squares(), batch_size=2))
    sampled = as_numpy(keras_data.SampledLoader(Squares(), batch_size=2, drop_last=True, sampler=[4, 2, 0, 1, 3]))
    theirs_sampled = as_numpy(torch.utils.data.DataLoader(Squares(), batch_size=2, drop_last=True,
                                                          sampler=[4, 2, 0, 1, 3]))
    for got, want in ((ours, theirs), (sampled, theirs_sampled)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            for a, b in zip(g, w):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, torch_cls, kwargs, keras_kwargs", [
    ("TorchSGD", torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01),
     dict(learning_rate=0.1, momentum=0.9, l2=0.01)),
    ("TorchRMSprop", torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01),
     dict(learning_rate=0.01, momentum=0.5, centered=True, l2=0.01)),
    ("TorchAdagrad", torch.optim.Adagrad, dict(lr=0.1, weight_decay=0.01), dict(learning_rate=0.1, l2=0.01)),
    ("TorchAdam", torch.optim.Adam, dict(lr=0.01, eps=1e-3, weight_decay=0.01),
     dict(learning_rate=0.01, epsilon=1e-3, l2=0.01)),
    ("TorchSGD", torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3), dict(learning_rate=0.1, momentum=0.9,
                                                                                  dampening=0.3)),
    ("TorchAdagrad", torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2),
     dict(learning_rate=0.1, lr_decay=0.1, initial_accumulator_value=0.2)),
    ("TorchAdadelta", torch.optim.Adadelta, dict(lr=1.0, rho=0.8, weight_decay=0.01),
     dict(learning_rate=1.0, rho=0.8, epsilon=1e-6, l2=0.01)),
    ("TorchAdamax", torch.optim.Adamax, dict(lr=0.01, weight_decay=0.01), dict(learning_rate=0.01, l2=0.01)),
    ("TorchNadam", torch.optim.NAdam, dict(lr=0.01, momentum_decay=0.01, weight_decay=0.01),
     dict(learning_rate=0.01, momentum_decay=0.01, l2=0.01)),
    ("TorchRMSprop", torch.optim.RMSprop, dict(), dict()),  # (torch's defaults are the class's)
    ("TorchAdamax", torch.optim.Adamax, dict(), dict()),
])
def test_keras_optimizers_update_as_torch(name, torch_cls, kwargs, keras_kwargs):
    """Five steps on the gradient of sum(w ** 3): the Keras optimizer's weights equal torch's."""
    start = np.array([0.5, -1.0, 2.0], dtype="float32")
    w_torch = torch.tensor(start, requires_grad=True)
    opt = torch_cls([w_torch], **kwargs)
    w_keras = keras.Variable(start)
    ours = getattr(keras_optimizers, name)(**keras_kwargs)
    for _ in range(5):
        opt.zero_grad()
        (w_torch ** 3).sum().backward()
        opt.step()
        grad = 3 * keras.ops.square(w_keras)
        ours.apply_gradients([(grad, w_keras)])
    np.testing.assert_allclose(np.asarray(w_keras), w_torch.detach().numpy(), rtol=2e-5, atol=1e-6)
    # saved and restored with its own hyperparameters
    again = type(ours).from_config(ours.get_config())
    assert {k: getattr(again, k) for k in type(ours).HYPER} == {k: getattr(ours, k) for k in type(ours).HYPER}
    assert float(again.learning_rate) == float(ours.learning_rate)
