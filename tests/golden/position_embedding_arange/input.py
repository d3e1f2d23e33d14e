"""A ViT-style patch encoder (keras.io): position ids from ops.arange, embedded and added to
every sample; the MLP uses activation=ops.gelu (the tanh approximation, ops.gelu's default)
and a stop_gradient branch."""
import keras
from keras import layers, ops


class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.projection = layers.Dense(units=projection_dim)
        self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=projection_dim)

    def call(self, patch):
        positions = ops.expand_dims(ops.arange(start=0, stop=self.num_patches, step=1), axis=0)
        projected_patches = self.projection(patch)
        return projected_patches + self.position_embedding(positions)


def build_model(num_patches=16, projection_dim=32):
    inputs = keras.Input(shape=(num_patches, 12))
    x = PatchEncoder(num_patches, projection_dim)(inputs)
    x = layers.Dense(64, activation=ops.gelu)(x)
    x = x + ops.stop_gradient(layers.Dense(64)(x))
    x = layers.GlobalAveragePooling1D()(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    return keras.Model(inputs, outputs)
