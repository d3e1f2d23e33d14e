"""TensorFlow math in the call() of custom layers: squeeze-and-excitation and sampling."""

import keras
import tensorflow as tf
from keras import layers


class SqueezeExcite(layers.Layer):
    def __init__(self, channels, ratio=4, **kwargs):
        super().__init__(**kwargs)
        self.reduce = layers.Dense(channels // ratio, activation="relu")
        self.expand = layers.Dense(channels, activation="sigmoid")

    def call(self, x):
        s = tf.reduce_mean(x, axis=[1, 2], keepdims=True)  # (N, 1, 1, C)
        return x * self.expand(self.reduce(s))


class Sampling(layers.Layer):
    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = tf.shape(z_mean)[0]
        dim = tf.shape(z_mean)[1]
        epsilon = tf.random.normal(shape=(batch, dim))
        return z_mean + tf.exp(0.5 * z_log_var) * epsilon


def build_encoder(latent=2):
    inputs = keras.Input(shape=(16, 16, 1))
    x = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inputs)
    x = SqueezeExcite(8)(x)
    x = layers.Flatten()(x)
    z_mean = layers.Dense(latent)(x)
    z_log_var = layers.Dense(latent)(x)
    z = Sampling()([z_mean, z_log_var])
    return keras.Model(inputs, [z_mean, z_log_var, z])
