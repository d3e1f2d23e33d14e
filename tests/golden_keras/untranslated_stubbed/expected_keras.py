# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import numpy as np
import tensorflow as tf
import keras
from keras import layers


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdam(keras.optimizers.Adam):
    """Adam as torch.optim.Adam computes it: epsilon is added to sqrt(v) after the bias
    correction (Keras adds it before, which in torch's terms scales epsilon by
    1 / sqrt(1 - beta_2 ** step)), and an l2 weight decay is added to the gradient."""

    def __init__(self, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l2 = l2
        self.torch_epsilon = self.epsilon

    def get_config(self):
        return {**super().get_config(), "l2": self.l2}

    def update_step(self, gradient, variable, learning_rate):
        # torch's gradients are dense: a sparse one (an embedding's) is made dense, or its
        # repeated rows would be squared apart in the second moment
        gradient = keras.ops.add(
            keras.ops.zeros_like(variable), keras.ops.cast(gradient, variable.dtype)
        )
        if self.l2:
            gradient = keras.ops.add(gradient, keras.ops.multiply(self.l2, variable))
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


def accumulate_gradients(tape, loss, model, gradients=None):
    """loss.backward() for model's weights: the gradient of loss adds to the gradients
    gathered since the model's zero_grad() (None), as torch accumulates them in .grad.
    """
    with tape.stop_recording():
        new = tape.gradient(
            loss,
            model.trainable_variables,
            unconnected_gradients=tf.UnconnectedGradients.ZERO,
        )
    if gradients is None:
        return new
    return [old + grad for old, grad in zip(gradients, new)]


def apply_gradients(tape, optimizer, model, gradients):
    """optimizer.step(): the gathered gradients update the model's weights."""
    with tape.stop_recording():
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))


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
        # transpiler: a custom training step: the body runs under a GradientTape; backward()
        # takes the gradients, step() applies them (not the usual loop for fit: the epoch loop
        # does not hold exactly one loop over batches with backward())
        with tf.GradientTape(persistent=True) as tape:
            model_grads = None  # optimizer.zero_grad()
            loss = keras.ops.mean(keras.ops.power(model(x, training=True), 2))
            # loss.backward()
            model_grads = accumulate_gradients(tape, loss, model, model_grads)
            apply_gradients(tape, optimizer, model, model_grads)  # optimizer.step()


if __name__ == "__main__":
    train(build_model(), np.random.standard_normal((4, 6)).astype("float32"))
