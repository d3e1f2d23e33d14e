"""An LSTM with activation="relu" (keras.io timeseries_traffic_forecasting's LSTMGC): torch's
nn.LSTM applies tanh only, so the output steps Keras' arithmetic with nn.LSTM's parameters."""
import keras
from keras import layers


def build_model(steps=12, features=4):
    inputs = keras.Input(shape=(steps, features))
    x = layers.LSTM(32, activation="relu")(inputs)
    outputs = layers.Dense(steps)(x)
    return keras.Model(inputs, outputs)
