"""An Embedding trained with Adam: Keras' TensorFlow backend applies the table's gradient
per token occurrence; the generated optimizer line says so. SGD would need no note."""
import numpy as np
import keras
from keras import layers


def build_model(vocab_size=50):
    return keras.Sequential([
        keras.Input(shape=(6,), dtype="int32"),
        layers.Embedding(vocab_size, 8),
        layers.GlobalAveragePooling1D(),
        layers.Dense(1, activation="sigmoid"),
    ])


if __name__ == "__main__":
    x = np.random.randint(0, 50, size=(64, 6))
    y = (x[:, 0] < 25).astype("float32")
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
    model.fit(x, y, epochs=2, batch_size=16)
