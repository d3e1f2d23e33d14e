# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:13).

    Input ``inputs``: (N, 10) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        # project into a wider space first
        self.fc1 = nn.Linear(10, 32)
        # a bottleneck keeps the head small
        self.fc2 = nn.Linear(32, 8)
        # probability
        self.fc3 = nn.Linear(8, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)
        nn.init.xavier_uniform_(self.fc3.weight)
        nn.init.zeros_(self.fc3.bias)

    def forward(self, inputs):
        x = self.fc1(inputs)
        # Keras 2 spelling of negative_slope
        x = F.leaky_relu(x, negative_slope=0.1)
        x = F.relu(self.fc2(x))
        outputs = torch.sigmoid(self.fc3(x))
        return outputs


def build_model():
    return Net()
