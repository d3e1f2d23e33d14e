# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A custom step that reads the epoch (the noise shrinks as training goes on): the loop
stays a loop, its step under a GradientTape."""

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


class ArrayDataset:
    """torch's TensorDataset over numpy arrays: item i is the tuple of every array's row i."""

    def __init__(self, *arrays):
        self.arrays = arrays

    def __len__(self):
        return len(self.arrays[0])

    def __getitem__(self, index):
        return tuple(array[index] for array in self.arrays)


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


def accumulate_gradients(tape, loss, model, gradients=None):
    """loss.backward() for model's weights: the gradient of loss adds to the gradients
    gathered since the model's zero_grad() (None), as torch accumulates them in .grad.
    """
    with tape.stop_recording():
        new = tape.gradient(
            loss,
            model.trainable_variables,
            unconnected_gradients=tf.UnconnectedGradients.ZERO,
        )
    if gradients is None:
        return new
    return [old + grad for old, grad in zip(gradients, new)]


def apply_gradients(tape, optimizer, model, gradients):
    """optimizer.step(): the gathered gradients update the model's weights."""
    with tape.stop_recording():
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))


INPUT_SHAPE = (4,)
DISCRIMINATOR_INPUT_SHAPE = (6,)


def build_model():
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(4,), name="x"),
            layers.Dense(
                8,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(4),
                name="linear_0",
            ),
            layers.ReLU(name="relu_1"),
            layers.Dense(
                6,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(8),
                name="linear_2",
            ),
        ],
        name="build_model",
    )
    return model


def build_discriminator():
    """The build_discriminator model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(6,), name="x"),
            layers.Dense(
                8,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(6),
                name="linear_0",
            ),
            layers.LeakyReLU(negative_slope=0.2, name="leakyrelu_1"),
            layers.Dense(
                1,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(8),
                name="linear_2",
            ),
        ],
        name="build_discriminator",
    )
    return model


def main():
    keras.utils.set_random_seed(0)
    data = np.random.RandomState(0).randn(64, 6).astype("float32")
    loader = ArrayLoader(ArrayDataset(data), batch_size=16, shuffle=True)
    gen, disc = build_model(), build_discriminator()
    criterion = keras.losses.BinaryCrossentropy(from_logits=True)
    opt_g = TorchAdam(learning_rate=0.0002, beta_1=0.5, beta_2=0.999, epsilon=1e-08)
    opt_d = TorchAdam(learning_rate=0.0002, beta_1=0.5, beta_2=0.999, epsilon=1e-08)
    for epoch in range(2):
        for (real,) in loader:
            # transpiler: a custom training step: the body runs under a GradientTape; backward()
            # takes the gradients, step() applies them (not the usual loop for fit: disc and gen are
            # trained in one step, each by its own optimizer)
            with tf.GradientTape(persistent=True) as tape:
                ones = np.ones((real.shape[0], 1), dtype="float32")
                zeros = np.zeros((real.shape[0], 1), dtype="float32")
                fake = gen(
                    np.random.standard_normal((real.shape[0], 4)).astype("float32")
                    / (epoch + 1),
                    training=True,
                )
                disc_grads = None  # opt_d.zero_grad()
                loss_d = criterion(ones, disc(real, training=True)) + criterion(
                    zeros, disc(keras.ops.stop_gradient(fake), training=True)
                )
                # loss_d.backward()
                disc_grads = accumulate_gradients(tape, loss_d, disc, disc_grads)
                apply_gradients(tape, opt_d, disc, disc_grads)  # opt_d.step()
                gen_grads = None  # opt_g.zero_grad()
                loss_g = criterion(ones, disc(fake, training=True))
                # loss_g.backward()
                gen_grads = accumulate_gradients(tape, loss_g, gen, gen_grads)
                apply_gradients(tape, opt_g, gen, gen_grads)  # opt_g.step()
        print(f"epoch {epoch}: d {float(loss_d):.3f} g {float(loss_g):.3f}")


if __name__ == "__main__":
    main()
