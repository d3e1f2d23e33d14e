# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""TensorFlow math in the call() of custom layers: squeeze-and-excitation and sampling."""

import torch
from torch import nn
import torch.nn.functional as F


class SqueezeExcite(nn.Module):
    """Transpiled from the Keras class ``SqueezeExcite`` (input.py)."""

    def __init__(self, channels):
        super().__init__()
        self.reduce = nn.Linear(8, channels // 4)
        self.expand = nn.Linear(channels // 4, channels)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.reduce.weight)
        nn.init.zeros_(self.reduce.bias)
        nn.init.xavier_uniform_(self.expand.weight)
        nn.init.zeros_(self.expand.bias)

    def forward(self, x):
        # (N, 1, 1, C)
        # layout: axis=(1, 2) of the Keras code (channels-last) is dim (2, 3) of this channels-first tensor
        s = x.mean(dim=(2, 3), keepdim=True).permute(0, 2, 3, 1)
        s = F.relu(self.reduce(s))
        s = torch.sigmoid(self.expand(s)).permute(0, 3, 1, 2)
        x = x * s
        return x


class Sampling(nn.Module):
    """Transpiled from the Keras class ``Sampling`` (input.py)."""

    def __init__(self):
        super().__init__()

    def forward(self, z_mean, z_log_var):
        # tf.random.normal: torch's generator draws other numbers (same distribution)
        epsilon = torch.randn_like(z_mean)
        z_mean = z_mean + torch.exp(z_log_var / 2.0) * epsilon
        return z_mean


class Encoder(nn.Module):
    """Transpiled from the Keras model built by ``build_encoder()`` (input.py:36).

    Input ``inputs``: (N, 1, 16, 16) float32, channels-first.
    Returns: (N, 2), (N, 2), (N, 2).
    """

    def __init__(self, latent=2):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, stride=2)
        self.squeeze_excite = SqueezeExcite(8)
        self.fc1 = nn.Linear(512, latent)
        self.fc2 = nn.Linear(512, latent)
        self.sampling = Sampling()
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv1.weight)
        nn.init.zeros_(self.conv1.bias)
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, inputs):
        x = F.relu(self.conv1(F.pad(inputs, (0, 1, 0, 1))))
        x = self.squeeze_excite(x).flatten(1)
        z_mean = self.fc1(x)
        z_log_var = self.fc2(x)
        z = self.sampling(z_mean, z_log_var)
        return z_mean, z_log_var, z


def build_encoder(latent=2):
    return Encoder(latent)
