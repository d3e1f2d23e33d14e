"""Full-batch training as graph programs write it (pytorch/examples gat): one training step per
call of ``train_iter`` (zero_grad, forward, loss, backward, step in the function's own body),
evaluated after each step under ``torch.no_grad()``. Runs as written with torch."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

INPUT_SHAPE = (6,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train_iter(epoch, model, optimizer, criterion, x, y, print_every=1):
    model.train()
    optimizer.zero_grad()
    output = model(x)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
    loss_train, acc_train = evaluate(model, criterion, x, y)
    if epoch % print_every == 0:
        print(f"Epoch: {epoch:04d} loss: {loss.item():.6f} loss_train: {loss_train:.6f} acc_train: {acc_train:.4f}")


def evaluate(model, criterion, x, y):
    model.eval()
    with torch.no_grad():
        output = model(x)
        loss = criterion(output, y)
        acc = (output.argmax(dim=1) == y).float().mean()
    return loss.item(), acc.item()


def main():
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(40, 6).astype(np.float32))
    y = torch.from_numpy((rng.rand(40) * 3).astype(np.int64))
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(1, 6):
        train_iter(epoch, model, optimizer, criterion, x, y)
    loss, acc = evaluate(model, criterion, x, y)
    print(f"final loss {loss:.4f} accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
