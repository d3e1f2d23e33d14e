"""A token-and-position embedding (keras.io ner_transformers / neural machine translation) on
sequences of any length: the position ids go up to ops.shape(inputs)[-1], a size known only
when the program runs."""
import keras
from keras import layers, ops


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, inputs):
        maxlen = ops.shape(inputs)[-1]
        positions = ops.arange(start=0, stop=maxlen, step=1)
        position_embeddings = self.pos_emb(positions)
        token_embeddings = self.token_emb(inputs)
        return token_embeddings + position_embeddings


def build_model(maxlen=64, vocab_size=200, embed_dim=16):
    inputs = keras.Input(shape=(None,), dtype="int32")
    x = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs)
    x = layers.Dense(embed_dim, activation="relu")(x)
    outputs = layers.Dense(5, activation="softmax")(x)
    return keras.Model(inputs, outputs)
