import numpy as np
import keras
import tensorflow as tf
from keras import ops


def weighted_mse(y_true, y_pred):
    """Errors on the first target count double."""
    weights = tf.constant([2.0, 1.0])
    return tf.reduce_mean(weights * tf.square(y_true - y_pred), axis=-1)


def rmse(y_true, y_pred):
    return ops.sqrt(ops.mean(ops.square(y_pred - y_true), axis=-1))


class LogCoshLoss(keras.losses.Loss):
    def call(self, y_true, y_pred):
        error = y_pred - y_true
        return ops.mean(error + ops.softplus(-2.0 * error) - ops.log(2.0), axis=-1)


def build_model():
    return keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = np.random.rand(64, 2).astype("float32")
    model = build_model()
    model.compile(optimizer="adam", loss=weighted_mse, metrics=[rmse])
    model.fit(x, y, epochs=2, batch_size=16)
    model.compile(optimizer="adam", loss=LogCoshLoss(reduction="sum"))
    model.fit(x, y, epochs=1, batch_size=16)
