# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A GRU encoder-decoder: the decoder starts from the encoder's h_n, and from a
conditioning vector through a Linear layer."""

import math
import keras
from keras import layers


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


INPUT_SHAPE = ((9, 6), (7, 4), (5,))


def build_model():
    """The Seq2Seq model, translated from PyTorch (channels-last inputs)."""
    src = keras.Input(shape=(9, 6), name="src")
    tgt = keras.Input(shape=(7, 4), name="tgt")
    cond = keras.Input(shape=(5,), name="cond")
    encoder = layers.GRU(
        16,
        kernel_initializer=torch_uniform_init(16),
        recurrent_initializer=torch_uniform_init(16),
        bias_initializer=torch_uniform_init(16),
        name="encoder",
    )(src)
    bridge = layers.Dense(
        16,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(5),
        name="bridge",
    )(cond)
    tanh = layers.Activation("tanh", name="tanh")(bridge)
    h = layers.Add(name="add")([encoder, tanh])
    out = layers.GRU(
        16,
        kernel_initializer=torch_uniform_init(16),
        recurrent_initializer=torch_uniform_init(16),
        bias_initializer=torch_uniform_init(16),
        return_sequences=True,
        name="decoder",
    )(tgt, initial_state=[h])
    head = layers.Dense(
        4,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(16),
        name="head",
    )(out)
    return keras.Model(inputs=[src, tgt, cond], outputs=head, name="Seq2Seq")
