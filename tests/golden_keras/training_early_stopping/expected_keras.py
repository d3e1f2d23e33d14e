# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""An MLP regressor: AdamW, a warm-up LambdaLR stepped per batch, early stopping."""

import numpy as np
import math
import keras
from keras import layers


class BatchLearningRateScheduler(keras.callbacks.Callback):
    """LearningRateScheduler per optimizer step: the rate is schedule(step) for the
    step-th update (a torch scheduler stepped after every optimizer.step())."""

    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule
        self.step = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.model.optimizer.learning_rate = self.schedule(self.step)
        self.step += 1


INPUT_SHAPE = (8,)


def build_model():
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(8,), name="x"),
            layers.Dense(16, name="linear_0"),
            layers.Activation("gelu", name="gelu_1"),
            layers.Dense(1, name="linear_2"),
        ],
        name="build_model",
    )
    return model


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.RandomState(0)
    x = rng.randn(200, 8).astype("float32")
    y = x[:, :1] * 2.0 + 0.1
    mean, std = x[:160].mean(axis=0), x[:160].std(axis=0, ddof=1)
    x = (x - mean) / std
    model = build_model()
    criterion = keras.losses.Huber(delta=1.0)
    optimizer = keras.optimizers.AdamW(
        learning_rate=0.01, epsilon=1e-08, weight_decay=0.01
    )
    warmup = math.ceil(len(x[:160]) / 32)
    scheduler = BatchLearningRateScheduler(
        lambda step: 0.01 * min(1.0, (step + 1) / warmup)
    )

    best, best_state, bad, patience = float("inf"), None, 0, 2
    # transpiler: the training loop (lines 31-47) is model.fit: it batches the arrays, steps
    # the optimizer and reports the loss per epoch; its logs stand for the loop's own code:
    # the evaluation (line 39), early stopping (line 42)
    model.compile(optimizer=optimizer, loss=criterion)
    history = model.fit(
        x[:160],
        y[:160],
        batch_size=32,
        epochs=20,
        shuffle=False,
        validation_data=(x[160:], y[160:]),
        callbacks=[
            scheduler,
            keras.callbacks.EarlyStopping(
                monitor="val_loss", patience=patience, restore_best_weights=True
            ),
        ],
        verbose=2,
    )
    best = min(history.history["val_loss"])
    best_state = model.get_weights()  # EarlyStopping restored the best epoch's weights
    model.set_weights(best_state)
    print(f"best {best:.4f}")


if __name__ == "__main__":
    main()
