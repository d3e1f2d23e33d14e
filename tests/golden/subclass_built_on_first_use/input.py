"""A subclassed model that is never built in the script: its call() first hands the input to
an Embedding (token ids, any length), whose output goes through a custom layer holding a
keras.Sequential without an Input. Keras builds all of it on the first call."""
import keras
from keras import layers


class Residual(layers.Layer):
    def __init__(self, dim, hidden, **kwargs):
        super().__init__(**kwargs)
        self.ffn = keras.Sequential([layers.Dense(hidden, activation="relu"), layers.Dense(dim)])
        self.norm = layers.LayerNormalization(epsilon=1e-6)

    def call(self, inputs):
        return self.norm(inputs + self.ffn(inputs))


class Tagger(keras.Model):
    def __init__(self, vocab_size=40, num_tags=4, dim=8):
        super().__init__()
        self.embed = layers.Embedding(vocab_size, dim)
        self.block = Residual(dim, 16)
        self.head = layers.Dense(num_tags)

    def call(self, inputs):
        return self.head(self.block(self.embed(inputs)))


def build_model():
    return Tagger()
