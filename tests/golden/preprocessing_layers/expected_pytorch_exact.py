# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import math
import torch
from torch import nn
import torch.nn.functional as F


def _keras_map_coordinate(coord, size, fill_mode):
    """TensorFlow's MapCoordinate: an input coordinate outside [0, size - 1] mapped inside."""
    if fill_mode == "constant":
        return coord
    if size <= 1 and fill_mode in ("reflect", "wrap"):
        return torch.zeros_like(coord)
    if fill_mode == "reflect":  # [abcd] read as [dcba|abcd|dcba]
        sz2 = 2 * size
        low = coord + sz2 * torch.floor(-coord / sz2)
        low = torch.where(low < -size, low + sz2, -low - 1)
        high = coord - sz2 * torch.floor(coord / sz2)
        high = torch.where(high >= size, sz2 - high - 1, high)
        coord = torch.where(coord < 0, low, torch.where(coord > size - 1, high, coord))
    elif fill_mode == "wrap":  # [abcd] read as [abcd|abcd|abcd]
        sz = size - 1
        low = coord + size * (torch.trunc(-coord / sz) + 1)
        high = coord - size * torch.trunc(coord / sz)
        coord = torch.where(coord < 0, low, torch.where(coord > size - 1, high, coord))
    return coord.clamp(0, size - 1)


def _keras_read(flat, iy, ix, h, w, fill_value):
    """flat (N, C, H*W) at integer (iy, ix) of shape (N, H', W'): (N, C, H', W'), fill_value
    outside the image."""
    n, c = flat.shape[:2]
    inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    index = (
        (iy.clamp(0, h - 1) * w + ix.clamp(0, w - 1)).reshape(n, 1, -1).expand(n, c, -1)
    )
    values = flat.gather(2, index).reshape(n, c, *iy.shape[1:])
    return torch.where(inside.unsqueeze(1), values, values.new_tensor(fill_value))


def keras_affine_transform(
    images,
    transform,
    interpolation="bilinear",
    fill_mode="reflect",
    fill_value=0.0,
    channels_last=False,
):
    """``keras.ops.image.affine_transform`` as Keras' TensorFlow backend computes it, on a
    batch (N, C, H, W) (or (N, H, W, C) with ``channels_last``) and transforms (N, 8).
    """
    x = images.movedim(-1, 1) if channels_last else images
    n, c, h, w = x.shape
    t = transform.to(device=x.device, dtype=torch.float32)
    ys = torch.arange(h, dtype=torch.float32, device=x.device).view(1, h, 1)
    xs = torch.arange(w, dtype=torch.float32, device=x.device).view(1, 1, w)
    a0, a1, a2, b0, b1, b2, c0, c1 = (t[:, i].view(n, 1, 1) for i in range(8))
    k = c0 * xs + c1 * ys + 1.0
    in_x = _keras_map_coordinate((a0 * xs + a1 * ys + a2) / k, w, fill_mode)
    in_y = _keras_map_coordinate((b0 * xs + b1 * ys + b2) / k, h, fill_mode)
    flat = x.reshape(n, c, h * w)
    if interpolation == "nearest":  # std::round: half away from zero
        iy = (torch.sign(in_y) * torch.floor(in_y.abs() + 0.5)).long()
        ix = (torch.sign(in_x) * torch.floor(in_x.abs() + 0.5)).long()
        out = _keras_read(flat, iy, ix, h, w, fill_value)
    else:
        y0, x0 = torch.floor(in_y), torch.floor(in_x)
        y1, x1 = y0 + 1, x0 + 1
        iy0, ix0, iy1, ix1 = y0.long(), x0.long(), y1.long(), x1.long()
        wx0, wx1 = (x1 - in_x).unsqueeze(1), (in_x - x0).unsqueeze(1)
        wy0, wy1 = (y1 - in_y).unsqueeze(1), (in_y - y0).unsqueeze(1)
        read = [
            _keras_read(flat, iy, ix, h, w, fill_value).to(torch.float32)
            for iy, ix in ((iy0, ix0), (iy0, ix1), (iy1, ix0), (iy1, ix1))
        ]
        top = wx0 * read[0] + wx1 * read[1]
        bottom = wx0 * read[2] + wx1 * read[3]
        out = (wy0 * top + wy1 * bottom).to(x.dtype)
    out = torch.where((k == 0).unsqueeze(1), out.new_tensor(fill_value), out)
    return out.movedim(1, -1) if channels_last else out


def _keras_size(images, channels_last):
    """(height, width) of a batch of images."""
    return (
        (images.shape[1], images.shape[2])
        if channels_last
        else (images.shape[2], images.shape[3])
    )


def keras_random_rotation(
    images,
    lower,
    upper,
    interpolation="bilinear",
    fill_mode="reflect",
    fill_value=0.0,
    channels_last=False,
):
    """Keras' RandomRotation in training: one angle per image, uniform in [lower, upper)
    degrees (the layer's factor times 360), about the image centre."""
    n = images.shape[0]
    h, w = _keras_size(images, channels_last)
    angle = lower + (upper - lower) * torch.rand(
        n, device=images.device, dtype=torch.float32
    )
    angle = angle * torch.tensor(math.pi / 180.0, dtype=torch.float32)
    cx, cy = 0.5 * (w - 1), 0.5 * (h - 1)
    cos, sin = torch.cos(angle), torch.sin(angle)
    a0, a1, b0, b1 = cos, -sin, sin, cos
    a2 = cx - cx * a0 - cy * a1
    b2 = cy - cx * b0 - cy * b1
    zeros = torch.zeros_like(angle)
    transform = torch.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], dim=1)
    return keras_affine_transform(
        images, transform, interpolation, fill_mode, fill_value, channels_last
    )


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:15).

    Input ``inputs``: (N, 3, 40, 48) float32, channels-first.
    Returns: (N, 10).
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3)
        self.group_norm1 = nn.GroupNorm(4, 8, eps=0.001)
        self.fc1 = nn.Linear(8, 10)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv1.weight)
        nn.init.zeros_(self.conv1.bias)
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, inputs):
        x = F.interpolate(inputs, size=(32, 32), mode="bilinear", align_corners=False)
        # RandomFlip('horizontal') in training: each image flipped with probability 0.5, as in Keras
        if self.training:
            x = torch.where(
                torch.rand(x.shape[0], 1, 1, 1, device=x.device) <= 0.5, x.flip(3), x
            )
        # RandomRotation in training: one angle per image in [-36.0, 36.0] degrees, as in Keras
        if self.training:
            x = keras_random_rotation(x, -36.0, 36.0, "bilinear", "reflect", 0.0)
        x = (x - x.new_tensor([123.7, 116.3, 103.5]).view(1, 3, 1, 1)) / x.new_tensor(
            [3409.0, 3262.7, 3291.7]
        ).view(1, 3, 1, 1).sqrt().clamp_min(1e-07)
        x = F.relu(self.conv1(x))
        x = self.group_norm1(x)[:, :, 3:27, 3:27].mean(dim=(2, 3))
        x = self.fc1(x)
        return x


def build_model():
    return Net()
