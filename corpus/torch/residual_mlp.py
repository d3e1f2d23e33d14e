"""Deep residual MLP for tabular regression with blocks held in an nn.ModuleList.

Exercises: nn.ModuleList of pre-norm residual blocks (LayerNorm -> Linear -> GELU ->
Dropout -> Linear) iterated in forward with `x = x + block(x)`, an input
projection and a final LayerNorm + Linear head, SmoothL1Loss, AdamW, a linear
warm-up via LambdaLR stepped every batch, and early stopping on a validation set
with the best state_dict kept in memory (copy.deepcopy) and on disk.
"""
import copy
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

NUM_FEATURES = 12
INPUT_SHAPE = (NUM_FEATURES,)
EPOCHS = 8


class ResidualBlock(nn.Module):
    def __init__(self, dim, expansion=2, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * expansion)
        self.fc2 = nn.Linear(dim * expansion, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = F.gelu(self.fc1(self.norm(x)))
        return self.fc2(self.dropout(h))


class ResidualMLP(nn.Module):
    def __init__(self, num_features=NUM_FEATURES, dim=48, num_blocks=3, num_outputs=2):
        super().__init__()
        self.input_proj = nn.Linear(num_features, dim)
        self.blocks = nn.ModuleList([ResidualBlock(dim) for _ in range(num_blocks)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_outputs)

    def forward(self, x):
        x = self.input_proj(x)
        for block in self.blocks:
            x = x + block(x)
        return self.head(self.norm(x))


def build_model(num_features=NUM_FEATURES, dim=48, num_blocks=3):
    return ResidualMLP(num_features, dim, num_blocks)


def make_data(n=1200, seed=0):
    """Two targets: a smooth interaction term and a thresholded sum."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n, NUM_FEATURES).astype("float32")
    y0 = x[:, 0] * x[:, 1] + np.sin(x[:, 2])
    y1 = np.where(x[:, 3:6].sum(axis=1) > 0, 1.0, -1.0) + 0.3 * x[:, 6]
    y = np.stack([y0, y1], axis=1) + 0.05 * rng.randn(n, 2)
    return torch.from_numpy(x), torch.from_numpy(y.astype("float32"))


def main():
    torch.manual_seed(0)
    x, y = make_data()
    train_loader = DataLoader(TensorDataset(x[:1000], y[:1000]), batch_size=64, shuffle=True)
    x_val, y_val = x[1000:], y[1000:]

    model = build_model()
    criterion = nn.SmoothL1Loss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    warmup_steps = len(train_loader)  # one epoch of linear warm-up
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup_steps))

    best_loss, best_state, bad_epochs, patience = float("inf"), None, 0, 3
    for epoch in range(EPOCHS):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()

        model.eval()
        with torch.no_grad():
            val_loss = criterion(model(x_val), y_val).item()
        print(f"epoch {epoch + 1}: val loss {val_loss:.4f}")
        if val_loss < best_loss:
            best_loss, best_state, bad_epochs = val_loss, copy.deepcopy(model.state_dict()), 0
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                print("early stopping")
                break

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "best.pt")
        torch.save(best_state, path)
        model = build_model()
        model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    with torch.no_grad():
        per_target = F.l1_loss(model(x_val), y_val, reduction="none").mean(dim=0)
    print(f"best val loss {best_loss:.4f}; per-target MAE {per_target.tolist()}")


if __name__ == "__main__":
    main()
