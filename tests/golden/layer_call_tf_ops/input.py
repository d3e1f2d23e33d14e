"""TensorFlow tensor functions in custom layers' call(): TensorFlow NumPy (keras.io's
tensorflow_numpy_models), ShiftViT's crop/pad shift, SimCLR's per-sample tf.eye."""

import tensorflow as tf
import tensorflow.experimental.numpy as tnp
import keras
from keras import layers


class TNPDense(layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, inputs):
        return tnp.maximum(tnp.matmul(inputs, self.w) + self.b, 0.0)


class Shift(layers.Layer):
    def build(self, input_shape):
        self.H = input_shape[1]
        self.W = input_shape[2]

    def call(self, x):
        left, right = tf.split(x, num_or_size_splits=2, axis=-1)
        crop = tf.image.crop_to_bounding_box(left, offset_height=0, offset_width=1,
                                             target_height=self.H, target_width=self.W - 1)
        left = tf.image.pad_to_bounding_box(crop, offset_height=0, offset_width=0,
                                            target_height=self.H, target_width=self.W)
        return tf.concat([left, right], axis=-1)


class ColorMix(layers.Layer):
    def call(self, images):
        batch_size = tf.shape(images)[0]
        transforms = tf.eye(4, batch_shape=[batch_size, 1]) * 0.5 + 0.125
        return tf.matmul(images, transforms)


def build_model():
    inp = keras.Input(shape=(6, 5, 3))
    x = layers.Conv2D(4, 3, padding="same")(inp)
    x = Shift()(x)
    x = ColorMix()(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = TNPDense(2)(x)
    return keras.Model(inp, out)
