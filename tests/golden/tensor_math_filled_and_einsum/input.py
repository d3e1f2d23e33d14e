"""keras.ops.zeros_like / ones_like / full_like / zeros and einsum on a conv's feature map."""

import keras
from keras import layers


class Bias(layers.Layer):
    """Adds a per-sample bias map built from the batch size (ops.ones with ops.shape)."""

    def call(self, x):
        batch = keras.ops.shape(x)[0]
        return x + 0.1 * keras.ops.ones((batch, 6, 5, 4))


def build_model(filters=4):
    inputs = keras.Input(shape=(6, 5, 3))
    x = layers.Conv2D(filters, 3, padding="same", activation="relu")(inputs)
    x = Bias()(x)
    mask = keras.ops.full_like(x, 0.5)
    x = x * mask + keras.ops.zeros_like(x)
    # per-channel Gram matrix over the pixels, channels last as in Keras
    gram = keras.ops.einsum("bhwc,bhwd->bcd", x, x)
    rows = keras.ops.einsum("bhwc->bch", x)
    counts = keras.ops.sum(keras.ops.ones_like(x, dtype="int32"), axis=[1, 2])
    return keras.Model(inputs, [layers.Flatten()(gram), layers.Conv1D(2, 3)(rows), counts])
