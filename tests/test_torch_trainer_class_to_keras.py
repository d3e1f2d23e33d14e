"""Trainer classes to Keras (issue 19 item 4): a plain class holding the model, loader and
optimizer whose methods train (tests/programs_torch/trainer_class.py, in the DDP tutorial
series' style) is read by the reader of module-level training code (frontend_ast/torch/
trainers.py): its step method is one training step under a tape, ``self.model`` names the
model, and the program trains as torch's does from the same weights."""

from __future__ import annotations

import os
import runpy

import numpy as np
from transpiler.translate import translate

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs_torch", "trainer_class.py")


def _translated() -> str:
    with open(PROGRAM, encoding="utf-8") as fh:
        result = translate(fh.read(), PROGRAM, "keras")
    assert not result.stubs, [str(d) for d in result.stubs]
    return result.text


def test_trainer_class_is_kept_with_its_step_translated():
    text = _translated()
    assert "class Trainer:" in text and "import torch" not in text
    assert "grads = tape.gradient(loss, self.model.trainable_variables)" in text
    assert "self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))" in text


def _recording(cls, monkeypatch) -> list[float]:
    """Every loss the step method returns (``loss.item()``)."""
    losses: list[float] = []
    step = cls._run_batch

    def recorded(self, *args):
        losses.append(step(self, *args))
        return losses[-1]

    monkeypatch.setattr(cls, "_run_batch", recorded)
    return losses


def test_trainer_class_trains_like_torch(tmp_path, monkeypatch, capsys):
    import torch  # noqa: F401  (torch before TensorFlow in one process)

    g = runpy.run_path(PROGRAM, run_name="trainer_test")
    weights = {}
    init = g["Trainer"].__init__

    def capture(self, model, *args):
        weights.update({n: p.detach().numpy().copy() for n, p in model.named_parameters()})
        init(self, model, *args)

    monkeypatch.setattr(g["Trainer"], "__init__", capture)
    torch_losses = _recording(g["Trainer"], monkeypatch)
    g["main"]()
    torch_out = capsys.readouterr().out

    out = tmp_path / "out.py"
    out.write_text(_translated())
    k = runpy.run_path(str(out), run_name="trainer_test")
    kinit = k["Trainer"].__init__

    def set_weights(self, model, *args):
        for name in ("fc1", "fc2"):
            model.get_layer(name).set_weights([weights[f"{name}.weight"].T, weights[f"{name}.bias"]])
        kinit(self, model, *args)

    monkeypatch.setattr(k["Trainer"], "__init__", set_weights)
    keras_losses = _recording(k["Trainer"], monkeypatch)
    k["main"]()
    keras_out = capsys.readouterr().out
    assert len(torch_losses) == len(keras_losses) == 16, (torch_losses, keras_losses)  # 4 epochs of 4 batches
    np.testing.assert_allclose(keras_losses, torch_losses, rtol=1e-4)
    assert keras_out.count("epoch") == torch_out.count("epoch") == 4


def test_trainer_class_with_an_untranslated_part_is_one_stub():
    """A trainer whose step uses what is not translated (a GradScaler) is one marked stub
    naming the class and the first reason, not a class half translated around stubs."""
    with open(PROGRAM, encoding="utf-8") as fh:
        source = fh.read()
    source = source.replace("        self.log_every = log_every\n",
                            "        self.log_every = log_every\n        self.scaler = torch.amp.GradScaler()\n")
    source = source.replace("        loss.backward()\n", "        self.scaler.scale(loss).backward()\n")
    result = translate(source, "trainer_scaler.py", "keras")
    messages = [d.message for d in result.stubs]
    assert len(messages) == 1 and messages[0].startswith("class Trainer: torch.amp.GradScaler()"), messages
