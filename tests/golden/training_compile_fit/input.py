import numpy as np
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(4,)), layers.Dense(1)])


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, batch_size=16)
