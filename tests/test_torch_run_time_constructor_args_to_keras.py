"""torch -> Keras: a model class built from sizes computed from the data loaded at run time
(``Net(n_in=features.shape[1], n_out=labels.max().item() + 1)``): each such argument is a
run-time size (as a command-line option is), the Keras class takes it from the same call;
not a stub ("'labels.max' is not known statically")."""

from __future__ import annotations

import sys

import numpy as np
import torch  # noqa: F401  (first: torch before tensorflow in one process)

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

PROGRAM = '''
import sys
import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x))), dim=1)


def load(path):
    data = np.load(path)
    return torch.FloatTensor(data["x"]), torch.LongTensor(data["y"])


features, labels = load(sys.argv[1])
model = Net(n_in=features.shape[1], n_hidden=16, n_out=labels.max().item() + 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.NLLLoss()
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(model(features), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
'''


def _data(folder):
    rng = np.random.default_rng(0)
    path = folder / "d.npz"
    np.savez(path, x=rng.normal(size=(20, 7)).astype("float32"), y=rng.integers(0, 4, size=20))
    return path


def test_sizes_computed_from_loaded_data_build_the_keras_class_from_the_same_call(tmp_path):
    tr = translate(PROGRAM, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "model = Net(n_in=features.shape[1], n_hidden=16, n_out=labels.max().item() + 1)" in tr.text
    assert "def __init__(self, n_in, n_hidden, n_out" in tr.text
    data = _data(tmp_path)
    (tmp_path / "out.py").write_text(tr.text)
    p = program_runner.run([sys.executable, str(tmp_path / "out.py"), str(data)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    losses = [float(line.split()[1]) for line in p.stdout.splitlines() if line.startswith("loss ")]
    assert len(losses) == 3 and all(np.isfinite(losses)), p.stdout


def test_the_keras_class_built_from_the_data_computes_what_torch_does(tmp_path, monkeypatch):
    """Same weights: the log-probabilities of both models, for the sizes the data gives."""
    data = _data(tmp_path)
    monkeypatch.setattr(sys, "argv", ["prog.py", str(data)])
    torch_ns: dict = {"__name__": "torch_prog"}
    exec(compile(PROGRAM, "prog.py", "exec"), torch_ns)
    keras_ns: dict = {"__name__": "keras_prog"}
    exec(compile(translate(PROGRAM, "prog.py", "keras").text, "out.py", "exec"), keras_ns)
    tmodel, kmodel = torch_ns["model"], keras_ns["model"]
    x = np.load(data)["x"]
    for name in ("fc1", "fc2"):
        layer = getattr(tmodel, name)
        getattr(kmodel, name).set_weights([layer.weight.detach().numpy().T, layer.bias.detach().numpy()])
    with torch.no_grad():
        expected = tmodel(torch.from_numpy(x)).numpy()
    got = np.asarray(kmodel(x))
    assert got.shape == expected.shape == (20, int(np.load(data)["y"].max()) + 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
