"""torch → Keras: a function the program calls with tensors, whose body uses torch tensor
methods (an ``accuracy(output, target, topk)`` helper: ``topk``, ``t``, ``eq``, a slice,
``float().sum(0, keepdim=True)``, ``mul_`` on a variable, a list it appends to).

Called from a training step it gets Keras tensors, from an evaluation loop numpy arrays (the
model's ``predict``), from a nested function the values of its caller's scope (a closure):
whichever caller is read first, the one translation serves both, no torch method is kept as
written (it would fail when run), and its numbers equal torch's.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import torch
import numpy as np
import pytest

from tests import program_runner
from transpiler.translate import translate

ACCURACY = '''\
def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res
'''

HEAD = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


''' + ACCURACY + '''

def train(model, x, y, criterion, optimizer):
    model.train()
    for i in range(0, 64, 16):
        images, target = x[i:i + 16], y[i:i + 16]
        output = model(images)
        loss = criterion(output, target)
        acc1, acc3 = accuracy(output, target, topk=(1, 3))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("train", loss.item(), acc1[0].item(), acc3[0].item())


def validate(model, x, y):
    model.eval()

    def run_validate(xs, ys):
        with torch.no_grad():
            output = model(xs)
            acc1, acc3 = accuracy(output, ys, topk=(1, 3))
        print("val", acc1[0].item(), acc3[0].item())

    run_validate(x, y)


def main():
    torch.manual_seed(0)
    x = torch.sin(torch.arange(512, dtype=torch.float32)).reshape(64, 8)
    y = torch.arange(64) % 5
    model = Net()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
'''

#: the step's caller read first, or the evaluation's (validate before the epochs: imagenet's --evaluate)
PROGRAMS = {
    "step_first": HEAD + '''\
    for epoch in range(2):
        train(model, x, y, criterion, optimizer)
        validate(model, x, y)


if __name__ == "__main__":
    main()
''',
    "evaluation_first": HEAD + '''\
    validate(model, x, y)
    for epoch in range(2):
        train(model, x, y, criterion, optimizer)


if __name__ == "__main__":
    main()
''',
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def translated(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    result = translate(PROGRAMS[request.param], "acc.py", "keras")
    assert not result.stubs, [str(s) for s in result.stubs]
    (folder / "out.py").write_text(result.text)
    return folder, result.text


def test_no_torch_method_is_kept(translated):
    _, text = translated
    text = text[text.index("def accuracy("):]  # (the program's own code, not the helpers' docstrings)
    for kept in (".topk(", ".t()", ".eq(", ".float()", ".mul_(", "keepdim="):
        assert kept not in text, kept


def test_program_runs_and_reports_accuracies(translated):
    folder, _ = translated
    validations = 2 if folder.name.startswith("step_first") else 1
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = program_runner.run([sys.executable, "out.py"], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["train"], ["val"])]
    assert sum(line[0] == "train" for line in lines) == 8 and sum(line[0] == "val" for line in lines) == validations
    for line in lines:
        accs = [float(v) for v in line[-2:]]
        # (16 or 64 samples: multiples of 100/16 or 100/64, top-3 at least top-1)
        assert all(0.0 <= a <= 100.0 for a in accs) and accs[0] <= accs[1], line


def _module(folder, name):
    spec = importlib.util.spec_from_file_location(name, folder / "out.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_accuracy_equals_torchs_on_arrays_and_keras_tensors(translated):
    import keras

    folder, _ = translated
    generated = _module(folder, f"acc_out_{folder.name}")
    namespace = {"torch": torch}
    exec(ACCURACY, namespace)
    rng = np.random.default_rng(3)
    output = rng.standard_normal((32, 7)).astype("float32")
    target = rng.integers(0, 7, size=32)
    expected = [t.numpy() for t in namespace["accuracy"](torch.from_numpy(output), torch.from_numpy(target),
                                                         topk=(1, 2, 5))]
    for given in (output, keras.ops.convert_to_tensor(output)):
        got = generated.accuracy(given, target, topk=(1, 2, 5))
        assert len(got) == 3
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(keras.ops.convert_to_numpy(g)), e, rtol=1e-6)


UNDERSCORED = '''\
import torch
import torch.nn as nn


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


model = _Net()
x = torch.ones(2, 4)
model.eval()
with torch.no_grad():
    print("out", tuple(model(x).shape))
'''


def test_class_with_a_leading_underscore_names_a_model_keras_accepts(tmp_path):
    """TensorFlow takes a model's name for a root name scope, where a leading underscore is
    refused when the model is first called (``predict``)."""
    result = translate(UNDERSCORED, "net.py", "keras")
    assert not result.stubs, [str(s) for s in result.stubs]
    assert 'name="_Net"' not in result.text
    (tmp_path / "out.py").write_text(result.text)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "out (2, 3)" in done.stdout


PLUMBING = '''\
import torch
import torch.nn as nn


class Corpus:
    def __init__(self, n):
        self.train = torch.arange(n)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data


def repackage(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage(v) for v in h)


def main(kind):
    corpus = Corpus(103)
    train_data = batchify(corpus.train, 4)
    print("shape", tuple(train_data.shape))
    print("first", [int(v) for v in train_data[0]])
    print("last", [int(v) for v in train_data[-1]])
    h = repackage((torch.ones(2), (torch.zeros(3), torch.ones(1))))
    print("kinds", len(h), len(h[1]))
    model = Net()
    torch.save(model, "m.pt")
    if kind == "net":
        allowed = [Net, torch.nn.modules.linear.Linear]
    else:
        allowed = [torch.nn.modules.linear.Linear]
    with torch.serialization.safe_globals(allowed):
        model = torch.load("m.pt")
    print("loaded", tuple(model(torch.ones(1, 4)).shape))


if __name__ == "__main__":
    main("net")
'''


def _printed(done) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.split()[:1] in
            (["shape"], ["first"], ["last"], ["kinds"], ["loaded"])]


def test_data_helpers_of_a_language_model_run_as_torchs(tmp_path):
    """``batchify(corpus.train, bsz)`` (``narrow``, ``view``, ``t``) called with a value the
    reader cannot tell, ``isinstance(h, torch.Tensor)`` in a hidden-state helper (its branch
    reads h as a tensor), the classes torch.load may unpickle assigned in both branches of an
    ``if``: no stub, and the program prints what torch's does."""
    result = translate(PLUMBING, "lm.py", "keras")
    assert not result.stubs, [str(s) for s in result.stubs]
    assert "allowed = [" not in result.text and "is_tensor(h)" in result.text and "data.narrow(0" not in result.text
    outputs = {}
    for name, text in (("torch", PLUMBING), ("keras", result.text)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "lm.py").write_text(text)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        done = program_runner.run([sys.executable, "lm.py"], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=300, preload=("torch", "tensorflow") if name == "keras" else ("torch",))
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[name] = _printed(done)
    assert len(outputs["torch"]) == 5 and outputs["keras"] == outputs["torch"]


CLONED = '''\
import torch


class Source:
    def __init__(self):
        self.x = torch.arange(12.0).reshape(3, 4)


def overlay(x, y, classes=2):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


src = Source()
out = overlay(src.x, torch.tensor([0, 1, 0]))
print("out", [float(v) for v in out.reshape(-1)])
print("kept", [float(v) for v in src.x.reshape(-1)])
'''


def test_clone_of_a_tensor_parameter_is_a_copy_the_body_may_change(tmp_path):
    """``x_ = x.clone(); x_[...] = v`` in a function called with a value the reader cannot
    tell: a numpy copy (item assignment works, the caller's array is unchanged), as torch's."""
    result = translate(CLONED, "cloned.py", "keras")
    assert not result.stubs, [str(s) for s in result.stubs]
    outputs = {}
    for name, text in (("torch", CLONED), ("keras", result.text)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "cloned.py").write_text(text)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        done = program_runner.run([sys.executable, "cloned.py"], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=300, preload=("torch", "tensorflow") if name == "keras" else ("torch",))
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[name] = [line for line in done.stdout.splitlines() if line.split()[:1] in (["out"], ["kept"])]
    assert len(outputs["torch"]) == 2 and outputs["keras"] == outputs["torch"]
