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


INPUT_SHAPE = (6, 8)


def build_model():
    """The Block model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(6, 8), name="x")
    a = layers.MultiHeadAttention(num_heads=2, key_dim=4, name="attn")(x, x)
    add = layers.Add(name="add")([x, a])
    norm = layers.RMSNormalization(epsilon=1.1920928955078125e-07, name="norm")(add)
    kv = layers.Dense(
        6,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(8),
        name="kv",
    )(norm)
    cross = layers.MultiHeadAttention(num_heads=4, key_dim=2, name="cross")(norm, kv)
    return keras.Model(inputs=x, outputs=cross, name="Block")
