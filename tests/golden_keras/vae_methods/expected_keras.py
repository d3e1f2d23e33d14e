# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A small VAE: its own encode/decode methods (also called by the program), noise from
torch.randn_like, and a loss written in the loop (a custom training step in Keras)."""

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


INPUT_SHAPE = (12,)


def build_model():
    """The TinyVAE model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(12,), name="x")
    enc = layers.Dense(6, name="enc")(x)
    h = layers.Activation("tanh", name="tanh")(enc)
    mu = layers.Dense(2, name="mu")(h)
    logvar = layers.Dense(2, name="logvar")(h)
    noise = NormalNoise((2,), name="noise")(mu)
    scale = layers.Rescaling(0.5, name="scale")(logvar)
    exp = keras.ops.exp(scale)
    multiply = layers.Multiply(name="multiply")([noise, exp])
    z = layers.Add(name="add")([mu, multiply])
    dec = layers.Dense(12, name="dec")(z)
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
    optimizer = keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-08)
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
