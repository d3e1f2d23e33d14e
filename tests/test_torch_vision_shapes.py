"""The model's input shape from the torchvision dataset that feeds it (issue 19 item 1): a
folder of images gives no size, its transforms do (``Resize((h, w))``, ``CenterCrop``,
``RandomResizedCrop``, ``Resize(256)`` then a crop); ``ImageFolder(root, transform)`` takes
the transform positionally as torchvision does; ``DatasetFolder``'s items are what its loader
returns: the size from the transforms, the channels from the model's first layer."""

from __future__ import annotations

import pytest

from transpiler.translate import translate

PROGRAM = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d({channels}, 4, kernel_size=3, stride=2)
        self.fc = nn.Linear(4 * 15 * 15, 2)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = x.view(x.size(0), -1)
        return self.fc(x)


normalize = transforms.Normalize(mean=[0.5], std=[0.5])


def main():
    train = {dataset}
    loader = torch.utils.data.DataLoader(train, batch_size=4)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
'''


def _input_line(dataset: str, channels: int = 3) -> tuple[str, list[str]]:
    tr = translate(PROGRAM.format(dataset=dataset, channels=channels), "prog.py", "keras")
    model_stubs = [str(d) for d in tr.stubs if d.message.startswith("Net:")]
    lines = [ln.strip() for ln in tr.text.splitlines() if "keras.Input(" in ln]
    return (lines[0] if lines else ""), model_stubs


@pytest.mark.parametrize("dataset", [
    # the transform as ImageFolder's second positional argument (imagenet/main.py's spelling)
    'datasets.ImageFolder("d", transforms.Compose([transforms.Resize(40), transforms.CenterCrop(32), '
    'transforms.ToTensor(), normalize]))',
    'datasets.ImageFolder("d", transform=transforms.Compose([transforms.RandomResizedCrop(32), '
    'transforms.RandomHorizontalFlip(), transforms.ToTensor()]))',
    'datasets.ImageFolder("d", transforms.Compose([transforms.Resize((32, 32)), transforms.ToTensor()]))',
])
def test_an_image_folder_gives_the_size_its_transforms_make(dataset):
    line, stubs = _input_line(dataset)
    assert not stubs, stubs
    assert line.startswith("keras.Input(shape=(32, 32, 3)"), line


def test_a_dataset_folder_takes_the_channels_from_the_model():
    line, stubs = _input_line('datasets.DatasetFolder("d", loader, (".npy",), '
                              'transforms.Compose([transforms.ToTensor(), transforms.CenterCrop(32)]))', channels=5)
    assert not stubs, stubs
    assert line.startswith("keras.Input(shape=(32, 32, 5)"), line


def test_a_resize_of_the_smaller_edge_alone_leaves_the_size_unknown():
    """``Resize(40)`` keeps each image's aspect: no size; the model's flatten needs one, so
    it is a stub naming the unknown sizes (never a guessed square)."""
    line, stubs = _input_line('datasets.ImageFolder("d", transforms.Compose([transforms.Resize(40), '
                              'transforms.ToTensor()]))')
    assert any("(N, 4, H, W)" in s for s in stubs), stubs
