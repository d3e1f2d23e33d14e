"""A small program that uses every translated callback and fit option."""
import numpy as np
import keras
from keras import layers


def schedule(epoch, lr):
    return lr * 0.5 if epoch > 0 else lr


def build_model():
    inputs = keras.Input(shape=(6,))
    x = layers.Dense(8, activation="relu")(inputs)
    outputs = layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def main(out_dir="."):
    rng = np.random.RandomState(0)
    x = rng.standard_normal((96, 6)).astype("float32")
    y = rng.randint(0, 3, size=96)
    model = build_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(
        x, y, batch_size=16, epochs=6, verbose=2, validation_split=0.25, shuffle=False,
        class_weight={0: 1.0, 1: 2.0, 2: 0.5},
        callbacks=[
            keras.callbacks.EarlyStopping(monitor="val_loss", patience=1, min_delta=100.0),
            keras.callbacks.ModelCheckpoint(out_dir + "/ckpt.weights.h5", monitor="val_loss",
                                            save_best_only=True, save_weights_only=True),
            keras.callbacks.CSVLogger(out_dir + "/log.csv"),
            keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1),
            keras.callbacks.LearningRateScheduler(schedule),
        ],
    )
    print("EPOCHS", len(history.history["loss"]))
    print("KEYS", sorted(history.history))


if __name__ == "__main__":
    main()
