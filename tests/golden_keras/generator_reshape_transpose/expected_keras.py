# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import keras
from keras import layers

LATENT = 8
INPUT_SHAPE = (LATENT,)


def build_model():
    """The Generator model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(8,), name="z"),
            layers.Dense(256, name="project"),
            # the Dense's columns are permuted: the reshape yields channels-last directly
            layers.Reshape((4, 4, 16), name="reshape"),
            # 4 -> 8
            layers.Conv2DTranspose(8, 4, strides=2, name="up_0"),
            layers.Cropping2D(((1, 1), (1, 1)), name="up_0_crop"),
            layers.BatchNormalization(momentum=0.9, epsilon=1e-05, name="up_1"),
            layers.ReLU(name="up_2"),
            # 8 -> 16
            layers.Conv2DTranspose(1, 4, strides=2, name="up_3"),
            layers.Cropping2D(((1, 1), (1, 1)), name="up_3_crop"),
            layers.Activation("sigmoid", name="up_4"),
        ],
        name="Generator",
    )
    return model
