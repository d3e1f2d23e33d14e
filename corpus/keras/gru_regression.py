"""GRU sequence regression on synthetic multivariate float sequences.

Inputs are (N, 20, 8) sequences; the target is a weighted sum of the
last few steps. A forward GRU returns both its sequence and final state; a
second GRU reads that sequence backwards (go_backwards=True).
"""
import numpy as np
from tensorflow import keras
from tensorflow.keras import layers

TIMESTEPS = 20
FEATURES = 8


def build_model(timesteps=TIMESTEPS, features=FEATURES, units=32):
    inputs = keras.Input(shape=(timesteps, features), name="series")

    # forward pass: keep the whole sequence and the last hidden state
    seq, state = layers.GRU(units, return_sequences=True, return_state=True)(inputs)
    # backward reader over the forward GRU's outputs
    backward = layers.GRU(units // 2, go_backwards=True)(seq)

    x = layers.concatenate([state, backward])
    x = layers.Dense(16, activation="swish")(x)
    outputs = layers.Dense(1, name="target")(x)
    return keras.Model(inputs, outputs, name="gru_regression")


def make_data(n=640, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, TIMESTEPS, FEATURES).astype("float32")
    weights = np.linspace(0.1, 1.0, FEATURES).astype("float32")
    # target depends on the final 3 timesteps, plus a smooth drift term
    y = (x[:, -3:, :] * weights).sum(axis=(1, 2)) / 3.0
    y += 0.1 * x[:, :, 0].mean(axis=1)
    return x, y[:, None].astype("float32")


def main():
    x, y = make_data()
    x_train, x_val = x[:512], x[512:]
    y_train, y_val = y[:512], y[512:]

    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(5e-3), loss="mse", metrics=["mae"])
    model.fit(x_train, y_train, epochs=2, batch_size=32, verbose=2)

    mse, mae = model.evaluate(x_val, y_val, verbose=0)
    print(f"val mse {mse:.4f}, val mae {mae:.4f}, target std {y_val.std():.4f}")

    preds = model.predict(x_val[:4], verbose=0)
    print(np.hstack([preds, y_val[:4]]).round(3))
    model.save_weights("/tmp/gru_regression.weights.h5")


if __name__ == "__main__":
    main()
