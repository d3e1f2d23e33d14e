# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:8).

    Input ``inputs``: (N, 4) float32.
    Returns: (N, 3).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)

    def forward(self, inputs):
        x = self.fc1(inputs)
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


def sparse_categorical_crossentropy(logits, target):
    """Keras' sparse_categorical_crossentropy per sample, from logits."""
    loss = F.cross_entropy(
        logits.flatten(0, -2), target.flatten().long(), reduction="none"
    )
    return loss.view(logits.shape[:-1])


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = np.random.randint(0, 3, size=64)
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def loss_fn(target, output):
        """Keras' sparse_categorical_crossentropy loss object: (y_true, y_pred) in, the batch mean out."""
        return sparse_categorical_crossentropy(output, target).mean()

    dataset = make_loader(x, y, batch_size=16)
    for xb, yb in dataset:
        model.train()
        optimizer.zero_grad()  # the tape's gradients start from zero
        loss = loss_fn(yb, model(xb))
        loss.backward()
        optimizer.step()
    print(float(loss))
