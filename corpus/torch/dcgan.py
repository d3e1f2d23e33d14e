"""A small DCGAN on synthetic 16x16 grayscale images.

Exercises: a Generator (latent vector reshaped with .view to (N, nz, 1, 1), then
ConvTranspose2d + BatchNorm2d + ReLU, ending in Tanh) and a Discriminator (Conv2d +
LeakyReLU(0.2) + BatchNorm2d, one logit per image), DCGAN weight init via
model.apply(), two Adam optimizers with betas=(0.5, 0.999), BCEWithLogitsLoss,
alternating D/G updates with fake.detach(), and torch.full labels.
build_model() returns the generator; build_discriminator() the discriminator.
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

LATENT_DIM = 16
IMAGE_SIZE = 16
INPUT_SHAPE = (LATENT_DIM,)  # the generator's input: one latent vector
DISCRIMINATOR_INPUT_SHAPE = (1, IMAGE_SIZE, IMAGE_SIZE)
EPOCHS = 3


class Generator(nn.Module):
    def __init__(self, nz=LATENT_DIM, ngf=32, nc=1):
        super().__init__()
        self.main = nn.Sequential(
            # z: (N, nz, 1, 1) -> (N, ngf*2, 4, 4)
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # -> (N, ngf, 8, 8)
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            # -> (N, nc, 16, 16)
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z.view(z.size(0), -1, 1, 1))


class Discriminator(nn.Module):
    def __init__(self, nc=1, ndf=32):
        super().__init__()
        self.main = nn.Sequential(
            # (N, nc, 16, 16) -> (N, ndf, 8, 8)
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # -> (N, ndf*2, 4, 4)
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # -> (N, 1, 1, 1)
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
        )

    def forward(self, x):
        return self.main(x).view(-1)  # one logit per image


def weights_init(m):
    # the DCGAN paper's initialisation
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def build_model(nz=LATENT_DIM, ngf=32):
    netG = Generator(nz, ngf)
    netG.apply(weights_init)
    return netG


def build_discriminator(ndf=32):
    netD = Discriminator(ndf=ndf)
    netD.apply(weights_init)
    return netD


def make_data(n=256, seed=0):
    """Images in [-1, 1]: a bright horizontal or vertical bar on a dark background."""
    rng = np.random.RandomState(seed)
    x = -np.ones((n, 1, IMAGE_SIZE, IMAGE_SIZE), dtype="float32")
    for i in range(n):
        pos = rng.randint(2, IMAGE_SIZE - 5)
        if rng.rand() < 0.5:
            x[i, 0, pos : pos + 3, :] = 1.0
        else:
            x[i, 0, :, pos : pos + 3] = 1.0
    x += 0.05 * rng.randn(*x.shape).astype("float32")
    return torch.from_numpy(x.clip(-1.0, 1.0))


def main():
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(make_data()), batch_size=32, shuffle=True, drop_last=True)

    netG = build_model()
    netD = build_discriminator()
    criterion = nn.BCEWithLogitsLoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_noise = torch.randn(8, LATENT_DIM)
    real_label, fake_label = 1.0, 0.0

    for epoch in range(EPOCHS):
        netG.train()
        netD.train()
        for i, (real,) in enumerate(loader):
            b_size = real.size(0)
            # (1) update D: maximise log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            label = torch.full((b_size,), real_label)
            errD_real = criterion(netD(real), label)
            errD_real.backward()

            noise = torch.randn(b_size, LATENT_DIM)
            fake = netG(noise)
            label.fill_(fake_label)
            errD_fake = criterion(netD(fake.detach()), label)
            errD_fake.backward()
            errD = errD_real + errD_fake
            optimizerD.step()

            # (2) update G: maximise log(D(G(z))), i.e. fake images labelled real
            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake)
            errG = criterion(output, label)
            errG.backward()
            D_G_z = torch.sigmoid(output).mean().item()
            optimizerG.step()

        print(f"[{epoch + 1}/{EPOCHS}] loss_D {errD.item():.4f} loss_G {errG.item():.4f} D(G(z)) {D_G_z:.4f}")

    netG.eval()
    with torch.no_grad():
        samples = netG(fixed_noise)
    print("samples:", tuple(samples.shape), f"range [{samples.min().item():.2f}, {samples.max().item():.2f}]")

    with tempfile.TemporaryDirectory() as tmp:
        torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()}, os.path.join(tmp, "dcgan.pt"))
        checkpoint = torch.load(os.path.join(tmp, "dcgan.pt"))
    netG2 = build_model()
    netG2.load_state_dict(checkpoint["netG"])
    netG2.eval()
    with torch.no_grad():
        print("restored generator matches:", torch.allclose(netG2(fixed_noise), samples))


if __name__ == "__main__":
    main()
