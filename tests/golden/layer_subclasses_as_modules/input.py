"""Layer subclasses become nn.Module classes: sub-layers sized in build(), a list of blocks
(nn.ModuleList, looped in forward), and a Model subclass on top."""
import keras
from keras import layers


class ResidualDense(layers.Layer):
    """Dense -> Dense back to the input width, plus the input."""

    def __init__(self, hidden, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden

    def build(self, input_shape):
        self.expand = layers.Dense(self.hidden, activation="relu")
        self.project = layers.Dense(input_shape[-1])

    def call(self, x):
        return x + self.project(self.expand(x))


class Tower(keras.Model):
    def __init__(self, depth=2):
        super().__init__()
        self.stem = layers.Dense(16)
        # the blocks share one class; torch holds them in an nn.ModuleList
        self.blocks = [ResidualDense(32) for _ in range(depth)]
        self.head = layers.Dense(1)

    def call(self, inputs):
        x = self.stem(inputs)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def build_model():
    model = Tower()
    model.build((None, 8))
    return model
