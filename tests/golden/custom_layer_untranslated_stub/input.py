"""A custom layer whose call() uses a TensorFlow function with no torch translation: one
stub module stands in for it, the model around it and its training are translated."""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class SineFeatures(layers.Layer):
    """sinh of the scaled input, next to the input (twice the features)."""

    def __init__(self, scale=2.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, x):
        return tf.concat([x, tf.math.sinh(x * self.scale)], axis=-1)

    def compute_output_shape(self, input_shape):
        return input_shape[:-1] + (2 * input_shape[-1],)


def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    x = SineFeatures(scale=0.5)(x)
    outputs = layers.Dense(1)(x)
    return keras.Model(inputs, outputs)


def main():
    x = np.random.rand(64, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, batch_size=16)


if __name__ == "__main__":
    main()
