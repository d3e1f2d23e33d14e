# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:12).

    Input ``image``: (N, 32) float32.
    Input ``meta``: (N, 4) float32.
    Returns: (N, 3), (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 16)
        self.label = nn.Linear(20, 3)
        self.score = nn.Linear(20, 1)

    def forward(self, image, meta):
        x = F.relu(self.fc1(image))
        x = torch.cat([x, meta], dim=1)
        label = F.softmax(self.label(x), dim=-1)
        score = self.score(x)
        return label, score


def build_model():
    return Net()
