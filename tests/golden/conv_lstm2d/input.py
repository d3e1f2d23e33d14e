"""Next-frame prediction on sequences of feature maps: ConvLSTM2D layers (torch has no such
module: the runtime's ConvLSTM2D on (N, C, T, H, W), the layout of Conv3d's input)."""

import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(5, 8, 8, 1))
    x = layers.ConvLSTM2D(8, (3, 3), padding="same", return_sequences=True, activation="relu")(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.ConvLSTM2D(8, (1, 1), padding="same", return_sequences=True)(x)
    outputs = layers.Conv3D(1, (3, 3, 3), activation="sigmoid", padding="same")(x)
    model = keras.Model(inputs, outputs)
    model.compile(loss="binary_crossentropy", optimizer="adam")
    return model
