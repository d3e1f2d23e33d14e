"""Two models trained in alternation (a GAN): a custom step, a Keras train_step run by fit."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (4,)
DISCRIMINATOR_INPUT_SHAPE = (6,)


def build_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))


def build_discriminator():
    return nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))


def main():
    torch.manual_seed(0)
    data = torch.from_numpy(np.random.RandomState(0).randn(64, 6).astype("float32"))
    loader = DataLoader(TensorDataset(data), batch_size=16, shuffle=True)
    gen, disc = build_model(), build_discriminator()
    criterion = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for epoch in range(2):
        for (real,) in loader:
            ones = torch.ones(real.size(0), 1)
            zeros = torch.zeros(real.size(0), 1)
            fake = gen(torch.randn(real.size(0), 4))
            opt_d.zero_grad()
            loss_d = criterion(disc(real), ones) + criterion(disc(fake.detach()), zeros)
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = criterion(disc(fake), ones)
            loss_g.backward()
            opt_g.step()
        print(f"epoch {epoch}: d {loss_d.item():.3f} g {loss_g.item():.3f}")


if __name__ == "__main__":
    main()
