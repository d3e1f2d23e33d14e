"""Kim-style text CNN classifier on synthetic token sequences.

Embedding -> parallel Conv1D branches with different kernel sizes ->
GlobalMaxPooling1D -> Dense. Uses the tf.keras spelling throughout.
"""
import numpy as np
import tensorflow as tf

VOCAB_SIZE = 1000
MAX_LEN = 64
EMBED_DIM = 32
NUM_CLASSES = 4
KERNEL_SIZES = (3, 4, 5)


def build_model(vocab_size=VOCAB_SIZE, max_len=MAX_LEN, embed_dim=EMBED_DIM, num_filters=24):
    tokens = tf.keras.Input(shape=(max_len,), dtype="int32", name="tokens")
    x = tf.keras.layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)(tokens)
    x = tf.keras.layers.Dropout(0.1)(x)

    # one convolution + max-over-time pooling per n-gram size
    pooled = []
    for k in KERNEL_SIZES:
        c = tf.keras.layers.Conv1D(num_filters, kernel_size=k, activation="relu")(x)
        pooled.append(tf.keras.layers.GlobalMaxPooling1D()(c))
    x = tf.keras.layers.concatenate(pooled)

    x = tf.keras.layers.Dense(64, activation="relu")(x)
    x = tf.keras.layers.Dropout(0.3)(x)
    outputs = tf.keras.layers.Dense(NUM_CLASSES, activation="softmax")(x)
    return tf.keras.Model(tokens, outputs, name="text_cnn")


def make_data(n=800, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randint(1, VOCAB_SIZE, size=(n, MAX_LEN)).astype("int32")
    y = rng.randint(0, NUM_CLASSES, size=n)
    # plant a few class-specific "keywords" (token ids 1..NUM_CLASSES) in each text
    for i in range(n):
        pos = rng.choice(MAX_LEN, size=3, replace=False)
        x[i, pos] = y[i] + 1
    return x, y


def main():
    x, y = make_data()
    split = int(0.8 * len(x))

    model = build_model()
    model.compile(
        optimizer=tf.keras.optimizers.Adam(learning_rate=2e-3),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(),
        metrics=["accuracy"],
    )
    history = model.fit(x[:split], y[:split], epochs=2, batch_size=32, verbose=2)
    print("final train loss:", round(history.history["loss"][-1], 4))

    loss, acc = model.evaluate(x[split:], y[split:], verbose=0)
    print(f"held-out accuracy: {acc:.3f} (loss {loss:.3f})")

    sample = x[split : split + 3]
    print("predicted classes:", np.argmax(model.predict(sample, verbose=0), axis=-1))
    model.save_weights("/tmp/text_cnn.weights.h5")


if __name__ == "__main__":
    main()
