"""Tabular regression with custom layers: a residual MLP block sized in ``build()``.

``ResidualDense`` creates its layers in ``build(input_shape)`` (the projection back to the
input width depends on it) and adds the skip connection with ``keras.ops.add``; the
``Tower`` model stacks a list of them, concatenates the raw features back in with
``keras.ops.concatenate`` and is built by calling it on ``keras.Input``.
"""

import numpy as np
import keras
from keras import layers


class ResidualDense(layers.Layer):
    """Dense(hidden, relu) -> Dense(width of the input), added to the input, normalised."""

    def __init__(self, hidden=32, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden

    def build(self, input_shape):
        self.expand = layers.Dense(self.hidden, activation="relu")
        self.project = layers.Dense(input_shape[-1])
        self.norm = layers.LayerNormalization()

    def call(self, x):
        y = self.project(self.expand(x))
        return self.norm(keras.ops.add(x, y))


class Tower(keras.Model):
    def __init__(self, depth=3, width=24):
        super().__init__(name="tower")
        self.stem = layers.Dense(width)
        # a list of blocks: Keras tracks them; the torch module gets blocks_0_*, blocks_1_*, ...
        self.blocks = [ResidualDense(2 * width) for _ in range(depth)]
        self.head = layers.Dense(1)

    def call(self, inputs):
        x = keras.ops.relu(self.stem(inputs))
        for block in self.blocks:
            x = block(x)
        x = keras.ops.concatenate([x, inputs], axis=-1)
        return self.head(x)


def build_model():
    model = Tower()
    model(keras.Input(shape=(12,)))
    return model


def make_data(n=512, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 12)).astype("float32")
    y = (x[:, :3].sum(axis=1, keepdims=True) - 0.5 * x[:, 3:4] ** 2).astype("float32")
    return x, y


if __name__ == "__main__":
    x, y = make_data()
    model = build_model()
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=2e-3), loss="mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=64, epochs=3, validation_split=0.2, verbose=2)
    print("final val_loss:", round(history.history["val_loss"][-1], 4))
    print(model.predict(x[:4], verbose=0).ravel())
