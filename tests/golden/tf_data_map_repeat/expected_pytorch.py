# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""A custom loop over a tf.data pipeline with .map() before and after .batch(),
.repeat(count), .cache() and .prefetch()."""

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, default_collate


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:10).

    Input ``inputs``: (N, 6) float32.
    Returns: (N, 3).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 3)

    def forward(self, inputs):
        x = self.fc1(inputs)
        return x


def build_model():
    return Net()


def center(features, labels):
    # per batch: subtract the batch mean of every feature
    return features - torch.mean(features, dim=0, keepdim=True), labels


def make_loader(
    inputs, targets=None, batch_size=32, shuffle=False, element_map=None, batch_map=None
):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches.

    ``element_map`` (tf.data's .map() before .batch()) runs on each element's tensors,
    ``batch_map`` (.map() after .batch()) on each batch's.
    """
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        # booleans (a one-hot ``y == k``) are numbers to Keras (float32), integers are indices
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        tensors.append(tensor.float() if floating else tensor.long())
    dataset = TensorDataset(*tensors)
    if element_map is not None:
        dataset = [element_map(*element) for element in dataset]
    collate = None
    if batch_map is not None:

        def collate(batch):
            return batch_map(*default_collate(batch))

    return DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate
    )


class Repeated:
    """tf.data's .repeat(count) after .batch(): the loader's passes back to back (each
    reshuffled when the loader shuffles), as an iterable that can be looped over again.
    """

    def __init__(self, loader, count):
        self.loader, self.count = loader, count

    def __iter__(self):
        for _ in range(self.count):
            yield from self.loader

    def __len__(self):
        return self.count * len(self.loader)


def sparse_categorical_crossentropy(logits, target):
    """Keras' sparse_categorical_crossentropy per sample, from logits."""
    loss = F.cross_entropy(
        logits.flatten(0, -2), target.flatten().long(), reduction="none"
    )
    return loss.view(logits.shape[:-1])


if __name__ == "__main__":
    x = np.random.randint(0, 255, size=(40, 6)).astype("uint8")
    y = np.random.randint(0, 3, size=40)
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def loss_fn(target, output):
        """Keras' sparse_categorical_crossentropy loss object: (y_true, y_pred) in, the batch mean out."""
        return sparse_categorical_crossentropy(output, target).mean()

    # tf.data .cache(): nothing to do, the arrays already live in memory
    # tf.data .repeat(2): 2 passes over the data
    # tf.data .prefetch(): nothing to do for in-memory arrays (DataLoader(num_workers=...) overlaps loading)
    dataset = Repeated(
        make_loader(
            x,
            y,
            batch_size=16,
            element_map=lambda a, b: (
                torch.as_tensor(a, dtype=torch.float32) / 255.0,
                b,
            ),
            batch_map=center,
        ),
        2,
    )
    for xb, yb in dataset:
        model.train()
        optimizer.zero_grad()  # the tape's gradients start from zero
        loss = loss_fn(yb, model(xb))
        loss.backward()
        optimizer.step()
    print(float(loss))
