"""A small CNN: the channels-first flatten before the Linear costs no transpose in Keras."""
import torch
import torch.nn as nn
import torch.nn.functional as F

INPUT_SHAPE = (3, 32, 32)  # channels first, as torch wants it


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        # stride 2, padding 1 on 16x16 is not TensorFlow's 'same' (0 before, 1 after)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 8 * 8, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool(F.leaky_relu(self.conv2(x), 0.1))
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc(x), dim=1)


def build_model(num_classes=10):
    return SmallCNN(num_classes)
