"""fit(steps_per_epoch=..., validation_steps=..., validation_freq=..., initial_epoch=...) on
arrays and on a repeated tf.data pipeline: the same batches per epoch as under Keras."""
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class BatchCounter(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(["epoch", epoch])

    def on_train_batch_begin(self, batch, logs=None):
        self.events[-1].append(batch)

    def on_epoch_end(self, epoch, logs=None):
        self.events[-1].append(sorted(logs))


def build_model():
    return keras.Sequential([keras.Input(shape=(4,)), layers.Dense(8, activation="relu"), layers.Dense(1)])


def main():
    rng = np.random.RandomState(0)
    x = rng.standard_normal((40, 4)).astype("float32")
    y = rng.standard_normal((40, 1)).astype("float32")
    model = build_model()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])

    arrays = BatchCounter()  # 5 batches per pass; 3 steps per epoch: 3, 2 (data runs out), 3, 2
    model.fit(x, y, batch_size=8, epochs=4, steps_per_epoch=3, verbose=0, shuffle=False, callbacks=[arrays],
              validation_data=(x[:16], y[:16]), validation_steps=1, validation_freq=[2, 3])
    print("ARRAYS", arrays.events)

    train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat()
    val_ds = tf.data.Dataset.from_tensor_slices((x[:12], y[:12])).batch(5)
    repeated = BatchCounter()  # endless: 3 steps in every epoch, across passes
    model.fit(train_ds, epochs=5, steps_per_epoch=3, initial_epoch=1, verbose=0, callbacks=[repeated],
              validation_data=val_ds, validation_freq=2)
    print("REPEATED", repeated.events)


if __name__ == "__main__":
    main()
