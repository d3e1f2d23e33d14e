"""Small CNN trained on a folder of images, one sub-folder per class (keras.io's image
classification from scratch, reduced).

``keras.utils.image_dataset_from_directory`` reads ``<data>/flowers/<class>/*.png`` (the data
folder is $TRANSPILED_DATA_HOME, else ./data): a shuffled training subset and its validation
subset, split with a seed; the class names come from the folders. The training batches are
mapped (a left-right flip of each image, channels-last as Keras gives them) and prefetched.
"""
import os

import keras
import tensorflow as tf
from keras import layers

IMAGE_SIZE = (16, 16)
BATCH = 8


def augment(images, labels):
    return tf.image.flip_left_right(images), labels


def build_model(num_classes=2):
    inputs = keras.Input(shape=IMAGE_SIZE + (3,))
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Conv2D(8, 3, activation="relu")(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Flatten()(x)
    outputs = layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="image_folder_classifier")


def main():
    folder = os.path.join(os.environ.get("TRANSPILED_DATA_HOME", "data"), "flowers")
    train_ds = keras.utils.image_dataset_from_directory(
        folder, validation_split=0.25, subset="training", seed=1337, image_size=IMAGE_SIZE, batch_size=BATCH
    )
    val_ds = keras.utils.image_dataset_from_directory(
        folder, validation_split=0.25, subset="validation", seed=1337, image_size=IMAGE_SIZE, batch_size=BATCH
    )
    print("classes:", train_ds.class_names)
    train_ds = train_ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(train_ds, epochs=2, validation_data=val_ds)
    loss, accuracy = model.evaluate(val_ds)
    print(f"loss {loss:.4f} accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
