import numpy as np
import keras
from keras import layers


class WarmupLogger(keras.callbacks.Callback):
    """Raises the learning rate over the first epochs and logs it."""

    def __init__(self, target_lr=0.1, warmup_epochs=2):
        super().__init__()
        self.target_lr = target_lr
        self.warmup_epochs = warmup_epochs

    def on_epoch_begin(self, epoch, logs=None):
        if epoch < self.warmup_epochs:
            self.model.optimizer.learning_rate.assign(self.target_lr * (epoch + 1) / self.warmup_epochs)

    def on_epoch_end(self, epoch, logs=None):
        logs["lr"] = float(self.model.optimizer.learning_rate)
        if logs["loss"] < 1e-3:
            self.model.stop_training = True


def build_model():
    return keras.Sequential([keras.Input(shape=(4,)), layers.Dense(8, activation="relu"), layers.Dense(1)])


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01), loss="mse")
    history = model.fit(
        x,
        y,
        epochs=4,
        batch_size=16,
        callbacks=[
            WarmupLogger(),
            keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print(epoch, logs["lr"])),
            keras.callbacks.TerminateOnNaN(),
        ],
    )
    print(history.history["lr"])
