# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""keras.ops on the tensors of a Functional model: axes, reshapes, scalars."""

import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:22).

    Input ``inputs``: (N, 3, 12, 10) float32, channels-first.
    Returns: (N, 6, 5, 4, 1), (N, 2).
    """

    def __init__(self, filters=8):
        super().__init__()
        self.filters = filters
        self.conv1 = nn.Conv2d(3, filters, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(filters // 2 + filters // 2, 4, kernel_size=1)
        self.fc1 = nn.Linear(filters, 2)

    def forward(self, inputs):
        x = F.relu(self.conv1(inputs))
        # layout: ops.reshape needs the Keras (channels-last) axis order: permuted back from NCHW to NHWC here
        x_1 = x.permute(0, 2, 3, 1)
        # per-pixel attention over the flattened feature map
        tokens = x_1.reshape(-1, 120, self.filters)
        tokens_1 = tokens.permute(0, 2, 1)
        scores = F.softmax((tokens @ tokens_1) / self.filters**0.5, dim=-1)
        mixed = scores @ tokens
        # global average, channels last
        # layout: axis=(1, 2) of the Keras code (channels-last) is dim (2, 3) of this channels-first tensor
        pooled = x.mean(dim=(2, 3))
        # layout: axis=3 of the Keras code (channels-last) is dim 1 of this channels-first tensor
        gate = torch.sigmoid(x.amax(dim=1, keepdim=True))
        x = x * gate
        x = x + (1.0 - gate) / 2.0
        # layout: axis=3 of the Keras code (channels-last) is dim 1 of this channels-first tensor
        left, right = x.split(self.filters // 2, dim=1)
        # layout: axis=3 of the Keras code (channels-last) is dim 1 of this channels-first tensor
        x = F.interpolate(
            torch.cat([right, left], dim=1),
            size=(6, 5),
            mode="bilinear",
            align_corners=False,
        )
        x = self.conv2(x)
        # layout: ops.expand_dims needs the Keras (channels-last) axis order: permuted back from NCHW to NHWC here
        x = x.permute(0, 2, 3, 1)
        # the channel axis moves: channels-last here
        x = x.unsqueeze(-1)
        summary = mixed.mean(dim=1) + pooled
        summary = self.fc1(summary)
        return x, summary


def build_model(filters=8):
    return Net(filters)
