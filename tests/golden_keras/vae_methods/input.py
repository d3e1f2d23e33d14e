"""A small VAE: its own encode/decode methods (also called by the program), noise from
torch.randn_like, and a loss written in the loop (a custom training step in Keras)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

INPUT_SHAPE = (12,)


class TinyVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(12, 6)
        self.mu = nn.Linear(6, 2)
        self.logvar = nn.Linear(6, 2)
        self.dec = nn.Linear(2, 12)

    def encode(self, x):
        h = torch.tanh(self.enc(x))
        return self.mu(h), self.logvar(h)

    def decode(self, z):
        return self.dec(z)

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar


def build_model():
    return TinyVAE()


def main():
    torch.manual_seed(0)
    data = torch.rand(32, 12)
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(10):
        optimizer.zero_grad()
        recon, mu, logvar = model(data)
        rec = F.mse_loss(recon, data, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = rec + kld
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        mu, _ = model.encode(data[:4])
        print("reconstruction", F.mse_loss(model.decode(mu), data[:4]).item())


if __name__ == "__main__":
    main()
