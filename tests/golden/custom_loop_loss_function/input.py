import numpy as np
import tensorflow as tf
from tensorflow import keras


def my_loss(y_true, y_pred):
    p = tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)
    return tf.reduce_mean(-tf.reduce_sum(y_true * tf.math.log(p), axis=-1))


def build_model():
    inputs = keras.Input(shape=(4,))
    return keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(inputs))


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = np.eye(3)[np.random.randint(0, 3, size=64)].astype("float32")
    model = build_model()
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    loss_fn = my_loss
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(float(loss))
