"""``model = Net(...).to(device)`` (or ``.cuda()``, ``.float()``): the model is the class's
instance, placed on a device; the program builds it all the same, whether the class is
defined in the script or imported from a sibling file (``from model import Net``): its
optimizer, its training loop and its checkpoint translate (the super-resolution example)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from transpiler.cli import run
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

MODEL = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, upscale_factor ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale_factor)

    def forward(self, x):
        return self.shuffle(self.conv2(torch.relu(self.conv1(x))))
'''

MAIN = '''\
import argparse
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset
IMPORT

parser = argparse.ArgumentParser()
parser.add_argument('--upscale_factor', type=int, default=2)
opt = parser.parse_args()
device = torch.device("cpu")
x = torch.randn(16, 1, 5, 5)
y = torch.randn(16, 1, 10, 10)
loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
model = PLACED
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)


def train(epoch):
    for iteration, batch in enumerate(loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        loss.backward()
        optimizer.step()
        print("loss", epoch, iteration, loss.item())


def checkpoint(epoch):
    path = "model_epoch_{}.pth".format(epoch)
    torch.save(model, path)


for epoch in range(1, 3):
    train(epoch)
    checkpoint(epoch)
'''

PLACED = ["Net(upscale_factor=opt.upscale_factor).to(device)", "Net(opt.upscale_factor).cuda()",
          "Net(upscale_factor=opt.upscale_factor).float().to(device)"]


def _write(tmp_path, placed: str, sibling: bool):
    src = tmp_path / "prog"
    src.mkdir()
    main = MAIN.replace("PLACED", placed)
    if sibling:
        (src / "model.py").write_text(MODEL)
        main = main.replace("IMPORT", "from model import Net")
    else:
        main = main.replace("IMPORT\n", "\n" + MODEL.split("\n\n\n")[1] + "\n\n")
    (src / "main.py").write_text(main)
    return src


@pytest.mark.parametrize("sibling", [False, True], ids=["own_class", "sibling_class"])
@pytest.mark.parametrize("placed", PLACED)
def test_a_model_placed_on_a_device_is_the_programs_model(tmp_path, capsys, placed, sibling):
    src = _write(tmp_path, placed, sibling)
    out = tmp_path / "main_keras.py"
    assert run([str(src / "main.py"), "--to", "keras", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "(1 model, 0 stubs)" in err, err
    text = out.read_text()
    assert "optimizer = keras.optimizers.Adam(" in text
    assert ".to(device)" not in text.split("model = ")[1].split("\n")[0] and ".cuda()" not in text


@pytest.mark.parametrize("sibling", [False, True], ids=["own_class", "sibling_class"])
def test_the_placed_model_trains_and_saves_in_keras(tmp_path, sibling):
    src = _write(tmp_path, PLACED[0], sibling)
    out = tmp_path / "keras_out"
    out.mkdir()
    assert run([str(src / "main.py"), "--to", "keras", "-o", str(out / "main.py"), "-q"]) == 0
    done = program_runner.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("loss") == 2 * 4
    # (a format string as the path: its braces stay the format's)
    assert (out / "model_epoch_1.keras").exists() and (out / "model_epoch_2.keras").exists()
