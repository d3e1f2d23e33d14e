import torch
from torch import nn


class MnistCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 5 * 5, 64), nn.ReLU(), nn.Linear(64, num_classes),
        )

    def forward(self, x):
        return torch.softmax(self.classifier(self.features(x)), dim=1)


def build_model():
    return MnistCNN()
