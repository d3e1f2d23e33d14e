# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""Two models trained in alternation (a GAN): a custom step, a Keras train_step run by fit."""

import numpy as np
import tensorflow as tf
import keras
from keras import layers


def accumulate_gradients(tape, loss, model, gradients=None):
    """loss.backward() for model's weights: the gradient of loss adds to the gradients
    gathered since the model's zero_grad() (None), as torch accumulates them in .grad.
    """
    with tape.stop_recording():
        new = tape.gradient(
            loss,
            model.trainable_variables,
            unconnected_gradients=tf.UnconnectedGradients.ZERO,
        )
    if gradients is None:
        return new
    return [old + grad for old, grad in zip(gradients, new)]


def apply_gradients(tape, optimizer, model, gradients):
    """optimizer.step(): the gathered gradients update the model's weights."""
    with tape.stop_recording():
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))


INPUT_SHAPE = (4,)
DISCRIMINATOR_INPUT_SHAPE = (6,)


def build_model():
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(4,), name="x"),
            layers.Dense(8, name="linear_0"),
            layers.ReLU(name="relu_1"),
            layers.Dense(6, name="linear_2"),
        ],
        name="build_model",
    )
    return model


def build_discriminator():
    """The build_discriminator model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(6,), name="x"),
            layers.Dense(8, name="linear_0"),
            layers.LeakyReLU(negative_slope=0.2, name="leakyrelu_1"),
            layers.Dense(1, name="linear_2"),
        ],
        name="build_discriminator",
    )
    return model


class Trainer(keras.Model):
    """The training step of the loop in main() (lines 27-40), for fit to run. It is not
    the step compile() builds: disc and gen are trained in one step, each by its own
    optimizer. fit logs loss_d, loss_g (each averaged over the epoch's batches) in
    place of the loop's own reporting: the prints (line 40).
    """

    def __init__(self, gen, disc, opt_d, opt_g, criterion):
        super().__init__()
        self.gen = gen
        self.disc = disc
        self.opt_d = opt_d
        self.opt_g = opt_g
        self.criterion = criterion
        self.trackers = [
            keras.metrics.Mean(name="loss_d"),
            keras.metrics.Mean(name="loss_g"),
        ]

    @property
    def metrics(self):
        return self.trackers

    def train_step(self, data):
        gen, disc, opt_d, opt_g, criterion = (
            self.gen,
            self.disc,
            self.opt_d,
            self.opt_g,
            self.criterion,
        )
        real = data
        with tf.GradientTape(persistent=True) as tape:
            ones = np.ones((real.shape[0], 1), dtype="float32")
            zeros = np.zeros((real.shape[0], 1), dtype="float32")
            fake = gen(
                np.random.standard_normal((real.shape[0], 4)).astype("float32"),
                training=True,
            )
            disc_grads = None  # opt_d.zero_grad()
            loss_d = criterion(ones, disc(real, training=True)) + criterion(
                zeros, disc(keras.ops.stop_gradient(fake), training=True)
            )
            # loss_d.backward()
            disc_grads = accumulate_gradients(tape, loss_d, disc, disc_grads)
            apply_gradients(tape, opt_d, disc, disc_grads)  # opt_d.step()
            gen_grads = None  # opt_g.zero_grad()
            loss_g = criterion(ones, disc(fake, training=True))
            # loss_g.backward()
            gen_grads = accumulate_gradients(tape, loss_g, gen, gen_grads)
            apply_gradients(tape, opt_g, gen, gen_grads)  # opt_g.step()
        for tracker, value in zip(self.trackers, (loss_d, loss_g)):
            tracker.update_state(value)
        return {tracker.name: tracker.result() for tracker in self.trackers}


def main():
    keras.utils.set_random_seed(0)
    data = np.random.RandomState(0).randn(64, 6).astype("float32")
    gen, disc = build_model(), build_discriminator()
    criterion = keras.losses.BinaryCrossentropy(from_logits=True)
    opt_g = keras.optimizers.Adam(
        learning_rate=0.0002, beta_1=0.5, beta_2=0.999, epsilon=1e-08
    )
    opt_d = keras.optimizers.Adam(
        learning_rate=0.0002, beta_1=0.5, beta_2=0.999, epsilon=1e-08
    )
    # transpiler: the training loop (lines 27-40) is fit running Trainer.train_step, its
    # custom step, on the loader's batches
    trainer = Trainer(gen, disc, opt_d, opt_g, criterion)
    # transpiler: the step computes with numpy or Python numbers (np.ones, np.zeros,
    # np.random.standard_normal): fit runs it eagerly (a traced step would keep their values
    # from its first call)
    trainer.compile(run_eagerly=True)
    trainer.fit(data, batch_size=16, epochs=2, shuffle=True, verbose=2)


if __name__ == "__main__":
    main()
