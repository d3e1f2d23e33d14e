import math

import keras
import tensorflow as tf
from keras import layers


class SinusoidalEmbedding(layers.Layer):
    """Diffusion models' time step embedding: sines and cosines of the step at several frequencies."""

    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        half = dim // 2
        scale = math.log(10000.0) / (half - 1)
        self.freqs = tf.exp(tf.range(half, dtype=tf.float32) * -scale)

    def call(self, steps):
        angles = tf.cast(steps, dtype=tf.float32)[:, None] * self.freqs[None, :]
        return tf.concat([tf.math.sin(angles), keras.ops.cos(angles)], axis=-1)


def build_model():
    steps = keras.Input(shape=(), dtype="int64")
    x = SinusoidalEmbedding(16)(steps)
    x = layers.Dense(8, activation="swish")(x)
    return keras.Model(steps, x)
