# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""Regression on tabular data with a custom Dataset, device handling and tqdm-free loops."""

import argparse

import numpy as np
import math
import tensorflow as tf
import keras
from keras import layers


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


class Device:
    """torch.device(...) of the PyTorch program, for its own checks and prints
    (``device.type == "cuda"``, ``print(f"Using {device}")``): Keras places the computation on
    a device itself, nothing is moved to it."""

    def __init__(self, type, index=None):
        if isinstance(type, Device):
            type, index = type.type, type.index
        type = str(type)
        if ":" in type:
            type, index = type.split(":")[0], int(type.split(":")[1])
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class Subset:
    """torch's Subset: the items of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, index):
        return self.dataset[int(self.indices[index])]


def random_split(dataset, lengths):
    """torch's random_split: the dataset's items in a random order, cut into parts of
    ``lengths`` (fractions of the whole when they sum to 1: the remainder goes one item
    each to the first parts)."""
    n = len(dataset)
    if all(isinstance(k, float) for k in lengths) and abs(sum(lengths) - 1) < 1e-6:
        sizes = [int(k * n) for k in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    order = np.random.permutation(n)
    parts, start = [], 0
    for k in lengths:
        parts.append(Subset(dataset, order[start : start + k]))
        start += k
    return parts


class ArrayLoader:
    """torch's DataLoader over an ArrayDataset: batches of numpy arrays, in a new random
    order on every pass when shuffle is set."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self.dataset[order[start : start + self.batch_size]]


class DatasetLoader(ArrayLoader):
    """torch's DataLoader over a map-style dataset (__len__ and __getitem__): each batch
    is its items stacked into numpy arrays (torch's default collate), in a new random
    order on every pass when shuffle is set."""

    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        yield from self.batches(order)

    def batches(self, order):
        """The items at ``order``, batch by batch, stacked."""
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            items = [
                self.dataset[int(i)] for i in order[start : start + self.batch_size]
            ]
            if isinstance(items[0], tuple):
                yield tuple(
                    np.stack([np.asarray(a) for a in column]) for column in zip(*items)
                )
            else:
                yield np.stack([np.asarray(a) for a in items])


class TorchOptimizer:
    """What the optimizers computing as torch's share (the first of their bases): their own
    hyperparameters (``HYPER``: name -> default, set as attributes and saved by get_config),
    torch's gradient (dense, plus the L2 weight decay torch adds to it) and one slot
    variable per parameter for each entry of ``SLOTS`` (attribute -> variable name)."""

    HYPER: dict = {}
    SLOTS: dict = {}
    LEARNING_RATE = None  # torch's default, for a class on keras.optimizers.Optimizer

    def __init__(self, **kwargs):
        own = {name: kwargs.pop(name, default) for name, default in self.HYPER.items()}
        if self.LEARNING_RATE is not None:
            kwargs.setdefault("learning_rate", self.LEARNING_RATE)
        super().__init__(**kwargs)
        for name, value in own.items():
            setattr(self, name, value)

    def get_config(self):
        return {
            **super().get_config(),
            **{name: getattr(self, name) for name in self.HYPER},
        }

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        for attribute, name in self.SLOTS.items():
            setattr(
                self,
                attribute,
                [self.add_variable_from_reference(v, name) for v in variables],
            )

    def slots(self, variable):
        """The slot variables of parameter ``variable``, in the order of ``SLOTS``."""
        index = self._get_variable_index(variable)
        return [getattr(self, attribute)[index] for attribute in self.SLOTS]

    def torch_gradient(self, gradient, variable, dense=True):
        """The gradient torch's step reads: dense (a sparse one, an embedding's, made dense, or
        its repeated rows would be squared apart in a second moment), plus the L2 weight decay.
        """
        gradient = keras.ops.cast(gradient, variable.dtype)
        if dense:
            # (zeros of the variable's shape, not zeros_like(variable): jax refuses a variable there)
            gradient = keras.ops.add(
                keras.ops.zeros(tuple(variable.shape), variable.dtype), gradient
            )
        if self.l2:
            gradient = keras.ops.add(gradient, keras.ops.multiply(self.l2, variable))
        return gradient


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdam(TorchOptimizer, keras.optimizers.Adam):
    """Adam as torch.optim.Adam computes it: epsilon is added to sqrt(v) after the bias
    correction (Keras adds it before, which in torch's terms scales epsilon by
    1 / sqrt(1 - beta_2 ** step)), and an l2 weight decay is added to the gradient."""

    HYPER = {"l2": 0.0}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.torch_epsilon = self.epsilon

    def update_step(self, gradient, variable, learning_rate):
        gradient = self.torch_gradient(gradient, variable)
        step = keras.ops.cast(self.iterations + 1, variable.dtype)
        beta_2 = keras.ops.cast(self.beta_2, variable.dtype)
        # Adam's update below reads self.epsilon: torch's epsilon in Keras' formula
        self.epsilon = self.torch_epsilon * keras.ops.sqrt(
            1 - keras.ops.power(beta_2, step)
        )
        try:
            super().update_step(gradient, variable, learning_rate)
        finally:
            self.epsilon = self.torch_epsilon


INPUT_SHAPE = (13,)


class TabularDataset:
    def __init__(self, n=600, seed=0):
        rng = np.random.RandomState(seed)
        self.x = rng.randn(n, 13).astype(np.float32)
        w = rng.randn(13, 1).astype(np.float32)
        self.y = (self.x @ w + 0.1 * rng.randn(n, 1)).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


def build_model():
    """The MLP model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(13,), name="x"),
            layers.Dense(
                64,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(13),
                name="net_0",
            ),
            layers.ReLU(name="net_1"),
            layers.Dropout(0.1, name="net_2"),
            layers.Dense(
                32,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(64),
                name="net_3",
            ),
            layers.ReLU(name="net_4"),
            layers.Dropout(0.1, name="net_5"),
            layers.Dense(
                1,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(32),
                name="net_6",
            ),
        ],
        name="MLP",
    )
    return model


def evaluate(model, loader, device):
    total, n = 0.0, 0
    for xb, yb in loader:
        total += ((model.predict(xb, verbose=0) - yb) ** 2).sum().item()
        n += xb.shape[0]
    return total / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    # transpiler: torch.cuda.is_available() is False here: Keras places the computation on a
    # device itself
    device = Device("cuda" if False else "cpu")
    keras.utils.set_random_seed(0)
    data = TabularDataset()
    train_set, val_set = random_split(data, [500, 100])
    train_loader = DatasetLoader(train_set, batch_size=32, shuffle=True)
    val_loader = DatasetLoader(val_set, batch_size=64)
    model = build_model()
    optimizer = TorchAdam(learning_rate=args.lr, epsilon=1e-08, l2=0.0001)
    criterion = keras.losses.MeanSquaredError()
    for epoch in range(args.epochs):
        running = 0.0
        for xb, yb in train_loader:
            # transpiler: a custom training step (not the usual loop for fit: the batches come from
            # 'train_loader', not a DataLoader over a TensorDataset): backward() is the tape's
            # gradient, step() applies it
            with tf.GradientTape() as tape:
                loss = criterion(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            running += float(loss) * xb.shape[0]
        print(
            f"epoch {epoch + 1}: train {running / len(train_set):.4f} val {evaluate(model, val_loader, device):.4f}"
        )
    model.save_weights("mlp.weights.h5")


if __name__ == "__main__":
    main()
