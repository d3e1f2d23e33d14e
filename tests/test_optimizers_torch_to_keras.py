"""Every translated torch.optim optimizer and lr_scheduler, trained end to end (issue 19
item 3): a small program's loop becomes Keras' compile/fit, and from the same weights on
the same batches (float64, no shuffling) the 20 per-step losses equal torch's within 1e-4
relative (``verify_training_to_keras.run_both``). The formulas are in docs/semantics.md;
``test_training_torch_to_keras`` checks each optimizer step by step on the same gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)

from transpiler.verify_training_to_keras import LoopFacts, run_both

PROGRAM = """
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (6,)


def build_model():
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))


def main():
    x = torch.from_numpy(np.random.RandomState(0).randn(16, 6).astype("float32"))
    y = torch.from_numpy(np.arange(16) % 3)
    model = build_model()
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    criterion = nn.CrossEntropyLoss()
    optimizer = OPTIMIZER
    scheduler = SCHEDULER
    for epoch in range(10):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            PER_STEP
        PER_EPOCH
"""

SGD = "torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)"
CASES = [
    ("torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True, weight_decay=0.01)", None, None),
    ("torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, dampening=0.4)", None, None),
    ("torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=0.01)", None, None),
    ("torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.1)", None, None),
    ("torch.optim.Adadelta(model.parameters(), lr=1.0, weight_decay=0.01)", None, None),
    ("torch.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=0.05)", None, None),
    ("torch.optim.Adamax(model.parameters(), lr=0.02, weight_decay=0.01)", None, None),
    ("torch.optim.NAdam(model.parameters(), lr=0.02)", None, None),
    ("torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5, centered=True)", None, None),
    (SGD, "torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)", "epoch"),
    (SGD, "torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 6], gamma=0.3)", "epoch"),
    (SGD, "torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)", "epoch"),
    (SGD, "torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=5, eta_min=0.01)", "epoch"),
    (SGD, "torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 5))", "step"),
    (SGD, "torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=4)", "epoch"),
    ("torch.optim.Adam(model.parameters(), lr=0.01)",
     "torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, total_steps=20, cycle_momentum=False)", "step"),
    (SGD, "torch.optim.lr_scheduler.SequentialLR(optimizer, [torch.optim.lr_scheduler.LinearLR(optimizer, "
          "start_factor=0.1, total_iters=3), torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)], "
          "milestones=[3])", "epoch"),
]


def _id(case):
    opt, sched, _ = case
    name = (sched or opt).split("(")[0].split(".")[-1]
    return name + ("-" + opt.split("(")[0].split(".")[-1] if sched else "")


@pytest.mark.parametrize("optimizer, scheduler, per", CASES, ids=[f"{_id(c)}-{i}" for i, c in enumerate(CASES)])
def test_losses_equal_torch_for_20_steps(tmp_path, optimizer, scheduler, per):
    text = PROGRAM.replace("OPTIMIZER", optimizer).replace("SCHEDULER", scheduler or "None")
    text = text.replace("PER_STEP", "scheduler.step()" if per == "step" else "pass")
    text = text.replace("PER_EPOCH", "scheduler.step()" if per == "epoch" else "pass")
    src = tmp_path / "program.py"
    src.write_text(text)
    t, k = run_both(str(src), LoopFacts(scheduler=per), exact=True)
    assert len(t) == len(k) == 20, (len(t), len(k))
    rel = np.abs(t - k) / np.maximum(np.abs(t), 1e-8)
    assert rel.max() <= 1e-4, list(zip(t, k))
    assert np.abs(np.diff(t)).max() > 1e-6  # the loss moves: the steps are compared, not a constant
