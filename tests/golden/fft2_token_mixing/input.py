"""keras.io's FNet block (mlp_image_classification): tokens mixed by the real part of a 2-D FFT."""
import keras
from keras import layers


class FNetLayer(layers.Layer):
    def __init__(self, embedding_dim, dropout_rate):
        super().__init__()
        self.ffn = keras.Sequential(
            [
                layers.Dense(units=embedding_dim, activation="gelu"),
                layers.Dropout(rate=dropout_rate),
                layers.Dense(units=embedding_dim),
            ]
        )
        self.normalize1 = layers.LayerNormalization(epsilon=1e-6)
        self.normalize2 = layers.LayerNormalization(epsilon=1e-6)

    def call(self, inputs):
        real_part = inputs
        im_part = keras.ops.zeros_like(inputs)
        x = keras.ops.fft2((real_part, im_part))[0]
        x = x + inputs
        x = self.normalize1(x)
        x_ffn = self.ffn(x)
        x = x + x_ffn
        return self.normalize2(x)


def build_model():
    inputs = keras.Input(shape=(16, 8))
    x = FNetLayer(8, 0.2)(inputs)
    outputs = layers.Dense(4)(layers.GlobalAveragePooling1D()(x))
    return keras.Model(inputs, outputs)
