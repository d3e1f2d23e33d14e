# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import keras
from keras import layers

INPUT_SHAPE = (20, 4)


def build_model():
    """The Regressor model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(20, 4), name="x")
    gru_l0 = layers.Bidirectional(layers.GRU(16, return_sequences=True), name="gru_l0")(
        x
    )
    _, gru_l1_state1, gru_l1_state2 = layers.Bidirectional(
        layers.GRU(16, return_sequences=True, return_state=True), name="gru_l1"
    )(gru_l0)
    concat = layers.Concatenate(name="concat")([gru_l1_state1, gru_l1_state2])
    # the last layer's forward and backward states
    head = layers.Dense(1, name="head")(concat)
    return keras.Model(inputs=x, outputs=head, name="Regressor")
