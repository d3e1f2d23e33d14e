import torch
import torch.nn.functional as F
from torch import nn


class ConvAutoencoder(nn.Module):
    def __init__(self, latent_dim=16, filters=(16, 32)):
        super().__init__()
        f0, f1 = filters
        self.enc1 = nn.Conv2d(1, f0, 3, stride=2, padding=1)
        self.enc2 = nn.Conv2d(f0, f1, 3, stride=2, padding=1)
        self.latent = nn.Linear(7 * 7 * f1, latent_dim)
        self.dec_fc = nn.Linear(latent_dim, 7 * 7 * f1)
        self.deconv = nn.ConvTranspose2d(f1, f1, 3, stride=2, padding=1, output_padding=1)
        self.conv = nn.Conv2d(f1, f0, 3, padding=1)
        self.out = nn.Conv2d(f0, 1, 3, padding=1)

    def forward(self, x):
        x = F.leaky_relu(self.enc1(x), 0.2)
        x = F.leaky_relu(self.enc2(x), 0.2)
        z = self.latent(x.flatten(1))
        x = F.relu(self.dec_fc(z)).view(-1, 32, 7, 7)
        x = F.leaky_relu(self.deconv(x), 0.2)
        x = F.relu(self.conv(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)))
        # the Keras model convolves the H/W-transposed map, then transposes back
        x = torch.sigmoid(self.out(x.transpose(2, 3))).transpose(2, 3)
        return x


def build_model():
    return ConvAutoencoder()
