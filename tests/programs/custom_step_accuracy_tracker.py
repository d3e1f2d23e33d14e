"""A keras.Model subclass whose own train_step is keras.io's "customizing fit" one: the
gradients over ``self.trainable_variables`` held in a variable, a ``Mean`` loss tracker and a
``CategoricalAccuracy`` tracker updated with ``(y, y_pred)``, the logs read back from
``self.metrics``. The targets are one-hot rows (a squared-error loss on them, a
``CategoricalAccuracy`` tracker)."""

import keras
from keras import layers
import tensorflow as tf
import numpy as np


class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(8, activation="tanh")
        self.out = layers.Dense(3)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.accuracy = keras.metrics.CategoricalAccuracy(name="accuracy")

    @property
    def metrics(self):
        return [self.loss_tracker, self.accuracy]

    def call(self, x):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = keras.ops.mean(keras.ops.square(y - y_pred))
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.loss_tracker.update_state(loss)
        self.accuracy.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def build_model():
    model = Classifier()
    model(keras.Input(shape=(5,)))
    return model


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 5)).astype("float32")
    y = np.eye(3, dtype="float32")[(x[:, 0] > 0).astype("int64") + (x[:, 1] > 0.5).astype("int64")]
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1))
    history = model.fit(x, y, epochs=2, batch_size=16)
    print("accuracy:", history.history["accuracy"][-1])


if __name__ == "__main__":
    main()
