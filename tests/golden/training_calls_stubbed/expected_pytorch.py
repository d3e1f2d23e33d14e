# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:7).

    Input ``x``: (N, 4) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, x):
        x = self.fc1(x)
        return x


def build_model():
    return Net()


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    # TODO(transpiler): not translated yet (input.py:14)
    # model.compile(optimizer="adam", loss="mse")
    raise NotImplementedError(
        'transpiler: \'model.compile(optimizer="adam", loss="mse")\' (input.py:14) is not translated yet'
    )
    # TODO(transpiler): not translated yet (input.py:15)
    # model.fit(x, y, epochs=2, batch_size=16)
