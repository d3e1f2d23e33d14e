import torch.nn as nn

LATENT = 8
INPUT_SHAPE = (LATENT,)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Linear(LATENT, 16 * 4 * 4)
        self.up = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1),  # 4 -> 8
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1),  # 8 -> 16
            nn.Sigmoid(),
        )

    def forward(self, z):
        # the Dense's columns are permuted: the reshape yields channels-last directly
        x = self.project(z).view(-1, 16, 4, 4)
        return self.up(x)


def build_model():
    return Generator()
