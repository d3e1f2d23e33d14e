# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""Weights of a module's own: nn.Parameter, a buffer, F.linear over its parameters, and
AdamW parameter groups that keep weight decay off the biases."""

import numpy as np
import keras
from keras import layers


class ModelWeight(layers.Layer):
    """A weight of the model's own (a PyTorch nn.Parameter, or a buffer: not trainable).

    Called on any tensor of the model (only to place it in the functional graph), it
    returns the weight."""

    def __init__(self, shape, initializer="zeros", trainable=True, **kwargs):
        super().__init__(**kwargs)
        self.value = self.add_weight(
            shape=shape, initializer=initializer, trainable=trainable, name="value"
        )

    def call(self, inputs):
        return keras.ops.convert_to_tensor(self.value)


def without_weight_decay(optimizer, variables):
    """torch's parameter group with weight_decay=0: the optimizer leaves these variables'
    weights undecayed (the other variables decay as the optimizer says)."""
    optimizer.exclude_from_weight_decay(var_list=variables)
    return optimizer


INPUT_SHAPE = (6,)


def build_model():
    """The Net model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(6,), name="x")
    # the inputs' mean, saved with the weights
    block_offset = ModelWeight(
        (6,), initializer="zeros", trainable=False, name="block_offset"
    )(x)
    subtract = x - block_offset
    block = layers.Dense(
        8,
        kernel_initializer=keras.initializers.RandomUniform(
            -0.6546536707079771, 0.6546536707079771
        ),
        bias_initializer="zeros",
        name="block",
    )(subtract)
    block_gain = ModelWeight((8,), initializer="ones", name="block_gain")(x)
    multiply = block * block_gain
    relu = layers.ReLU(name="relu")(multiply)
    head = layers.Dense(3, name="head")(relu)
    temperature = ModelWeight(
        (), initializer=keras.initializers.Constant(2.0), name="temperature"
    )(x)
    divide = head / temperature
    return keras.Model(inputs=x, outputs=divide, name="Net")


def main():
    keras.utils.set_random_seed(0)
    x = np.random.standard_normal((64, 6)).astype("float32")
    y = np.random.randint(0, 3, size=(64,))
    model = build_model()
    model.get_layer("block_offset").weights[0].assign(x.mean(axis=0))
    decay, no_decay = [], []
    # the parameter groups of the PyTorch loop over named_parameters(), by layer:
    no_decay = [model.get_layer("block").weights[1], model.get_layer("head").weights[1]]
    decay = [
        model.get_layer("block").weights[0],
        model.get_layer("block_gain").weights[0],
        model.get_layer("head").weights[0],
        model.get_layer("temperature").weights[0],
    ]
    optimizer = without_weight_decay(
        keras.optimizers.AdamW(learning_rate=0.01, epsilon=1e-08, weight_decay=0.05),
        no_decay,
    )
    criterion = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    # transpiler: the training loop (lines 58-64) is model.fit: it batches the arrays, steps
    # the optimizer and reports the loss per epoch; its logs stand for the loop's own code:
    # the prints (line 64)
    model.compile(optimizer=optimizer, loss=criterion)
    model.fit(x, y, batch_size=16, epochs=3, shuffle=True, verbose=2)


if __name__ == "__main__":
    main()
