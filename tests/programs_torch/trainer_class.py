"""A trainer class as the DDP tutorial series writes one (written for these tests): the model,
loader and optimizer held by a ``Trainer`` whose ``_run_batch`` is one training step,
``_run_epoch`` a pass over the loader and ``train`` the epochs. Runs as written with torch."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Trainer:
    def __init__(self, model, train_data, optimizer, log_every):
        self.model = model
        self.train_data = train_data
        self.optimizer = optimizer
        self.log_every = log_every

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def _run_epoch(self, epoch):
        total = 0.0
        for source, targets in self.train_data:
            total += self._run_batch(source, targets)
        if epoch % self.log_every == 0:
            print(f"epoch {epoch} loss {total / len(self.train_data):.4f}")

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(64, 20)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, size=64))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=False)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model, loader, optimizer, 1)
    trainer.train(4)


if __name__ == "__main__":
    main()
