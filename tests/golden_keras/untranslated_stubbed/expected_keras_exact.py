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
