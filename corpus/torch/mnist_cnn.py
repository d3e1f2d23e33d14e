"""MNIST-style CNN classifier on synthetic 28x28 grayscale digits.

Exercises: an nn.Module subclass with Conv2d/MaxPool2d/Flatten/Dropout/Linear built
in __init__ and F.relu in forward, channels-first (N, 1, 28, 28) inputs,
CrossEntropyLoss on raw logits, Adam, a DataLoader over a TensorDataset, eval under
torch.no_grad(), and a state_dict round trip through a temporary file.
No real MNIST is downloaded: each "digit" is a bright patch at a class-specific spot.
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 10
INPUT_SHAPE = (1, 28, 28)  # one example, channels first
BATCH_SIZE = 32
EPOCHS = 2


class Net(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, filters=16, hidden=64):
        super().__init__()
        self.conv1 = nn.Conv2d(1, filters, kernel_size=3)
        self.conv2 = nn.Conv2d(filters, filters * 2, kernel_size=3)
        self.pool = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.dropout = nn.Dropout(0.25)
        # 28 -> conv 26 -> pool 13 -> conv 11 -> pool 5
        self.fc1 = nn.Linear(filters * 2 * 5 * 5, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = self.dropout(self.flatten(x))
        x = F.relu(self.fc1(x))
        return self.fc2(x)  # logits: CrossEntropyLoss applies log_softmax itself


def build_model(num_classes=NUM_CLASSES, filters=16, hidden=64):
    return Net(num_classes=num_classes, filters=filters, hidden=hidden)


def make_data(n=600, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, NUM_CLASSES, size=n)
    x = 0.2 * rng.rand(n, *INPUT_SHAPE).astype("float32")
    for i, label in enumerate(y):
        # each class lights up its own 6x6 patch
        r, c = 4 + 6 * (label // 4), 2 + 6 * (label % 4)
        x[i, 0, r : r + 6, c : c + 6] += 0.8
    return torch.from_numpy(x), torch.from_numpy(y.astype("int64"))


def evaluate(model, loader, criterion):
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images)
            total_loss += criterion(logits, labels).item() * labels.size(0)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            count += labels.size(0)
    return total_loss / count, correct / count


def main():
    torch.manual_seed(0)
    x, y = make_data()
    train_loader = DataLoader(TensorDataset(x[:500], y[:500]), batch_size=BATCH_SIZE, shuffle=True)
    test_loader = DataLoader(TensorDataset(x[500:], y[500:]), batch_size=100)

    model = build_model()
    print(model)
    print("parameters:", sum(p.numel() for p in model.parameters()))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(EPOCHS):
        model.train()
        running = 0.0
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            running += loss.item() * labels.size(0)
        test_loss, test_acc = evaluate(model, test_loader, criterion)
        print(
            f"epoch {epoch + 1}/{EPOCHS} train loss {running / len(train_loader.dataset):.4f}"
            f" test loss {test_loss:.4f} test acc {test_acc:.3f}"
        )

    # save the weights, then load them into a fresh model as a user would at inference time
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mnist_cnn.pt")
        torch.save(model.state_dict(), path)
        restored = build_model()
        restored.load_state_dict(torch.load(path))
    restored.eval()
    with torch.no_grad():
        preds = restored(x[500:508]).argmax(dim=1)
    print("predicted:", preds.tolist())
    print("actual:   ", y[500:508].tolist())


if __name__ == "__main__":
    main()
