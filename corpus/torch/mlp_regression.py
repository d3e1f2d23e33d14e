"""Small MLP regression on synthetic tabular data.

Exercises: nn.Sequential of Linear/ReLU/Dropout, MSELoss with a (N, 1) target,
SGD with momentum and weight decay, a StepLR schedule stepped once per epoch,
feature standardisation with tensor ops, and a state_dict save/load.
The target is a noisy nonlinear function of the inputs.
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUM_FEATURES = 16
INPUT_SHAPE = (NUM_FEATURES,)
HIDDEN = 64
EPOCHS = 15


def build_model(num_features=NUM_FEATURES, hidden=HIDDEN, dropout=0.1):
    return nn.Sequential(
        nn.Linear(num_features, hidden),
        nn.ReLU(),
        nn.Dropout(dropout),
        # second layer is half as wide as the first
        nn.Linear(hidden, hidden // 2),
        nn.ReLU(),
        nn.Dropout(dropout / 2),
        nn.Linear(hidden // 2, 1),  # linear output for regression
    )


def make_data(n=1024, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, NUM_FEATURES).astype("float32")
    w = rng.randn(NUM_FEATURES, 1).astype("float32") / np.sqrt(NUM_FEATURES)
    y = np.tanh(x @ w) + 0.5 * np.sin(x[:, :1]) + 0.05 * rng.randn(n, 1)
    return torch.from_numpy(x), torch.from_numpy(y.astype("float32"))


def main():
    torch.manual_seed(0)
    x, y = make_data()
    x_train, y_train, x_val, y_val = x[:896], y[:896], x[896:], y[896:]

    # standardise with training statistics only
    mean, std = x_train.mean(dim=0), x_train.std(dim=0)
    x_train = (x_train - mean) / std
    x_val = (x_val - mean) / std

    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True)
    model = build_model()
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)

    for epoch in range(EPOCHS):
        model.train()
        epoch_loss = 0.0
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * xb.size(0)
        scheduler.step()

        model.eval()
        with torch.no_grad():
            val_mse = criterion(model(x_val), y_val).item()
        if (epoch + 1) % 5 == 0:
            print(
                f"epoch {epoch + 1:2d} lr {scheduler.get_last_lr()[0]:.4f}"
                f" train mse {epoch_loss / len(x_train):.4f} val mse {val_mse:.4f}"
            )

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mlp_regression.pt")
        torch.save(model.state_dict(), path)
        restored = build_model()
        restored.load_state_dict(torch.load(path, map_location="cpu"))
    restored.eval()
    with torch.no_grad():
        preds = restored(x_val[:5]).squeeze(1)
    print("predictions:", [round(v, 3) for v in preds.tolist()])
    print("targets:    ", [round(v, 3) for v in y_val[:5, 0].tolist()])


if __name__ == "__main__":
    main()
