"""Weights moved between two models of the same builder (an EMA copy), and a snapshot
restored: Keras' get_weights()/set_weights(), lists of arrays in layer order."""
import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(8,))
    h = layers.Dense(6, activation="relu")(inputs)
    h = layers.BatchNormalization()(h)
    return keras.Model(inputs, layers.Dense(2)(h))


if __name__ == "__main__":
    x = np.random.rand(32, 8).astype("float32")
    y = np.random.rand(32, 2).astype("float32")
    model = build_model()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1, batch_size=8)
    ema = build_model()
    ema.set_weights(model.get_weights())
    saved = model.get_weights()
    model.fit(x, y, epochs=1, batch_size=8)
    model.set_weights(saved)
    print(np.abs(model.predict(x) - ema.predict(x)).max())
