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


def image_resize(images, size, method="bilinear", antialias=False):
    """tf.image.resize(images, size, method, antialias): float32 out for bilinear (the input's
    dtype for nearest), half-pixel centres; ``antialias`` (bilinear) widens the triangle filter
    by the scale when shrinking, as TensorFlow does."""
    images = torch.as_tensor(images)
    mode = RESIZE_MODES[method]
    batch = images if images.dim() == 4 else images[None]
    x = batch.permute(0, 3, 1, 2)
    x = x.float() if mode == "bilinear" or not x.is_floating_point() else x
    if tuple(x.shape[2:]) != tuple(size):
        extra = {"align_corners": False, "antialias": bool(antialias)} if mode == "bilinear" else {}
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


def io_read_file(filename):
    """tf.io.read_file: the file's bytes (the name a str, bytes or numpy string)."""
    if isinstance(filename, bytes):
        filename = filename.decode()
    with open(str(filename), "rb") as handle:
        return handle.read()


#: PIL modes of tf.io.decode_png/decode_jpeg's ``channels`` (0: the file's own)
_CHANNEL_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def io_decode_image(contents, channels=0, dtype=torch.uint8, expand_animations=True):
    """tf.io.decode_png / decode_jpeg / decode_image of a file's bytes: a uint8 (height, width,
    channels) tensor, converted to ``channels`` (1: luma, 3: RGB, 4: RGBA; 0: as stored, a
    palette image as RGB(A)); ``dtype`` float32 scales into [0, 1] as convert_image_dtype does.

    PNG pixels are TensorFlow's (colour to luma may round one unit apart). JPEG: PIL's libjpeg
    uses the accurate integer DCT, TensorFlow's decode_jpeg the fast one unless asked
    (``dct_method="INTEGER_ACCURATE"`` gives these very pixels): a few units apart."""
    import io

    import numpy as np
    from PIL import Image

    image = Image.open(io.BytesIO(bytes(contents)))
    if channels == 1 and image.format == "JPEG":
        image.draft("L", image.size)  # (libjpeg decodes the luma plane itself, as TensorFlow asks it to)
    image.load()
    if channels:
        if channels not in _CHANNEL_MODES:
            raise ValueError(f"decode_image: channels must be 0, 1, 3 or 4, not {channels}")
        mode = _CHANNEL_MODES[channels]
    else:
        mode = {"P": "RGBA" if "transparency" in image.info else "RGB", "I;16": "L",
                "1": "L", "CMYK": "RGB"}.get(image.mode, image.mode)
    if image.mode != mode:
        image = image.convert(mode)
    pixels = torch.from_numpy(np.array(image, dtype=np.uint8))
    pixels = pixels[..., None] if pixels.dim() == 2 else pixels
    return pixels if dtype == torch.uint8 else image_convert_dtype(pixels, dtype)


def audio_decode_wav(contents, desired_channels=-1, desired_samples=-1):
    """tf.audio.decode_wav of a 16-bit PCM WAV file's bytes: (audio, sample_rate), audio float32
    (samples, channels) in [-1, 1) (each sample / 32768); ``desired_channels`` keeps the first
    channels (a mono file is repeated into more), ``desired_samples`` cuts or pads with zeros."""
    import io
    import wave

    import numpy as np

    with wave.open(io.BytesIO(bytes(contents))) as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"decode_wav: {8 * wav.getsampwidth()}-bit samples (TensorFlow reads 16-bit PCM)")
        channels, rate = wav.getnchannels(), wav.getframerate()
        frames = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").reshape(-1, channels)
    audio = torch.from_numpy(frames.astype(np.float32) / 32768.0)
    if desired_channels is not None and desired_channels > 0:
        if channels == 1:
            audio = audio.repeat(1, desired_channels)
        elif desired_channels <= channels:
            audio = audio[:, :desired_channels]
        else:
            raise ValueError(f"decode_wav: {channels} channels cannot give {desired_channels}")
    if desired_samples is not None and desired_samples > 0:
        audio = audio[:desired_samples]
        audio = F.pad(audio, (0, 0, 0, desired_samples - audio.shape[0]))
    return audio, torch.tensor(rate, dtype=torch.int32)


#: TensorFlow's RGB → YUV matrix (tf.image.rgb_to_yuv: pixels @ this)
_YUV = ((0.299, -0.14714119, 0.61497538), (0.587, -0.28886916, -0.51496512), (0.114, 0.43601035, -0.10001026))


def image_rgb_to_yuv(images):
    """tf.image.rgb_to_yuv of float images (last axis RGB)."""
    images = torch.as_tensor(images)
    return images @ torch.tensor(_YUV, dtype=images.dtype)


#: TensorFlow's YUV → RGB matrix (tf.image.yuv_to_rgb: pixels @ this)
_RGB = ((1.0, 1.0, 1.0), (0.0, -0.394642334, 2.03206185), (1.13988303, -0.58062185, 0.0))


def image_yuv_to_rgb(images):
    """tf.image.yuv_to_rgb of float images (last axis YUV)."""
    images = torch.as_tensor(images)
    return images @ torch.tensor(_RGB, dtype=images.dtype)


def tensor_gather(params, indices, axis=0):
    """tf.gather(params, indices, axis): the slices of ``params`` at ``indices`` along
    ``axis``; the result's shape is params' with that axis replaced by the indices' shape."""
    params = torch.as_tensor(params)
    index = torch.as_tensor(indices, device=params.device).long()
    axis = axis % params.dim()
    out = params.movedim(axis, 0)[index]  # (the indices' axes first, then params' others)
    if index.dim() and axis:
        out = out.movedim(tuple(range(index.dim())), tuple(range(axis, axis + index.dim())))
    return out


def tensor_split(value, num_or_size_splits, axis=0):
    """tf.split: a list of tensors along ``axis``, ``num_or_size_splits`` equal parts (it must
    divide the axis, as TensorFlow requires) or parts of the sizes given."""
    value = torch.as_tensor(value)
    if isinstance(num_or_size_splits, (int, torch.Tensor)) and torch.as_tensor(num_or_size_splits).dim() == 0:
        count = int(num_or_size_splits)
        if value.shape[axis] % count:
            raise ValueError(f"tf.split: {count} parts do not divide an axis of size {value.shape[axis]}")
        return list(torch.split(value, value.shape[axis] // count, dim=axis))
    return list(torch.split(value, [int(s) for s in num_or_size_splits], dim=axis))
