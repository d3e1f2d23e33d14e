"""torch → Keras: torchvision's random augmentations (RandomResizedCrop, RandomCrop,
RandomHorizontalFlip, RandomVerticalFlip) are generated classes drawing per image on every
call, and a dataset whose transform holds one is read per item (``ImageFolderItems`` /
``VisionItems``): torchvision draws per item and per epoch, so putting the whole set through
the transform once would train on one draw (frontend_ast/torch/vision.py,
runtime/keras/vision.py).

The draws are numpy's, not torch's; what is compared with real torchvision (the
torchvision environment /work/main/.venv-tv, skipped where absent) is what does not depend
on the generator: RandomResizedCrop's fallback window (all ten tries fail) and the crop
resized from a given window (within one uint8 level: PIL's bilinear filter, as Resize).
"""

from __future__ import annotations

import os
import subprocess

import torch  # noqa: F401  (torch before Keras in one process)
import numpy as np
import pytest

from transpiler.translate import translate

TV_PYTHON = "/work/main/.venv-tv/bin/python"

PROGRAM = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms

DATA = "images"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 14 * 14, 2)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(torch.flatten(x, 1))


def make_dataset(root):
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    return datasets.ImageFolder(root, transforms.Compose([
        transforms.RandomResizedCrop(16),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        normalize,
    ]))


def main():
    torch.manual_seed(0)
    train_loader = torch.utils.data.DataLoader(make_dataset(DATA), batch_size=4, shuffle=True)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        for images, target in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), target)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''

TRANSFORMS = '''\
from torchvision import transforms

fallback = transforms.RandomResizedCrop(5, scale=(2.0, 3.0))
usual = transforms.RandomResizedCrop((6, 4))
crop = transforms.RandomCrop(4)
flip = transforms.RandomHorizontalFlip(p=1.0)
vflip = transforms.RandomVerticalFlip(0.0)
to_tensor = transforms.ToTensor()
'''

REFERENCE = '''\
import sys
import numpy as np
import torch
from PIL import Image
from torchvision import transforms
from torchvision.transforms import functional as F
rng = np.random.default_rng(0)
out = {}
for h, w in ((13, 11), (10, 30), (30, 10)):
    image = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
    out[f"params_{h}_{w}"] = np.asarray(transforms.RandomResizedCrop.get_params(image, (2.0, 3.0), (3 / 4, 4 / 3)))
rgb = Image.fromarray(np.random.default_rng(1).integers(0, 256, (13, 11, 3), dtype=np.uint8))
out["crop"] = F.to_tensor(F.resized_crop(rgb, 2, 1, 8, 7, [5, 5])).numpy()
np.savez(sys.argv[1], **out)
'''


def _run(text: str, name: str) -> dict:
    namespace: dict = {}
    exec(compile(text, name, "exec"), namespace)  # noqa: S102  (the translated program)
    return namespace


def _images(root) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in ("a", "b"):
        os.makedirs(root / c, exist_ok=True)
        for k in range(3):
            Image.fromarray(rng.integers(0, 256, (20 + k, 24, 3), dtype=np.uint8)).save(root / c / f"{k}.png")


def test_an_image_folder_with_random_augmentations_is_read_per_item_and_epoch(tmp_path):
    tr = translate(PROGRAM, "augment.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert "ImageFolderItems(" in tr.text and "RandomResizedCrop(16)" in tr.text
    assert "import torchvision" not in tr.text and "from torchvision" not in tr.text
    ns = _run(tr.text, "augment_keras.py")
    _images(tmp_path)
    np.random.seed(0)
    dataset = ns["make_dataset"](str(tmp_path))
    assert len(dataset) == 6 and dataset.classes == ["a", "b"] and list(dataset.targets) == [0, 0, 0, 1, 1, 1]
    first, label = dataset[4]
    assert first.shape == (3, 16, 16) and first.dtype == np.float32 and label == 1
    again = [dataset[4][0] for _ in range(3)]  # (a new window on every read: torchvision's per epoch)
    assert any(not np.array_equal(first, a) for a in again)
    batch = next(iter(ns["DatasetLoader"](dataset, batch_size=4, shuffle=True)))
    assert batch[0].shape == (4, 3, 16, 16) and batch[1].dtype == np.int64


def test_a_dataset_whose_transform_the_reader_cannot_see_is_read_per_item(tmp_path):
    """A transform made by a function may draw at random: the dataset is the per-item one (an
    eager one would put the whole set through one draw); one whose steps are all seen and
    none random stays the eager ImageFolder."""
    source = TRANSFORMS + """
from torchvision import datasets


def make_transform(train):
    steps = [transforms.RandomHorizontalFlip()] if train else []
    return transforms.Compose(steps + [transforms.CenterCrop(8), transforms.ToTensor()])


def made(root):
    return datasets.ImageFolder(root, make_transform(True))


def seen(root):
    return datasets.ImageFolder(root, transforms.Compose([transforms.CenterCrop(8), transforms.ToTensor()]))
"""
    tr = translate(source, "folder.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert "return ImageFolderItems(root, transform=make_transform(True))" in tr.text
    assert "return ImageFolder(root, transform=Compose([CenterCrop(8), ToTensor()]))" in tr.text
    ns = _run(tr.text, "folder_keras.py")
    _images(tmp_path)
    np.random.seed(0)
    items, eager = ns["made"](str(tmp_path)), ns["seen"](str(tmp_path))
    assert items[2][0].shape == eager[2][0].shape == (3, 8, 8) and items[2][1] == eager[2][1] == 0
    assert not hasattr(items, "arrays") and eager.arrays[0].shape == (6, 3, 8, 8)


def test_random_transforms_draw_within_torchvisions_bounds():
    tr = translate(TRANSFORMS, "augment_lib.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    ns = _run(tr.text, "augment_lib_keras.py")
    np.random.seed(0)
    usual = ns["usual"]
    for _ in range(200):
        i, j, h, w = usual.params(40, 30)
        assert 0 < h <= 40 and 0 < w <= 30 and 0 <= i <= 40 - h and 0 <= j <= 30 - w
        assert 0.08 * 1200 * 0.9 <= h * w <= 1200
    images = np.random.default_rng(2).integers(0, 256, (5, 12, 9, 3), dtype=np.uint8)
    assert usual(images).shape == (5, 6, 4, 3)
    assert ns["crop"](images).shape == (5, 4, 4, 3)
    np.testing.assert_array_equal(ns["flip"](images), images[:, :, ::-1])
    np.testing.assert_array_equal(ns["vflip"](images), images)
    tensors = np.transpose(images, (0, 3, 1, 2)).astype("float32") / 255
    np.testing.assert_array_equal(ns["flip"](tensors), tensors[..., ::-1])
    crops = ns["crop"](tensors)
    assert crops.shape == (5, 3, 4, 4) and not all(np.array_equal(crops[0], c) for c in crops[1:])


def test_random_augmentations_not_translated_are_stubs():
    source = ("from torchvision import transforms\n\npad = transforms.RandomCrop(32, padding=4)\n"
              "turn = transforms.RandomRotation(10)\n")
    tr = translate(source, "aug.py", "keras")
    messages = [str(s) for s in tr.stubs]
    assert any("RandomCrop(padding=...)" in m for m in messages), messages
    assert any("RandomRotation" in m for m in messages), messages


@pytest.mark.skipif(not os.path.exists(TV_PYTHON), reason="no torchvision environment")
def test_random_resized_crop_fallback_and_window_equal_torchvision(tmp_path):
    script = tmp_path / "reference.py"
    script.write_text(REFERENCE)
    subprocess.run([TV_PYTHON, str(script), str(tmp_path / "ref.npz")], check=True, capture_output=True, timeout=300)
    ref = np.load(tmp_path / "ref.npz")
    ns = _run(translate(TRANSFORMS, "augment_lib.py", "keras").text, "augment_lib_keras.py")
    for h, w in ((13, 11), (10, 30), (30, 10)):  # (scale above 1: every try fails, the central window)
        assert tuple(ns["fallback"].params(h, w)) == tuple(ref[f"params_{h}_{w}"]), (h, w)
    rgb = np.random.default_rng(1).integers(0, 256, (1, 13, 11, 3), dtype=np.uint8)
    window = rgb[:, 2:10, 1:8]
    got = ns["to_tensor"](ns["Resize"]((5, 5))(window))[0]
    assert got.shape == ref["crop"].shape
    np.testing.assert_allclose(got, ref["crop"], atol=1 / 255 + 1e-7)
