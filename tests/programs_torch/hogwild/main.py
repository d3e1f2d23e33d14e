"""Hogwild-style training as pytorch/examples writes it (mnist_hogwild), on tabular data:
worker processes train one shared model through a library module's functions given the
model, a custom Dataset and the DataLoader options. Runs as written with torch."""
import argparse

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset

from train import train, test

INPUT_SHAPE = (8,)

parser = argparse.ArgumentParser(description='Hogwild-style workers on one model')
parser.add_argument('--batch-size', type=int, default=8)
parser.add_argument('--epochs', type=int, default=2)
parser.add_argument('--lr', type=float, default=0.1)
parser.add_argument('--momentum', type=float, default=0.5)
parser.add_argument('--seed', type=int, default=1)
parser.add_argument('--log-interval', type=int, default=1)
parser.add_argument('--num-processes', type=int, default=2)
parser.add_argument('--cuda', action='store_true', default=False)


class Blobs(Dataset):
    def __init__(self, n, seed):
        rng = np.random.RandomState(seed)
        self.x = rng.randn(n, 8).astype(np.float32)
        self.y = (self.x[:, 0] + self.x[:, 1] > 0).astype(np.int64)
        self.noise = torch.zeros(n, 8)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        x = torch.from_numpy(self.x[index]).clone() + self.noise[index]
        return x, torch.tensor(self.y[index])


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


if __name__ == '__main__':
    args = parser.parse_args()
    use_cuda = args.cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    dataset1 = Blobs(64, 0)
    dataset2 = Blobs(32, 1)
    kwargs = {'batch_size': args.batch_size, 'shuffle': True}
    if use_cuda:
        kwargs.update({'num_workers': 1, 'pin_memory': True})
    torch.manual_seed(args.seed)
    mp.set_start_method('spawn', force=True)
    model = Net().to(device)
    model.share_memory()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device, dataset1, kwargs))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    test(args, model, device, dataset2, kwargs)
