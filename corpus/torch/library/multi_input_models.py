"""Modules of two inputs in a models-only file (no data, no input shape anywhere): a siamese
network whose one encoder reads both images (through a helper method, as
pytorch/examples' siamese_network does), and a two-branch model reading an image and a
vector of features. Each input's shape follows from the first layer it is handed."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SiameseNet(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, hidden, kernel_size=3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.fc = nn.Sequential(nn.Linear(hidden * 2, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
        self.sigmoid = nn.Sigmoid()

    def forward_once(self, x):
        output = self.encoder(x)
        return output.view(output.size()[0], -1)

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        return self.sigmoid(self.fc(output))


class ImageAndFeatures(nn.Module):
    def __init__(self, n_features, n_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = nn.AdaptiveMaxPool2d(1)
        self.dense = nn.Linear(n_features, 6)
        self.head = nn.Linear(12, n_classes)

    def forward(self, image, features):
        a = torch.flatten(self.pool(F.relu(self.conv(image))), 1)
        b = torch.tanh(self.dense(features))
        return self.head(torch.cat([a, b], dim=1))
