"""A keras.Model subclass whose own train_step calls its layers by attribute.

``self.model`` is a name torch's printed module cannot keep (it becomes ``model_layer``),
and ``self.relu`` is a ReLU layer that the torch printer folds into ``forward``
(``F.relu``, no module). The step calls ``self.model`` and uses ``keras.ops.relu``, so it
can be translated; tests/test_subclass.py swaps in ``self.relu(...)`` and other reads the
torch module cannot answer
(``self.relu``, ``self.gain``).
"""

import keras
from keras import layers
import tensorflow as tf
import numpy as np


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.model = layers.Dense(4)
        self.relu = layers.ReLU()
        self.out = layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.gain = 1.0  # a plain number: not on the torch module

    @property
    def metrics(self):
        return [self.loss_tracker]

    def call(self, x):
        return self.out(self.relu(self.model(x)))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self.out(keras.ops.relu(self.model(x, training=True)))
            loss = keras.ops.mean(keras.ops.square(pred - y))
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


def build_model():
    model = Net()
    model(keras.Input(shape=(3,)))
    return model


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1))
    model.fit(x, y, epochs=2, batch_size=8)


if __name__ == "__main__":
    main()
