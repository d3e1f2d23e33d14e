# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""MNIST from torchvision with ToTensor + Normalize: the model's input shape comes from the data."""

import math
import numpy as np
import keras
from keras import layers


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


def _is_pil(image):
    """Whether ``image`` is one PIL image (what a user's dataset hands its transform per item)."""
    return not isinstance(image, np.ndarray) and hasattr(image, "getbands")


class _Transform:
    """A transform of a batch of images; one PIL image (a user dataset's item) goes through
    as a batch of one (its array channels-last, a grayscale one with one channel) and comes
    back without the batch axis, as torchvision's transforms take one image."""

    def __call__(self, images):
        if _is_pil(images):
            image = np.asarray(images)
            return self.apply((image[..., None] if image.ndim == 2 else image)[None])[0]
        return self.apply(images)


class Compose(_Transform):
    """torchvision's transforms.Compose over batches of images (numpy)."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def apply(self, images):
        for transform in self.transforms:
            images = transform(images)
        return images


class ToTensor(_Transform):
    """transforms.ToTensor: uint8 (N, H, W, C) images → float32 (N, C, H, W) in [0, 1]."""

    def apply(self, images):
        return np.transpose(
            np.asarray(images, dtype="float32") / np.float32(255), (0, 3, 1, 2)
        )


class Normalize(_Transform):
    """transforms.Normalize: (x - mean) / std per channel of (N, C, H, W) tensors."""

    def __init__(self, mean, std, inplace=False):
        self.mean = np.asarray(mean, dtype="float32").reshape(1, -1, 1, 1)
        self.std = np.asarray(std, dtype="float32").reshape(1, -1, 1, 1)

    def apply(self, images):
        return (images - self.mean) / self.std


class ArrayDataset:
    """torch's TensorDataset over numpy arrays: item i is the tuple of every array's row i."""

    def __init__(self, *arrays):
        self.arrays = arrays

    def __len__(self):
        return len(self.arrays[0])

    def __getitem__(self, index):
        return tuple(array[index] for array in self.arrays)


class VisionDataset(ArrayDataset):
    """torchvision's MNIST / FashionMNIST / CIFAR10 / CIFAR100 from keras.datasets: the
    images (uint8, channels-last) through the transform, and the labels as int64."""

    def __init__(self, name, train=True, transform=None):
        (x_train, y_train), (x_test, y_test) = getattr(keras.datasets, name).load_data()
        images, labels = (x_train, y_train) if train else (x_test, y_test)
        # torchvision's raw arrays: uint8 (N, 28, 28) / (N, 32, 32, 3) images, int64 labels
        self.data, self.targets = images, labels.reshape(-1).astype("int64")
        if images.ndim == 3:
            images = images[..., None]
        if transform is not None:
            images = transform(images)
        super().__init__(images, labels.reshape(-1).astype("int64"))


class ArrayLoader:
    """torch's DataLoader over an ArrayDataset: batches of numpy arrays, in a new random
    order on every pass when shuffle is set."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self.dataset[order[start : start + self.batch_size]]


class TorchOptimizer:
    """What the optimizers computing as torch's share (the first of their bases): their own
    hyperparameters (``HYPER``: name -> default, set as attributes and saved by get_config),
    torch's gradient (dense, plus the L2 weight decay torch adds to it) and one slot
    variable per parameter for each entry of ``SLOTS`` (attribute -> variable name)."""

    HYPER: dict = {}
    SLOTS: dict = {}
    LEARNING_RATE = None  # torch's default, for a class on keras.optimizers.Optimizer

    def __init__(self, **kwargs):
        own = {name: kwargs.pop(name, default) for name, default in self.HYPER.items()}
        if self.LEARNING_RATE is not None:
            kwargs.setdefault("learning_rate", self.LEARNING_RATE)
        super().__init__(**kwargs)
        for name, value in own.items():
            setattr(self, name, value)

    def get_config(self):
        return {
            **super().get_config(),
            **{name: getattr(self, name) for name in self.HYPER},
        }

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        for attribute, name in self.SLOTS.items():
            setattr(
                self,
                attribute,
                [self.add_variable_from_reference(v, name) for v in variables],
            )

    def slots(self, variable):
        """The slot variables of parameter ``variable``, in the order of ``SLOTS``."""
        index = self._get_variable_index(variable)
        return [getattr(self, attribute)[index] for attribute in self.SLOTS]

    def torch_gradient(self, gradient, variable, dense=True):
        """The gradient torch's step reads: dense (a sparse one, an embedding's, made dense, or
        its repeated rows would be squared apart in a second moment), plus the L2 weight decay.
        """
        gradient = keras.ops.cast(gradient, variable.dtype)
        if dense:
            # (zeros of the variable's shape, not zeros_like(variable): jax refuses a variable there)
            gradient = keras.ops.add(
                keras.ops.zeros(tuple(variable.shape), variable.dtype), gradient
            )
        if self.l2:
            gradient = keras.ops.add(gradient, keras.ops.multiply(self.l2, variable))
        return gradient


@keras.saving.register_keras_serializable(package="transpiler")
class TorchSGD(TorchOptimizer, keras.optimizers.SGD):
    """SGD as torch.optim.SGD computes it: weight decay is an L2 term added to the gradient,
    and the momentum buffer sums gradients while the learning rate scales each step
    (b = momentum * b + g; p -= lr * b). Keras' SGD sums lr-scaled steps instead, which
    differs once the learning rate changes. With dampening d the buffer adds (1 - d) * g
    from the second step on (the first step's buffer is g itself, as torch's)."""

    HYPER = {"l2": 0.0, "dampening": 0.0}

    def update_step(self, gradient, variable, learning_rate):
        lr = keras.ops.cast(learning_rate, variable.dtype)
        gradient = self.torch_gradient(gradient, variable, dense=False)
        if self.momentum == 0:
            self.assign_sub(variable, keras.ops.multiply(lr, gradient))
            return
        buffer = self.momentums[self._get_variable_index(variable)]
        added = gradient
        if self.dampening:
            first = keras.ops.equal(self.iterations, 0)
            added = keras.ops.where(
                first, gradient, keras.ops.multiply(1.0 - self.dampening, gradient)
            )
        self.assign(
            buffer, keras.ops.add(keras.ops.multiply(self.momentum, buffer), added)
        )
        if self.nesterov:
            step = keras.ops.add(gradient, keras.ops.multiply(self.momentum, buffer))
        else:
            step = buffer
        self.assign_sub(variable, keras.ops.multiply(lr, step))


class NLLLoss(keras.losses.Loss):
    """torch's NLLLoss: minus the log-probability the output gives the target class."""

    def call(self, y_true, y_pred):
        y_true = keras.ops.reshape(
            keras.ops.cast(y_true, "int32"), keras.ops.shape(y_pred)[:-1]
        )
        picked = keras.ops.take_along_axis(
            y_pred, keras.ops.expand_dims(y_true, -1), axis=-1
        )
        return -keras.ops.squeeze(picked, -1)


def Net():
    """The Net model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(28, 28, 1), name="x")
    conv1 = layers.Conv2D(
        4,
        5,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(25),
        name="conv1",
    )(x)
    max_pool2d = layers.MaxPooling2D(2, name="max_pool2d")(conv1)
    relu = layers.ReLU(name="relu")(max_pool2d)
    flatten = layers.Flatten(name="flatten")(relu)
    fc1 = layers.Dense(
        10,
        kernel_initializer=torch_kernel_init(),
        bias_initializer=torch_uniform_init(576),
        name="fc1",
    )(flatten)
    log_softmax = keras.ops.log_softmax(fc1, axis=-1)
    return keras.Model(inputs=x, outputs=log_softmax, name="Net")


def main():
    keras.utils.set_random_seed(1)
    transform = Compose(
        [
            ToTensor(),
            Normalize((0.1307,), (0.3081,)),
        ]
    )
    train_set = VisionDataset("mnist", train=True, transform=transform)
    test_set = VisionDataset("mnist", train=False, transform=transform)
    test_loader = ArrayLoader(test_set, batch_size=100)
    model = Net()
    optimizer = TorchSGD(learning_rate=0.05, momentum=0.5)
    # transpiler: the training loop (lines 33-40) is model.fit: it batches the arrays, steps
    # the optimizer and reports the loss per epoch; its logs stand for the loop's own code:
    # the prints (line 40)
    model.compile(optimizer=optimizer, loss=NLLLoss())
    model.fit(
        np.transpose(train_set.arrays[0], (0, 2, 3, 1)),
        train_set.arrays[1],
        batch_size=32,
        epochs=2,
        shuffle=True,
        verbose=2,
    )
    correct = 0
    for data, target in test_loader:
        correct += (
            (
                model.predict(np.transpose(data, (0, 2, 3, 1)), verbose=0).argmax(
                    axis=1
                )
                == target
            )
            .sum()
            .item()
        )
    print(f"accuracy {correct / len(test_loader.dataset):.3f}")


if __name__ == "__main__":
    main()
