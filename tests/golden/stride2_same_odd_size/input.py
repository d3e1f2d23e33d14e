import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(7, 7, 3))
    x = layers.Conv2D(8, 3, strides=2, padding="same")(inputs)
    x = layers.MaxPooling2D(pool_size=2, padding="same")(x)
    return keras.Model(inputs, x)
