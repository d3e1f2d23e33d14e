"""Siamese similarity model: one subclassed encoder applied to two inputs.

``Encoder`` is a ``keras.Model`` subclass holding a list of ``DenseBlock`` layers (a Layer
subclass with its own sub-layers); the Functional model calls the same encoder on both
inputs, so its weights are shared, and classifies the squared feature difference.
Trained on synthetic pairs: same-cluster pairs are positives.
"""

import numpy as np
import keras
from keras import layers

FEATURES = 16
EMBED = 8


class DenseBlock(layers.Layer):
    """Dense -> LayerNorm -> ReLU."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units)
        self.norm = layers.LayerNormalization()

    def call(self, x):
        return keras.ops.relu(self.norm(self.dense(x)))


class Encoder(keras.Model):
    def __init__(self, widths=(32, 24), embed=EMBED):
        super().__init__(name="encoder")
        # one block per width; the torch module keeps them in an nn.ModuleList
        self.blocks = [DenseBlock(w) for w in widths]
        self.out = layers.Dense(embed)

    def call(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def build_model(features=FEATURES):
    encoder = Encoder()
    left = keras.Input(shape=(features,), name="left")
    right = keras.Input(shape=(features,), name="right")
    # the same encoder on both inputs: shared weights
    diff = layers.Subtract()([encoder(left), encoder(right)])
    squared = layers.Multiply()([diff, diff])
    outputs = layers.Dense(1, activation="sigmoid")(squared)
    return keras.Model([left, right], outputs, name="siamese")


def make_pairs(n=512, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(4, FEATURES)).astype("float32")
    a = rng.integers(0, 4, size=n)
    b = np.where(rng.random(n) < 0.5, a, rng.integers(0, 4, size=n))
    left = centers[a] + 0.3 * rng.normal(size=(n, FEATURES)).astype("float32")
    right = centers[b] + 0.3 * rng.normal(size=(n, FEATURES)).astype("float32")
    y = (a != b).astype("float32")[:, None]
    return left.astype("float32"), right.astype("float32"), y


def main():
    left, right, y = make_pairs()
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit([left, right], y, batch_size=32, epochs=3, validation_split=0.25, verbose=2)
    print("accuracy:", round(model.evaluate([left, right], y, verbose=0)[1], 3))


if __name__ == "__main__":
    main()
