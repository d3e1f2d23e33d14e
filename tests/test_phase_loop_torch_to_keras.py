"""The training loop over phases of the PyTorch transfer-learning tutorial (``for phase in
["train", "val"]``, ``torch.set_grad_enabled(phase == "train")``) → ``compile`` + ``fit``
with the second phase's loader as ``validation_data``; loops that differ from that shape
stay marked stubs that say why.

Numerics: the whole programs on both sides (same initial weights, same batches in order,
float64): every value the loss object computes, training and validation batches alike,
matches step by step.
"""

from __future__ import annotations

import numpy as np
import pytest

from transpiler.translate import translate

RTOL = 1e-4

PHASES = '''
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (10,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def build_model():
    return Net()


def main():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(120, 10)).astype("float32"))
    y = torch.from_numpy(rng.integers(0, 3, size=120))
    loaders = {"train": DataLoader(TensorDataset(x[:96], y[:96]), batch_size=16, shuffle=True),
               "val": DataLoader(TensorDataset(x[96:], y[96:]), batch_size=16)}
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in loaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            n = len(loaders[phase].dataset)
            print(f"{phase} loss: {running_loss / n:.4f} acc: {running_corrects.double() / n:.4f}")
'''

# the two loaders in variables, chosen per phase; the mode set by an if-expression
TWO_LOADERS = PHASES.replace(
    '''    loaders = {"train": DataLoader(TensorDataset(x[:96], y[:96]), batch_size=16, shuffle=True),
               "val": DataLoader(TensorDataset(x[96:], y[96:]), batch_size=16)}''',
    '''    train_loader = DataLoader(TensorDataset(x[:96], y[:96]), batch_size=16, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[96:], y[96:]), batch_size=16)''').replace(
    '''            if phase == "train":
                model.train()
            else:
                model.eval()
''', '''            model.train() if phase == "train" else model.eval()
            loader = train_loader if phase == "train" else val_loader
''').replace("loaders[phase]", "loader")

# a StepLR stepped once per epoch at the end of the training phase
SCHEDULED = PHASES.replace(
    "    for epoch in range(3):\n",
    "    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)\n"
    "    for epoch in range(3):\n").replace(
    "            n = len(loaders[phase].dataset)\n",
    "            if phase == \"train\":\n                scheduler.step()\n"
    "            n = len(loaders[phase].dataset)\n")

# the tutorial's own form: train_model(model, criterion, optimizer, scheduler, num_epochs)
# over module-level dicts of datasets, loaders and sizes, the scheduler stepped after the
# training phase, the epoch's loss and accuracy divided by the dataset sizes
TUTORIAL = '''import time
import numpy as np
import torch
import torch.nn as nn
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (10,)


def build_model():
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))


rng = np.random.default_rng(0)
x = torch.from_numpy(rng.normal(size=(120, 10)).astype("float32"))
y = torch.from_numpy(rng.integers(0, 3, size=120))
image_datasets = {"train": TensorDataset(x[:96], y[:96]), "val": TensorDataset(x[96:], y[96:])}
dataloaders = {"train": DataLoader(image_datasets["train"], batch_size=4, shuffle=True),
               "val": DataLoader(image_datasets["val"], batch_size=4, shuffle=True)}
dataset_sizes = {"train": 96, "val": 24}


def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
    since = time.time()
    for epoch in range(num_epochs):
        print(f'Epoch {epoch}/{num_epochs - 1}')
        print('-' * 10)
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            print(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
        print()
    time_elapsed = time.time() - since
    print(f'Training complete in {time_elapsed // 60:.0f}m {time_elapsed % 60:.0f}s')
    return model


def main():
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer, step_size=7, gamma=0.1)
    model = train_model(model, criterion, optimizer, exp_lr_scheduler, num_epochs=3)


if __name__ == "__main__":
    main()
'''


def _translate(src: str):
    return translate(src, "phases.py", "keras")


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


def _main(text: str) -> str:
    return text[text.index("def main"):]


def test_phase_loop_becomes_compile_and_fit_with_validation_data():
    result = _translate(PHASES)
    assert not _stubs(result), _stubs(result)
    main = _main(result.text)
    assert "model.compile(optimizer=optimizer, loss=criterion, metrics=[\"accuracy\"])" in main
    assert "model.fit(\n        x[:96],\n        y[:96],\n        batch_size=16,\n        epochs=3,\n" \
           "        shuffle=True,\n        validation_data=(x[96:], y[96:]),\n        verbose=2,\n    )" in main
    # the loop's prints and running sums are fit's logs, and the comment says so
    assert "its logs stand for the loop's own code" in main
    assert "the 'val' phase (line" in " ".join(main.replace("#", "").split())
    # the loaders only the loop read are gone with it: fit batches the arrays itself
    for gone in ("for phase", "set_grad_enabled", "running_loss", "print(", "loaders", "ArrayLoader"):
        assert gone not in main


def test_a_dict_of_loaders_read_after_the_loop_stays():
    # one loader's dataset read after the loop: its arrays, the dict still goes
    main = _main(_translate(PHASES + '    print(len(loaders["val"].dataset))\n').text)
    assert "validation_data=(x[96:], y[96:])" in main
    assert "print(len(x[96:]))" in main and "loaders" not in main
    # the dict itself read after the loop: it stays
    main = _main(_translate(PHASES + '    print(sorted(loaders))\n').text)
    assert "validation_data=(x[96:], y[96:])" in main
    assert "loaders = {" in main and "print(sorted(loaders))" in main


def test_two_loaders_chosen_per_phase():
    main = _main(_translate(TWO_LOADERS).text)
    assert "metrics=[\"accuracy\"]" in main
    assert "validation_data=(x[96:], y[96:])" in main
    assert "x[:96],\n        y[:96],\n        batch_size=16,\n        epochs=3,\n        shuffle=True," in main
    # the loaders only the loop read are gone: fit batches the arrays itself
    assert "train_loader" not in main and "val_loader" not in main and "for phase" not in main


def test_scheduler_stepped_in_the_training_phase_is_a_per_epoch_schedule():
    result = _translate(SCHEDULED)
    assert not _stubs(result), _stubs(result)
    main = _main(result.text)
    assert "callbacks=[scheduler]" in main
    assert "validation_data=(x[96:], y[96:])" in main


@pytest.mark.parametrize("src", [PHASES, TWO_LOADERS, SCHEDULED], ids=["dict", "two_loaders", "scheduler"])
def test_phase_loop_trains_like_torch(src, tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    path = tmp_path / "phases.py"
    path.write_text(src)
    t, k = run_programs(str(path), exact=True)
    # 3 epochs of 6 training batches (96 samples) and 2 validation batches (24 samples)
    assert len(t) == 3 * (6 + 2)
    np.testing.assert_allclose(k, t, rtol=RTOL)


@pytest.mark.parametrize("change, reason, why", [
    # the val phase steps the optimizer too (no phase test around the step)
    ("""                    if phase == "train":
                        loss.backward()
                        optimizer.step()""",
     """                    loss.backward()
                    optimizer.step()""", "the optimizer steps in 'train', 'val'"),
    # best weights copied in the val phase (the tutorial's own best-model bookkeeping)
    ("""            print(f"{phase} loss""",
     """            if phase == "val" and running_corrects > best_acc:
                best_acc = running_corrects
                best_wts = copy.deepcopy(model.state_dict())
            print(f"{phase} loss""", "the 'val' phase copies the best weights"),
    # a scheduler stepped in the evaluation phase
    ("""            n = len(loaders[phase].dataset)""",
     """            if phase == "val":
                scheduler.step()
            n = len(loaders[phase].dataset)""", "a scheduler steps in the 'val' phase"),
    # a phase-specific value read after the loop
    ("""            print(f"{phase} loss: {running_loss / n:.4f} acc: {running_corrects.double() / n:.4f}")""",
     """            print(f"{phase} loss: {running_loss / n:.4f} acc: {running_corrects.double() / n:.4f}")
    print(running_loss)""", "'running_loss', set in the loop, is read after it"),
    # the evaluation phase runs first
    ('for phase in ["train", "val"]', 'for phase in ["val", "train"]', "the first phase ('val') is expected to train"),
    # the evaluation phase keeps the model in training mode
    ("""            else:
                model.eval()""", """            else:
                model.train()""", "the 'val' phase does not run the model in eval mode"),
], ids=["val_steps", "best_weights", "scheduler_in_val", "read_after", "val_first", "val_in_train_mode"])
def test_other_phase_loops_stay_marked_stubs(change, reason, why):
    src = PHASES.replace("import numpy as np\n", "import copy\nimport numpy as np\n", 1).replace(
        "    for epoch in range(3):\n",
        "    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)\n    best_acc = 0\n"
        "    for epoch in range(3):\n")
    assert change in src
    result = _translate(src.replace(change, reason))
    messages = _stubs(result)
    assert any("a training loop over the phases 'train', 'val'" in m for m in messages) or \
        any("a training loop over the phases 'val', 'train'" in m for m in messages), messages
    assert any(why in m for m in messages), messages
    assert "model.fit(" not in result.text
    assert "loaders = {" in result.text  # the stub reads them
    assert "raise NotImplementedError" in result.text


def test_tutorial_train_model():
    result = _translate(TUTORIAL)
    assert not _stubs(result), _stubs(result)
    text = result.text
    assert "model.compile(optimizer=optimizer, loss=criterion, metrics=[\"accuracy\"])" in text
    assert "model.fit(\n        x[:96],\n        y[:96],\n        batch_size=4,\n        epochs=num_epochs,\n" \
           "        shuffle=True,\n        validation_data=(x[96:], y[96:]),\n        callbacks=[scheduler],\n" in text
    # the dicts of datasets and loaders only the loop read are gone; the sizes stay (plain numbers)
    for gone in ("image_datasets", "dataloaders", "for phase", "epoch_loss"):
        assert gone not in text
    assert 'dataset_sizes = {"train": 96, "val": 24}' in text
    assert "time_elapsed = time.time() - since" in text


def test_tutorial_train_model_trains_like_torch(tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    # (the data and loaders are made at import, before the harness sets float64 and turns
    # shuffling off: both are the program's own here; the rate halves every epoch)
    src = TUTORIAL.replace("shuffle=True", "shuffle=False").replace("step_size=7, gamma=0.1", "step_size=1, gamma=0.5")
    src = src.replace('astype("float32")', 'astype("float64")')
    path = tmp_path / "tutorial.py"
    path.write_text(src)
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 3 * (24 + 6)
    np.testing.assert_allclose(k, t, rtol=RTOL)
