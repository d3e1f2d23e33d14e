# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import keras
from keras import layers

INPUT_SHAPE = (6, 8)


def build_model():
    """The Block model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(6, 8), name="x")
    a = layers.MultiHeadAttention(num_heads=2, key_dim=4, name="attn")(x, x)
    add = layers.Add(name="add")([x, a])
    norm = layers.RMSNormalization(epsilon=1.1920928955078125e-07, name="norm")(add)
    kv = layers.Dense(6, name="kv")(norm)
    cross = layers.MultiHeadAttention(num_heads=4, key_dim=2, name="cross")(norm, kv)
    return keras.Model(inputs=x, outputs=cross, name="Block")
