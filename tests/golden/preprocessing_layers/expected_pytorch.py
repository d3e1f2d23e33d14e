# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


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

    def forward(self, inputs):
        x = F.interpolate(inputs, size=(32, 32), mode="bilinear", align_corners=False)
        # RandomFlip('horizontal') in training: each image flipped with probability 0.5, as in Keras
        if self.training:
            x = torch.where(
                torch.rand(x.shape[0], 1, 1, 1, device=x.device) <= 0.5, x.flip(3), x
            )
        # RandomRotation(factor=0.1, fill_mode='reflect', interpolation='bilinear', fill_value=0.0):
        # the identity here; its training-time augmentation has no faithful torch form
        # (without torchvision): augment in the data pipeline instead
        x = (x - x.new_tensor([123.7, 116.3, 103.5]).view(1, 3, 1, 1)) / x.new_tensor(
            [3409.0, 3262.7, 3291.7]
        ).view(1, 3, 1, 1).sqrt().clamp_min(1e-07)
        x = F.relu(self.conv1(x))
        x = self.group_norm1(x)[:, :, 3:27, 3:27].mean(dim=(2, 3))
        x = self.fc1(x)
        return x


def build_model():
    return Net()
