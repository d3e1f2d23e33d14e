"""An MLP regressor: AdamW, a warm-up LambdaLR stepped per batch, early stopping."""
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (8,)


def build_model():
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))


def main():
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(200, 8).astype("float32"))
    y = x[:, :1] * 2.0 + 0.1
    mean, std = x[:160].mean(dim=0), x[:160].std(dim=0)
    x = (x - mean) / std
    loader = DataLoader(TensorDataset(x[:160], y[:160]), batch_size=32)
    model = build_model()
    criterion = nn.SmoothL1Loss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    warmup = len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))

    best, best_state, bad, patience = float("inf"), None, 0, 2
    for epoch in range(20):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
        model.eval()
        with torch.no_grad():
            val = criterion(model(x[160:]), y[160:]).item()
        model.train()
        if val < best:
            best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= patience:
                break
    model.load_state_dict(best_state)
    print(f"best {best:.4f}")


if __name__ == "__main__":
    main()
