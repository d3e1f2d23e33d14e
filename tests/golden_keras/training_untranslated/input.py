"""What the training translation leaves for a human: each a stub with its line."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (5,)


def build_model():
    return nn.Sequential(nn.Linear(5, 3))


def main():
    x = torch.from_numpy(np.zeros((32, 5), dtype="float32"))
    y = torch.zeros(32, dtype=torch.long)
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    model = build_model()
    # per-group learning rates have no Keras optimizer argument
    optimizer = torch.optim.SGD([{"params": model.parameters(), "lr": 0.1}], lr=0.01)
    criterion = nn.CrossEntropyLoss(weight=torch.ones(3))
    for xb, yb in loader:
        loss = criterion(model(xb), yb)
        loss.backward()  # gradients accumulate: no zero_grad()
        optimizer.step()
    print(x.device)


if __name__ == "__main__":
    main()
