# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""Weights of a module's own: nn.Parameter, a buffer, F.linear over its parameters, and
AdamW parameter groups that keep weight decay off the biases."""

import math
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


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


class TorchOptimizer:
    """What the optimizers computing as torch's share (the first of their bases): their own
    hyperparameters (``HYPER``: name -> default, set as attributes and saved by get_config),
    torch's gradient (dense, plus the L2 weight decay torch adds to it) and one slot
    variable per parameter for each entry of ``SLOTS`` (attribute -> variable name)."""

    HYPER: dict = {}
    SLOTS: dict = {}
    LEARNING_RATE = None  # torch's default, for a class on keras.optimizers.Optimizer

    def __init__(self, **kwargs):
        own = {name: kwargs.pop(name, default) for name, default in self.HYPER.items()}
        if self.LEARNING_RATE is not None:
            kwargs.setdefault("learning_rate", self.LEARNING_RATE)
        super().__init__(**kwargs)
        for name, value in own.items():
            setattr(self, name, value)

    def get_config(self):
        return {
            **super().get_config(),
            **{name: getattr(self, name) for name in self.HYPER},
        }

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        for attribute, name in self.SLOTS.items():
            setattr(
                self,
                attribute,
                [self.add_variable_from_reference(v, name) for v in variables],
            )

    def slots(self, variable):
        """The slot variables of parameter ``variable``, in the order of ``SLOTS``."""
        index = self._get_variable_index(variable)
        return [getattr(self, attribute)[index] for attribute in self.SLOTS]

    def torch_gradient(self, gradient, variable, dense=True):
        """The gradient torch's step reads: dense (a sparse one, an embedding's, made dense, or
        its repeated rows would be squared apart in a second moment), plus the L2 weight decay.
        """
        gradient = keras.ops.cast(gradient, variable.dtype)
        if dense:
            # (zeros of the variable's shape, not zeros_like(variable): jax refuses a variable there)
            gradient = keras.ops.add(
                keras.ops.zeros(tuple(variable.shape), variable.dtype), gradient
            )
        if self.l2:
            gradient = keras.ops.add(gradient, keras.ops.multiply(self.l2, variable))
        return gradient


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdamW(TorchOptimizer, keras.optimizers.AdamW):
    """AdamW as torch.optim.AdamW computes it: epsilon is added to sqrt(v) after the bias
    correction (Keras adds it before, which in torch's terms scales epsilon by
    1 / sqrt(1 - beta_2 ** step)), and an l2 weight decay is added to the gradient."""

    HYPER = {"l2": 0.0}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.torch_epsilon = self.epsilon

    def update_step(self, gradient, variable, learning_rate):
        gradient = self.torch_gradient(gradient, variable)
        step = keras.ops.cast(self.iterations + 1, variable.dtype)
        beta_2 = keras.ops.cast(self.beta_2, variable.dtype)
        # AdamW's update below reads self.epsilon: torch's epsilon in Keras' formula
        self.epsilon = self.torch_epsilon * keras.ops.sqrt(
            1 - keras.ops.power(beta_2, step)
        )
        try:
            super().update_step(gradient, variable, learning_rate)
        finally:
            self.epsilon = self.torch_epsilon


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
    head = layers.Dense(
        3,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(8),
        name="head",
    )(relu)
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
        TorchAdamW(learning_rate=0.01, epsilon=1e-08, weight_decay=0.05), no_decay
    )
    criterion = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    # transpiler: the training loop (lines 58-64) is model.fit: it batches the arrays, steps
    # the optimizer and reports the loss per epoch; its logs stand for the loop's own code:
    # the prints (line 64)
    model.compile(optimizer=optimizer, loss=criterion)
    model.fit(x, y, batch_size=16, epochs=3, shuffle=True, verbose=2)


if __name__ == "__main__":
    main()
