"""torch -> Keras: a model whose class's translation is a marked stub, called with keyword or
unpacked arguments (``seq(x, future=1000)``, ``model(*inputs)``): the call is kept as written
and the class's stub is the one reported (the program stops there); no second stub per call.
A translated model called so stays a stub of its own (its Keras call takes the inputs only)."""

from __future__ import annotations

import sys

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

PROGRAM = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, scale=1.0):
        return torch.special.frobnicate(self.fc(x)) * scale


model = Net()
x = torch.randn(3, 4)
pair = (x, 2.0)
with torch.no_grad():
    y = model(x, scale=2.0)
    z = model(*pair)
print(y.shape, z.shape)
'''


def test_a_stubbed_model_called_with_keywords_or_unpacked_arguments_is_one_stub(tmp_path):
    tr = translate(PROGRAM, "prog.py", "keras")
    messages = [str(d) for d in tr.stubs]
    assert len(messages) == 1 and "Net: torch.special.frobnicate" in messages[0], messages
    assert "y = model(x, scale=2.0)" in tr.text and "z = model(*pair)" in tr.text
    (tmp_path / "out.py").write_text(tr.text)
    p = program_runner.run([sys.executable, str(tmp_path / "out.py")], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert p.returncode != 0 and "NotImplementedError" in p.stderr  # (the class's stub, where it is built)
    assert "torch.special.frobnicate is not supported yet" in p.stderr


def test_a_translated_model_called_with_keywords_is_still_a_stub():
    src = PROGRAM.replace("torch.special.frobnicate(self.fc(x))", "torch.relu(self.fc(x))")
    tr = translate(src, "prog.py", "keras")
    messages = [str(d) for d in tr.stubs]
    assert any("keyword or unpacked arguments" in m for m in messages), messages
    assert not any(m.split(": stub: ")[-1].startswith("Net:") for m in messages), messages
