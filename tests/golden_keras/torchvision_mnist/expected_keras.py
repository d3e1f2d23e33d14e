# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""MNIST from torchvision with ToTensor + Normalize: the model's input shape comes from the data."""

import numpy as np
import keras
from keras import layers


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
    conv1 = layers.Conv2D(4, 5, name="conv1")(x)
    max_pool2d = layers.MaxPooling2D(2, name="max_pool2d")(conv1)
    relu = layers.ReLU(name="relu")(max_pool2d)
    flatten = layers.Flatten(name="flatten")(relu)
    fc1 = layers.Dense(10, name="fc1")(flatten)
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
    optimizer = keras.optimizers.SGD(learning_rate=0.05, momentum=0.5)
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
