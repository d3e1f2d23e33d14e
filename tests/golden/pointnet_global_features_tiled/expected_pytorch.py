# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""PointNet segmentation (keras.io): a max over all points (MaxPool1D whose pool size is the
number of points, read from the data), tiled back to every point and concatenated with the
per-point features."""

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

x_train = np.random.rand(8, 32, 3).astype("float32")
num_points = x_train.shape[1]


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:19).

    Input ``inputs``: (N, 3, N) float32, channels-first.
    Returns: (N, 4, N).
    """

    def __init__(self, num_points=32, num_classes=4):
        super().__init__()
        self.num_points = num_points
        self.conv1 = nn.Conv1d(3, 16, kernel_size=1)
        self.pool1 = nn.MaxPool1d(num_points)
        self.conv2 = nn.Conv1d(32, num_classes, kernel_size=1)

    def forward(self, inputs):
        features = F.relu(self.conv1(inputs))
        global_features = self.pool1(features)
        # layout: ops.tile needs the Keras (channels-last) axis order: permuted back from NCW to NWC here
        global_features = (
            global_features.permute(0, 2, 1)
            .repeat(1, self.num_points, 1)
            .permute(0, 2, 1)
        )
        x = torch.cat([features, global_features], dim=1)
        outputs = F.softmax(self.conv2(x), dim=1)
        return outputs


def build_model(num_points, num_classes=4):
    return Net(num_points, num_classes)


model = build_model(num_points)
