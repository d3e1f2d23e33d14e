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


NUM_FEATURES = 8
INPUT_SHAPE = (NUM_FEATURES,)


def build_model(hidden=32):
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    # a plain chain becomes keras.Sequential
    model = keras.Sequential(
        [
            keras.Input(shape=(8,), name="x"),
            layers.Dense(
                hidden,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(8),
                name="linear_0",
            ),
            layers.Activation("gelu", name="gelu_1"),
            layers.LayerNormalization(epsilon=1e-05, name="layernorm_2"),
            layers.Dropout(0.1, name="dropout_3"),
            # regression head
            layers.Dense(
                1,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(hidden),
                name="linear_4",
            ),
        ],
        name="build_model",
    )
    return model
