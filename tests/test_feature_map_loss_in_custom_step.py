"""A custom training step (a loop fit cannot stand for: ``for i, batch in enumerate(loader, 1)``)
whose loss reads a feature map the model returns: the Keras model returns it channels-last,
the target stays in torch's channels-first layout, so the loss must read the output in torch's
layout again (the super-resolution example's step). Elementwise math between such an output
and array data is a marked stub (the axes would pair up wrongly), never broadcast silently.

Numerics: both programs whole, same initial weights, same batches, float64 (``--exact``):
every loss value equal within 1e-4 relative."""

from __future__ import annotations

import numpy as np
import pytest

from transpiler.translate import translate

RTOL = 1e-4

PROGRAM = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv1(x)))


def build_model():
    return Net()


def main():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(32, 1, 6, 6)).astype("float32"))
    y = torch.from_numpy(rng.normal(size=(32, 1, 6, 6)).astype("float32"))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    model = build_model()
    CRITERION
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(2):
        for iteration, batch in enumerate(loader, 1):
            input, target = batch[0], batch[1]
            optimizer.zero_grad()
            loss = LOSS
            loss.backward()
            optimizer.step()
            print(epoch, iteration, loss.item())
'''

LOSSES = {"object": "criterion(model(input), target)",  # (the others: without a loss object)
          "functional": "F.mse_loss(model(input), target)",
          "functional_l1": "F.l1_loss(model(input), target)"}


def _program(loss: str) -> str:
    criterion = "criterion = nn.MSELoss()" if loss == "object" else "pass"
    return PROGRAM.replace("LOSS", LOSSES[loss]).replace("CRITERION", criterion)


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_a_feature_map_loss_reads_the_output_in_torchs_layout(loss):
    result = translate(_program(loss), "prog.py", "keras")
    assert not _stubs(result), _stubs(result)
    # (square images: without the transposition the loss would broadcast (8, 1, 6, 6) against
    # (8, 6, 6, 1) silently)
    assert "keras.ops.transpose(" in result.text and "(0, 3, 1, 2)" in result.text


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_a_feature_map_loss_trains_like_torch(loss, tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    path = tmp_path / "prog.py"
    # (the functional losses: recorded as the values backward() is called on)
    path.write_text(_program(loss))
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 2 * 4 and len(k) == len(t)
    np.testing.assert_allclose(k, t, rtol=RTOL)


def test_arithmetic_between_a_feature_map_and_array_data_is_a_stub():
    src = _program("functional").replace("F.mse_loss(model(input), target)", "((model(input) - target) ** 2).mean()")
    result = translate(src, "prog.py", "keras")
    assert any("channels-last" in s for s in _stubs(result)), _stubs(result)
