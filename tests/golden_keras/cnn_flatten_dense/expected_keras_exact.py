# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A small CNN: the channels-first flatten before the Linear costs no transpose in Keras."""

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


INPUT_SHAPE = (3, 32, 32)  # channels first, as torch wants it


def build_model(num_classes=10):
    """The SmallCNN model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(32, 32, 3), name="x")
    conv1 = layers.Conv2D(
        16,
        3,
        padding="same",
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(27),
        name="conv1",
    )(x)
    bn1 = layers.BatchNormalization(momentum=0.9, epsilon=1e-05, name="bn1")(conv1)
    relu = layers.ReLU(name="relu")(bn1)
    conv2_pad = layers.ZeroPadding2D(((1, 1), (1, 1)), name="conv2_pad")(relu)
    # stride 2, padding 1 on 16x16 is not TensorFlow's 'same' (0 before, 1 after)
    conv2 = layers.Conv2D(
        32,
        3,
        strides=2,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(144),
        name="conv2",
    )(conv2_pad)
    leaky_relu = layers.LeakyReLU(negative_slope=0.1, name="leaky_relu")(conv2)
    pool = layers.MaxPooling2D(2, name="pool")(leaky_relu)
    flatten = layers.Flatten(name="flatten")(pool)
    fc = layers.Dense(
        num_classes,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(2048),
        name="fc",
    )(flatten)
    log_softmax = keras.ops.log_softmax(fc, axis=-1)
    return keras.Model(inputs=x, outputs=log_softmax, name="SmallCNN")
