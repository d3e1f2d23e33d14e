"""torch → Keras: torchvision transforms a user's dataset applies to one PIL image per item
(super_resolution's ``DatasetFromFolder``), built in library functions from names imported
from ``torchvision.transforms`` (``from torchvision.transforms import Compose, ToTensor``).

The generated transforms (runtime/keras/vision.py) take one PIL image as torchvision's do
(a batch of one inside, the batch axis dropped after); their numbers are compared with real
torchvision's, computed by the torchvision environment (/work/main/.venv-tv, skipped where
it is absent): CenterCrop and ToTensor exactly, Resize within one uint8 level (PIL's
bilinear filter against keras.ops.image.resize's, as documented there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import types

import torch  # noqa: F401  (torch before Keras in one process)
import numpy as np
import pytest

from transpiler.translate import translate

TV_PYTHON = "/work/main/.venv-tv/bin/python"

LIBRARY = '''\
from torchvision.transforms import Compose, CenterCrop, ToTensor, Resize


def input_transform(crop_size, upscale_factor):
    return Compose([
        CenterCrop(crop_size),
        Resize(crop_size // upscale_factor),
        ToTensor(),
    ])


def target_transform(crop_size):
    return Compose([CenterCrop(crop_size), ToTensor()])


to_tensor = ToTensor()
'''

REFERENCE = '''\
import sys
import torch  # noqa: F401  (torch before Keras in one process)
import numpy as np
from PIL import Image
from torchvision.transforms import Compose, CenterCrop, ToTensor, Resize
rng = np.random.default_rng(0)
rgb = Image.fromarray(rng.integers(0, 256, (13, 11, 3), dtype=np.uint8))
gray = rgb.convert("L")
np.savez(sys.argv[1], target=Compose([CenterCrop(8), ToTensor()])(rgb).numpy(),
         input=Compose([CenterCrop(8), Resize(4), ToTensor()])(gray).numpy(),
         tensor=ToTensor()(gray).numpy())
'''


def _translated(tmp_path):
    tr = translate(LIBRARY, "data.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert "import torchvision" not in tr.text and "from torchvision" not in tr.text
    namespace: dict = {}
    exec(compile(tr.text, str(tmp_path / "data_keras.py"), "exec"), namespace)
    return namespace


def _images():
    from PIL import Image

    rng = np.random.default_rng(0)
    rgb = Image.fromarray(rng.integers(0, 256, (13, 11, 3), dtype=np.uint8))
    return rgb, rgb.convert("L")


def test_transforms_imported_by_name_in_library_functions_are_translated(tmp_path):
    ns = _translated(tmp_path)
    rgb, gray = _images()
    assert ns["target_transform"](8)(rgb).shape == (3, 8, 8)
    assert ns["input_transform"](8, 2)(gray).shape == (1, 4, 4)
    out = ns["to_tensor"](gray)
    assert out.dtype == np.float32 and out.shape == (1, 13, 11)
    np.testing.assert_array_equal(out[0], np.asarray(gray, dtype="float32") / np.float32(255))


@pytest.mark.skipif(not os.path.exists(TV_PYTHON), reason="no torchvision environment")
def test_transforms_of_one_pil_image_equal_torchvision(tmp_path):
    script = tmp_path / "reference.py"
    script.write_text(REFERENCE)
    ref_path = tmp_path / "reference.npz"
    subprocess.run([TV_PYTHON, str(script), str(ref_path)], check=True, capture_output=True, timeout=300)
    ref = np.load(ref_path)
    ns = _translated(tmp_path)
    rgb, gray = _images()
    np.testing.assert_array_equal(ns["target_transform"](8)(rgb), ref["target"])
    np.testing.assert_array_equal(ns["to_tensor"](gray), ref["tensor"])
    got = ns["input_transform"](8, 2)(gray)
    assert got.shape == ref["input"].shape
    np.testing.assert_allclose(got, ref["input"], atol=1 / 255 + 1e-7)  # (one uint8 level: PIL's filter)


def test_a_tensor_a_transform_makes_is_array_data():
    """``ToTensor()(img).view(1, -1, h, w)``: the transform's result is a tensor (numpy data),
    so ``.view`` is numpy's reshape, not kept as numpy's ``view`` (which takes a dtype)."""
    source = ("from PIL import Image\nfrom torchvision.transforms import ToTensor\n\n"
              "img = Image.new('L', (5, 4))\nto_tensor = ToTensor()\n"
              "x = to_tensor(img).view(1, -1, img.size[1], img.size[0])\n")
    tr = translate(source, "one.py", "keras")
    assert not tr.stubs, tr.stubs
    namespace: dict = {}
    exec(compile(tr.text, "one_keras.py", "exec"), namespace)
    assert namespace["x"].shape == (1, 1, 4, 5) and namespace["x"].dtype == np.float32


def test_classes_listed_only_for_torch_load_are_dropped_with_the_context():
    source = ("import torch\nfrom model import Net\n\nwith open('m.pth', 'rb') as f:\n"
              "    allowed = [Net, torch.nn.modules.conv.Conv2d]\n"
              "    with torch.serialization.safe_globals(allowed):\n        model = torch.load(f)\n")
    tr = translate(source, "load.py", "keras")
    assert not tr.stubs, tr.stubs
    assert "dropped allowed: the classes torch.load may unpickle" in tr.text and "Conv2d" not in tr.text
    kept = source.replace("        model = torch.load(f)\n", "        model = torch.load(f)\nprint(allowed)\n")
    assert any("uses PyTorch" in str(s) for s in translate(kept, "load.py", "keras").stubs)  # (used elsewhere: kept)


PAIRS = '''\
import torch
from torch.utils.data import Dataset
from torchvision import datasets


class Pairs(Dataset):
    def __init__(self, root, train, download=False):
        super().__init__()
        self.dataset = datasets.MNIST(root, train=train, download=download)
        self.data = self.dataset.data.unsqueeze(1).clone()
        self.labels = self.dataset.targets.clone()

    def __len__(self):
        return self.data.shape[0] - 1

    def __getitem__(self, index):
        first = self.data[index].clone().float()
        second = self.data[index + 1].clone().float()
        same = torch.tensor(float(self.labels[index] == self.labels[index + 1]), dtype=torch.float)
        return first, second, same
'''


def test_a_dataset_holding_a_torchvision_dataset_equals_torch(tmp_path, monkeypatch):
    """``datasets.MNIST(root, train=..., download=...)`` inside a user's Dataset: the generated
    ``VisionDataset`` whose ``data`` (uint8, (N, 28, 28)) and ``targets`` (int64) are
    torchvision's; the items equal torch's on the same stand-in images (torchvision itself is
    not importable here: a stand-in module gives torch the same arrays)."""
    import keras
    import torch

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(6, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 3, size=(6,)).astype("uint8")
    monkeypatch.setattr(keras.datasets.mnist, "load_data", lambda: ((images, labels), (images[:2], labels[:2])))

    class MNIST:  # torchvision's: data a uint8 tensor (N, 28, 28), targets int64
        def __init__(self, root, train=True, download=False, transform=None):
            self.data, self.targets = torch.from_numpy(images), torch.from_numpy(labels.astype("int64"))

    fake = types.ModuleType("torchvision")
    fake.datasets = types.SimpleNamespace(MNIST=MNIST)
    monkeypatch.setitem(sys.modules, "torchvision", fake)
    namespace: dict = {}
    exec(compile(PAIRS, "pairs.py", "exec"), namespace)
    want = namespace["Pairs"]("d", train=True)

    tr = translate(PAIRS, "pairs.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert 'VisionDataset("mnist", train=train)' in tr.text
    out: dict = {}
    exec(compile(tr.text, "pairs_keras.py", "exec"), out)
    got = out["Pairs"]("d", train=True)
    assert len(got) == len(want) == 5
    for i in range(5):
        for a, b in zip(got[i], want[i]):
            assert np.asarray(a).dtype == b.numpy().dtype
            np.testing.assert_array_equal(np.asarray(a), b.numpy())


FAKE = '''\
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

dataset = datasets.FakeData(10, (3, 8, 6), 4, transforms.ToTensor())
loader = DataLoader(dataset, batch_size=4)
images, labels = next(iter(loader))
'''

FAKE_REFERENCE = FAKE + '''
import sys
import numpy as np
np.savez(sys.argv[1], images=images.numpy(), labels=labels.numpy(), again=dataset[3][0].numpy(),
         first=dataset[3][0].numpy(), n=len(dataset), n_batches=len(loader))
'''


def test_fake_data_is_a_lazy_dataset_of_torchvisions_shapes(tmp_path):
    """``datasets.FakeData(size, image_size, num_classes, transform)``: the generated lazy
    dataset (item i drawn from a generator seeded by i: the same on every read); its batches
    have torchvision's shapes and dtypes (compared with real torchvision's where the
    torchvision environment is present), pixels in [0, 1] after ToTensor, labels below
    num_classes. The numbers are numpy's draws, not torch's."""
    tr = translate(FAKE, "fake.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    namespace: dict = {}
    exec(compile(tr.text, "fake_keras.py", "exec"), namespace)
    images, labels, dataset = namespace["images"], namespace["labels"], namespace["dataset"]
    assert images.shape == (4, 3, 8, 6) and images.dtype == np.float32 and labels.dtype == np.int64
    assert 0.0 <= images.min() and images.max() <= 1.0 and labels.max() < 4 and len(dataset) == 10
    np.testing.assert_array_equal(dataset[3][0], dataset[3][0])
    if os.path.exists(TV_PYTHON):
        script = tmp_path / "fake_reference.py"
        script.write_text(FAKE_REFERENCE)
        subprocess.run([TV_PYTHON, str(script), str(tmp_path / "fake.npz")], check=True, capture_output=True,
                       timeout=300)
        ref = np.load(tmp_path / "fake.npz")
        assert ref["images"].shape == images.shape and ref["images"].dtype == images.dtype
        assert ref["labels"].dtype == labels.dtype and int(ref["n"]) == len(dataset)
        np.testing.assert_array_equal(ref["again"], ref["first"])  # (torchvision's: the same item per read too)


def test_a_lambda_transform_reads_its_image_as_array_data():
    """``transforms.Lambda(lambda x: x.mul(255))`` after ToTensor: the image is array data, so
    ``x.mul(255)`` is ``x * 255`` (numpy has no ``mul``); equal to torch's arithmetic."""
    import torch

    source = ("from torchvision import transforms\n\n"
              "t = transforms.Compose([transforms.ToTensor(), transforms.Lambda(lambda x: x.mul(255))])\n")
    tr = translate(source, "lam.py", "keras")
    assert not tr.stubs, tr.stubs
    namespace: dict = {}
    exec(compile(tr.text, "lam_keras.py", "exec"), namespace)
    rgb, _ = _images()
    want = torch.from_numpy(np.asarray(rgb)).permute(2, 0, 1).float().div(255).mul(255).numpy()
    np.testing.assert_array_equal(namespace["t"](rgb), want)
