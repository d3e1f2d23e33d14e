"""The script's own keras.callbacks.Callback subclasses, LambdaCallback and TerminateOnNaN:
the hooks see the same epochs, batches, logs keys and learning rates as under Keras."""
import numpy as np
import keras
from keras import layers


class LossRecorder(keras.callbacks.Callback):
    """Records what Keras passes to each hook."""

    def __init__(self, stop_after=None):
        super().__init__()
        self.stop_after = stop_after
        self.events = []

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin", sorted(logs or {})))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch))

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(("batch_end", batch, list(logs)))

    def on_epoch_end(self, epoch, logs=None):
        lr = float(self.model.optimizer.learning_rate)
        self.events.append(("epoch_end", epoch, list(logs), round(lr, 6)))
        logs["lr"] = lr
        if self.stop_after is not None and epoch + 1 >= self.stop_after:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.events.append(("train_end", list(logs or {})))


class HalveLR(LossRecorder):
    def on_epoch_begin(self, epoch, logs=None):
        if epoch > 0:
            self.model.optimizer.learning_rate = self.model.optimizer.learning_rate * 0.5


def build_model():
    inputs = keras.Input(shape=(4,))
    x = layers.Dense(8, activation="relu")(inputs)
    outputs = layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def main():
    rng = np.random.RandomState(0)
    x = rng.standard_normal((40, 4)).astype("float32")
    y = rng.randint(0, 3, size=40)
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    recorder = LossRecorder(stop_after=3)
    printer = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: print("LAMBDA", epoch, list(logs)))
    history = model.fit(x, y, batch_size=16, epochs=5, verbose=0, shuffle=False, validation_split=0.2,
                        validation_freq=2, callbacks=[recorder, printer, keras.callbacks.TerminateOnNaN(),
                                                      HalveLR()])
    for event in recorder.events:
        print("EVENT", event)
    print("HISTORY", list(history.history), len(history.history["loss"]))

    # TerminateOnNaN: an infinite learning rate makes the loss NaN within the first epoch
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=1e30), loss="sparse_categorical_crossentropy")
    counter = LossRecorder()
    model.fit(x * 1e10, y, batch_size=8, epochs=3, verbose=0, shuffle=False,
              callbacks=[keras.callbacks.TerminateOnNaN(), counter])
    print("NAN-STOP", [e[:2] for e in counter.events if e[0] in ("epoch_begin", "batch_end")])


if __name__ == "__main__":
    main()
