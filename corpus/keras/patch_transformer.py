"""A small ViT-style image classifier, as keras.io writes it (image_classification_with_vision_transformer).

Patches from keras.ops.image.extract_patches, a PatchEncoder layer adding a position embedding
of keras.ops.arange to the projected patches, a transformer block whose MLP uses
activation=keras.ops.gelu (the tanh approximation, ops.gelu's default), and a binary head
trained with the confusion-matrix metrics (TruePositives, FalseNegatives, Precision, Recall).
"""
import numpy as np
import keras
from keras import layers, ops

IMAGE_SIZE = 12
PATCH_SIZE = 4
NUM_PATCHES = (IMAGE_SIZE // PATCH_SIZE) ** 2
PROJECTION_DIM = 16


class Patches(layers.Layer):
    def __init__(self, patch_size):
        super().__init__()
        self.patch_size = patch_size

    def call(self, images):
        patches = ops.image.extract_patches(images, size=self.patch_size)
        return ops.reshape(patches, (-1, NUM_PATCHES, self.patch_size * self.patch_size * 3))


class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.projection = layers.Dense(units=projection_dim)
        self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=projection_dim)

    def call(self, patch):
        positions = ops.expand_dims(ops.arange(start=0, stop=self.num_patches, step=1), axis=0)
        return self.projection(patch) + self.position_embedding(positions)


def mlp(x, hidden_units, dropout_rate):
    for units in hidden_units:
        x = layers.Dense(units, activation=ops.gelu)(x)
        x = layers.Dropout(dropout_rate)(x)
    return x


def build_model(num_heads=2, transformer_units=(32, PROJECTION_DIM)):
    inputs = keras.Input(shape=(IMAGE_SIZE, IMAGE_SIZE, 3))
    patches = Patches(PATCH_SIZE)(inputs)
    encoded = PatchEncoder(NUM_PATCHES, PROJECTION_DIM)(patches)
    x1 = layers.LayerNormalization(epsilon=1e-6)(encoded)
    attention = layers.MultiHeadAttention(num_heads=num_heads, key_dim=PROJECTION_DIM)(x1, x1)
    x2 = layers.Add()([attention, encoded])
    x3 = layers.LayerNormalization(epsilon=1e-6)(x2)
    x3 = mlp(x3, hidden_units=transformer_units, dropout_rate=0.1)
    encoded = layers.Add()([x3, x2])
    representation = layers.LayerNormalization(epsilon=1e-6)(encoded)
    representation = layers.GlobalAveragePooling1D()(representation)
    outputs = layers.Dense(1, activation="sigmoid")(representation)
    return keras.Model(inputs, outputs)


def make_data(n=256, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(n, IMAGE_SIZE, IMAGE_SIZE, 3).astype("float32")
    y = (x[:, :PATCH_SIZE, :PATCH_SIZE].mean(axis=(1, 2, 3)) > 0.5).astype("float32")
    return x, y


def main():
    x, y = make_data()
    model = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss="binary_crossentropy",
        metrics=[keras.metrics.TruePositives(name="tp"), keras.metrics.FalseNegatives(name="fn"),
                 keras.metrics.Precision(), keras.metrics.Recall()],
    )
    history = model.fit(x[:192], y[:192], epochs=2, batch_size=32, verbose=2)
    print("final train loss:", round(history.history["loss"][-1], 4))
    print("held-out:", model.evaluate(x[192:], y[192:], verbose=0))


if __name__ == "__main__":
    main()
