"""A custom loop over a tf.data pipeline with .map() before and after .batch(),
.repeat(count), .cache() and .prefetch()."""
import numpy as np
import tensorflow as tf
from tensorflow import keras


def build_model():
    inputs = keras.Input(shape=(6,))
    return keras.Model(inputs, keras.layers.Dense(3)(inputs))


def center(features, labels):
    # per batch: subtract the batch mean of every feature
    return features - tf.reduce_mean(features, axis=0, keepdims=True), labels


if __name__ == "__main__":
    x = np.random.randint(0, 255, size=(40, 6)).astype("uint8")
    y = np.random.randint(0, 3, size=40)
    model = build_model()
    optimizer = keras.optimizers.SGD(learning_rate=0.05)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    dataset = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .map(lambda a, b: (tf.cast(a, tf.float32) / 255.0, b))
        .cache()
        .batch(16)
        .map(center)
        .repeat(2)
        .prefetch(tf.data.AUTOTUNE)
    )
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(float(loss))
