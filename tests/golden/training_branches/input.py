"""Branches on the training flag in call(): self.training in torch."""
import keras
from keras import layers


class Jitter(layers.Layer):
    """Scales while training, shifts at inference."""

    def call(self, inputs, training=None):
        if training:
            # a deterministic stand-in for noise
            return inputs * 0.9
        return inputs + 1.0


class Gate(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units)
        self.extra = layers.Dense(units)

    def call(self, x, training=None):
        h = self.dense(x)
        if not training:
            h = keras.ops.relu(h)
        else:
            scale = keras.ops.sigmoid(self.extra(x))
            h = h * scale
        if training is True:
            h = h - 0.5
        return h * (0.5 if training else 2.0)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.jitter = Jitter()
        self.gate = Gate(5)
        self.head = layers.Dense(3)

    def call(self, inputs, training=None):
        x = self.jitter(inputs, training=training)
        x = self.gate(x, training=training)
        if training:
            x = keras.ops.tanh(x)
        return self.head(x)


def build_model():
    model = Net()
    model.build((None, 6))
    return model
