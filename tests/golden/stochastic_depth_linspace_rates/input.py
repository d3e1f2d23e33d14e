import keras
import numpy as np
from keras import layers


class StochasticDepth(layers.Layer):
    def __init__(self, drop_prop, **kwargs):
        super().__init__(**kwargs)
        self.drop_prob = drop_prop
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, x, training=None):
        if training:
            keep_prob = 1 - self.drop_prob
            shape = (keras.ops.shape(x)[0],) + (1,) * (len(x.shape) - 1)
            random_tensor = keep_prob + keras.random.uniform(shape, 0, 1, seed=self.seed_generator)
            random_tensor = keras.ops.floor(random_tensor)
            return (x / keep_prob) * random_tensor
        return x


def build_model():
    dpr = [x for x in np.linspace(0, 0.1, 3)]
    inputs = keras.Input(shape=(6, 8))
    x = inputs
    for i in range(3):
        y = layers.Dense(8, activation="relu")(x)
        x = layers.Add()([StochasticDepth(dpr[i])(y), x])
    return keras.Model(inputs, x)
