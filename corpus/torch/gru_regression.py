"""Bidirectional two-layer GRU regressing a summary of a noisy multivariate series.

Exercises: nn.GRU(batch_first=True, num_layers=2, bidirectional=True), joining the
forward and backward final states from h_n with torch.cat, a Linear head,
HuberLoss, Adam with a ReduceLROnPlateau schedule, gradient clipping, and float
inputs of shape (N, SEQ_LEN, NUM_FEATURES).
"""
import math
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

SEQ_LEN = 32
NUM_FEATURES = 3
INPUT_SHAPE = (SEQ_LEN, NUM_FEATURES)
EPOCHS = 4


class GRURegressor(nn.Module):
    def __init__(self, num_features=NUM_FEATURES, hidden_size=32, num_layers=2):
        super().__init__()
        self.gru = nn.GRU(
            input_size=num_features,
            hidden_size=hidden_size,
            num_layers=num_layers,
            batch_first=True,
            bidirectional=True,
        )
        self.head = nn.Linear(2 * hidden_size, 1)

    def forward(self, x):
        _, h_n = self.gru(x)  # h_n: (num_layers * 2, N, H)
        # last layer: h_n[-2] is the forward direction, h_n[-1] the backward one
        h = torch.cat([h_n[-2], h_n[-1]], dim=1)
        return self.head(h)


def build_model(num_features=NUM_FEATURES, hidden_size=32, num_layers=2):
    return GRURegressor(num_features, hidden_size, num_layers)


def make_data(n=448, seed=0):
    """Sines with random frequency/phase; target is the amplitude-weighted frequency."""
    rng = np.random.RandomState(seed)
    t = np.linspace(0, 2 * math.pi, SEQ_LEN, dtype="float32")
    freq = rng.uniform(0.5, 3.0, size=(n, 1)).astype("float32")
    phase = rng.uniform(0, 2 * math.pi, size=(n, 1)).astype("float32")
    amp = rng.uniform(0.5, 1.5, size=(n, 1)).astype("float32")
    wave = amp * np.sin(freq * t[None, :] + phase)
    x = np.stack(
        [wave, np.cos(freq * t[None, :] + phase), 0.1 * rng.randn(n, SEQ_LEN)],
        axis=-1,
    ).astype("float32")
    y = (amp * freq).astype("float32")
    return torch.from_numpy(x), torch.from_numpy(y)


def main():
    torch.manual_seed(0)
    x, y = make_data()
    train_loader = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=32, shuffle=True)
    val_x, val_y = x[384:], y[384:]

    model = build_model()
    criterion = nn.HuberLoss(delta=1.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)

    for epoch in range(EPOCHS):
        model.train()
        total = 0.0
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item() * xb.size(0)

        model.eval()
        with torch.no_grad():
            val_pred = model(val_x)
            val_loss = criterion(val_pred, val_y).item()
            val_mae = (val_pred - val_y).abs().mean().item()
        scheduler.step(val_loss)
        print(f"epoch {epoch + 1}: train {total / 384:.4f} val huber {val_loss:.4f} val mae {val_mae:.4f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gru.pt")
        torch.save(model.state_dict(), path)
        restored = build_model()
        restored.load_state_dict(torch.load(path))
    restored.eval()
    with torch.no_grad():
        assert torch.allclose(restored(val_x), model(val_x))
        print("first predictions:", restored(val_x[:4]).squeeze(1).tolist())


if __name__ == "__main__":
    main()
