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


def _image_size(images):
    """(H, W) of a batch of images as loaded (channels-last) or tensors (channels-first)."""
    return images.shape[1:3] if _channels_last(images) else images.shape[2:4]


def _window(images, i, j, h, w):
    """The (h, w) window at row i, column j of every image of the batch."""
    if _channels_last(images):
        return images[:, i : i + h, j : j + w]
    return images[:, :, i : i + h, j : j + w]


class _RandomTransform(_Transform):
    """A transform drawing its parameters per image, on every call (torchvision's draw per
    item and per epoch; here from numpy's global generator, which
    ``keras.utils.set_random_seed`` seeds: other numbers than torch's generator)."""

    random = True

    def apply(self, images):
        return np.stack([self.one(images[k : k + 1])[0] for k in range(len(images))])


class RandomHorizontalFlip(_RandomTransform):
    """transforms.RandomHorizontalFlip: the image mirrored left-right with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def one(self, image):
        return np.flip(image, axis=2 if _channels_last(image) else 3) if np.random.rand() < self.p else image


class RandomVerticalFlip(_RandomTransform):
    """transforms.RandomVerticalFlip: the image mirrored top-bottom with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def one(self, image):
        return np.flip(image, axis=1 if _channels_last(image) else 2) if np.random.rand() < self.p else image


class RandomCrop(_RandomTransform):
    """transforms.RandomCrop without padding: an (h, w) window at a uniformly drawn place."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def one(self, image):
        height, width = _image_size(image)
        h, w = self.size
        if h > height or w > width:
            raise ValueError(f"RandomCrop: the crop {(h, w)} is larger than the image {(height, width)}")
        i, j = np.random.randint(0, height - h + 1), np.random.randint(0, width - w + 1)
        return _window(image, i, j, h, w)


class RandomResizedCrop(_RandomTransform):
    """transforms.RandomResizedCrop: a window of a drawn area fraction (``scale``) and aspect
    ratio (log-uniform in ``ratio``), ten tries as torchvision's, else the central window of
    the ratio's nearest bound; resized to ``size`` (bilinear with antialiasing, as Resize)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), antialias=True):
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.scale, self.ratio = tuple(scale), tuple(ratio)

    def params(self, height, width):
        """(i, j, h, w) of the window, drawn as torchvision's get_params draws it."""
        area = height * width
        log_ratio = np.log(self.ratio)
        for _ in range(10):
            target_area = area * np.random.uniform(self.scale[0], self.scale[1])
            aspect_ratio = float(np.exp(np.random.uniform(log_ratio[0], log_ratio[1])))
            w = int(round(np.sqrt(target_area * aspect_ratio)))
            h = int(round(np.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = np.random.randint(0, height - h + 1)
                j = np.random.randint(0, width - w + 1)
                return i, j, h, w
        in_ratio = float(width) / float(height)  # (the fallback: a central crop)
        if in_ratio < min(self.ratio):
            w, h = width, int(round(width / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h, w = height, int(round(height * max(self.ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def one(self, image):
        i, j, h, w = self.params(*_image_size(image))
        return Resize(self.size)(_window(image, i, j, h, w))


class _PerItem:
    """A dataset whose transform draws at random: item i is its image through the transform
    when read (torchvision's per item and per epoch), not once for the whole set."""

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image = self.image(int(index))
        if self.transform is not None:
            image = self.transform(image[None])[0]
        return image, np.int64(self.targets[index])


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


def _folder_samples(root):
    """torchvision's ImageFolder listing: the class folders of root sorted by name, and
    (path, class index) of every image file under them, in sorted order."""
    import os

    extensions = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    samples = []
    for index, c in enumerate(classes):
        for folder, _, files in sorted(os.walk(os.path.join(root, c))):
            samples += [(os.path.join(folder, f), index) for f in sorted(files) if f.lower().endswith(extensions)]
    return classes, samples


class ImageFolder(ArrayDataset):
    """torchvision's ImageFolder: root/<class>/<image>, the classes sorted by name; each
    image (RGB) through the transform, which must make them one size."""

    def __init__(self, root, transform=None):
        self.classes, samples = _folder_samples(root)
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        images = []
        for path, _ in samples:
            image = np.asarray(keras.utils.load_img(path, color_mode="rgb"))[None]
            images.append(transform(image)[0] if transform is not None else image[0])
        super().__init__(np.stack(images), np.asarray([label for _, label in samples], dtype="int64"))


class VisionItems(_PerItem):
    """VisionDataset whose transform draws at random: the images kept as loaded, each
    through the transform when read."""

    def __init__(self, name, train=True, transform=None):
        (x_train, y_train), (x_test, y_test) = getattr(keras.datasets, name).load_data()
        images, labels = (x_train, y_train) if train else (x_test, y_test)
        self.data, self.targets = images, labels.reshape(-1).astype("int64")
        self.transform = transform

    def image(self, index):
        image = self.data[index]
        return image[..., None] if image.ndim == 2 else image


class ImageFolderItems(_PerItem):
    """ImageFolder whose transform draws at random: the files listed (classes sorted by
    name), each image read and put through the transform when its item is read."""

    def __init__(self, root, transform=None):
        self.classes, self.samples = _folder_samples(root)
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.targets = [label for _, label in self.samples]
        self.transform = transform

    def image(self, index):
        return np.asarray(keras.utils.load_img(self.samples[index][0], color_mode="rgb"))


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
