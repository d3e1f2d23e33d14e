# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
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


INPUT_SHAPE = (16,)


class Mean:
    """A running mean of the losses (not a module)."""

    def __init__(self, name):
        self.name = name
        self.total, self.count = 0.0, 0

    def update_state(self, value):
        self.total += float(value)
        self.count += 1


class AutoEncoder(keras.Model):
    """The AutoEncoder model, translated from PyTorch (channels-last inputs); a subclass since
    its forward branches on ``self.training`` (Keras passes ``training``: True in fit,
    False in evaluate and predict)."""

    def __init__(self, name="AutoEncoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.enc = layers.Dense(8, name="enc")
        self.relu = layers.ReLU(name="relu")
        self.mu = layers.Dense(2, name="mu")
        self.logvar = layers.Dense(2, name="logvar")
        self.noise = NormalNoise((2,), name="noise")
        self.scale = layers.Rescaling(0.5, name="scale")
        self.multiply = layers.Multiply(name="multiply")
        self.add = layers.Add(name="add")
        self.dec = layers.Dense(16, name="dec")
        self.sigmoid = layers.Activation("sigmoid", name="sigmoid")
        # build every layer now, also those only one mode calls (torch creates the
        # weights in __init__; load_weights needs them)
        x = keras.Input(shape=(16,), name="x")
        self(x, training=True)
        self(x, training=False)

    def call(self, x, training=None):
        enc = self.enc(x)
        h = self.relu(enc)
        mu = self.mu(h)
        if training:
            logvar = self.logvar(h)
            # the reparameterisation trick while training, the mean at inference
            eps = self.noise(mu)
            scale = self.scale(logvar)
            exp = keras.ops.exp(scale)
            multiply = self.multiply([exp, eps])
            z = self.add([mu, multiply])
        else:
            z = mu
        # clip the code at inference only
        if not training:
            z = keras.ops.clip(z, -3.0, 3.0)
        dec = self.dec(z)
        return self.sigmoid(dec)


def build_model():
    """The AutoEncoder model, translated from PyTorch (channels-last inputs)."""
    return AutoEncoder()


def auto_encoder_train_step(model, data):
    # transpiler: not translated: input.py:46:5: AutoEncoder.train_step: the model's own training step is not translated (train_step: one self.optimizer.zero_grad(), loss.backward() and self.optimizer.step(), in that order, at the method's top level)
    raise NotImplementedError(
        "transpiler: input.py:46:5: AutoEncoder.train_step: the model's own training step is not translated (train_step: one self.optimizer.zero_grad(), loss.backward() and self.optimizer.step(), in that order, at the method's top level)"
    )
