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


def _as_model_input(value):
    """An array Keras' model call converts: floating arrays as float32 (the model's dtype),
    other numbers as they are; tensors, lists of them and dicts kept (each converted).
    """
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, dict):
        return {key: _as_model_input(v) for key, v in value.items()}
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (np.ndarray, torch.Tensor)) for v in value)
    ):
        return type(value)(_as_model_input(v) for v in value)
    array = np.asarray(value)
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    return tensor.to(torch.get_default_dtype()) if array.dtype.kind == "f" else tensor


def call_model(model, *inputs, training=False, grad=False, **kwargs):
    """Keras' ``model(x)`` on arrays outside a training step: the arrays as tensors, the model
    in the mode Keras runs its layers in there (inference unless ``training``: a model of
    image augmentations, whose layers train by default, or ``training=True`` in the source),
    without gradients unless ``grad``; the outputs are tensors (as Keras returns), the
    model's mode restored after."""
    was_training = model.training
    model.train(training)
    try:
        with torch.set_grad_enabled(grad):
            return model(*(_as_model_input(x) for x in inputs), **kwargs)
    finally:
        model.train(was_training)


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
