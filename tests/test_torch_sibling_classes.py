"""A PyTorch program whose model class lives in a sibling file (issue 19 item 5):
``main.py`` does ``from model import Net`` (or ``from .model import Net``) and feeds the model
its data; the reader of main.py reads ``Net`` from ``model.py`` so the model is translated
with the input shape main.py's data shows, and the Keras main.py runs on its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

from transpiler.cli import run
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

MODEL = '''\
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

SCALE = 0.5


class Block(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return F.relu(self.fc(x)) * SCALE


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(20, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(self.block(x))


class Unused(nn.Module):
    def forward(self, x):
        return x


def describe():
    return "a two-layer net"
'''

MAIN = '''\
import torch
import torch.nn as nn
import torch.optim as optim
{import_line}

model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
x = torch.randn(64, 20)
y = torch.randint(0, 3, (64,))
for epoch in range(2):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print("loss", epoch, loss.item())
'''


def _program(tmp_path, import_line="from model import Net"):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "model.py").write_text(MODEL)
    (src / "main.py").write_text(MAIN.format(import_line=import_line))
    return src


@pytest.mark.parametrize("import_line", ["from model import Net", "from .model import Net"])
def test_a_class_imported_from_a_sibling_file_is_translated_with_main_py_input_shape(tmp_path, capsys,
                                                                                  import_line):
    src = _program(tmp_path, import_line)
    out = tmp_path / "main_keras.py"
    assert run([str(src / "main.py"), "--to", "keras", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "(1 model, 0 stubs)" in err, err
    text = out.read_text()
    assert "import torch" not in text
    assert "keras.Input(shape=(20,)" in text  # the shape main.py's data shows
    assert "def Net(" in text and "class Unused" not in text and "def Unused" not in text
    assert "from model import" not in text and "from .model import" not in text


def test_names_the_sibling_does_not_define_as_classes_stay_imported(tmp_path):
    src = _program(tmp_path, "from model import Net, describe")
    out = tmp_path / "main_keras.py"
    assert run([str(src / "main.py"), "--to", "keras", "-o", str(out), "-q"]) == 0
    text = out.read_text()
    assert "from model import describe\n" in text
    assert "def Net(" in text


def test_the_translated_main_py_with_a_sibling_model_runs(tmp_path):
    src = _program(tmp_path)
    out = tmp_path / "keras_out"
    out.mkdir()
    assert run([str(src / "main.py"), "--to", "keras", "-o", str(out / "main.py"), "-q"]) == 0
    done = program_runner.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("loss") == 2


def test_a_stub_in_the_sibling_class_names_the_sibling_file(tmp_path, capsys):
    src = _program(tmp_path)
    model = (src / "model.py").read_text().replace("return F.relu(self.fc(x)) * SCALE",
                                                   "return torch.special.airy_ai(self.fc(x))")
    (src / "model.py").write_text(model)
    out = tmp_path / "main_keras.py"
    run([str(src / "main.py"), "--to", "keras", "-o", str(out)])
    err = capsys.readouterr().err
    stubs = [line for line in err.splitlines() if ": stub: " in line]
    assert stubs and all("model.py:" in line for line in stubs[:1]), err


def test_a_sibling_class_main_py_does_not_build_keeps_its_import(tmp_path, capsys):
    # (the model is built under a condition known at run time only, which the model finder does
    # not read: no model here, and the sibling is translated on its own; main.py keeps importing
    # it. ``model = Block(opt.n, 3).to('cpu')`` is built for its sizes:
    # tests/test_model_built_then_placed.py)
    src = _program(tmp_path)
    main = (src / "main.py").read_text().replace("from model import Net", "import argparse\nfrom model import Block")
    main = main.replace("model = Net()", "parser = argparse.ArgumentParser()\n"
                        "parser.add_argument('--n', type=int, required=True)\n"
                        "opt = parser.parse_args()\nif opt.n > 0:\n    model = Block(opt.n, 3).to('cpu')")
    (src / "main.py").write_text(main)
    out = tmp_path / "main_keras.py"
    run([str(src / "main.py"), "--to", "keras", "-o", str(out)])
    err = capsys.readouterr().err
    text = out.read_text()
    assert "from model import Block\n" in text
    assert "def Block(" not in text and "class Block" not in text
    assert "model.py:" not in err, err


def test_a_model_class_built_from_run_time_arguments_is_built_for_them_and_runs(tmp_path, capsys):
    """``model = Block(opt.n, 3)``: the builder takes the constructor's parameters (n_in a
    named size, never the traced number) and the Keras program runs with another --n."""
    src = tmp_path / "one"
    src.mkdir()
    body = [line for line in MODEL.splitlines() if not line.startswith("import")]
    main = [line for line in MAIN.format(import_line="").splitlines()]
    main[main.index("model = Net()")] = ("parser = argparse.ArgumentParser()\n"
                                         "parser.add_argument('--n', type=int, required=True)\n"
                                         "opt = parser.parse_args()\nmodel = Block(opt.n, 3)")
    text = "import argparse\nimport torch.nn.functional as F\n" + "\n".join(main[:3] + body + main[3:]) + "\n"
    (src / "main.py").write_text(text)
    out = tmp_path / "main_keras.py"
    code = run([str(src / "main.py"), "--to", "keras", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and "internal error" not in err and "stub: Block" not in err, err
    keras_text = out.read_text()
    # (no input shape in the program: a subclass taking the constructor's parameters, building
    # on its first call)
    assert "class Block(keras.Model):" in keras_text and "def __init__(self, n_in, n_out, **kwargs):" in keras_text
    assert "keras.Input" not in keras_text
    assert "model = Block(opt.n, 3)" in keras_text
    done = program_runner.run([sys.executable, str(out), "--n", "20"], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, preload=("torch", "tensorflow"))
    assert done.returncode == 0 and done.stdout.count("loss") == 2, done.stderr[-2000:]


NET_WITH_ARGS = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n_in, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.fc2 = nn.Linear(hidden, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
'''


def test_a_model_class_built_with_arguments_accepts_that_call_and_refuses_others(tmp_path):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "model.py").write_text(NET_WITH_ARGS)
    main = MAIN.format(import_line="from model import Net").replace("model = Net()", "model = Net(20, hidden=16)")
    main += "print('other', Net(20, hidden=8))\n"
    (src / "main.py").write_text(main)
    out = tmp_path / "keras_out"
    out.mkdir()
    assert run([str(src / "main.py"), "--to", "keras", "-o", str(out / "main.py"), "-q"]) == 0
    done = program_runner.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=300, preload=("torch", "tensorflow"))
    assert done.stdout.count("loss") == 2, done.stderr[-2000:]
    assert "NotImplementedError: transpiler: the model was translated for Net(20, hidden=16) only" in done.stderr
