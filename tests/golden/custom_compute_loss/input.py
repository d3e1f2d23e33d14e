import numpy as np
import keras
from keras import layers, ops


class Regressor(keras.Model):
    """A regression with its own loss: squared error plus a penalty on large outputs."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(16, activation="relu")
        self.out = layers.Dense(1)

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return ops.mean(ops.square(y - y_pred)) + 0.01 * ops.mean(ops.abs(y_pred))


def build_model():
    model = Regressor()
    model(keras.Input(shape=(8,)))
    return model


def main():
    x = np.random.rand(256, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01))
    model.fit(x, y, epochs=3, batch_size=32)
    print("loss:", model.evaluate(x, y, verbose=0))


if __name__ == "__main__":
    main()
