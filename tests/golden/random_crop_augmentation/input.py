import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(40, 36, 3))
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.RandomCrop(32, 32)(x)
    x = layers.RandomFlip("horizontal")(x)
    x = layers.Conv2D(8, 3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(10)(x)
    return keras.Model(inputs, outputs)
