"""A small CIFAR-style ResNet on synthetic 3x32x32 images.

Exercises: a BasicBlock nn.Module (conv3x3-bn-relu-conv3x3-bn with bias=False,
an identity shortcut or a 1x1 conv + BatchNorm projection when the shape changes,
residual `out += shortcut(x)` then F.relu), _make_layer building nn.Sequential
stages, AdaptiveAvgPool2d((1, 1)) + torch.flatten(x, 1), kaiming init,
SGD with momentum/nesterov/weight_decay and a CosineAnnealingLR schedule.
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 10
INPUT_SHAPE = (3, 32, 32)
EPOCHS = 3


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            # projection so the residual add sees matching shapes
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class ResNet(nn.Module):
    def __init__(self, block=BasicBlock, num_blocks=(1, 1, 1), widths=(16, 32, 48), num_classes=NUM_CLASSES):
        super().__init__()
        self.in_planes = widths[0]
        self.conv1 = nn.Conv2d(3, widths[0], kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.layer1 = self._make_layer(block, widths[0], num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, widths[1], num_blocks[1], stride=2)
        self.layer3 = self._make_layer(block, widths[2], num_blocks[2], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[2] * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for s in strides:
            layers.append(block(self.in_planes, planes, s))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)  # 32x32 -> 16x16
        x = self.layer3(x)  # 16x16 -> 8x8
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def build_model(num_classes=NUM_CLASSES):
    return ResNet(BasicBlock, (1, 1, 1), num_classes=num_classes)


def make_data(n=288, seed=0):
    """Class k = a colour tint plus a stripe whose orientation/position depends on k."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, NUM_CLASSES, size=n)
    x = 0.3 * rng.randn(n, *INPUT_SHAPE).astype("float32")
    for i, k in enumerate(y):
        x[i, k % 3] += 0.5
        pos = 3 * (k // 2)
        if k % 2:
            x[i, :, pos : pos + 4, :] += 1.0
        else:
            x[i, :, :, pos : pos + 4] += 1.0
    return torch.from_numpy(x), torch.from_numpy(y.astype("int64"))


def main():
    torch.manual_seed(0)
    x, y = make_data()
    train_loader = DataLoader(TensorDataset(x[:224], y[:224]), batch_size=32, shuffle=True)
    test_loader = DataLoader(TensorDataset(x[224:], y[224:]), batch_size=64)

    model = build_model()
    print("trainable parameters:", sum(p.numel() for p in model.parameters() if p.requires_grad))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)

    for epoch in range(EPOCHS):
        model.train()
        train_loss, correct, seen = 0.0, 0, 0
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            train_loss += loss.item() * targets.size(0)
            correct += outputs.argmax(1).eq(targets).sum().item()
            seen += targets.size(0)
        scheduler.step()

        model.eval()
        test_correct = 0
        with torch.no_grad():
            for inputs, targets in test_loader:
                test_correct += model(inputs).argmax(1).eq(targets).sum().item()
        print(
            f"epoch {epoch + 1}: loss {train_loss / seen:.3f} train acc {correct / seen:.3f}"
            f" test acc {test_correct / len(test_loader.dataset):.3f} lr {scheduler.get_last_lr()[0]:.4f}"
        )

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "resnet_small.pth")
        torch.save(model.state_dict(), ckpt)
        best = build_model()
        best.load_state_dict(torch.load(ckpt, map_location="cpu"))
    best.eval()
    with torch.no_grad():
        print("restored predictions:", best(x[224:232]).argmax(1).tolist())


if __name__ == "__main__":
    main()
