import torch
from torch import nn


def bn(c):
    return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)


def dw_separable(cin, cout, stride):
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin, bias=False), bn(cin), nn.ReLU6(),
        nn.Conv2d(cin, cout, 1, bias=False), bn(cout), nn.ReLU6(),
    )


class MobileNetLike(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), bn(16), nn.ReLU6())
        self.blocks = nn.Sequential(
            dw_separable(16, 32, 1), dw_separable(32, 64, 2), dw_separable(64, 64, 1), dw_separable(64, 128, 2),
        )
        self.separable = nn.Sequential(
            nn.Conv2d(128, 128, 3, padding=1, groups=128, bias=False), nn.Conv2d(128, 128, 1), nn.ReLU6(),
        )
        self.mix = nn.Sequential(nn.Conv2d(128, 128, 1, groups=4), nn.ReLU6())
        self.head = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Conv2d(128, 64, 1), nn.ReLU6(), nn.Flatten(), nn.Dropout(1e-3),
            nn.Linear(64, num_classes),
        )

    def forward(self, x):
        x = self.mix(self.separable(self.blocks(self.stem(x))))
        return torch.softmax(self.head(x), dim=1)


def build_model():
    return MobileNetLike()
