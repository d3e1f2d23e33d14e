# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""An MLP regressor: AdamW, a warm-up LambdaLR stepped per batch, early stopping."""

import numpy as np
import math
import keras
from keras import layers


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


class BatchLearningRateScheduler(keras.callbacks.Callback):
    """LearningRateScheduler per optimizer step: the rate is schedule(step) for the
    step-th update (a torch scheduler stepped after every optimizer.step())."""

    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule
        self.step = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.model.optimizer.learning_rate = self.schedule(self.step)
        self.step += 1


INPUT_SHAPE = (8,)


def build_model():
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(8,), name="x"),
            layers.Dense(
                16,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(8),
                name="linear_0",
            ),
            layers.Activation("gelu", name="gelu_1"),
            layers.Dense(
                1,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(16),
                name="linear_2",
            ),
        ],
        name="build_model",
    )
    return model


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.RandomState(0)
    x = rng.randn(200, 8).astype("float32")
    y = x[:, :1] * 2.0 + 0.1
    mean, std = x[:160].mean(axis=0), x[:160].std(axis=0, ddof=1)
    x = (x - mean) / std
    model = build_model()
    criterion = keras.losses.Huber(delta=1.0)
    optimizer = TorchAdamW(learning_rate=0.01, epsilon=1e-08, weight_decay=0.01)
    warmup = math.ceil(len(x[:160]) / 32)
    scheduler = BatchLearningRateScheduler(
        lambda step: 0.01 * min(1.0, (step + 1) / warmup)
    )

    best, best_state, bad, patience = float("inf"), None, 0, 2
    # transpiler: the training loop (lines 31-47) is model.fit: it batches the arrays, steps
    # the optimizer and reports the loss per epoch; its logs stand for the loop's own code:
    # the evaluation (line 39), early stopping (line 42)
    model.compile(optimizer=optimizer, loss=criterion)
    history = model.fit(
        x[:160],
        y[:160],
        batch_size=32,
        epochs=20,
        shuffle=False,
        validation_data=(x[160:], y[160:]),
        callbacks=[
            scheduler,
            keras.callbacks.EarlyStopping(
                monitor="val_loss", patience=patience, restore_best_weights=True
            ),
        ],
        verbose=2,
    )
    best = min(history.history["val_loss"])
    best_state = model.get_weights()  # EarlyStopping restored the best epoch's weights
    model.set_weights(best_state)
    print(f"best {best:.4f}")


if __name__ == "__main__":
    main()
