"""``tf.image`` functions a tf.data ``.map()`` function calls, for generated PyTorch programs.

Each takes one image (height, width, channels) or a batch (N, height, width, channels), as
TensorFlow's does (the ``.map()`` functions run on channels-last elements, as in Keras; the
loader puts the batches in the model's layout afterwards), and computes what TensorFlow
computes; the random ones draw from torch's generator (same distribution, other numbers).
"""

import torch
import torch.nn.functional as F

#: tf.image.resize methods with the same numbers in torch (half-pixel centres; TF's nearest
#: takes floor((i + 0.5) * scale), torch's nearest-exact)
RESIZE_MODES = {"bilinear": "bilinear", "nearest": "nearest-exact"}


def image_resize(images, size, method="bilinear"):
    """tf.image.resize(images, size, method) without antialias: float32 out for bilinear
    (the input's dtype for nearest), half-pixel centres."""
    images = torch.as_tensor(images)
    mode = RESIZE_MODES[method]
    batch = images if images.dim() == 4 else images[None]
    x = batch.permute(0, 3, 1, 2)
    x = x.float() if mode == "bilinear" or not x.is_floating_point() else x
    if tuple(x.shape[2:]) != tuple(size):
        extra = {"align_corners": False} if mode == "bilinear" else {}
        x = F.interpolate(x, size=tuple(int(s) for s in size), mode=mode, **extra)
    if mode != "bilinear":
        x = x.to(images.dtype)
    out = x.permute(0, 2, 3, 1)
    return out if images.dim() == 4 else out[0]


def flip_images(images, axis, randomly):
    """Flip ``axis`` of each image (counted from the image's own axes: -2 width, -3 height),
    with probability 0.5 each when ``randomly``."""
    images = torch.as_tensor(images)
    if not randomly:
        return images.flip(axis)
    if images.dim() == 3:
        return images.flip(axis) if torch.rand(()) < 0.5 else images
    chosen = (torch.rand(images.shape[0], device=images.device) < 0.5).view(-1, 1, 1, 1)
    return torch.where(chosen, images.flip(axis), images)


def image_random_flip_left_right(image):
    """tf.image.random_flip_left_right: each image mirrored left-right with probability 0.5."""
    return flip_images(image, -2, True)


def image_random_flip_up_down(image):
    """tf.image.random_flip_up_down: each image flipped upside down with probability 0.5."""
    return flip_images(image, -3, True)


def image_convert_dtype(image, dtype):
    """tf.image.convert_image_dtype to a floating dtype: integers scaled into [0, 1] by their
    type's maximum (uint8: / 255), floats only cast."""
    image = torch.as_tensor(image)
    if image.is_floating_point():
        return image.to(dtype)
    if image.dtype == torch.int64:
        raise ValueError("convert_image_dtype of int64 pixels: their source type (uint8?) is not known here; "
                         "cast them first")
    return image.to(dtype) / torch.iinfo(image.dtype).max


def image_random_crop(value, size):
    """tf.image.random_crop: a window of ``size`` at an offset drawn uniformly in each axis."""
    value = torch.as_tensor(value)
    size = [int(s) for s in size]
    if len(size) != value.dim() or any(s > d for s, d in zip(size, value.shape)):
        raise ValueError(f"random_crop: size {size} does not fit a tensor of shape {tuple(value.shape)}")
    index = tuple(slice(o, o + s) for o, s in
                  ((int(torch.randint(0, d - s + 1, ())), s) for d, s in zip(value.shape, size)))
    return value[index]


def image_rgb_to_grayscale(images):
    """tf.image.rgb_to_grayscale: 0.2989 R + 0.587 G + 0.114 B, keeping a last axis of 1 (float
    images; integer ones are converted as TensorFlow converts them, there and back)."""
    images = torch.as_tensor(images)
    weights = torch.tensor([0.2989, 0.5870, 0.1140], dtype=torch.float32)
    if images.is_floating_point():
        return (images * weights.to(images.dtype)).sum(-1, keepdim=True)
    if images.dtype == torch.int64:
        raise ValueError("rgb_to_grayscale of int64 pixels: their source type (uint8?) is not known here")
    top = torch.iinfo(images.dtype).max
    gray = (images.float() / top * weights).sum(-1, keepdim=True)
    return (gray * (top + 0.5)).to(images.dtype)  # (TensorFlow's saturate cast truncates)


def _box_size(value):
    """A box offset or size TensorFlow takes as a number or a 0-d tensor, as a Python int."""
    return int(value.reshape(-1)[0]) if isinstance(value, torch.Tensor) else int(value)


def image_crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """tf.image.crop_to_bounding_box: rows offset_height .. + target_height and columns
    offset_width .. + target_width of each image; a box outside the image is an error."""
    image = torch.as_tensor(image)
    top, left = _box_size(offset_height), _box_size(offset_width)
    height, width = _box_size(target_height), _box_size(target_width)
    if top < 0 or left < 0 or height <= 0 or width <= 0 or \
            top + height > image.shape[-3] or left + width > image.shape[-2]:
        raise ValueError(f"crop_to_bounding_box: the box ({top}, {left}, {height}, {width}) is not "
                         f"inside the {tuple(image.shape[-3:-1])} image")
    return image[..., top:top + height, left:left + width, :]


def image_pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """tf.image.pad_to_bounding_box: each image at (offset_height, offset_width) of a
    target_height x target_width canvas of zeros."""
    image = torch.as_tensor(image)
    top, left = _box_size(offset_height), _box_size(offset_width)
    bottom = _box_size(target_height) - top - image.shape[-3]
    right = _box_size(target_width) - left - image.shape[-2]
    if min(top, left, bottom, right) < 0:
        raise ValueError("pad_to_bounding_box: the image does not fit in the target box at that offset")
    return F.pad(image, (0, 0, left, right, top, bottom))


def gamma_sample(shape, alpha, beta=None, dtype=torch.float32):
    """tf.random.gamma(shape, alpha, beta): draws of Gamma(alpha, rate=beta) (beta 1 when not
    given), of shape ``shape + broadcast(alpha, beta).shape``, from torch's generator."""
    alpha = torch.as_tensor(alpha, dtype=torch.float64)
    beta = torch.ones_like(alpha) if beta is None else torch.as_tensor(beta, dtype=torch.float64)
    alpha, beta = torch.broadcast_tensors(alpha, beta)
    shape = tuple(_box_size(s) for s in (shape.reshape(-1) if isinstance(shape, torch.Tensor) else shape))
    return torch.distributions.Gamma(alpha, beta).sample(shape).to(dtype)


def one_hot_float(x, num_classes):
    """keras.ops.one_hot / tf.one_hot: float32 one-hot rows along a new last axis; an index
    outside [0, num_classes) gives a row of zeros."""
    x = torch.as_tensor(x).long()
    inside = (x >= 0) & (x < num_classes)
    rows = F.one_hot(torch.where(inside, x, torch.zeros_like(x)), int(num_classes)).float()
    return rows * inside[..., None]
