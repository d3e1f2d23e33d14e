"""nn.MultiheadAttention in a class printed for its constructor's sizes (``config.n_embd``,
``config.n_head``; minGPT's ``MultiheadAttentionLayer``, issue 19): traced with made-up primes
that need not divide, its weight plan still names torch's own state_dict keys (``in_proj_weight``,
``out_proj.weight``), those of the module built for the caller's numbers."""

from __future__ import annotations

import sys
import types

from transpiler.translate import translate

SRC = '''import torch
from torch import nn


class Attend(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.out = nn.Linear(d, 2)

    def forward(self, x):
        y = self.attn(x, x, x)[0]
        return self.out(y)
'''


def test_attention_plan_names_torchs_keys_for_made_up_sizes():
    import torch  # noqa: F401  (the source module is built to read its state_dict's keys)

    tr = translate(SRC, "attend.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if m.class_name == "Attend")
    assert md.builder_args["d"] % md.builder_args["heads"]  # (traced with sizes that do not divide)
    module = types.ModuleType("attend_src")
    sys.modules["attend_src"] = module
    try:
        exec(compile(SRC, "attend_src", "exec"), module.__dict__)
    finally:
        del sys.modules["attend_src"]
    keys = set(module.Attend(8, 2).state_dict())
    assert {e.key for e in md.graph.weight_plan.source_state} == keys
