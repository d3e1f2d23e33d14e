"""Two Keras models that wrap other models and train them with their own compile() and
train_step(): a GAN holding a generator and a discriminator, each with its optimizer, and a
distiller training a student against a frozen teacher's softened predictions.

Neither wrapper has a call() of its own: Keras never builds them from an input shape. The
GAN's noise comes with the data (``fit(real, noise)``), so a step is deterministic. Trained on
synthetic 6-dimensional points and 3 classes.
"""

import numpy as np
import tensorflow as tf
import keras
from keras import layers, ops

LATENT = 3
FEATURES = 6
CLASSES = 3


def build_generator():
    inputs = keras.Input(shape=(LATENT,))
    x = layers.Dense(8, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(FEATURES)(x), name="generator")


def build_discriminator():
    inputs = keras.Input(shape=(FEATURES,))
    x = layers.Dense(8, activation="tanh")(inputs)
    return keras.Model(inputs, layers.Dense(1)(x), name="discriminator")


def build_teacher():
    inputs = keras.Input(shape=(FEATURES,))
    x = layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(CLASSES)(x), name="teacher")


def build_student():
    inputs = keras.Input(shape=(FEATURES,))
    x = layers.Dense(4, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(CLASSES)(x), name="student")


class PairedGAN(keras.Model):
    """A generator and a discriminator, each updated by its own optimizer."""

    def __init__(self, generator, discriminator):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, data):
        real, noise = data
        fake = self.generator(noise)
        with tf.GradientTape() as tape:
            real_logits = self.discriminator(real, training=True)
            fake_logits = self.discriminator(fake, training=True)
            d_loss = self.loss_fn(ops.ones_like(real_logits), real_logits) + self.loss_fn(
                ops.zeros_like(fake_logits), fake_logits)
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))

        with tf.GradientTape() as tape:
            logits = self.discriminator(self.generator(noise, training=True))
            g_loss = self.loss_fn(ops.ones_like(logits), logits)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))

        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


class Distiller(keras.Model):
    """A student learning from the labels and from a teacher's softened predictions."""

    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def compile(self, optimizer, student_loss_fn, distillation_loss_fn, alpha=0.5, temperature=2.0):
        super().compile(optimizer=optimizer)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def train_step(self, data):
        x, y = data
        teacher_logits = self.teacher(x)
        with tf.GradientTape() as tape:
            student_logits = self.student(x, training=True)
            student_loss = self.student_loss_fn(y, student_logits)
            soft_teacher = ops.softmax(teacher_logits / self.temperature, axis=1)
            soft_student = ops.softmax(student_logits / self.temperature, axis=1)
            distillation_loss = self.distillation_loss_fn(soft_teacher, soft_student) * self.temperature**2
            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
        grads = tape.gradient(loss, self.student.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.student.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    def test_step(self, data):
        x, y = data
        loss = self.student_loss_fn(y, self.student(x, training=False))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


def make_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((n, FEATURES)).astype("float32")
    labels = (points[:, 0] > 0).astype("int64") + (points[:, 1] > 0.5).astype("int64")
    noise = rng.standard_normal((n, LATENT)).astype("float32")
    return points, labels, noise


def main():
    points, labels, noise = make_data()
    gan = PairedGAN(build_generator(), build_discriminator())
    gan.compile(
        d_optimizer=keras.optimizers.SGD(learning_rate=0.05),
        g_optimizer=keras.optimizers.SGD(learning_rate=0.02, momentum=0.5),
        loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    gan.fit(points, noise, epochs=2, batch_size=16)

    distiller = Distiller(build_student(), build_teacher())
    distiller.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.1),
        student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        distillation_loss_fn=keras.losses.KLDivergence(),
        alpha=0.3,
        temperature=3.0,
    )
    distiller.fit(points, labels, epochs=2, batch_size=16)
    print("student loss:", distiller.evaluate(points, labels, batch_size=16))


if __name__ == "__main__":
    main()
