"""Token tagger built lazily: a subclassed model that is never given an input shape.

Nothing in the script says what the model is called on: no ``keras.Input``, no
``model.build(...)``; ``build_model()`` returns it unbuilt. Keras builds the model on
its first call; the translation reads the shape from what ``call()`` first hands its input
to (an ``Embedding``: token ids of shape ``(batch, steps)``, any number of steps). The
feed-forward block holds a ``keras.Sequential`` without an ``Input``, built by its first
call too. Trained on synthetic token sequences whose tag is the token id modulo the
number of tags.
"""

import numpy as np
import keras
from keras import layers

VOCAB = 50
STEPS = 12
TAGS = 5
EPOCHS = 2


class FeedForwardBlock(layers.Layer):
    """A residual feed-forward block: Dense → Dense (a Sequential), dropout, LayerNorm."""

    def __init__(self, dim, hidden, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.ffn = keras.Sequential([layers.Dense(hidden, activation="relu"), layers.Dense(dim)])
        self.norm = layers.LayerNormalization(epsilon=1e-6)
        self.dropout = layers.Dropout(rate)

    def call(self, inputs, training=False):
        out = self.dropout(self.ffn(inputs), training=training)
        return self.norm(inputs + out)


class Tagger(keras.Model):
    """Embedding → feed-forward block → a tag score per token."""

    def __init__(self, vocab_size=VOCAB, num_tags=TAGS, dim=16):
        super().__init__()
        self.embed = layers.Embedding(vocab_size, dim)
        self.block = FeedForwardBlock(dim, 32)
        self.head = layers.Dense(num_tags)

    def call(self, inputs, training=False):
        x = self.embed(inputs)
        x = self.block(x, training=training)
        return self.head(x)


def build_model():
    return Tagger()


def main():
    rng = np.random.default_rng(0)
    x = rng.integers(1, VOCAB, size=(64, STEPS))
    y = x % TAGS
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=16, epochs=EPOCHS)


if __name__ == "__main__":
    main()
