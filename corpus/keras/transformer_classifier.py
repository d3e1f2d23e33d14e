"""Text classification with a Transformer encoder block (after the Keras example).

``TokenAndPositionEmbedding`` adds a learned position embedding (``add_weight``) to the
token embedding;
``TransformerBlock`` is multi-head self-attention and a feed-forward ``keras.Sequential``,
each with dropout, a residual connection and layer normalisation. Synthetic data: the
label says whether token 7 occurs in the first half of the sequence.
"""

import numpy as np
import keras
from keras import layers

VOCAB_SIZE = 200
MAXLEN = 24
EMBED_DIM = 32
NUM_HEADS = 2
FF_DIM = 32


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim // num_heads)
        self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=False):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(layers.Layer):
    """Token embedding plus a learned position embedding (one vector per position)."""

    def __init__(self, maxlen, vocab_size, embed_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = self.add_weight(shape=(maxlen, embed_dim), initializer="random_normal",
                                       name="pos_emb")

    def call(self, x):
        return self.token_emb(x) + self.pos_emb


def build_model(maxlen=MAXLEN, vocab_size=VOCAB_SIZE, embed_dim=EMBED_DIM):
    inputs = keras.Input(shape=(maxlen,), dtype="int32")
    x = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs)
    x = TransformerBlock(embed_dim, NUM_HEADS, FF_DIM)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(20, activation="relu")(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="transformer_classifier")


def make_data(n=512, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, VOCAB_SIZE, size=(n, MAXLEN))
    y = (x[:, : MAXLEN // 2] == 7).any(axis=1).astype("int64")
    x[: n // 2, 3] = 7  # make the classes balanced
    y[: n // 2] = 1
    return x.astype("int32"), y


def main():
    x, y = make_data()
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=2, validation_split=0.2, verbose=2)
    print("accuracy:", round(model.evaluate(x, y, verbose=0)[1], 3))


if __name__ == "__main__":
    main()
