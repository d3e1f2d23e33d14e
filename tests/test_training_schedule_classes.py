"""The script's own learning-rate schedule (``class S(keras.optimizers.schedules.
LearningRateSchedule)`` with ``__call__(step)``, keras.io's shiftvit WarmUpCosine and
transformer_asr CustomSchedule) given to an optimizer: the class becomes a plain class of
the same ``__call__`` in torch (tf ops translated), and the optimizer's rate is its value at
each optimizer step (a LambdaLR on base rate 1, stepped per batch as Keras reads
``optimizer.iterations``). It was a stub ("AdamW(learning_rate=...) cannot be decided
statically"). Numerics: the Keras program and the generated one, from the same weights on
the same batches, report the same epoch losses."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (torch before tensorflow in one process)

from harness import program_pair
from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class WarmUpCosine(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, lr_start, lr_max, warmup_steps, total_steps):
        super().__init__()
        self.lr_start = lr_start
        self.lr_max = lr_max
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.pi = tf.constant(np.pi)

    def __call__(self, step):
        cos_annealed_lr = tf.cos(
            self.pi
            * (tf.cast(step, tf.float32) - self.warmup_steps)
            / tf.cast(self.total_steps - self.warmup_steps, tf.float32)
        )
        learning_rate = 0.5 * self.lr_max * (1 + cos_annealed_lr)
        slope = (self.lr_max - self.lr_start) / self.warmup_steps
        warmup_rate = slope * tf.cast(step, tf.float32) + self.lr_start
        learning_rate = tf.where(step < self.warmup_steps, warmup_rate, learning_rate)
        return tf.where(step > self.total_steps, 0.0, learning_rate, name="learning_rate")


class StepDecay(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, init_lr=0.1, final_lr=0.01, steps_per_epoch=4):
        super().__init__()
        self.init_lr = init_lr
        self.final_lr = final_lr
        self.steps_per_epoch = steps_per_epoch

    def calculate_lr(self, epoch):
        return tf.math.maximum(self.final_lr, self.init_lr - 0.04 * epoch)

    def __call__(self, step):
        epoch = step // self.steps_per_epoch
        epoch = tf.cast(epoch, "float32")
        return self.calculate_lr(epoch)


def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(3)(x))


def train(model, x, y):
    schedule = SCHEDULE
    optimizer = keras.optimizers.OPTIMIZER(learning_rate=schedule)
    model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return history.history["loss"]


def main():
    rng = np.random.default_rng(0)
    print(train(build_model(), rng.normal(size=(64, 8)).astype("float32"), rng.integers(0, 3, size=64)))


if __name__ == "__main__":
    main()
'''

CASES = [
    ("WarmUpCosine(lr_start=0.01, lr_max=0.2, warmup_steps=3, total_steps=10)", "SGD"),
    ("StepDecay()", "SGD"),
    ("StepDecay(init_lr=0.01, final_lr=0.001)", "AdamW"),
]


@pytest.mark.parametrize("schedule,optimizer", CASES)
def test_a_schedule_class_of_the_script_sets_the_rate_of_every_step_as_in_keras(schedule, optimizer):
    src = PROGRAM.replace("SCHEDULE", schedule).replace("OPTIMIZER", optimizer)
    result = translate(src, "schedules.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "class WarmUpCosine(LearningRateSchedule):" in result.text
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 3, "schedules")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = rng.integers(0, 3, size=64)
    expected = np.array(keras_mod.train(kmodel, x, y))
    got = np.array(torch_mod.train(tmodel, x, y))
    assert expected.shape == got.shape == (3,)
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (expected, got)


def test_the_schedule_object_gives_the_rate_of_a_step_like_keras():
    """``schedule(step)`` called by the script itself (to plot it): the torch object's values."""
    src = PROGRAM.replace("SCHEDULE", "StepDecay()").replace("OPTIMIZER", "SGD")
    result = translate(src, "schedules.py")
    keras_mod, torch_mod, _, _ = program_pair(src, result, 3, "schedules")
    for cls, args in (("WarmUpCosine", (0.01, 0.2, 3, 10)), ("StepDecay", ())):
        k, t = getattr(keras_mod, cls)(*args), getattr(torch_mod, cls)(*args)
        for step in (0, 1, 2, 3, 5, 9, 11):
            assert np.isclose(float(t(torch.tensor(step))), float(k(step)), rtol=1e-6), (cls, step)


BUILT_IN = '''
import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(3)(x))


def train(model, x, y):
    steps_per_epoch = len(x) // 16
    schedule = keras.optimizers.schedules.SCHEDULE
    rates = [float(schedule(step)) for step in range(8)]
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=schedule),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return rates + history.history["loss"]


def main():
    rng = np.random.default_rng(0)
    print(train(build_model(), rng.normal(size=(64, 8)).astype("float32"), rng.integers(0, 3, size=64)))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("schedule", [
    "ExponentialDecay(0.2, decay_steps=steps_per_epoch // 2, decay_rate=0.5, staircase=True)",
    "CosineDecay(0.2, decay_steps=steps_per_epoch + 3)",
])
def test_a_built_in_schedule_the_script_reads_itself_gives_keras_rates(schedule):
    """``schedule(step)`` read by the script (pointnet_segmentation plots it) and decay steps
    computed from the data: the torch object gives Keras' rates, the optimizer trains on them."""
    src = BUILT_IN.replace("SCHEDULE", schedule)
    result = translate(src, "built_in_schedules.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "schedule = ScheduleFunction(" in result.text
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 3, "built_in_schedules")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = rng.integers(0, 3, size=64)
    expected = np.array(keras_mod.train(kmodel, x, y))
    got = np.array(torch_mod.train(tmodel, x, y))
    assert expected.shape == got.shape == (11,)
    assert len(set(np.round(expected[:8], 6))) > 1  # (the rate changes within the steps read)
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (expected, got)
