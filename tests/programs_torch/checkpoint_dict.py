"""The checkpoint of PyTorch's "saving and loading a general checkpoint" recipe: a dict with
the epoch, the model's and the optimizer's state_dicts and the last loss, saved, loaded into
a new model and optimizer, and training resumed from there. Runs as written with torch."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (5,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def train_epochs(model, optimizer, loader, epochs, start=0):
    criterion = nn.MSELoss()
    for epoch in range(start, start + epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.6f}")
    return loss


def main():
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(32, 5).astype(np.float32))
    y = torch.from_numpy(rng.randn(32, 1).astype(np.float32))
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loss = train_epochs(model, optimizer, loader, 2)
    torch.save({
        "epoch": 2,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "loss": loss,
    }, "checkpoint.tar")

    restored = Net()
    restored_optimizer = torch.optim.Adam(restored.parameters(), lr=0.01)
    checkpoint = torch.load("checkpoint.tar", weights_only=False)
    restored.load_state_dict(checkpoint["model_state_dict"])
    restored_optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    epoch = checkpoint["epoch"]
    print(f"resumed at epoch {epoch} from loss {float(checkpoint['loss']):.6f}")
    train_epochs(model, optimizer, loader, 1, start=epoch)
    train_epochs(restored, restored_optimizer, loader, 1, start=epoch)


if __name__ == "__main__":
    main()
