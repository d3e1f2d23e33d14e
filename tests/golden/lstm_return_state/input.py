import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(10, 6))
    sequence, state_h, state_c = layers.LSTM(12, return_sequences=True, return_state=True)(inputs)
    last = layers.LSTM(8)(sequence)
    outputs = layers.Dense(1)(layers.concatenate([last, state_h]))
    return keras.Model(inputs, outputs)
