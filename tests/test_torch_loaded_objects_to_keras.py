"""torch -> Keras: ``torch.load(path)`` of a path only known at run time (an option) stored in
an attribute or a subscript (``vocab.vectors = torch.load(args.cache)``): the generated
``load_object`` (what the translated ``torch.save`` wrote), as for a plain name; not a stub."""

from __future__ import annotations

import sys

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

PROGRAM = '''
import argparse
import os
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--cache", default="vectors.pt")
args = parser.parse_args()


class Vocab:
    def __init__(self):
        self.vectors = None


vocab = Vocab()
cache = {}
if os.path.isfile(args.cache):
    vocab.vectors = torch.load(args.cache)
    cache["v"] = torch.load(args.cache)
else:
    vocab.vectors = torch.arange(6.0).view(2, 3) * 0.5
    cache["v"] = vocab.vectors
    torch.save(vocab.vectors, args.cache)
print("vectors", vocab.vectors.tolist(), cache["v"].tolist())
'''


def test_torch_load_into_an_attribute_or_a_subscript_is_load_object(tmp_path):
    tr = translate(PROGRAM, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "vocab.vectors = load_object(args.cache)" in tr.text
    assert 'cache["v"] = load_object(args.cache)' in tr.text
    (tmp_path / "out.py").write_text(tr.text)
    (tmp_path / "prog.py").write_text(PROGRAM)
    lines = {}
    for name in ("prog.py", "out.py"):
        folder = tmp_path / name.replace(".py", "_run")
        folder.mkdir()
        runs = []
        for _ in range(2):  # (the first run saves, the second loads what it saved)
            p = program_runner.run([sys.executable, str(tmp_path / name)], cwd=folder, capture_output=True,
                                   text=True, timeout=300)
            assert p.returncode == 0, p.stderr[-2000:]
            runs.append(p.stdout.strip().splitlines()[-1])
        lines[name] = runs
    assert lines["out.py"] == lines["prog.py"]
    assert lines["prog.py"][1] == "vectors [[0.0, 0.5, 1.0], [1.5, 2.0, 2.5]] [[0.0, 0.5, 1.0], [1.5, 2.0, 2.5]]"
