"""keras.models.clone_model: a model of the same architecture, freshly initialised, trained
with an optimizer of its own."""
import numpy as np
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(8,)), layers.Dense(16, activation="relu"),
                             layers.BatchNormalization(), layers.Dense(1)])


def main():
    x = np.random.rand(64, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    fresh = keras.models.clone_model(model)
    fresh.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    fresh.fit(x, y, epochs=2, batch_size=16, verbose=0)
    print("trained:", model.evaluate(x, y, verbose=0), "clone:", fresh.evaluate(x, y, verbose=0))


if __name__ == "__main__":
    main()
