# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import math
import keras
from keras import layers


class NormalNoise(layers.Layer):
    """Normal noise of shape (batch of its input, *shape), drawn at every call (in
    training and inference alike) from the layer's own seed generator."""

    def __init__(self, shape, mean=0.0, stddev=1.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.noise_shape = tuple(shape)
        self.mean = mean
        self.stddev = stddev
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, inputs):
        return keras.random.normal(
            (keras.ops.shape(inputs)[0], *self.noise_shape),
            mean=self.mean,
            stddev=self.stddev,
            dtype=self.compute_dtype,
            seed=self.seed_generator,
        )


class TrainingSelect(layers.Layer):
    """Its first input while training, its second at inference: PyTorch's
    ``a if self.training else b`` (both inputs are computed in either mode; Keras
    passes ``training`` to the layer, True in fit, False in predict)."""

    def call(self, inputs, training=None):
        train, infer = inputs
        return train if training else infer


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


INPUT_SHAPE = (16,)


class Mean:
    """A running mean of the losses (not a module)."""

    def __init__(self, name):
        self.name = name
        self.total, self.count = 0.0, 0

    def update_state(self, value):
        self.total += float(value)
        self.count += 1


def build_model():
    """The AutoEncoder model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(16,), name="x")
    enc = layers.Dense(
        8,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(16),
        name="enc",
    )(x)
    h = layers.ReLU(name="relu")(enc)
    mu = layers.Dense(
        2,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(8),
        name="mu",
    )(h)
    logvar = layers.Dense(
        2,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(8),
        name="logvar",
    )(h)
    # the reparameterisation trick while training, the mean at inference
    eps = NormalNoise((2,), name="noise")(mu)
    scale = layers.Rescaling(0.5, name="scale")(logvar)
    exp = keras.ops.exp(scale)
    multiply = layers.Multiply(name="multiply")([exp, eps])
    add = layers.Add(name="add")([mu, multiply])
    z = TrainingSelect(name="select")([add, mu])
    clip = keras.ops.clip(z, -3.0, 3.0)
    # clip the code at inference only
    z = TrainingSelect(name="select_1")([z, clip])
    dec = layers.Dense(
        16,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(2),
        name="dec",
    )(z)
    sigmoid = layers.Activation("sigmoid", name="sigmoid")(dec)
    return keras.Model(inputs=x, outputs=sigmoid, name="AutoEncoder")


def auto_encoder_train_step(model, data):
    # transpiler: not translated: input.py:46:5: AutoEncoder.train_step is not part of the Keras model (forward does not call it): not translated
    raise NotImplementedError(
        "transpiler: input.py:46:5: AutoEncoder.train_step is not part of the Keras model (forward does not call it): not translated"
    )
