"""A small CNN trained by the usual PyTorch loop (→ compile + fit)."""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (1, 12, 12)
EPOCHS = 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 10 * 10, 3)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(torch.flatten(x, 1))


def build_model():
    return Net()


def make_data(n=96, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(n, *INPUT_SHAPE).astype("float32")
    y = rng.randint(0, 3, size=n)
    return torch.from_numpy(x), torch.from_numpy(y.astype("int64"))


def main():
    torch.manual_seed(0)
    x, y = make_data()
    train_loader = DataLoader(TensorDataset(x[:64], y[:64]), batch_size=16, shuffle=True)
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

    for epoch in range(EPOCHS):
        model.train()
        total = 0.0
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            total += loss.item() * images.size(0)
        scheduler.step()
        model.eval()
        with torch.no_grad():
            logits = model(x[64:])
            val_loss = criterion(logits, y[64:]).item()
            val_acc = (logits.argmax(dim=1) == y[64:]).float().mean().item()
        print(f"epoch {epoch + 1}: train {total / 64:.4f} val {val_loss:.4f} acc {val_acc:.3f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "net.pt")
        torch.save(model.state_dict(), path)
        restored = build_model()
        restored.load_state_dict(torch.load(path, weights_only=True))
    restored.eval()
    with torch.no_grad():
        print(restored(x[:4]).argmax(dim=1).tolist())


if __name__ == "__main__":
    main()
