"""``StepLR(optimizer, step_size=1, gamma=args.gamma)``: a schedule whose factor is known only
when the program runs (a command-line argument, the siamese-network example) is the same
schedule, its code reading the value (StepLR, ExponentialLR, MultiStepLR). Losses equal
torch's within 1e-4 relative, from the same weights, under ``--exact``."""

from __future__ import annotations

import numpy as np
import pytest

from transpiler.translate import translate

RTOL = 1e-4

PROGRAM = '''
import os
import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import StepLR, ExponentialLR, MultiStepLR
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (10,)


def build_model():
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))


def main():
    gamma = float(os.environ.get("STEP_GAMMA", "0.5"))
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(64, 10)).astype("float32"))
    y = torch.from_numpy(rng.integers(0, 3, size=64))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = SCHEDULE
    for epoch in range(4):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        scheduler.step()
'''

SCHEDULES = {"step": "StepLR(optimizer, step_size=1, gamma=gamma)",
             "exponential": "ExponentialLR(optimizer, gamma=gamma)",
             "multistep": "MultiStepLR(optimizer, milestones=[1, 3], gamma=gamma)"}


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_a_run_time_factor_is_read_by_the_schedule(kind):
    result = translate(PROGRAM.replace("SCHEDULE", SCHEDULES[kind]), "prog.py", "keras")
    assert not _stubs(result), _stubs(result)
    assert "keras.callbacks.LearningRateScheduler(" in result.text
    assert "gamma **" in result.text or "gamma**" in result.text  # (the code reads it)


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_a_run_time_factor_trains_like_torch(kind, tmp_path, monkeypatch):
    from transpiler.verify_training_to_keras import run_programs

    monkeypatch.setenv("STEP_GAMMA", "0.3")
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM.replace("SCHEDULE", SCHEDULES[kind]))
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 4 * 4 and len(k) == len(t)
    np.testing.assert_allclose(k, t, rtol=RTOL)
