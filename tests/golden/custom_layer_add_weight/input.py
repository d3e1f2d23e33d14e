"""A custom layer with its own weights (add_weight in build) becomes an nn.Module whose
weights are nn.Parameters, initialised like Keras' initializers."""
import keras
from keras import layers


class FeatureGate(layers.Layer):
    """out = x * sigmoid(gate) + bias, one gate and bias per feature."""

    def build(self, input_shape):
        self.gate = self.add_weight(shape=(input_shape[-1],), initializer="zeros", name="gate")
        self.bias = self.add_weight(shape=(input_shape[-1],), initializer="random_normal", name="bias")

    def call(self, x):
        return x * keras.ops.sigmoid(self.gate) + self.bias


def build_model():
    inputs = keras.Input(shape=(10,))
    x = layers.Dense(16, activation="relu")(inputs)
    x = FeatureGate()(x)
    outputs = layers.Dense(1)(x)
    return keras.Model(inputs, outputs)
