"""keras.ops on the tensors of a Functional model: axes, reshapes, scalars."""

import keras
from keras import layers


def build_model(filters=8):
    inputs = keras.Input(shape=(12, 10, 3))
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(inputs)
    # per-pixel attention over the flattened feature map
    tokens = keras.ops.reshape(x, (-1, 12 * 10, filters))
    scores = tokens @ keras.ops.transpose(tokens, (0, 2, 1)) / filters**0.5
    mixed = keras.ops.softmax(scores, axis=-1) @ tokens
    pooled = keras.ops.mean(x, axis=[1, 2])  # global average, channels last
    gate = keras.ops.sigmoid(keras.ops.max(x, axis=-1, keepdims=True))
    x = x * gate + 0.5 * (1.0 - gate)
    left, right = keras.ops.split(x, 2, axis=-1)
    x = keras.ops.concatenate([right, left], axis=-1)
    x = layers.Conv2D(4, 1)(keras.ops.image.resize(x, (6, 5)))
    x = keras.ops.expand_dims(x, -1)  # the channel axis moves: channels-last here
    summary = keras.ops.mean(mixed, axis=1) + pooled
    return keras.Model(inputs, [x, layers.Dense(2)(summary)])
