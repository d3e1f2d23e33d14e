"""Sizes computed from the data, read inside the builder, its helper and a Layer class.

The vocabulary and the labels decide the widths: ``num_classes`` and ``len(vocab)`` are
only known when the program runs, and the builder, the ``mlp()`` helper it calls and the
``ClassifierHead`` layer read them (directly, through a local of the builder, through the
helper's and the layer's parameters). The generated modules take them as constructor
arguments; the builder computes them where it constructs the model.
"""
import numpy as np
import keras
from keras import layers

text = "the quick brown fox jumps over the lazy dog and the cat sat on the mat"
vocab = sorted(set(text.split()))
rng = np.random.default_rng(0)
x_train = rng.random((240, 10)).astype("float32")
y_train = rng.integers(0, 4, size=240)
num_classes = len(np.unique(y_train))


class ClassifierHead(layers.Layer):
    """A hidden layer of the width it is given, then one logit per class."""

    def __init__(self, hidden, dropout, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(hidden, activation="relu")
        self.drop = layers.Dropout(dropout)
        self.logits = layers.Dense(num_classes)

    def call(self, x, training=False):
        return self.logits(self.drop(self.hidden(x), training=training))


def mlp(x, hidden_units, dropout_rate):
    for units in hidden_units:
        x = layers.Dense(units, activation="gelu")(x)
        x = layers.Dropout(dropout_rate)(x)
    return x


def build_model():
    width = len(vocab) * 2
    inputs = keras.Input(shape=(10,))
    x = layers.Dense(len(vocab), activation="relu")(inputs)
    x = mlp(x, [width, width // 2], 0.1)
    x = ClassifierHead(width // 2, 0.1)(x)
    outputs = layers.Softmax()(x)
    return keras.Model(inputs, outputs)


def main():
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=2, batch_size=32, verbose=2)
    print(model.predict(x_train[:4], verbose=0).argmax(-1))


if __name__ == "__main__":
    main()
