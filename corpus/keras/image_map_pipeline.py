"""Small CNN trained through a tf.data pipeline whose .map() functions call tf.image (keras.io's
CutMix / DeiT / MobileViT input pipelines, reduced): resize, random left-right flip, random
crop and a cast, per image before batching, on uint8 images as keras.datasets gives them.
"""
import numpy as np
import keras
import tensorflow as tf
from keras import layers

IMAGE_SIZE = 12
NUM_CLASSES = 4
BATCH = 8


def preprocess_image(image, label):
    image = tf.image.resize(image, (IMAGE_SIZE + 2, IMAGE_SIZE + 2))
    image = tf.image.random_crop(image, (IMAGE_SIZE, IMAGE_SIZE, 3))
    image = tf.image.random_flip_left_right(image)
    return tf.cast(image, tf.float32) / 255.0, label


def preprocess_test_image(image, label):
    image = tf.image.resize(image, (IMAGE_SIZE, IMAGE_SIZE))
    return tf.image.convert_image_dtype(image, tf.float32) / 255.0, label


def build_model():
    inputs = keras.Input(shape=(IMAGE_SIZE, IMAGE_SIZE, 3))
    x = layers.Conv2D(8, 3, activation="relu")(inputs)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(NUM_CLASSES, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="image_map_pipeline")


def make_data(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randint(0, 256, (n, 16, 16, 3)).astype("uint8")
    y = rng.randint(0, NUM_CLASSES, (n,))
    return x, y


def main():
    x, y = make_data()
    train_ds = tf.data.Dataset.from_tensor_slices((x[:48], y[:48])).shuffle(48).map(preprocess_image).batch(BATCH)
    test_ds = tf.data.Dataset.from_tensor_slices((x[48:], y[48:])).map(preprocess_test_image).batch(BATCH)
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(train_ds, epochs=2)
    loss, accuracy = model.evaluate(test_ds)
    print(f"loss {loss:.4f} accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
