import torch
import torch.nn.functional as F
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)

    def forward(self, x):
        return F.relu(self.conv2(self.bn(F.relu(self.conv1(x)))))


class UNetSmall(nn.Module):
    def __init__(self, base=8):
        super().__init__()
        self.enc1 = ConvBlock(1, base)
        self.enc2 = ConvBlock(base, base * 2)
        self.bottleneck = ConvBlock(base * 2, base * 4)
        self.drop = nn.Dropout2d(0.1)
        self.up2 = nn.ConvTranspose2d(base * 4, base * 2, 2, stride=2)
        self.dec2 = ConvBlock(base * 4, base * 2)
        self.up1 = nn.Conv2d(base * 2, base, 1)
        self.dec1 = ConvBlock(base * 2, base)
        self.out = nn.Conv2d(base, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.drop(self.bottleneck(F.max_pool2d(e2, 2)))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        u1 = F.relu(self.up1(F.interpolate(d2, scale_factor=2, mode="nearest")))
        d1 = self.dec1(torch.cat([u1, e1], dim=1))
        return torch.sigmoid(self.out(d1))


def build_model():
    return UNetSmall()
