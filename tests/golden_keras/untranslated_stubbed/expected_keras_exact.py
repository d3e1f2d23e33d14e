# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import numpy as np
import tensorflow as tf
import keras
from keras import layers


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
class TorchAdam(TorchOptimizer, keras.optimizers.Adam):
    """Adam as torch.optim.Adam computes it: epsilon is added to sqrt(v) after the bias
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
        # Adam's update below reads self.epsilon: torch's epsilon in Keras' formula
        self.epsilon = self.torch_epsilon * keras.ops.sqrt(
            1 - keras.ops.power(beta_2, step)
        )
        try:
            super().update_step(gradient, variable, learning_rate)
        finally:
            self.epsilon = self.torch_epsilon


INPUT_SHAPE = (6,)
EPOCHS = 2


def build_model():
    # transpiler: not translated: input.py:17:9: tensor method .cumsum() is not supported yet
    raise NotImplementedError(
        "transpiler: input.py:17:9: tensor method .cumsum() is not supported yet"
    )


def scale(values):
    return np.asarray(values) * 2.0


def train(model, x):
    optimizer = TorchAdam(learning_rate=0.001, epsilon=1e-08)
    for _ in range(EPOCHS):
        # transpiler: a custom training step (not the usual loop for fit: the epoch loop does
        # not hold exactly one loop over batches with backward()): backward() is the tape's
        # gradient, step() applies it
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(keras.ops.power(model(x, training=True), 2))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


if __name__ == "__main__":
    train(build_model(), np.random.standard_normal((4, 6)).astype("float32"))
