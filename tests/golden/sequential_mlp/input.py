"""A two-layer perceptron built with keras.Sequential([...])."""
import keras
from keras import layers


def build_model(num_features=20, num_classes=3):
    return keras.Sequential(
        [
            keras.Input(shape=(num_features,)),
            layers.Dense(64, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(num_classes, activation="softmax"),
        ]
    )
