"""A model built in a program function beside its optimizer and data (the DDP tutorial series'
``load_train_objs()``: ``model = torch.nn.Linear(20, 1)``, ``SGD(model.parameters())``,
``return train_set, model, optimizer``) is the program's model: the function is not a model
builder (it makes an optimizer), the layer becomes a Keras builder called where it was made,
and the ``Trainer`` class holding it (``self.model = model.to(gpu_id)``, a DDP wrapper and its
``.module``, ``ckp = self.model.state_dict(); torch.save(ckp, path)``) translates.

Numerics: both programs from the same initial weights, the same batches in order: every
loss value equal within 1e-4 relative."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch  # noqa: F401  (first: torch before tensorflow in one process)

from transpiler.translate import translate

RTOL = 1e-4

PROGRAM = '''
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

LOSSES = []


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id, save_every):
        self.gpu_id = gpu_id
        self.model = model.to(gpu_id)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        loss.backward()
        self.optimizer.step()
        LOSSES.append(loss.item())

    def _run_epoch(self, epoch):
        for source, targets in self.train_data:
            source = source.to(self.gpu_id)
            targets = targets.to(self.gpu_id)
            self._run_batch(source, targets)

    def _save_checkpoint(self, epoch, path):
        ckp = self.model.state_dict()
        torch.save(ckp, path)

    def train(self, max_epochs, path):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if epoch % self.save_every == 0:
                self._save_checkpoint(epoch, path)


def load_train_objs():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(64, 20)).astype("float32"))
    y = torch.from_numpy(rng.normal(size=(64, 1)).astype("float32"))
    train_set = TensorDataset(x, y)
    model = torch.nn.Linear(20, 1)  # load your model
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return train_set, model, optimizer


def main(device, total_epochs, save_every, batch_size, path):
    dataset, model, optimizer = load_train_objs()
    train_data = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    trainer = Trainer(model, train_data, optimizer, device, save_every)
    trainer.train(total_epochs, path)
'''

# the multi-process form: the model wrapped in DDP, its state read through .module in a dict
WRAPPED = PROGRAM.replace(
    "from torch.utils.data import DataLoader, TensorDataset\n",
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "from torch.nn.parallel import DistributedDataParallel as DDP\n").replace(
    "        self.save_every = save_every\n",
    "        self.save_every = save_every\n        self.model = DDP(self.model, device_ids=[self.gpu_id])\n").replace(
    "        ckp = self.model.state_dict()\n        torch.save(ckp, path)\n",
    "        snapshot = {\"MODEL_STATE\": self.model.module.state_dict(), \"EPOCHS_RUN\": epoch}\n"
    "        torch.save(snapshot, path)\n")


def _load(text: str, name: str):
    module = types.ModuleType(name)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    return module


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


@pytest.mark.parametrize("src", [PROGRAM, WRAPPED], ids=["plain", "ddp"])
def test_the_model_of_a_program_function_translates_with_its_trainer(src):
    result = translate(src, "prog.py", "keras")
    assert not _stubs(result), _stubs(result)
    assert len(result.program.models) == 1
    text = result.text
    assert "def build_model():" in text and "    model = build_model()  # load your model" in text
    assert "optimizer = keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)" in text
    assert "tape.gradient(loss, self.model.trainable_variables)" in text
    code = "\n".join(line.split("#")[0] for line in text.splitlines())  # (a dropped line is quoted in a comment)
    assert ".to(" not in code and "state_dict" not in code and "DDP" not in code
    assert ("DDP(" not in src) or "in one process the wrapper is the module" in text


@pytest.mark.parametrize("src", [PROGRAM, WRAPPED], ids=["plain", "ddp"])
def test_the_trainer_runs_and_its_checkpoint_loads_back(src, tmp_path):
    import pickle

    gen = _load(translate(src, "prog.py", "keras").text, "keras_trainer_program")
    path = str(tmp_path / "checkpoint.pt")
    gen.main("cpu", 2, 1, 16, path)
    assert len(gen.LOSSES) == 2 * 4
    with open(path, "rb") as fh:
        saved = pickle.load(fh)
    weights = saved["MODEL_STATE"] if isinstance(saved, dict) else saved
    assert [np.shape(w) for w in weights] == [(20, 1), (1,)]


def test_the_trainer_trains_like_torch(tmp_path):
    torch_program = _load(PROGRAM, "torch_trainer_program")
    initial = {}
    load = torch_program.load_train_objs

    def recorded():
        objs = load()
        initial.update({k: v.detach().numpy().copy() for k, v in objs[1].state_dict().items()})
        return objs

    torch_program.load_train_objs = recorded
    torch_program.main("cpu", 3, 1, 16, str(tmp_path / "torch.pt"))

    gen = _load(translate(PROGRAM, "prog.py", "keras").text, "keras_trainer_program")
    build = gen.build_model

    def same_weights():
        model = build()
        model.get_layer("linear").set_weights([initial["weight"].T, initial["bias"]])
        return model

    gen.build_model = same_weights
    gen.main("cpu", 3, 1, 16, str(tmp_path / "keras.pt"))
    assert len(torch_program.LOSSES) == 3 * 4
    np.testing.assert_allclose(gen.LOSSES, torch_program.LOSSES, rtol=RTOL)
