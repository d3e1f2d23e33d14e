# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:13).

    Input ``inputs``: (N, 3, 40, 36) float32, channels-first.
    Returns: (N, 10).
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3)
        self.fc1 = nn.Linear(8, 10)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv1.weight)
        nn.init.zeros_(self.conv1.bias)
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, inputs):
        x = inputs / 255.0
        # RandomCrop(32, 32): a random window in training; at inference the centred
        # window resized, as Keras documents it (Keras 3 itself returns the image uncropped there)
        if self.training:
            x_top = int(torch.randint(0, 9, ()))
            x_left = int(torch.randint(0, 5, ()))
            x = x[:, :, x_top : x_top + 32, x_left : x_left + 32]
        else:
            x = F.interpolate(
                x[:, :, 2:38], size=(32, 32), mode="bilinear", align_corners=False
            )
        # RandomFlip('horizontal') in training: each image flipped with probability 0.5, as in Keras
        if self.training:
            x = torch.where(
                torch.rand(x.shape[0], 1, 1, 1, device=x.device) <= 0.5, x.flip(3), x
            )
        x = F.relu(self.conv1(x)).mean(dim=(2, 3))
        outputs = self.fc1(x)
        return outputs


def build_model():
    return Net()
