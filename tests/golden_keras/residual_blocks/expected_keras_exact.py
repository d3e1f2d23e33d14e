# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import math
import numpy as np
import keras
from keras import layers


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


def ResidualNet():
    """The ResidualNet model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(12, 12, 1), name="x")
    stem = layers.Conv2D(
        8,
        3,
        padding="same",
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(9),
        name="stem",
    )(x)
    blocks_0_conv = layers.Conv2D(
        8,
        3,
        padding="same",
        use_bias=False,
        kernel_initializer=torch_kernel_init(),
        name="blocks_0_conv",
    )(stem)
    blocks_0_bn = layers.BatchNormalization(
        momentum=0.95, epsilon=1e-05, name="blocks_0_bn"
    )(blocks_0_conv)
    add = layers.Add(name="add")([stem, blocks_0_bn])
    relu = layers.ReLU(name="relu")(add)
    blocks_1_conv = layers.Conv2D(
        8,
        3,
        padding="same",
        use_bias=False,
        kernel_initializer=torch_kernel_init(),
        name="blocks_1_conv",
    )(relu)
    blocks_1_bn = layers.BatchNormalization(
        momentum=0.95, epsilon=1e-05, name="blocks_1_bn"
    )(blocks_1_conv)
    add_1 = layers.Add(name="add_1")([relu, blocks_1_bn])
    relu_1 = layers.ReLU(name="relu_1")(add_1)
    # global average pool
    mean = layers.GlobalAveragePooling2D(name="mean")(relu_1)
    head = layers.Dense(
        4,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(8),
        name="head",
    )(mean)
    return keras.Model(inputs=x, outputs=head, name="ResidualNet")


model = ResidualNet()
out = keras.ops.convert_to_numpy(
    model(
        np.transpose(
            np.random.standard_normal((2, 1, 12, 12)).astype("float32"), (0, 2, 3, 1)
        ),
        training=True,
    )
)
