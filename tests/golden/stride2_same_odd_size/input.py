import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(7, 7, 3))
    # 7x7 -> 4x4: TensorFlow pads one row and column on each side
    x = layers.Conv2D(8, 3, strides=2, padding="same")(inputs)
    # 4x4 -> 2x2: TensorFlow pads only the bottom row and right column
    x = layers.Conv2D(8, 3, strides=2, padding="same")(x)
    return keras.Model(inputs, x)
