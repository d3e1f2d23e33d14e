"""Distributed PyTorch programs → a single-process Keras program (issue 19 item 5):
process-group set-up and tear-down dropped with a comment, rank 0 / world size 1,
DistributedDataParallel the model it wraps, ``mp.spawn`` the call of rank 0."""

from __future__ import annotations

import ast

from transpiler.translate import translate

DDP_PROGRAM = '''\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (10,)


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def train(rank, world_size, epochs):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = ToyModel()
    ddp_model = DDP(model)
    x = torch.randn(32, 10)
    y = torch.randn(32, 5)
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    for epoch in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(xb), yb)
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.4f} of {dist.get_world_size()} processes")
    dist.barrier()
    dist.destroy_process_group()


def main():
    world_size = 2
    mp.spawn(train, args=(world_size, 2), nprocs=world_size, join=True)


if __name__ == "__main__":
    main()
'''


def _imports(text: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_ddp_program_becomes_one_process_without_stubs():
    tr = translate(DDP_PROGRAM, "ddp.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "torch" not in _imports(tr.text)
    assert "train(0, world_size, 2)" in tr.text  # mp.spawn: rank 0's call
    assert "ddp_model = model" in tr.text  # the wrapper is the model
    code = "\n".join(line for line in tr.text.splitlines() if not line.strip().startswith("#"))
    for gone in ("init_process_group", "destroy_process_group", "barrier", "spawn", "DDP(", "dist."):
        assert gone not in code, gone
    assert "distributed Keras is not translated" in tr.text  # each drop says so


def test_ddp_program_runs_end_to_end(capsys):
    from transpiler import verify

    tr = translate(DDP_PROGRAM, "ddp.py", "keras")
    module = verify.load_generated(tr.text, "ddp_keras")
    module.main()
    assert "loss" in capsys.readouterr().out  # fit's logs of the 2 epochs


def test_rank_and_world_size_are_those_of_one_process():
    src = DDP_PROGRAM.replace("    world_size = 2\n", "    world_size = 2\n    print(dist.get_rank(), "
                              "dist.get_world_size(), dist.is_initialized())\n")
    tr = translate(src, "ddp.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "print(0, 1, False)" in tr.text


def test_ddp_of_a_computed_module_is_a_stub():
    src = DDP_PROGRAM.replace("ddp_model = DDP(model)", "ddp_model = DDP(model.to(rank))")
    tr = translate(src, "ddp.py", "keras")
    assert any("DistributedDataParallel(...) of something other than a model variable" in str(d)
               for d in tr.stubs), [str(d) for d in tr.stubs]
