"""Tabular classifier with custom layers that own weights (``add_weight`` in ``build``).

``FeatureGate`` learns one gate per input feature (``x * sigmoid(gate)``), ``ScaleShift``
a per-feature affine map with a frozen (non-trainable) offset; a ``GatedBlock`` layer
combines a Dense layer with a gate of its own. The model is Functional; the custom layers
become ``nn.Module`` classes whose weights are ``nn.Parameter``s.
"""

import numpy as np
import keras
from keras import layers

NUM_FEATURES = 20
NUM_CLASSES = 4


class FeatureGate(layers.Layer):
    """Soft feature selection: each feature is scaled by sigmoid(gate)."""

    def build(self, input_shape):
        # gates start at 0 -> sigmoid(0) = 0.5 for every feature
        self.gate = self.add_weight(shape=(input_shape[-1],), initializer="zeros", name="gate")

    def call(self, x):
        return x * keras.ops.sigmoid(self.gate)


class ScaleShift(layers.Layer):
    """y = x * scale + offset; the offset is fixed (not trained)."""

    def __init__(self, offset_init="zeros", **kwargs):
        super().__init__(**kwargs)
        self.offset_init = offset_init

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")
        self.offset = self.add_weight(shape=(input_shape[-1],), initializer=self.offset_init,
                                      trainable=False, name="offset")

    def call(self, x):
        return x * self.scale + self.offset


class GatedBlock(layers.Layer):
    """Dense(units, relu) whose output passes through a learned gate."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units, activation="relu")
        self.gate = FeatureGate()

    def call(self, x):
        return self.gate(self.dense(x))


def build_model(num_features=NUM_FEATURES, num_classes=NUM_CLASSES):
    inputs = keras.Input(shape=(num_features,))
    x = FeatureGate(name="input_gate")(inputs)
    x = ScaleShift()(x)
    x = GatedBlock(64)(x)
    x = GatedBlock(32)(x)
    outputs = layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="feature_gating")


def make_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, NUM_FEATURES)).astype("float32")
    # only the first five features matter
    score = x[:, :5] @ np.array([1.0, -1.0, 0.5, 2.0, -0.5], dtype="float32")
    y = np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75])).astype("int64")
    return x, y


def main():
    x, y = make_data()
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=3, validation_split=0.2, verbose=2)
    print("accuracy:", round(model.evaluate(x, y, verbose=0)[1], 3))


if __name__ == "__main__":
    main()
