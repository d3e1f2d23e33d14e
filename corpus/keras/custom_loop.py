"""A custom training loop: tf.GradientTape over a tf.data pipeline.

The model is an MLP classifier; the loop computes the loss with a Keras loss object
from logits, asks the tape for gradients and applies them with an Adam optimizer.
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras

NUM_CLASSES = 4
EPOCHS = 3


def build_model(hidden=32):
    inputs = keras.Input(shape=(10,))
    x = keras.layers.Dense(hidden, activation="relu")(inputs)
    x = keras.layers.Dense(hidden, activation="relu")(x)
    logits = keras.layers.Dense(NUM_CLASSES)(x)  # logits: the loss applies softmax
    return keras.Model(inputs, logits, name="loop_mlp")


def make_data(n=512, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n, 10)).astype("float32")
    y = (x[:, :NUM_CLASSES].argmax(axis=1)).astype("int64")
    return x, y


def main():
    x, y = make_data()
    model = build_model()
    optimizer = keras.optimizers.Adam(learning_rate=1e-2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).batch(64)

    for epoch in range(EPOCHS):
        total = 0.0
        for step, (xb, yb) in enumerate(dataset):
            with tf.GradientTape() as tape:
                logits = model(xb, training=True)
                loss = loss_fn(yb, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss)
        print(f"epoch {epoch + 1}: mean loss {total / (step + 1):.4f}")

    # accuracy on the training data, in inference mode
    preds = np.argmax(model(x, training=False), axis=1)
    print("train accuracy:", float(np.mean(preds == y)))


if __name__ == "__main__":
    main()
