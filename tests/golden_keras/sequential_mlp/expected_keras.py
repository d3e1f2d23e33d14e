# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import keras
from keras import layers

NUM_FEATURES = 8
INPUT_SHAPE = (NUM_FEATURES,)


def build_model(hidden=32):
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    # a plain chain becomes keras.Sequential
    model = keras.Sequential(
        [
            keras.Input(shape=(8,), name="x"),
            layers.Dense(hidden, name="linear_0"),
            layers.Activation("gelu", name="gelu_1"),
            layers.LayerNormalization(epsilon=1e-05, name="layernorm_2"),
            layers.Dropout(0.1, name="dropout_3"),
            # regression head
            layers.Dense(1, name="linear_4"),
        ],
        name="build_model",
    )
    return model
