# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A GRU encoder-decoder: the decoder starts from the encoder's h_n, and from a
conditioning vector through a Linear layer."""

import keras
from keras import layers

INPUT_SHAPE = ((9, 6), (7, 4), (5,))


def build_model():
    """The Seq2Seq model, translated from PyTorch (channels-last inputs)."""
    src = keras.Input(shape=(9, 6), name="src")
    tgt = keras.Input(shape=(7, 4), name="tgt")
    cond = keras.Input(shape=(5,), name="cond")
    encoder = layers.GRU(16, name="encoder")(src)
    bridge = layers.Dense(16, name="bridge")(cond)
    tanh = layers.Activation("tanh", name="tanh")(bridge)
    h = layers.Add(name="add")([encoder, tanh])
    out = layers.GRU(16, return_sequences=True, name="decoder")(tgt, initial_state=[h])
    head = layers.Dense(4, name="head")(out)
    return keras.Model(inputs=[src, tgt, cond], outputs=head, name="Seq2Seq")
