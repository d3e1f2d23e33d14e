"""Programs as tutorials write them (issue 19 item 4): the model a bare ``nn`` layer or an
``nn.Sequential`` at module level, the loop reshaping each batch (``images.reshape(-1,
28*28)``) and logging every N steps with ``(i+1) % N``, an accuracy loop under
``torch.no_grad()``: translated without stubs, the user's prints kept, run end to end on
stand-in MNIST data."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_torch_programs_to_keras import _run_with_stand_in
from transpiler.translate import translate

TUTORIAL = '''\
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms

input_size = 28 * 28
num_classes = 10
num_epochs = 2
batch_size = 8
learning_rate = 0.001

train_dataset = torchvision.datasets.MNIST(root='../../data', train=True, transform=transforms.ToTensor(), download=True)
test_dataset = torchvision.datasets.MNIST(root='../../data', train=False, transform=transforms.ToTensor())
train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=True)
test_loader = torch.utils.data.DataLoader(dataset=test_dataset, batch_size=batch_size, shuffle=False)

model = nn.Linear(input_size, num_classes)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

total_step = len(train_loader)
for epoch in range(num_epochs):
    for i, (images, labels) in enumerate(train_loader):
        images = images.reshape(-1, input_size)
        outputs = model(images)
        loss = criterion(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (i+1) % 4 == 0:
            print('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(epoch+1, num_epochs, i+1, total_step, loss.item()))

with torch.no_grad():
    correct = 0
    total = 0
    for images, labels in test_loader:
        images = images.reshape(-1, input_size)
        outputs = model(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum()
    print('Accuracy of the model on the 10000 test images: {} %'.format(100 * correct / total))

torch.save(model.state_dict(), 'model.ckpt')
'''

SEQUENTIAL = TUTORIAL.replace("model = nn.Linear(input_size, num_classes)",
                              "model = nn.Sequential(nn.Linear(input_size, 32), nn.ReLU(), nn.Linear(32, num_classes))")


@pytest.mark.parametrize("source", [TUTORIAL, SEQUENTIAL], ids=["bare-linear", "sequential"])
def test_module_level_layer_model_is_built_by_a_builder(source):
    tr = translate(source, "tutorial.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "def build_model():" in tr.text and "\nmodel = build_model()\n" in tr.text
    assert 'keras.Input(shape=(784,)' in tr.text  # the reshaped batch, not the (28, 28, 1) images
    assert "nn." not in tr.text.replace("# |", "")


def test_a_loop_transforming_its_batch_is_not_fit_over_the_untransformed_arrays():
    """``images = images.reshape(-1, 784)`` in the batch loop: fit over the dataset's
    (28, 28, 1) images would feed the model what it cannot take; the loop stays a loop."""
    tr = translate(TUTORIAL, "tutorial.py", "keras")
    assert ".fit(" not in tr.text
    assert "images = images.reshape(" in tr.text and "tape.gradient" in tr.text


def test_tutorial_runs_end_to_end_keeping_its_prints(tmp_path: Path):
    tr = translate(TUTORIAL, "tutorial.py", "keras")
    out = _run_with_stand_in(tr.text, tmp_path)
    assert "Epoch [1/2], Step [4/12], Loss:" in out  # the user's own logging every 4 steps
    assert "Accuracy of the model on the 10000 test images:" in out
    assert (tmp_path / "model.weights.h5").exists()
