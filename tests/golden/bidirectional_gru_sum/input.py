import keras
from keras import layers


def build_model(vocab_size=100):
    tokens = keras.Input(shape=(12,), dtype="int32")
    x = layers.Embedding(vocab_size, 16)(tokens)
    x = layers.Bidirectional(layers.GRU(8), merge_mode="sum")(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    return keras.Model(tokens, outputs)
