"""Variational autoencoder: a Sampling layer and a custom train_step.

Keras' VAE example in dense form, written with Layer subclasses. The ``Encoder`` gives
``z_mean`` and ``z_log_var``; its ``Sampling`` layer draws ``z`` with the reparameterisation
trick while training and passes the mean on at inference; the ``Decoder`` maps ``z`` back to
pixels. The ``VAE`` model overrides ``train_step``: the reconstruction loss (binary cross-entropy over
the pixels) plus the KL divergence, tracked by ``keras.metrics.Mean`` objects.
Trained on synthetic 8x8 "digits" (blurred strokes) with values in [0, 1].
"""

import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

PIXELS = 64
LATENT_DIM = 2
EPOCHS = 5


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs, training=None):
        z_mean, z_log_var = inputs
        if not training:
            return z_mean  # deterministic reconstructions at inference
        epsilon = keras.random.normal(ops.shape(z_mean), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


class Encoder(layers.Layer):
    """Maps a digit to the triplet (z_mean, z_log_var, z)."""

    def __init__(self, latent_dim=LATENT_DIM, intermediate_dim=32, name="encoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_mean = layers.Dense(latent_dim)
        self.dense_log_var = layers.Dense(latent_dim)
        self.sampling = Sampling()

    def call(self, inputs, training=None):
        x = self.dense_proj(inputs)
        z_mean = self.dense_mean(x)
        z_log_var = self.dense_log_var(x)
        z = self.sampling((z_mean, z_log_var), training=training)
        return z_mean, z_log_var, z


class Decoder(layers.Layer):
    """Maps z back to the pixels of a digit."""

    def __init__(self, original_dim, intermediate_dim=32, name="decoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_output = layers.Dense(original_dim, activation="sigmoid")

    def call(self, inputs):
        x = self.dense_proj(inputs)
        return self.dense_output(x)


class VAE(keras.Model):
    """Encoder + decoder, trained on the reconstruction loss plus the KL divergence."""

    def __init__(self, original_dim=PIXELS, intermediate_dim=32, latent_dim=LATENT_DIM, **kwargs):
        super().__init__(**kwargs)
        self.encoder = Encoder(latent_dim=latent_dim, intermediate_dim=intermediate_dim)
        self.decoder = Decoder(original_dim, intermediate_dim=intermediate_dim)
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

    def call(self, inputs, training=None):
        z_mean, z_log_var, z = self.encoder(inputs, training=training)
        return self.decoder(z)

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data, training=True)
            reconstruction = self.decoder(z)
            # binary cross-entropy summed over the pixels, averaged over the batch
            reconstruction_loss = ops.mean(keras.losses.binary_crossentropy(data, reconstruction)) * PIXELS
            kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
            kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {
            "loss": self.total_loss_tracker.result(),
            "reconstruction_loss": self.reconstruction_loss_tracker.result(),
            "kl_loss": self.kl_loss_tracker.result(),
        }


def build_model():
    vae = VAE()
    vae(keras.Input(shape=(PIXELS,)))  # a first call on a symbolic input builds the weights
    return vae


def make_digits(n=512, seed=0):
    """Blurred random strokes on an 8x8 grid, flattened, in [0, 1]."""
    rng = np.random.default_rng(seed)
    images = np.zeros((n, 8, 8), dtype="float32")
    rows = rng.integers(0, 8, size=n)
    cols = rng.integers(0, 8, size=n)
    images[np.arange(n), rows, :] = 1.0
    images[np.arange(n), :, cols] = 0.5
    images = 0.8 * images + 0.1 * rng.random((n, 8, 8)).astype("float32")
    return images.reshape(n, PIXELS).clip(0.0, 1.0)


def main():
    x = make_digits()
    vae = build_model()
    vae.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3))
    vae.fit(x, epochs=EPOCHS, batch_size=64, verbose=2)
    reconstructions = vae.predict(x[:16], verbose=0)
    print("reconstruction mse:", round(float(np.mean((reconstructions - x[:16]) ** 2)), 4))


if __name__ == "__main__":
    main()
