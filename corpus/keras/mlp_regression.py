"""Small MLP regression on synthetic tabular data.

The target is a noisy nonlinear function of the inputs. The model is a plain
Sequential stack with BatchNormalization and Dropout, trained with MSE.
"""
import numpy as np
import keras

NUM_FEATURES = 16
HIDDEN = 64
DROPOUT_RATE = 0.2


def build_model(num_features=NUM_FEATURES, hidden=HIDDEN, dropout=DROPOUT_RATE):
    model = keras.Sequential(
        [
            keras.Input(shape=(num_features,)),
            keras.layers.Dense(hidden, activation="relu"),
            keras.layers.BatchNormalization(),
            keras.layers.Dropout(dropout),
            # second layer is half as wide as the first
            keras.layers.Dense(hidden // 2, activation="relu"),
            keras.layers.BatchNormalization(),
            keras.layers.Dropout(dropout / 2),
            keras.layers.Dense(1),  # linear output for regression
        ],
        name="mlp_regression",
    )
    return model


def make_data(n=1024, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, NUM_FEATURES).astype("float32")
    w = rng.randn(NUM_FEATURES, 1).astype("float32") / np.sqrt(NUM_FEATURES)
    # nonlinear target plus a little observation noise
    y = np.tanh(x @ w) + 0.5 * np.sin(x[:, :1]) + 0.05 * rng.randn(n, 1)
    return x, y.astype("float32")


def main():
    x, y = make_data()
    x_train, y_train = x[:896], y[:896]
    x_test, y_test = x[896:], y[896:]

    model = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss="mse",
        metrics=["mae"],
    )
    model.fit(x_train, y_train, epochs=2, batch_size=32, validation_split=0.1, verbose=2)

    loss, mae = model.evaluate(x_test, y_test, verbose=0)
    print(f"test mse={loss:.4f} mae={mae:.4f}")

    preds = model.predict(x_test[:5], verbose=0)
    for p, t in zip(preds[:, 0], y_test[:5, 0]):
        print(f"pred={p:+.3f} target={t:+.3f}")

    model.save_weights("/tmp/mlp_regression.weights.h5")


if __name__ == "__main__":
    main()
