# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import math
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


class KerasAdam(torch.optim.Adam):
    """torch.optim.Adam with Keras' epsilon placement: epsilon is added to sqrt(v) before
    the bias correction, so in torch's terms it is epsilon / sqrt(1 - beta_2 ** step).
    """

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            group.setdefault("keras_eps", group["eps"])
            group["keras_step"] = group.get("keras_step", 0) + 1
            group["eps"] = group["keras_eps"] / math.sqrt(
                1 - group["betas"][1] ** group["keras_step"]
            )
        return super().step(closure)


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    optimizer = KerasAdam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07)
    loss_fn = mean_squared_error
    # a Keras API with no torch translation yet: must become a marked stub
    # TODO(transpiler): not translated yet (input.py:16)
    # loss = model.compute_loss(x, y, model(x))
    raise NotImplementedError(
        "transpiler: 'loss = model.compute_loss(x, y, model(x))' (input.py:16) is not translated yet"
    )
    print(loss)
