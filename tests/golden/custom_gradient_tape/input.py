import numpy as np
import tensorflow as tf
from tensorflow import keras


def build_model():
    inputs = keras.Input(shape=(4,))
    return keras.Model(inputs, keras.layers.Dense(3)(inputs))


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = np.random.randint(0, 3, size=64)
    model = build_model()
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(float(loss))
