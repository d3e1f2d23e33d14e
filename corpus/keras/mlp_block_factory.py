"""Tabular classifier whose blocks come from a factory: ``create_mlp(...)`` returns a
``keras.Sequential`` without an ``Input`` (built by its first call) and the model calls it on
a tensor, as keras.io's TabTransformer does. The normalization layer is handed in as a class
or as ``functools.partial(layers.LayerNormalization, epsilon=1e-6)``, the block sizes are
read from ``features.shape[-1]``, and two lists of feature tensors are joined with ``+``
before ``layers.concatenate``.
"""

from functools import partial

import numpy as np
import keras
from keras import layers

NUM_FEATURES = 12
NUM_CLASSES = 3


def create_mlp(hidden_units, dropout_rate, activation, normalization_layer, name=None):
    mlp_layers = []
    for units in hidden_units:
        mlp_layers.append(normalization_layer())
        mlp_layers.append(layers.Dense(units, activation=activation))
        mlp_layers.append(layers.Dropout(dropout_rate))
    return keras.Sequential(mlp_layers, name=name)


def build_model(num_features=NUM_FEATURES, num_blocks=2):
    inputs = keras.Input(shape=(num_features,))
    wide = [layers.Dense(8)(inputs)]
    deep = [layers.Dense(8, activation="relu")(wide[0])]
    deep.append(layers.Dense(4, activation="tanh")(deep[0]))
    features = layers.concatenate(wide + deep)
    for block_idx in range(num_blocks):
        block = create_mlp(
            hidden_units=[features.shape[-1]],
            dropout_rate=0.1,
            activation=keras.activations.gelu,
            normalization_layer=partial(layers.LayerNormalization, epsilon=1e-6),
            name=f"feedforward_{block_idx}",
        )(features)
        features = layers.Add(name=f"skip_{block_idx}")([block, features])
    mlp_hidden_units = [factor * features.shape[-1] for factor in (2, 1)]
    features = create_mlp(
        hidden_units=mlp_hidden_units,
        dropout_rate=0.1,
        activation=keras.activations.selu,
        normalization_layer=layers.BatchNormalization,
        name="mlp",
    )(features)
    outputs = layers.Dense(NUM_CLASSES, activation="softmax")(features)
    return keras.Model(inputs, outputs, name="mlp_block_factory")


def make_data(n=480, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, NUM_FEATURES)).astype("float32")
    score = x[:, :4] @ np.array([1.0, -0.5, 2.0, 0.5], dtype="float32")
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype("int64")
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
