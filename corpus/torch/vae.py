"""Variational autoencoder on synthetic 20x20 binary "sprites" (flattened to 400).

Exercises: an nn.Module with separate encode/reparameterize/decode methods, two
Linear heads for mu and logvar, the reparameterisation trick with torch.randn_like
while training (the posterior mean at inference: a branch on self.training), a forward returning a tuple (recon_logits, mu, logvar), a loss written in the
loop (binary_cross_entropy_with_logits summed + the analytic KL term), Adam, and
sampling new images from the prior with torch.no_grad().
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

IMAGE_SIZE = 20
INPUT_SHAPE = (IMAGE_SIZE * IMAGE_SIZE,)
LATENT_DIM = 8
EPOCHS = 5


class VAE(nn.Module):
    def __init__(self, input_dim=IMAGE_SIZE * IMAGE_SIZE, hidden=64, latent_dim=LATENT_DIM):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, hidden)
        self.fc_mu = nn.Linear(hidden, latent_dim)
        self.fc_logvar = nn.Linear(hidden, latent_dim)
        self.fc3 = nn.Linear(latent_dim, hidden)
        self.fc4 = nn.Linear(hidden, input_dim)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        if not self.training:
            return mu  # the posterior mean at inference
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h = F.relu(self.fc3(z))
        return self.fc4(h)  # logits; apply sigmoid to get pixel probabilities

    def forward(self, x):
        mu, logvar = self.encode(x.view(x.size(0), -1))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def build_model(input_dim=IMAGE_SIZE * IMAGE_SIZE, hidden=64, latent_dim=LATENT_DIM):
    return VAE(input_dim, hidden, latent_dim)


def make_data(n=512, seed=0):
    """Each image is a filled rectangle with random position and size."""
    rng = np.random.RandomState(seed)
    images = np.zeros((n, IMAGE_SIZE, IMAGE_SIZE), dtype="float32")
    for i in range(n):
        h, w = rng.randint(4, 10, size=2)
        r, c = rng.randint(0, IMAGE_SIZE - h), rng.randint(0, IMAGE_SIZE - w)
        images[i, r : r + h, c : c + w] = 1.0
    return torch.from_numpy(images.reshape(n, -1))


def main():
    torch.manual_seed(0)
    data = make_data()
    loader = DataLoader(TensorDataset(data), batch_size=64, shuffle=True)

    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

    for epoch in range(EPOCHS):
        model.train()
        train_loss = 0.0
        for (batch,) in loader:
            optimizer.zero_grad()
            recon_logits, mu, logvar = model(batch)
            # reconstruction term + KL(q(z|x) || N(0, I)), both summed over the batch
            bce = F.binary_cross_entropy_with_logits(recon_logits, batch, reduction="sum")
            kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            loss = bce + kld
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        print(f"epoch {epoch + 1}: average loss {train_loss / len(loader.dataset):.2f}")

    model.eval()
    with torch.no_grad():
        # reconstruct with the posterior mean rather than a sample (model.eval())
        recon_logits, _, _ = model(data[:8])
        recon = torch.sigmoid(recon_logits)
        err = F.mse_loss(recon, data[:8]).item()
        samples = torch.sigmoid(model.decode(torch.randn(4, LATENT_DIM)))
    print(f"reconstruction mse {err:.4f}; sample mean intensity {samples.mean().item():.3f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vae.pt")
        torch.save(model.state_dict(), path)
        decoder_only = build_model()
        decoder_only.load_state_dict(torch.load(path))
    print("restored", sum(p.numel() for p in decoder_only.parameters()), "parameters")


if __name__ == "__main__":
    main()
