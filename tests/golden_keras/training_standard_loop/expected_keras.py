# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""A small CNN trained by the usual PyTorch loop (→ compile + fit)."""

import os
import tempfile

import numpy as np
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


INPUT_SHAPE = (1, 12, 12)
EPOCHS = 3


def build_model():
    """The Net model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(12, 12, 1), name="x"),
            layers.Conv2D(4, 3, name="conv"),
            layers.ReLU(name="relu"),
            layers.Flatten(name="flatten"),
            layers.Dense(3, name="fc"),
        ],
        name="Net",
    )
    return model


def make_data(n=96, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(n, *INPUT_SHAPE).astype("float32")
    y = rng.randint(0, 3, size=n)
    return x, y.astype("int64")


def main():
    keras.utils.set_random_seed(0)
    x, y = make_data()
    model = build_model()
    criterion = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = TorchAdam(
        learning_rate=0.001, epsilon=1e-08, global_clipnorm=1.0, l2=0.0001
    )
    # transpiler: the scheduler was stepped once per epoch: LearningRateScheduler sets the
    # rate when each epoch begins
    scheduler = keras.callbacks.LearningRateScheduler(
        lambda epoch: 0.001 * 0.5 ** (epoch // 2)
    )

    # transpiler: the training loop (lines 46-62) is model.fit: it batches the arrays, steps
    # the optimizer and reports the loss per epoch; its logs stand for the loop's own code:
    # the running sums (line 55), the evaluation (line 58), the prints (line 62)
    model.compile(optimizer=optimizer, loss=criterion, metrics=["accuracy"])
    model.fit(
        np.transpose(x[:64], (0, 2, 3, 1)),
        y[:64],
        batch_size=16,
        epochs=EPOCHS,
        shuffle=True,
        validation_data=(np.transpose(x[64:], (0, 2, 3, 1)), y[64:]),
        callbacks=[scheduler],
        verbose=2,
    )

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "net.weights.h5")
        model.save_weights(path)
        restored = build_model()
        restored.load_weights(path)
    print(
        restored.predict(np.transpose(x[:4], (0, 2, 3, 1)), verbose=0)
        .argmax(axis=1)
        .tolist()
    )


if __name__ == "__main__":
    main()
