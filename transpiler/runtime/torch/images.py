"""``keras.utils.load_img``/``img_to_array``/``array_to_img``/``save_img`` for generated
PyTorch programs: the same PIL calls and numpy arrays Keras makes.

Arrays stay channels-last (height, width, channels) as in Keras, since the program's own
numpy code around these calls indexes them that way; the generated loaders put images in
the torch model's layout where the data enters the model. ``data_format="channels_first"``
is honoured as in Keras. Needs Pillow (torchvision's own dependency).
"""

import io
import pathlib

import numpy as np
from PIL import Image

#: Keras' interpolation names → PIL's resampling filters
PIL_INTERPOLATION = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
                     "bicubic": Image.Resampling.BICUBIC, "hamming": Image.Resampling.HAMMING,
                     "box": Image.Resampling.BOX, "lanczos": Image.Resampling.LANCZOS}


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """keras.utils.load_img: a PIL image in color_mode ("grayscale", "rgb", "rgba"), resized to
    target_size (height, width) with Keras' interpolation (and its centre crop when keep_aspect_ratio)."""
    if isinstance(path, io.BytesIO):
        img = Image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        with open(str(path.resolve()) if isinstance(path, pathlib.Path) else path, "rb") as fh:
            img = Image.open(io.BytesIO(fh.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    modes = {"grayscale": ("L", ("L", "I;16", "I")), "rgba": ("RGBA", ("RGBA",)), "rgb": ("RGB", ("RGB",))}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode not in modes[color_mode][1]:
        img = img.convert(modes[color_mode][0])
    if target_size is None or img.size == (target_size[1], target_size[0]):
        return img
    if interpolation not in PIL_INTERPOLATION:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                         f"{', '.join(PIL_INTERPOLATION)}")
    size = (target_size[1], target_size[0])
    if not keep_aspect_ratio:
        return img.resize(size, PIL_INTERPOLATION[interpolation])
    width, height = img.size
    crop_height = min(height, width * size[1] // size[0])
    crop_width = min(width, height * size[0] // size[1])
    top, left = (height - crop_height) // 2, (width - crop_width) // 2
    return img.resize(size, PIL_INTERPOLATION[interpolation], box=[left, top, left + crop_width, top + crop_height])


def img_to_array(img, data_format=None, dtype=None):
    """keras.utils.img_to_array: a float32 (height, width, channels) array (channels first on request)."""
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 2:
        x = x.reshape((1, *x.shape) if data_format == "channels_first" else (*x.shape, 1))
    elif x.ndim == 3:
        x = x.transpose(2, 0, 1) if data_format == "channels_first" else x
    else:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """keras.utils.array_to_img: a PIL image of a (height, width, channels) array, its values
    stretched to 0..255 when scale."""
    x = np.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x /= top
        x *= 255
    channels = x.shape[2]
    if channels in (3, 4):
        return Image.fromarray(x.astype("uint8"), "RGB" if channels == 3 else "RGBA")
    if channels == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """keras.utils.save_img: array_to_img, then PIL's save (jpg means jpeg; RGBA saved as RGB in a jpeg)."""
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)
