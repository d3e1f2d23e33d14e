"""A PyTorch program's command line in its Keras translation (issue 19 item 2; pytorch/examples
imagenet/main.py): the network chosen by an ``argparse`` option's default
(``models.__dict__[args.arch]()``, inside ``if args.pretrained: ... else:``), the listing of
``models.__dict__`` for the option's choices, options read as values (``args.lr``) staying the
program's, a model part wrapped in ``DataParallel`` in place, and a scheduler's state in a
checkpoint (``scheduler.state_dict()`` / ``load_state_dict``). Each generated program is run."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from transpiler.translate import translate
import program_runner  # (a warm fork: tests/program_runner.py)

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}

CHOSEN = '''\
import argparse

import torch
import torch.nn as nn
import torchvision.models as models
from torch.optim.lr_scheduler import StepLR

model_names = sorted(name for name in models.__dict__
    if name.islower() and not name.startswith("__")
    and callable(models.__dict__[name]))

parser = argparse.ArgumentParser()
parser.add_argument('-a', '--arch', metavar='ARCH', default='resnet18', choices=model_names)
parser.add_argument('--lr', '--learning-rate', default=0.1, type=float, dest='lr')
parser.add_argument('--pretrained', dest='pretrained', action='store_true')
parser.add_argument('--resume', default='', type=str)


def main():
    args = parser.parse_args()
    main_worker(None, args)


def main_worker(gpu, args):
    if args.pretrained:
        model = models.__dict__[args.arch](pretrained=True)
    else:
        model = models.__dict__[args.arch]()
    model.fc = torch.nn.DataParallel(model.fc)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
    if args.resume:
        checkpoint = torch.load(args.resume)
        scheduler.load_state_dict(checkpoint['scheduler'])
        print("restored lr", scheduler.get_last_lr()[0])
    images = torch.randn(2, 3, 32, 32)
    target = torch.tensor([1, 7])
    for epoch in range(2):
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        print("loss", loss.item())
    save_checkpoint({'epoch': 2, 'state_dict': model.state_dict(), 'scheduler': scheduler.state_dict()})
    print("choices", ",".join(model_names))


def save_checkpoint(state, filename='checkpoint.pth.tar'):
    torch.save(state, filename)


if __name__ == '__main__':
    main()
'''


def _run(text: str, tmp_path, *argv: str) -> subprocess.CompletedProcess:
    path = tmp_path / "main_keras.py"
    path.write_text(text)
    return program_runner.run([sys.executable, str(path), *argv], cwd=tmp_path, env=ENV, capture_output=True,
                              text=True, timeout=300, preload=("torch", "tensorflow"))


def test_a_network_chosen_by_an_options_default_is_translated_and_runs_guarded(tmp_path):
    tr = translate(CHOSEN, "main.py", "keras")
    # the one stub: pretrained weights (only where --pretrained is given)
    assert [("pretrained=True" in str(d)) for d in tr.stubs] == [True], [str(d) for d in tr.stubs]
    assert len(tr.program.models) == 1
    assert "learning_rate=args.lr" in tr.text  # (the option stays the program's to read)
    assert not re.search(r"^\s*(import|from) torch", tr.text, re.M)
    code = [line for line in tr.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("DataParallel" in line for line in code)  # (dropped, with a comment)
    assert "dropped model.fc = torch.nn.DataParallel(model.fc)" in " ".join(
        line.strip().lstrip("# ") for line in tr.text.splitlines())
    done = _run(tr.text, tmp_path, "--lr", "0.05")
    assert done.returncode == 0, done.stderr[-3000:]
    losses = [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("loss ")]
    assert len(losses) == 2 and all(x == x for x in losses)
    # the option's choices: the networks the Keras program holds
    assert "choices resnet18" in done.stdout
    # the scheduler's state in the checkpoint restores the rate: 0.05 halved twice
    again = _run(tr.text, tmp_path, "--lr", "0.05", "--resume", "checkpoint.pth.tar")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "restored lr 0.0125" in again.stdout, again.stdout


def test_another_network_than_the_default_stops_the_program_saying_so(tmp_path):
    tr = translate(CHOSEN.replace(", choices=model_names", ""), "main.py", "keras")
    done = _run(tr.text, tmp_path, "-a", "vgg11")
    assert done.returncode != 0
    assert "translated for the default options args.arch='resnet18'" in done.stderr, done.stderr[-2000:]


def test_a_command_line_option_read_as_a_size_is_its_default_and_guarded(tmp_path):
    """``nn.Linear(8, args.hidden)`` in a module built in the program: the option's default
    (``type=int`` converting the string default, as argparse does); run with another value,
    the program stops saying so instead of training the default's model."""
    src = '''\
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--hidden", type=int, default="24")
parser.add_argument("--no-accel", action="store_true")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, args.hidden)
        self.fc2 = nn.Linear(args.hidden, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


if __name__ == "__main__":
    args = parser.parse_args()
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8)
    for step in range(2):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''
    tr = translate(src, "main.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    (md,) = tr.program.models
    assert 'layers.Dense(24, name="fc1")' in tr.text
    assert (tmp_path / "ok").mkdir() is None and _run(tr.text, tmp_path / "ok").returncode == 0
    done = _run(tr.text, tmp_path, "--hidden", "32")
    assert done.returncode != 0 and "default options args.hidden=24" in done.stderr, done.stderr[-2000:]
