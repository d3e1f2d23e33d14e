"""torchvision's datasets and transforms without torch, for generated Keras programs
(PyTorch -> Keras; frontend_ast/torch/vision.py records them).

Datasets are arrays, as the Keras program's other data: ``VisionDataset`` loads
``keras.datasets.<name>`` (the same images and labels as torchvision's MNIST,
FashionMNIST, CIFAR10 and CIFAR100; their train/test splits), ``ImageFolder`` reads the
class folders with ``keras.utils.load_img`` (classes sorted by name, as torchvision);
either applies its transform to the whole set of images once and keeps
``arrays = (images, labels)``. The transforms work on a batch of images: uint8
``(N, H, W, C)`` as loaded (torchvision's PIL images), and after ``ToTensor`` float32
``(N, C, H, W)`` scaled to [0, 1] — what torch's model sees; the Keras program changes
the layout where it feeds the channels-last model. ``Resize`` is bilinear with
antialiasing (``keras.ops.image.resize``; PIL's filter differs in the last bits).
"""

import os

import keras
import numpy as np

from transpiler.runtime.keras.data import ArrayDataset


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


def _channels_last(images):
    """Whether a batch is still images as loaded (uint8, channels-last) rather than tensors."""
    return images.dtype == np.uint8 and images.ndim == 4 and images.shape[-1] in (1, 3, 4)


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
        return np.transpose(np.asarray(images, dtype="float32") / np.float32(255), (0, 3, 1, 2))


class PILToTensor(_Transform):
    """transforms.PILToTensor: uint8 (N, H, W, C) images → uint8 (N, C, H, W)."""

    def apply(self, images):
        return np.transpose(np.asarray(images), (0, 3, 1, 2))


class ToImage(PILToTensor):
    """transforms.v2.ToImage: uint8 (N, H, W, C) images → uint8 (N, C, H, W)."""


class ToDtype(_Transform):
    """transforms.v2.ToDtype (and ConvertImageDtype): the dtype, uint8 → float scaled by 1/255
    when scale is set."""

    def __init__(self, dtype, scale=False):
        self.dtype, self.scale = dtype, scale

    def apply(self, images):
        images = np.asarray(images)
        if _channels_last(images):
            images = np.transpose(images, (0, 3, 1, 2))
        if self.scale and images.dtype == np.uint8 and self.dtype != "uint8":
            return images.astype(self.dtype) / np.asarray(255, dtype=self.dtype)
        return images.astype(self.dtype)


class Normalize(_Transform):
    """transforms.Normalize: (x - mean) / std per channel of (N, C, H, W) tensors."""

    def __init__(self, mean, std, inplace=False):
        self.mean = np.asarray(mean, dtype="float32").reshape(1, -1, 1, 1)
        self.std = np.asarray(std, dtype="float32").reshape(1, -1, 1, 1)

    def apply(self, images):
        return (images - self.mean) / self.std


class Resize(_Transform):
    """transforms.Resize: bilinear with antialiasing; an int sets the smaller edge."""

    def __init__(self, size, antialias=True):
        self.size = size

    def apply(self, images):
        last = _channels_last(images)
        x = images if last else np.transpose(images, (0, 2, 3, 1))
        h, w = x.shape[1:3]
        if isinstance(self.size, int):
            size = (
                (self.size, int(self.size * w / h))
                if h <= w
                else (int(self.size * h / w), self.size)
            )
        else:
            size = tuple(self.size)
        out = keras.ops.convert_to_numpy(
            keras.ops.image.resize(
                x.astype("float32"),
                size,
                interpolation="bilinear",
                antialias=True,
                data_format="channels_last",
            )
        )
        if last:
            return np.clip(np.round(out), 0, 255).astype(images.dtype)
        return np.transpose(out.astype(images.dtype), (0, 3, 1, 2))


class CenterCrop(_Transform):
    """transforms.CenterCrop: the central (h, w) window (an int: a square)."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def apply(self, images):
        last = _channels_last(images)
        h, w = images.shape[1:3] if last else images.shape[2:4]
        th, tw = self.size
        top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
        if last:
            return images[:, top : top + th, left : left + tw]
        return images[:, :, top : top + th, left : left + tw]


class Grayscale(_Transform):
    """transforms.Grayscale: ITU-R 601-2 luma (PIL's weights), repeated to num_output_channels."""

    def __init__(self, num_output_channels=1):
        self.channels = num_output_channels

    def apply(self, images):
        last = _channels_last(images)
        x = images.astype("float32") if last else np.transpose(images, (0, 2, 3, 1))
        gray = (
            x[..., :1] * 0.299 + x[..., 1:2] * 0.587 + x[..., 2:3] * 0.114
            if x.shape[-1] == 3
            else x
        )
        gray = np.repeat(gray, self.channels, axis=-1)
        if last:
            return np.clip(np.round(gray), 0, 255).astype(images.dtype)
        return np.transpose(gray, (0, 3, 1, 2)).astype(images.dtype)


class Lambda(_Transform):
    """transforms.Lambda: the function, applied to each image of the batch."""

    def __init__(self, lambd):
        self.lambd = lambd

    def apply(self, images):
        return np.stack([np.asarray(self.lambd(image)) for image in images])


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


class ImageFolder(ArrayDataset):
    """torchvision's ImageFolder: root/<class>/<image>, the classes sorted by name; each
    image (RGB) through the transform, which must make them one size."""

    EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")

    def __init__(self, root, transform=None):
        import os

        self.classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        images, labels = [], []
        for c in self.classes:
            for folder, _, files in sorted(os.walk(os.path.join(root, c))):
                for f in sorted(files):
                    if f.lower().endswith(self.EXTENSIONS):
                        image = np.asarray(
                            keras.utils.load_img(os.path.join(folder, f), color_mode="rgb")
                        )[None]
                        images.append(transform(image)[0] if transform is not None else image[0])
                        labels.append(self.class_to_idx[c])
        super().__init__(np.stack(images), np.asarray(labels, dtype="int64"))


class FakeData:
    """torchvision's FakeData: ``size`` items, item i an image of ``image_size`` (C, H, W)
    and a label below ``num_classes``, drawn from a generator seeded by i + random_offset
    (the same item on every read, as torchvision's; numpy's draws, not torch's): uniform
    uint8 pixels as loaded (channels-last), through the transform."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, random_offset=0):
        self.size, self.image_size, self.num_classes = size, tuple(image_size), num_classes
        self.transform, self.random_offset = transform, random_offset

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"FakeData index {index} out of range")
        rng = np.random.default_rng(int(index) + self.random_offset)
        c, h, w = self.image_size
        image = rng.integers(0, 256, size=(1, h, w, c), dtype=np.uint8)
        label = np.int64(rng.integers(0, self.num_classes))
        return (self.transform(image)[0] if self.transform is not None else image[0]), label
