"""A torch loop of the usual shape around a custom step (a loss written in the loop, a GAN's
two optimizers) → a ``keras.Model`` trainer whose ``train_step`` is the step, run by
``fit``; a loop of another shape stays a custom loop under a GradientTape.

Numerics: the whole programs on both sides (same initial weights, batches and noise,
float64) give the same loss values step by step (the step run eagerly, as recorded), and a
step with no numpy in it runs traced with fit's logged epoch means equal to torch's.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

from transpiler.printers.keras.subclass import MODEL_ATTRIBUTES as KERAS_MODEL_ATTRIBUTES
from transpiler.translate import translate

RTOL = 1e-4

GAN = '''
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (4,)
DISCRIMINATOR_INPUT_SHAPE = (6,)


def build_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))


def build_discriminator():
    return nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))


def main():
    torch.manual_seed(0)
    data = torch.from_numpy(np.random.RandomState(0).randn(40, 6).astype("float32"))
    loader = DataLoader(TensorDataset(data), batch_size=8, shuffle=True)
    gen, disc = build_model(), build_discriminator()
    criterion = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-2, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-2, betas=(0.5, 0.999))
    for epoch in range(3):
        gen.train()
        total = 0.0
        for (real,) in loader:
            ones = torch.ones(real.size(0), 1)
            zeros = torch.zeros(real.size(0), 1)
            fake = gen(torch.randn(real.size(0), 4))
            opt_d.zero_grad()
            loss_d = criterion(disc(real), ones) + criterion(disc(fake.detach()), zeros)
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = criterion(disc(fake), ones)
            loss_g.backward()
            opt_g.step()
            total += loss_g.item()
        print(f"epoch {epoch}: d {loss_d.item():.3f} g {total / len(loader):.3f}")
'''

#: a loss written in the loop, no noise and no numpy: the trainer's step runs traced
PENALIZED = '''
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (5,)


def build_model():
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 2))


def main():
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(48, 5).astype("float32"))
    y = torch.from_numpy(rng.randn(48, 2).astype("float32"))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(4):
        for xb, yb in loader:
            optimizer.zero_grad()
            out = model(xb)
            loss = ((out - yb) ** 2).sum(dim=1).mean() + 0.01 * out.abs().mean()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
'''


def _translate(src: str):
    tr = translate(src, "steps.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    return tr


def _classes(text: str) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in ast.parse(text).body if isinstance(n, ast.ClassDef)}


def test_gan_loop_becomes_a_trainer_run_by_fit():
    text = _translate(GAN).text
    trainer = _classes(text)["Trainer"]
    assert ast.unparse(trainer.bases[0]) == "keras.Model"
    methods = {n.name: n for n in trainer.body if isinstance(n, ast.FunctionDef)}
    assert set(methods) == {"__init__", "metrics", "train_step"}
    assert [a.arg for a in methods["__init__"].args.args] == ["self", "gen", "disc", "opt_d", "opt_g", "criterion"]
    step = ast.unparse(methods["train_step"])
    assert "tf.GradientTape(persistent=True)" in step and "apply_gradients(tape, opt_g, gen, gen_grads)" in step
    assert "total" not in step  # the running sum is fit's logs
    main = ast.unparse(next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "main"))
    assert "for epoch" not in main and "loader" not in main
    assert "trainer = Trainer(gen, disc, opt_d, opt_g, criterion)" in main
    assert "trainer.compile(run_eagerly=True)" in main  # numpy noise: eager
    assert "trainer.fit(data, batch_size=8, epochs=3, shuffle=True, verbose=2)" in main
    # fit logs what the loop reported: loss_g (through the running sum), loss_d (its print)
    assert "keras.metrics.Mean(name='loss_g'), keras.metrics.Mean(name='loss_d')" in ast.unparse(trainer)


def test_gan_trainer_trains_like_torch(tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    path = tmp_path / "gan.py"
    path.write_text(GAN)
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 3 * 5 * 3 and len(k) == len(t)  # 3 epochs of 5 batches, 3 loss calls each
    np.testing.assert_allclose(k, t, rtol=RTOL)


def test_step_without_numpy_runs_traced_and_logs_torch_epoch_means(tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    tr = _translate(PENALIZED)
    assert "trainer.compile()" in tr.text and "run_eagerly" not in tr.text
    assert "xb, yb = data" in tr.text
    path = tmp_path / "penalized.py"
    path.write_text(PENALIZED)
    logs: list = []
    t, k = run_programs(str(path), eager=False, fit_logs=logs, exact=True)
    assert len(k) == 0 and len(t) == 4 * 3  # (traced: no Keras value recorded)
    assert len(logs) == 1 and len(logs[0]["loss"]) == 4
    np.testing.assert_allclose(logs[0]["loss"], t.reshape(4, 3).mean(axis=1), rtol=RTOL)
    # and run eagerly, step by step
    t2, k2 = run_programs(str(path), exact=True)
    np.testing.assert_allclose(k2, t2, rtol=RTOL)


@pytest.mark.parametrize("change, reason", [
    ("fake = gen(torch.randn(real.size(0), 4))", "fake = gen(torch.randn(real.size(0), 4) / (epoch + 1))"),
    ("        print(f\"epoch", "        total = 0.0\n        print(f\"epoch"),
    ("        print(f\"epoch", "        opt_g.param_groups[0]['lr'] *= 0.9\n        print(f\"epoch"),
    ("    for epoch in range(3):", "    for epoch in range(0, 6, 2):"),
], ids=["reads_the_epoch", "running_sum_reset_after_the_batches", "other_code_after_the_batches",
        "range_with_a_step"])
def test_other_loops_stay_custom_loops(change, reason):
    src = GAN.replace(change, reason)
    assert src != GAN
    tr = translate(src, "steps.py", "keras")
    assert "Trainer" not in _classes(tr.text) and "with tf.GradientTape(persistent=True) as tape:" in tr.text
    assert "for epoch in range(" in tr.text


def test_a_value_of_the_step_read_after_the_loop_keeps_the_loop():
    src = GAN + "    return loss_g.item()\n"
    tr = translate(src, "steps.py", "keras")
    assert "Trainer" not in _classes(tr.text) and "for epoch in range(3):" in tr.text


def test_trainer_attributes_never_shadow_keras_model_attributes():
    import keras
    public = {n for n in dir(keras.Model) if not n.startswith("_")}
    assert public <= KERAS_MODEL_ATTRIBUTES, sorted(public - KERAS_MODEL_ATTRIBUTES)
    src = PENALIZED
    text = _translate(src).text
    assert "self.optimizer_ = optimizer" in text and "model, optimizer = self.model, self.optimizer_" in text


def test_drop_last_and_three_arrays_feed_fit_through_tf_data(tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    src = PENALIZED.replace("TensorDataset(x, y), batch_size=16, shuffle=True",
                            "TensorDataset(x, y, w), batch_size=20, shuffle=True, drop_last=True").replace(
        "    loader =", "    w = torch.ones(48, 1)\n    loader =").replace(
        "for xb, yb in loader:", "for xb, yb, wb in loader:").replace(
        "((out - yb) ** 2).sum(dim=1)", "(wb * (out - yb) ** 2).sum(dim=1)")
    text = _translate(src).text
    assert "xb, yb, wb = data" in text
    assert "batches = tf.data.Dataset.from_tensor_slices((x, y, w))" in text
    assert "batches = batches.shuffle(batches.cardinality())" in text
    assert "trainer.fit(batches.batch(20, drop_remainder=True), epochs=4, verbose=2)" in text
    path = tmp_path / "weighted.py"
    path.write_text(src.replace("torch.ones(48, 1)", "torch.from_numpy(rng.rand(48, 1).astype('float32'))"))
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 4 * 2  # 48 samples in batches of 20: the last 8 dropped each epoch
    np.testing.assert_allclose(k, t, rtol=RTOL)


def test_one_pass_over_the_loader_is_one_epoch_of_fit(tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    src = PENALIZED.replace("    for epoch in range(4):\n", "").replace(
        "        for xb, yb in loader:\n            ", "    for xb, yb in loader:\n        ").replace(
        "\n            ", "\n        ").replace("        print(epoch, loss.item())\n", "")
    assert "for epoch" not in src
    text = _translate(src).text
    assert "trainer.fit(x, y, batch_size=16, epochs=1, shuffle=True, verbose=2)" in text
    path = tmp_path / "one_pass.py"
    path.write_text(src)
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 3
    np.testing.assert_allclose(k, t, rtol=RTOL)


@pytest.mark.parametrize("change, reason", [
    # the running sum goes with the loop: read after it, the loop stays
    ("    for epoch in range(3):", "    for epoch in range(3):"),
    # the batch loop's flow leaves the step
    ("            total += loss_g.item()", "            total += loss_g.item()\n            if loss_g.item() > 100:\n"
                                          "                break"),
    # state carried from one batch to the next (the label of the previous batch)
    ("            ones = torch.ones(real.size(0), 1)", "            ones = torch.ones(real.size(0), 1)\n"
                                                      "            if real.size(0) < 0:\n"
                                                      "                ones = prev\n"
                                                      "            prev = ones"),
], ids=["running_sum_read_after", "break", "carried_state"])
def test_loops_a_train_step_cannot_hold_stay_loops(change, reason):
    src = GAN.replace(change, reason)
    if change == reason:
        src += "    print(total)\n"
    assert src != GAN
    tr = translate(src, "steps.py", "keras")
    assert "Trainer" not in _classes(tr.text) and "for epoch in range(3):" in tr.text
