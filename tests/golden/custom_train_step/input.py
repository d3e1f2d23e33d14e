"""A keras.Model subclass with its own train_step: a regression trained on a loss with an
L1 penalty on its outputs, tracked by a Mean metric."""
import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops


class Regressor(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(16, activation="relu")
        self.out = layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            # squared error plus a small penalty on large predictions
            loss = ops.mean(ops.square(y - y_pred)) + 0.01 * ops.mean(ops.abs(y_pred))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.loss_tracker.update_state(ops.mean(ops.square(y - y_pred)))
        return {"loss": self.loss_tracker.result()}


def build_model():
    model = Regressor()
    model(keras.Input(shape=(8,)))
    return model


def main():
    x = np.random.rand(256, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9))
    model.fit(x, y, epochs=3, batch_size=32)
    print("mse:", model.evaluate(x, y, batch_size=64, verbose=0))


if __name__ == "__main__":
    main()
