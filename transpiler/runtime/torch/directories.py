"""``keras.utils.image_dataset_from_directory`` for generated PyTorch programs.

The same files as Keras finds them (``main_directory/<class>/...``: classes in alphanumeric
order of their folders, or ``class_names``' order; files walked as Keras walks them), the
same labels, the same global shuffle of the file list (``np.random.RandomState(seed)``) and so
the same training/validation split; each image decoded with PIL and resized as
``tf.image.resize`` does (half-pixel centres: bilinear, or "nearest" rounding down), in a
``torch.utils.data.Dataset`` batched by a DataLoader (``BatchLoader``, with tf.data's ``take``).

Shuffling: Keras also shuffles the (already shuffled) files again at every pass through a
buffer of ``batch_size * 8``; the DataLoader reshuffles them all at every pass instead. Images
come channels-last as Keras gives them, or channels-first (``data_format="channels_first"``:
the translation asks for it when the model takes channels-first images).
"""

import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import Dataset

from transpiler.runtime.torch.timeseries import BatchLoader

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def valid_files(directory, follow_links, formats):
    """(folder, file name) of the files under ``directory`` with one of ``formats``, in Keras'
    order (folders sorted by path, files sorted by name)."""
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda x: x[0]):
        for fname in sorted(files):
            if fname.lower().endswith(formats):
                yield root, fname


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None,
                    follow_links=False, verbose=True):
    """Keras' index of a data folder: (file paths, integer labels or None, class names), the
    paths shuffled once with ``np.random.RandomState(seed)`` when ``shuffle``."""
    if labels == "inferred":
        subdirs = [d for d in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError(f"The `class_names` passed did not match the names of the subdirectories of the "
                                 f"target directory. Expected: {subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = list(class_names)
    else:
        if class_names is not None:
            raise ValueError("`class_names` goes only with labels='inferred'")
        subdirs = [""]
    found, found_labels = [], []
    for index, subdir in enumerate(subdirs):
        folder = os.path.join(directory, subdir)
        name = os.path.basename(folder)
        for root, fname in valid_files(folder, follow_links, formats):
            found.append(os.path.join(name, os.path.relpath(os.path.join(root, fname), folder)))
            found_labels.append(index)
    if labels == "inferred":
        labels, names = np.asarray(found_labels, dtype="int32"), subdirs
    elif labels is None:
        names = None
    else:
        if len(labels) != len(found):
            raise ValueError(f"Expected the lengths of `labels` to match the number of files in the target "
                             f"directory. len(labels) is {len(labels)} while we found {len(found)} files in "
                             f"directory {directory}.")
        names = [str(label) for label in sorted(set(labels))]
        labels = np.asarray(labels)
    if verbose:
        print(f"Found {len(found)} files." if labels is None else
              f"Found {len(found)} files belonging to {len(names)} classes.")
    paths = [os.path.join(directory, f) for f in found]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return paths, labels, names


def training_or_validation_split(samples, labels, validation_split, subset):
    """Keras' split: the last ``int(validation_split * n)`` samples are the validation ones."""
    if not validation_split:
        return samples, labels
    count = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - count} files for training.")
        return samples[:-count], None if labels is None else labels[:-count]
    if subset == "validation":
        print(f"Using {count} files for validation.")
        return samples[-count:], None if labels is None else labels[-count:]
    raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')


def resize_image(image, size, interpolation="bilinear"):
    """A (height, width, channels) float32 tensor resized as ``tf.image.resize`` resizes it
    (half-pixel centres; "nearest" takes floor((i + 0.5) * scale), torch's nearest-exact)."""
    modes = {"bilinear": "bilinear", "nearest": "nearest-exact"}
    if interpolation not in modes:
        raise ValueError(f"interpolation={interpolation!r}: only 'bilinear' and 'nearest' are translated")
    if tuple(image.shape[:2]) == tuple(size):
        return image  # (TensorFlow's resize keeps the values then)
    extra = {"align_corners": False} if modes[interpolation] == "bilinear" else {}
    out = F.interpolate(image.permute(2, 0, 1)[None], size=tuple(size), mode=modes[interpolation], **extra)
    return out[0].permute(1, 2, 0)


def labelled(item, labels, index, label_mode, num_classes):
    """``item`` (an image, a text) with its label as Keras' ``label_mode`` gives it: a float
    ``[0.]``/``[1.]`` ("binary"), a one-hot float vector ("categorical"), an int64 index
    ("int"); ``item`` alone when there are no labels."""
    if labels is None or not label_mode:
        return item
    label = int(labels[index])
    if label_mode == "binary":
        return item, torch.tensor([float(label)])
    if label_mode == "categorical":
        return item, F.one_hot(torch.tensor(label), num_classes).float()
    return item, torch.tensor(label, dtype=torch.int64)


class ImageFiles(Dataset):
    """Image files as float32 tensors of ``image_size`` (and their labels, when given)."""

    def __init__(self, paths, labels, label_mode, num_classes, image_size, color_mode, interpolation,
                 data_format):
        self.paths, self.labels, self.label_mode, self.num_classes = paths, labels, label_mode, num_classes
        self.image_size, self.color_mode, self.interpolation = image_size, color_mode, interpolation
        self.data_format = data_format

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        mode = {"rgb": "RGB", "rgba": "RGBA", "grayscale": "L"}[self.color_mode]
        with Image.open(self.paths[index]) as img:
            array = np.asarray(img.convert(mode) if img.mode != mode else img, dtype=np.float32)
        image = torch.from_numpy(array.reshape(*array.shape[:2], -1).copy())
        image = resize_image(image, self.image_size, self.interpolation)
        if self.data_format == "channels_first":
            image = image.permute(2, 0, 1).contiguous()
        return labelled(image, self.labels, index, self.label_mode, self.num_classes)


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, data_format=None,
                                 format="tf", verbose=True):
    """keras.utils.image_dataset_from_directory without TensorFlow: a DataLoader (a list of two
    for ``subset="both"``) of (images, labels) batches, with Keras' ``class_names`` and
    ``file_paths``."""
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise ValueError("crop_to_aspect_ratio/pad_to_aspect_ratio are not translated")
    if color_mode not in ("rgb", "rgba", "grayscale"):
        raise ValueError(f'`color_mode` must be one of {{"rgb", "rgba", "grayscale"}}. Received: {color_mode}')
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f"`label_mode` argument must be one of 'int', 'categorical', 'binary', or None. "
                         f"Received: label_mode={label_mode}")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, "
                         "to make sure that there is no overlap between the training and validation subset.")
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, names = index_directory(directory, labels, IMAGE_FORMATS, class_names=class_names,
                                           shuffle=shuffle, seed=seed, follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. '
                         f"Received: class_names={names}")
    data_format = data_format or "channels_last"

    def loader(subset_name, shuffled):
        files, file_labels = training_or_validation_split(paths, labels, validation_split, subset_name)
        if not files:
            raise ValueError(f"No images found in directory {directory}. Allowed formats: {IMAGE_FORMATS}")
        dataset = ImageFiles(files, file_labels, label_mode, len(names) if names else 0, image_size, color_mode,
                             interpolation, data_format)
        out = dataset if batch_size is None else BatchLoader(dataset, batch_size=batch_size, shuffle=shuffled)
        out.class_names, out.file_paths = names, files
        return out

    if subset == "both":
        return [loader("training", shuffle), loader("validation", False)]
    return loader(subset, shuffle)


class TextFiles(Dataset):
    """Text files as Python strings (the first ``max_length`` bytes of each, when given), and
    their labels."""

    def __init__(self, paths, labels, label_mode, num_classes, max_length):
        self.paths, self.labels, self.label_mode = paths, labels, label_mode
        self.num_classes, self.max_length = num_classes, max_length

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        with open(self.paths[index], "rb") as fh:
            data = fh.read()
        if self.max_length is not None:
            data = data[:self.max_length]
        text = data.decode("utf-8", errors="replace")
        return labelled(text, self.labels, index, self.label_mode, self.num_classes)


def collate_texts(items):
    """A batch of strings (or of (string, label) pairs): the strings as a numpy array of str
    (what the text layers and numpy take), the labels stacked as a tensor."""
    if isinstance(items[0], tuple):
        texts, labels = zip(*items)
        return np.asarray(texts, dtype=object), torch.stack(labels)
    return np.asarray(items, dtype=object)


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):
    """keras.utils.text_dataset_from_directory without TensorFlow: a DataLoader (a list of two
    for ``subset="both"``) of (strings, labels) batches over the ``.txt`` files of the class
    folders, in Keras' order and split, with Keras' ``class_names``."""
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f"`label_mode` argument must be one of 'int', 'categorical', 'binary', or None. "
                         f"Received: label_mode={label_mode}")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, "
                         "to make sure that there is no overlap between the training and validation subset.")
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, names = index_directory(directory, labels, (".txt",), class_names=class_names, shuffle=shuffle,
                                           seed=seed, follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. '
                         f"Received: class_names={names}")

    def loader(subset_name, shuffled):
        files, file_labels = training_or_validation_split(paths, labels, validation_split, subset_name)
        if not files:
            raise ValueError(f"No text files found in directory {directory}. Allowed format: .txt")
        dataset = TextFiles(files, file_labels, label_mode, len(names) if names else 0, max_length)
        out = dataset if batch_size is None else BatchLoader(dataset, batch_size=batch_size, shuffle=shuffled,
                                                             collate_fn=collate_texts)
        out.class_names, out.file_paths = names, files
        return out

    if subset == "both":
        return [loader("training", shuffle), loader("validation", False)]
    return loader(subset, shuffle)
