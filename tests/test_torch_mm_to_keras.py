"""``torch.mm(h, self.W)`` (a 2-D matrix product, here with the module's own weight, as
graph layers write it: pytorch/examples' GAT) is ``torch.matmul`` of two matrices. Before: a
stub "torch.mm is not supported yet". Numeric: equal to torch on the same weights."""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (torch before Keras in one process)

from torch_keras_harness import check_torch_source

NET = '''import torch
import torch.nn as nn

INPUT_SHAPE = (5,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.empty(size=(5, 3)))
        nn.init.xavier_normal_(self.W)
        self.fc = nn.Linear(3, 3)

    def forward(self, h):
        return self.fc(torch.relu(PRODUCT))


def build_model():
    return Net()
'''


@pytest.mark.parametrize("product", ["torch.mm(h, self.W)", "torch.mm(input=h, mat2=self.W)", "h.mm(self.W)"])
def test_mm_is_a_matrix_product(product):
    err, n_torch, n_keras, tr = check_torch_source(NET.replace("PRODUCT", product))
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert n_torch == n_keras
    assert err < 1e-5
