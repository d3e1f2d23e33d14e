"""A distilled ViT-like head (keras.io deit.py's shape of code): tokens made with tf.Variable
in the base class's __init__, a subclass extending it, an `if not training or flag:` test,
and UnitNormalization of the embedding (keras.io metric_learning.py)."""
import keras
import numpy as np
import tensorflow as tf
from keras import layers


class Base(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = layers.Dense(16)
        self.cls_token = tf.Variable(tf.zeros((1, 1, 16)), trainable=True, name="cls")
        self.head = layers.Dense(8)


class Distilled(Base):
    def __init__(self, regular_training=False, **kwargs):
        super().__init__(**kwargs)
        self.regular_training = regular_training
        self.dist_token = tf.Variable(tf.zeros((1, 1, 16)), name="dist")
        self.head_dist = layers.Dense(8)
        self.norm = layers.UnitNormalization()

    def call(self, inputs, training=False):
        n = tf.shape(inputs)[0]
        x = self.proj(inputs)
        cls_token = tf.tile(self.cls_token, (n, 1, 1))
        dist_token = tf.tile(self.dist_token, (n, 1, 1))
        x = tf.concat([cls_token, dist_token, x], axis=1)
        a, b = self.head(x[:, 0]), self.head_dist(x[:, 1])
        if not training or self.regular_training:
            return self.norm((a + b) / 2)
        elif training:
            return self.norm(a - b)


model = Distilled()
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(32, 10, 4), np.random.rand(32, 8), batch_size=8, epochs=1)
