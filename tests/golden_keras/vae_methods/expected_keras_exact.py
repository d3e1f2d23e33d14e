# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A small VAE: its own encode/decode methods (also called by the program), noise from
torch.randn_like, and a loss written in the loop (a custom training step in Keras)."""

import math
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class NormalNoise(layers.Layer):
    """Normal noise of shape (batch of its input, *shape), drawn at every call (in
    training and inference alike) from the layer's own seed generator."""

    def __init__(self, shape, mean=0.0, stddev=1.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.noise_shape = tuple(shape)
        self.mean = mean
        self.stddev = stddev
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, inputs):
        return keras.random.normal(
            (keras.ops.shape(inputs)[0], *self.noise_shape),
            mean=self.mean,
            stddev=self.stddev,
            dtype=self.compute_dtype,
            seed=self.seed_generator,
        )


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


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


INPUT_SHAPE = (12,)


def build_model():
    """The TinyVAE model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(12,), name="x")
    enc = layers.Dense(
        6,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(12),
        name="enc",
    )(x)
    h = layers.Activation("tanh", name="tanh")(enc)
    mu = layers.Dense(
        2,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(6),
        name="mu",
    )(h)
    logvar = layers.Dense(
        2,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(6),
        name="logvar",
    )(h)
    noise = NormalNoise((2,), name="noise")(mu)
    scale = layers.Rescaling(0.5, name="scale")(logvar)
    exp = keras.ops.exp(scale)
    multiply = layers.Multiply(name="multiply")([noise, exp])
    z = layers.Add(name="add")([mu, multiply])
    dec = layers.Dense(
        12,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(2),
        name="dec",
    )(z)
    return keras.Model(inputs=x, outputs=[dec, mu, logvar], name="TinyVAE")


def tiny_vae_encode(model):
    """``TinyVAE.encode`` as a Keras model over the layers of ``model`` (its weights)."""
    x = keras.Input(shape=(12,), name="x")
    enc = model.get_layer("enc")(x)
    h = layers.Activation("tanh", name="tanh")(enc)
    mu = model.get_layer("mu")(h)
    logvar = model.get_layer("logvar")(h)
    return keras.Model(inputs=x, outputs=[mu, logvar], name="encode")


def tiny_vae_decode(model):
    """``TinyVAE.decode`` as a Keras model over the layers of ``model`` (its weights)."""
    z = keras.Input(shape=(2,), name="z")
    dec = model.get_layer("dec")(z)
    return keras.Model(inputs=z, outputs=dec, name="decode")


def main():
    keras.utils.set_random_seed(0)
    data = np.random.random_sample((32, 12)).astype("float32")
    model = build_model()
    optimizer = TorchAdam(learning_rate=0.01, epsilon=1e-08)
    for step in range(10):
        # transpiler: a custom training step (not the usual loop for fit: the epoch loop does
        # not hold exactly one loop over batches with backward()): backward() is the tape's
        # gradient, step() applies it
        with tf.GradientTape() as tape:
            recon, mu, logvar = model(data, training=True)
            rec = keras.ops.sum(keras.ops.square(recon - data))
            kld = -0.5 * keras.ops.sum(
                (1 + logvar - keras.ops.power(mu, 2) - keras.ops.exp(logvar))
            )
            loss = rec + kld
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    mu, _ = tiny_vae_encode(model).predict(data[:4], verbose=0)
    print(
        "reconstruction",
        ((tiny_vae_decode(model).predict(mu, verbose=0) - data[:4]) ** 2).mean().item(),
    )


if __name__ == "__main__":
    main()
