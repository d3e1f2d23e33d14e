"""A small image classifier written as Keras subclasses, the way many tutorials do it.

A ``ConvBlock`` layer (Conv -> BatchNorm -> ReLU) is reused twice inside a ``keras.Model``
subclass; ``call()`` threads the ``training`` flag through to BatchNorm and Dropout.
Trained on synthetic 28x28 digits-like data for a couple of epochs.
"""

import numpy as np
import keras
from keras import layers


class ConvBlock(layers.Layer):
    """Conv -> BN -> ReLU, 'same' padding."""

    def __init__(self, filters, kernel_size=3, **kwargs):
        super().__init__(**kwargs)
        self.conv = layers.Conv2D(filters, kernel_size, padding="same", use_bias=False)
        self.bn = layers.BatchNormalization()

    def call(self, x, training=None):
        x = self.conv(x)
        x = self.bn(x, training=training)
        return keras.ops.relu(x)


class SmallNet(keras.Model):
    """Two conv blocks, pooling, and a dense head that returns logits."""

    def __init__(self, num_classes=10):
        super().__init__(name="small_net")
        self.block1 = ConvBlock(16)
        self.pool1 = layers.MaxPooling2D()
        self.block2 = ConvBlock(32)
        self.pool2 = layers.MaxPooling2D()
        self.flatten = layers.Flatten()
        self.dropout = layers.Dropout(0.25)
        self.classifier = layers.Dense(num_classes)

    def call(self, inputs, training=False):
        x = self.block1(inputs, training=training)
        x = self.pool1(x)
        x = self.block2(x, training=training)
        x = self.pool2(x)
        x = self.flatten(x)
        x = self.dropout(x, training=training)
        return self.classifier(x)  # logits


def build_model():
    model = SmallNet()
    model.build((None, 28, 28, 1))
    return model


def make_data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 28, 28, 1), dtype=np.float32)
    y = (x[:, :14].mean(axis=(1, 2, 3)) * 40).astype("int64") % 10
    return x, y


def main():
    x, y = make_data()
    model = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    model.fit(x, y, batch_size=32, epochs=2, validation_split=0.25, verbose=2)
    loss, acc = model.evaluate(x[:64], y[:64], verbose=0)
    print(f"loss {loss:.4f} accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
