"""Statements a script writes on one line (``model.train(); opt.zero_grad()``, ``loss.backward();
opt.step()``: the SNLI example's training step) are the separate statements they are: the step
translates (it was "backward() inside other control flow"), the output writes one statement per
line, and diagnostics still name the script's own lines. Losses equal torch's within 1e-4
relative from the same weights (``--exact``)."""

from __future__ import annotations

import numpy as np

from transpiler.translate import translate

RTOL = 1e-4

PROGRAM = '''
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (10,)


def build_model():
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))


def main():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(64, 10)).astype("float32"))
    y = torch.from_numpy(rng.integers(0, 3, size=64))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    iterations = 0
    for epoch in range(2):
        for batch_idx, (xb, yb) in enumerate(loader):
            model.train(); opt.zero_grad()
            iterations += 1
            answer = model(xb)
            loss = criterion(answer, yb)
            loss.backward(); opt.step()
            if iterations % 2 == 0:
                print(epoch, iterations, loss.item()); print("-" * 10)
'''


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


def test_statements_on_one_line_are_read_one_by_one():
    result = translate(PROGRAM, "prog.py", "keras")
    assert not _stubs(result), _stubs(result)
    code = [line for line in result.text.split("def main")[1].splitlines() if not line.strip().startswith("#")]
    assert not any(";" in line for line in code), code
    assert "model.fit(" in result.text  # (the usual loop, written on fewer lines)


def test_a_stub_on_a_split_line_names_the_scripts_line():
    src = PROGRAM + '    print("done"); torch.special.airy_ai(x)\n'

    result = translate(src, "prog.py", "keras")
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "airy_ai" in text)
    spans = [d.span.line for d in result.program.diagnostics if d.severity == "stub"]
    assert spans and all(s == line for s in spans), (spans, line)


def test_statements_on_one_line_train_like_torch(tmp_path):
    from transpiler.verify_training_to_keras import run_programs

    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    t, k = run_programs(str(path), exact=True)
    assert len(t) == 2 * 4 and len(k) == len(t)
    np.testing.assert_allclose(k, t, rtol=RTOL)
