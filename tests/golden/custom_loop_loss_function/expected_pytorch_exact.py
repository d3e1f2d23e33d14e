# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def my_loss(y_true, y_pred):
    p = torch.clamp(y_pred, 1e-7, 1.0 - 1e-7)
    return torch.mean(-torch.sum(y_true * torch.log(p), dim=-1))


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:13).

    Input ``inputs``: (N, 4) float32.
    Returns: (N, 3).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, inputs):
        x = F.softmax(self.fc1(inputs), dim=-1)
        return x


def build_model():
    return Net()


def make_loader(inputs, targets=None, batch_size=32, shuffle=False):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches."""
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        # booleans (a one-hot ``y == k``) are numbers to Keras (float32), integers are indices
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        tensors.append(tensor.float() if floating else tensor.long())
    return DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle)


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = np.eye(3)[np.random.randint(0, 3, size=64)].astype("float32")
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = my_loss
    dataset = make_loader(x, y, batch_size=16)
    for xb, yb in dataset:
        model.train()
        optimizer.zero_grad()  # the tape's gradients start from zero
        loss = loss_fn(yb, model(xb))
        loss.backward()
        optimizer.step()
    print(float(loss))
