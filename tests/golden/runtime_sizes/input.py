"""Sizes known only when the program runs: the vocabulary's size and the number of classes."""
import numpy as np
import keras
from keras import layers

text = "the quick brown fox jumps over the lazy dog " * 20
chars = sorted(set(text))
rng = np.random.default_rng(0)
x = rng.random((256, 12)).astype("float32")
y = rng.integers(0, 3, size=256)
num_classes = len(np.unique(y))

model = keras.Sequential([
    keras.Input(shape=(x.shape[1],)),
    layers.Dense(len(chars), activation="relu"),
    layers.Dense(num_classes, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x, y, epochs=2, batch_size=32, verbose=2)
print(model.predict(x[:4], verbose=0).argmax(-1))
