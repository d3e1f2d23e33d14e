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


INPUT_SHAPE = (20, 4)


def build_model():
    """The Regressor model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(20, 4), name="x")
    gru_l0 = layers.Bidirectional(
        layers.GRU(
            16,
            kernel_initializer=torch_uniform_init(16),
            recurrent_initializer=torch_uniform_init(16),
            bias_initializer=torch_uniform_init(16),
            return_sequences=True,
        ),
        name="gru_l0",
    )(x)
    _, gru_l1_state1, gru_l1_state2 = layers.Bidirectional(
        layers.GRU(
            16,
            kernel_initializer=torch_uniform_init(16),
            recurrent_initializer=torch_uniform_init(16),
            bias_initializer=torch_uniform_init(16),
            return_sequences=True,
            return_state=True,
        ),
        name="gru_l1",
    )(gru_l0)
    concat = layers.Concatenate(name="concat")([gru_l1_state1, gru_l1_state2])
    # the last layer's forward and backward states
    head = layers.Dense(
        1,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(32),
        name="head",
    )(concat)
    return keras.Model(inputs=x, outputs=head, name="Regressor")
