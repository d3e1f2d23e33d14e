"""Stacked-LSTM sentiment-style classifier on synthetic token sequences.

Embedding -> LSTM(return_sequences=True) x2 -> LSTM -> Dense(sigmoid).
Training code lives directly in the __main__ block.
"""
import numpy as np
import keras
from keras import layers

VOCAB_SIZE = 500
MAX_LEN = 30
EMBED_DIM = 24


def build_model(vocab_size=VOCAB_SIZE, max_len=MAX_LEN, lstm_units=(32, 32, 16)):
    model = keras.Sequential(name="lstm_classifier")
    model.add(keras.Input(shape=(max_len,)))
    model.add(layers.Embedding(vocab_size, EMBED_DIM))
    # every LSTM but the last returns the full sequence for the next one
    for i, units in enumerate(lstm_units):
        last = i == len(lstm_units) - 1
        model.add(layers.LSTM(units, return_sequences=not last))
    model.add(layers.Dropout(0.2))
    model.add(layers.Dense(1, activation="sigmoid"))
    return model


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    n = 512
    x = rng.randint(0, VOCAB_SIZE, size=(n, MAX_LEN))
    # "positive" if low-id tokens outnumber high-id tokens in the second half
    second_half = x[:, MAX_LEN // 2 :]
    y = ((second_half < VOCAB_SIZE // 2).sum(axis=1) > MAX_LEN // 4).astype("float32")

    model = build_model()
    model.summary()
    model.compile(
        loss="binary_crossentropy",
        optimizer=keras.optimizers.Adam(learning_rate=3e-3),
        metrics=["accuracy"],
    )
    model.fit(x[:448], y[:448], batch_size=32, epochs=2, validation_data=(x[448:], y[448:]), verbose=2)

    score = model.evaluate(x[448:], y[448:], verbose=0)
    print("test loss / accuracy:", [round(float(s), 4) for s in score])

    probs = model.predict(x[:6], verbose=0).ravel()
    print("p(positive):", np.round(probs, 3))
