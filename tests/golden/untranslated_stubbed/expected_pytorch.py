# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:7).

    Input ``x``: (N, 4) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 1)

    def forward(self, x):
        x = self.fc1(x)
        return x


def build_model():
    return Net()


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    optimizer = torch.optim.Adam(
        model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
    )
    loss_fn = mean_squared_error
    # a Keras API with no torch translation yet: must become a marked stub
    # TODO(transpiler): not translated yet (input.py:16)
    # loss = model.compute_loss(x, y, model(x))
    raise NotImplementedError(
        "transpiler: 'loss = model.compute_loss(x, y, model(x))' (input.py:16) is not translated yet"
    )
    print(loss)
