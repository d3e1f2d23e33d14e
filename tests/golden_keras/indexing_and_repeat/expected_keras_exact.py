# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
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


INPUT_SHAPE = (12, 6)


def build_model():
    """The Summarizer model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(12, 6), name="x")
    # the two directions added (Keras' merge_mode="sum")
    seq = layers.Bidirectional(
        layers.GRU(
            8,
            kernel_initializer=torch_uniform_init(8),
            recurrent_initializer=torch_uniform_init(8),
            bias_initializer=torch_uniform_init(8),
            return_sequences=True,
        ),
        merge_mode="sum",
        name="gru",
    )(x)
    head = seq[:, :4, ::2]
    picked = keras.ops.take(seq, 11, axis=1)
    proj = layers.Dense(
        8,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(8),
        name="proj",
    )(picked)
    summary = layers.Activation("tanh", name="tanh")(proj)
    repeat_vector = layers.RepeatVector(3, name="repeat_vector")(summary)
    # the summary fed to an RNN as a short sequence
    out = layers.SimpleRNN(
        4,
        kernel_initializer=torch_uniform_init(4),
        recurrent_initializer=torch_uniform_init(4),
        bias_initializer=torch_uniform_init(4),
        return_sequences=True,
        name="rnn",
    )(repeat_vector)
    return keras.Model(inputs=x, outputs=[head, out], name="Summarizer")
