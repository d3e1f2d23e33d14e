"""A models-only library file (no data, no training, no input shape anywhere): a
fully-convolutional image-to-image network and a classifier with a global pool, as a
``model.py`` beside a ``main.py`` defines them. Nothing in this file fixes the image size:
the layers fix only the channels."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Denoiser(nn.Module):
    """Image to image: (N, 3, H, W) -> (N, 3, H, W), any H and W."""

    def __init__(self):
        super().__init__()
        self.down = ConvBlock(3, 16)
        self.mid = ConvBlock(16, 16)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.out = nn.Conv2d(16, 3, kernel_size=1)

    def forward(self, x):
        h = self.down(x)
        h = self.up(self.pool(self.mid(h)))
        return x + self.out(h)


class SmallClassifier(nn.Module):
    """(N, 1, H, W) -> (N, 10) logits; the global pool makes it size-agnostic."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(self.features(x))
        x = torch.flatten(x, 1)
        return self.fc(x)


class StyleBlock(nn.Module):
    """Reflection padding and instance normalisation (fast style transfer's blocks), with a
    residual: (N, 8, H, W) -> (N, 8, H, W)."""

    def __init__(self):
        super().__init__()
        self.pad = nn.ReflectionPad2d(1)
        self.conv = nn.Conv2d(8, 8, kernel_size=3)
        self.norm = nn.InstanceNorm2d(8, affine=True)
        self.plain = nn.InstanceNorm2d(8)

    def forward(self, x):
        y = self.norm(self.conv(self.pad(x)))
        y = F.pad(F.relu(y), (1, 1, 2, 2), mode="reflect")[:, :, 2:-2, 1:-1]
        return self.plain(x + y)


class SubPixelUpscaler(nn.Module):
    """Sub-pixel convolution (ESPCN): (N, 3, H, W) -> (N, 3, H * factor, W * factor), the
    factor given by whoever builds it."""

    def __init__(self, factor):
        super().__init__()
        self.conv = nn.Conv2d(3, 3 * factor ** 2, kernel_size=3, padding=1)
        self.shuffle = nn.PixelShuffle(factor)

    def forward(self, x):
        return torch.sigmoid(self.shuffle(self.conv(x)))
