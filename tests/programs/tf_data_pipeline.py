"""tf.data pipelines in a custom loop and in fit(): .map() before and after .batch()
(a lambda and a function), .cache(), .repeat(count), .prefetch()."""
import numpy as np
import tensorflow as tf
from tensorflow import keras


def build_model():
    inputs = keras.Input(shape=(6,))
    return keras.Model(inputs, keras.layers.Dense(3)(inputs))


def center(features, labels):
    # per batch: subtract the batch mean of every feature (depends on the batch)
    return features - tf.reduce_mean(features, axis=0, keepdims=True), labels


def scaled_pipeline(x, y):
    pipeline = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .map(lambda a, b: (tf.cast(a, tf.float32) / 255.0, b))
        .cache()
        .batch(16)
        .map(center)
        .repeat(2)
        .prefetch(tf.data.AUTOTUNE)
    )
    return pipeline


def make_data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randint(0, 255, size=(n, 6)).astype("uint8"), rng.randint(0, 3, size=n)


if __name__ == "__main__":
    x, y = make_data()
    model = build_model()
    optimizer = keras.optimizers.SGD(learning_rate=0.05)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    steps = 0
    for xb, yb in scaled_pipeline(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        steps += 1
    print("custom loop steps:", steps)

    x_float = x.astype("float32") / 255.0
    train_ds = tf.data.Dataset.from_tensor_slices((x_float, y)).batch(16).repeat(3).prefetch(2)
    fitted = build_model()
    fitted.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                   metrics=["accuracy"])
    history = fitted.fit(train_ds, epochs=2, verbose=0)
    print("fit epochs:", len(history.history["loss"]))
