"""An argparse-driven script as pytorch/examples writes them: devices, seeds, loader kwargs."""
import argparse

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"epoch {epoch} batch {batch_idx} loss {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser(description="plumbing")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=2)
    parser.add_argument("--no-accel", action="store_true")
    args = parser.parse_args()

    use_accel = not args.no_accel and torch.accelerator.is_available()
    use_cuda = torch.cuda.is_available()
    use_mps = torch.backends.mps.is_available()
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    if use_accel:
        device = torch.accelerator.current_accelerator()
    elif use_cuda or use_mps:
        device = torch.device("cuda" if use_cuda else "mps")
    else:
        device = torch.device("cpu")
    print(f"device {device}, {torch.cuda.device_count()} GPUs")

    train_kwargs = {"batch_size": args.batch_size}
    if use_accel:
        train_kwargs.update({"num_workers": 1, "pin_memory": True, "shuffle": True})

    train_set = TensorDataset(torch.randn(64, 12), torch.randint(0, 3, (64,)))
    train_loader = DataLoader(train_set, **train_kwargs)
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)


if __name__ == "__main__":
    main()
