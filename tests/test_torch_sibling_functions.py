"""A PyTorch program whose training function lives in a sibling file (issue 19, multi-file
programs; pytorch/examples mnist_hogwild): ``main.py`` builds the model and hands it to
``from train import train``. How the model is fed (the layout its batches need) is known only
where its class is, so the Keras main.py carries the function, translated for that model; the
sibling is still translated on its own. The script's own lines keep their positions around the
spliced function (comments stay where they were)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from transpiler.cli import run
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

TRAIN = '''\
import torch
import torch.nn.functional as F
import torch.optim as optim


def train(model, loader, epochs):
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    model.train()
    for epoch in range(epochs):
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            print("loss", loss.item())


def describe():
    return "training helpers"


def make_optimizer(model, lr):
    return optim.SGD(model.parameters(), lr=lr)
'''

MAIN = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from train import {names}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.fc1 = nn.Linear(4 * 5 * 5, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = x.view(-1, 4 * 5 * 5)
        return F.log_softmax(self.fc1(x), dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    images = torch.randn(64, 1, 12, 12)
    labels = torch.randint(0, 10, (64,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=16)
    # a comment of main.py's own, far below the import
    model = {build}
    {call}
'''


def _program(tmp_path, names="train", build="Net()", call="train(model, loader, 1)"):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "train.py").write_text(TRAIN)
    (src / "main.py").write_text(MAIN.format(names=names, build=build, call=call))
    return src


@pytest.mark.parametrize("build, call", [
    ("Net()", "train(model, loader, 1)"),
    ("Net().to('cpu')", "train(model, loader, 1)"),  # (a method chain on the new model)
    ("Net()", "p = torch.multiprocessing.Process(target=train, args=(model, loader, 1))\n    p.start()\n    p.join()"),
])
def test_a_sibling_function_handed_the_model_feeds_it_in_the_keras_layout(tmp_path, build, call):
    src = _program(tmp_path, build=build, call=call)
    out = tmp_path / "out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q"]) == 0
    main = (out / "main.py").read_text()
    assert "from train import" not in main  # the function is read here, for this model
    assert "def train(model, loader, epochs):" in main
    assert "(0, 2, 3, 1)" in main  # the NCHW batches enter the channels-last model permuted
    assert (out / "train.py").exists()  # (the sibling is still translated on its own)
    done = program_runner.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "loss" in done.stdout  # (the loop became fit: its logs stand for the print)


def test_a_sibling_function_not_handed_the_model_stays_imported(tmp_path):
    src = _program(tmp_path, names="train, describe")
    out = tmp_path / "out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q"]) == 0
    main = (out / "main.py").read_text()
    assert "from train import describe\n" in main
    assert "def describe(" not in main


def test_a_sibling_function_that_does_not_feed_the_model_stays_imported(tmp_path):
    """Handed the model but never calling it (it reads its parameters): nothing in it depends
    on how the model takes its inputs, so it stays in the sibling (minGPT's create_optimizer)."""
    src = _program(tmp_path, names="train, make_optimizer",
                   call="optimizer = make_optimizer(model, 0.1)\n    train(model, loader, 1)")
    out = tmp_path / "out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q"]) == 0
    main = (out / "main.py").read_text()
    assert "from train import make_optimizer\n" in main
    assert "def make_optimizer(" not in main and "def train(model, loader, epochs):" in main


def test_main_py_comments_keep_their_place_around_a_spliced_sibling(tmp_path):
    """The spliced function's lines must not shift main.py's own: a comment of main.py is
    printed where it was, not on the model's layers (which the shifted lines met)."""
    src = _program(tmp_path)
    out = tmp_path / "out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q"]) == 0
    main = (out / "main.py").read_text()
    assert main.count("# a comment of main.py's own, far below the import") == 1
    builder = main[main.index("def Net("):main.index('if __name__ == "__main__":')]
    assert "# a comment of main.py's own" not in builder
