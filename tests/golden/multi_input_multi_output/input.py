import keras
from keras import layers


def build_model():
    image = keras.Input(shape=(32,), name="image")
    meta = keras.Input(shape=(4,), name="meta")
    x = layers.Dense(16, activation="relu")(image)
    x = layers.concatenate([x, meta])
    label = layers.Dense(3, activation="softmax", name="label")(x)
    score = layers.Dense(1, name="score")(x)
    return keras.Model(inputs=[image, meta], outputs=[label, score])
