import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(6,))
    x = layers.Dense(8, activation="relu")(inputs)
    label = layers.Dense(3, activation="softmax", name="label")(x)
    score = layers.Dense(1, name="score")(x)
    return keras.Model(inputs, [label, score])


if __name__ == "__main__":
    x = np.random.rand(64, 6).astype("float32")
    labels = keras.utils.to_categorical(np.random.randint(0, 3, size=64), 3)
    scores = np.random.rand(64, 1).astype("float32")
    model = build_model()
    model.compile(
        optimizer="adam",
        loss={
            "label": keras.losses.CategoricalCrossentropy(label_smoothing=0.1),
            "score": keras.losses.Huber(delta=0.5, reduction="sum"),
        },
        loss_weights={"score": 0.3, "label": 2.0},
    )
    model.fit(x, {"label": labels, "score": scores}, epochs=2, batch_size=16)
