import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(10,))
    # project into a wider space first
    x = layers.Dense(32)(inputs)
    x = layers.LeakyReLU(alpha=0.1)(x)  # Keras 2 spelling of negative_slope
    # a bottleneck keeps the head small
    x = layers.Dense(8, activation="relu")(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)  # probability
    return keras.Model(inputs, outputs)
