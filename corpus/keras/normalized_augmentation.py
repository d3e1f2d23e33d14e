"""Small image classifier behind a preprocessing Sequential whose Normalization is adapted.

As in the keras.io vision examples (MLP-Mixer, EANet, Perceiver, ...): a module-level
``data_augmentation`` Sequential (Normalization, Resizing, RandomFlip) the model calls as its
first layer, its Normalization adapted to the training images before the model is built
(``data_augmentation.layers[0].adapt(x_train)``).
"""
import numpy as np
import keras
from keras import layers

IMAGE_SIZE = 12
NUM_CLASSES = 5

data_augmentation = keras.Sequential(
    [
        layers.Normalization(),
        layers.Resizing(IMAGE_SIZE, IMAGE_SIZE),
        layers.RandomFlip("horizontal"),
    ],
    name="data_augmentation",
)


def build_model():
    inputs = keras.Input(shape=(16, 16, 3))
    x = data_augmentation(inputs)
    x = layers.Conv2D(8, 3, activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Flatten()(x)
    outputs = layers.Dense(NUM_CLASSES, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="normalized_augmentation")


def make_data(n=96, seed=0):
    rng = np.random.RandomState(seed)
    # uint8 images, as keras.datasets gives them: adapt() reduces them in float64
    x = rng.randint(0, 256, (n, 16, 16, 3)).astype("uint8")
    y = rng.randint(0, NUM_CLASSES, (n,))
    return x, y


def prepare(x_train):
    # Compute the mean and the variance of the training data for normalization.
    data_augmentation.layers[0].adapt(x_train)


def main():
    x, y = make_data()
    prepare(x[:80])
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x[:80], y[:80], epochs=1, batch_size=16)
    loss, accuracy = model.evaluate(x[80:], y[80:])
    print(f"loss {loss:.4f} accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
