# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import numpy as np
import tensorflow as tf
import keras
from keras import layers

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
    optimizer = keras.optimizers.Adam(learning_rate=0.001, epsilon=1e-08)
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
