"""Denoising autoencoder as a composite model built lazily: a ``keras.Model`` subclass that
wraps an encoder and a decoder (Functional models made by builder functions) and trains
with its own ``train_step``.

The wrapper is never given an input shape (no ``keras.Input``, no ``build``): Keras builds
it on its first call. What its ``call()`` first hands its input to, the encoder, fixes the
shape, so the translation reads the wrapper with the encoder's input. The step adds noise
to the inputs and regresses the clean ones; a ``keras.metrics.Mean`` tracks the loss.
Trained on synthetic 16-dimensional signals that lie near a 4-dimensional subspace.
"""

import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

FEATURES = 16
LATENT = 4
EPOCHS = 3


def build_encoder():
    inputs = keras.Input(shape=(FEATURES,))
    x = layers.Dense(12, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(LATENT)(x), name="encoder")


def build_decoder():
    inputs = keras.Input(shape=(LATENT,))
    x = layers.Dense(12, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(FEATURES)(x), name="decoder")


class DenoisingAutoencoder(keras.Model):
    """The encoder and decoder, trained together to undo additive noise."""

    def __init__(self, encoder, decoder, noise=0.1, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.noise = noise
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def call(self, inputs):
        return self.decoder(self.encoder(inputs))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x + 0.1 * ops.ones_like(x), training=True)
            loss = ops.mean(ops.square(y - y_pred))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


def build_model():
    return DenoisingAutoencoder(build_encoder(), build_decoder())


def main():
    rng = np.random.default_rng(0)
    basis = rng.standard_normal((LATENT, FEATURES)).astype("float32")
    x = (rng.standard_normal((256, LATENT)).astype("float32") @ basis) / 4
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9))
    model.fit(x, x, epochs=EPOCHS, batch_size=32)


if __name__ == "__main__":
    main()
