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


LATENT = 8
INPUT_SHAPE = (LATENT,)


def build_model():
    """The Generator model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(8,), name="z"),
            layers.Dense(
                256,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(8),
                name="project",
            ),
            # the Dense's columns are permuted: the reshape yields channels-last directly
            layers.Reshape((4, 4, 16), name="reshape"),
            # 4 -> 8
            layers.Conv2DTranspose(
                8,
                4,
                strides=2,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(128),
                name="up_0",
            ),
            layers.Cropping2D(((1, 1), (1, 1)), name="up_0_crop"),
            layers.BatchNormalization(momentum=0.9, epsilon=1e-05, name="up_1"),
            layers.ReLU(name="up_2"),
            # 8 -> 16
            layers.Conv2DTranspose(
                1,
                4,
                strides=2,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(16),
                name="up_3",
            ),
            layers.Cropping2D(((1, 1), (1, 1)), name="up_3_crop"),
            layers.Activation("sigmoid", name="up_4"),
        ],
        name="Generator",
    )
    return model
