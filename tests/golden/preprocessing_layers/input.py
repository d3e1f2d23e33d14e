import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(40, 48, 3))
    x = layers.Resizing(32, 32)(inputs)
    x = layers.RandomFlip("horizontal")(x)
    x = layers.RandomRotation(0.1)(x)
    x = layers.Normalization(mean=[123.7, 116.3, 103.5], variance=[3409.0, 3262.7, 3291.7])(x)
    x = layers.Conv2D(8, 3, activation="relu")(x)
    x = layers.GroupNormalization(groups=4)(x)
    x = layers.CenterCrop(24, 24)(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(10)(x))
