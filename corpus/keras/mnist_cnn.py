"""MNIST-style CNN classifier on synthetic 28x28 grayscale digits.

Classic Sequential() + .add(...) construction, with input_shape= on the first
layer instead of an explicit Input. No real MNIST is downloaded: each "digit"
class is a bright square at a class-specific position plus noise.
"""
import numpy as np
from tensorflow import keras

NUM_CLASSES = 10
INPUT_SHAPE = (28, 28, 1)


def build_model(num_classes=NUM_CLASSES, filters=16, dense_units=64):
    model = keras.Sequential(name="mnist_cnn")
    # first layer carries input_shape so the model is built right away
    model.add(keras.layers.Conv2D(filters, (3, 3), activation="relu", input_shape=INPUT_SHAPE))
    model.add(keras.layers.MaxPooling2D(pool_size=(2, 2)))
    # Convolution2D is the old Keras 1 alias of Conv2D and is still exported
    model.add(keras.layers.Convolution2D(filters * 2, kernel_size=3, activation="relu"))
    model.add(keras.layers.MaxPooling2D(2))
    model.add(keras.layers.Flatten())
    model.add(keras.layers.Dropout(0.25))
    model.add(keras.layers.Dense(dense_units, activation="relu"))
    model.add(keras.layers.Dense(num_classes, activation="softmax"))
    return model


def make_data(n=600, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, NUM_CLASSES, size=n)
    x = 0.2 * rng.rand(n, 28, 28, 1).astype("float32")
    for i, label in enumerate(y):
        # each class lights up its own 6x6 patch
        r, c = 4 + 6 * (label // 4), 2 + 6 * (label % 4)
        x[i, r : r + 6, c : c + 6, 0] += 0.8
    return x, y.astype("int64")


def main():
    x, y = make_data()
    x_train, y_train, x_test, y_test = x[:500], y[:500], x[500:], y[500:]

    model = build_model()
    model.summary()
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x_train, y_train, batch_size=32, epochs=2, verbose=2)

    test_loss, test_acc = model.evaluate(x_test, y_test, verbose=0)
    print("Test loss:", round(float(test_loss), 4))
    print("Test accuracy:", round(float(test_acc), 4))

    probs = model.predict(x_test[:8], verbose=0)
    print("predicted:", probs.argmax(axis=-1).tolist())
    print("actual:   ", y_test[:8].tolist())


if __name__ == "__main__":
    main()
