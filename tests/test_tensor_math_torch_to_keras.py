"""torch → Keras: tensor math in ``forward`` (operators, torch functions and tensor methods)
becomes keras.ops expressions; each case is numerically equal (≤ 1e-5) with equal weights.

The same ops as ``keras.ops``/``tf.*`` → torch (tests/test_numeric_ops.py), read the other
way: reductions over any dims (a channels-first map's axes rewritten for channels-last),
``/``, ``**``, ``@`` and comparisons with tensors or numbers (numbers are constants, never
params), element-wise functions, ``clamp``, ``torch.where``, ``torch.stack``, ``torch.zeros_like``/
``ones_like``/``full_like`` and ``torch.einsum`` (computed in torch's axis order).
"""

from __future__ import annotations

import torch  # noqa: F401  (torch before Keras in one process)
import pytest

from torch_keras_harness import check_torch_source

from transpiler.translate import translate

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def conv_module(forward: str, shape: str = "(3, 6, 5)") -> str:
    """``y = self.conv(x)`` (4 channels, same size), then ``forward`` (returns)."""
    fwd = "\n".join("        " + line for line in forward.strip().splitlines())
    return (f"{HEAD}\nINPUT_SHAPE = {shape}\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.conv = nn.Conv2d(3, 4, 3, padding=1)\n\n"
            f"    def forward(self, x):\n        y = self.conv(x)\n{fwd}\n\n\ndef build_model():\n    return M()\n")


@pytest.mark.parametrize("forward", [
    pytest.param("return y.mean(dim=-1)", id="mean-last"),
    pytest.param("return y.mean(dim=1, keepdim=True)", id="mean-channels-keepdim"),
    pytest.param("return torch.sum(y, dim=(2, 3))", id="sum-spatial"),
    pytest.param("return y.sum((1, 3))", id="sum-channels-width"),
    pytest.param("return y.amax(1)", id="amax-channels"),
    pytest.param("return torch.amin(y, dim=2, keepdim=True)", id="amin-height"),
    pytest.param("return torch.exp(y / 2.0) / (y.abs() + 1.0)", id="exp-divide"),
    pytest.param("return y ** 2 + 1.0 / (torch.sqrt(y.abs()) + 1.0)", id="power-reciprocal"),
    pytest.param("return torch.log(y.square() + 1.0) - y.rsqrt().nan_to_num(0.0) * 0.0", id="log-square",
                 marks=pytest.mark.xfail(reason="nan_to_num is not translated (a stub)", strict=True)),
    pytest.param("return torch.clamp(y, -0.5, 0.5) + y.clamp(min=0.0)", id="clamp"),
    pytest.param("return torch.where(y > 0, y, 0.1 * y)", id="where"),
    pytest.param("return (y >= 0.2).float() * y", id="comparison-cast"),
    pytest.param("return -torch.neg(y)", id="neg"),
    pytest.param("return torch.stack([y, y * 2.0], dim=2)", id="stack"),
    pytest.param("t = y.reshape(y.size(0), 4, 30)\nreturn torch.matmul(t, t.transpose(1, 2)) / 30.0", id="matmul"),
    pytest.param("t = y.reshape(y.size(0), 4, 30)\nreturn t.transpose(1, 2) @ t / 30.0", id="matmul-operator"),
    pytest.param("return y + torch.zeros_like(y)", id="zeros_like"),
    pytest.param("return torch.ones_like(y) - y", id="ones_like"),
    pytest.param("return torch.full_like(y, 0.25) * y", id="full_like"),
    pytest.param("return y + torch.ones_like(y, dtype=torch.int32).float()", id="ones_like-dtype"),
    pytest.param("return torch.einsum('bchw,bdhw->bcd', y, y) / 30.0", id="einsum-gram"),
    pytest.param("return torch.einsum('bchw->bhc', [y])", id="einsum-list-operands"),
    pytest.param("t = y.reshape(y.size(0), 4, 30)\nreturn torch.einsum('bik,bjk->bij', t, t) / 30.0",
                 id="einsum-scores"),
    # indexing: static slices, int indices and None on a channels-first map (axes rewritten)
    pytest.param("return y[:, 1:3] * 2.0", id="slice-channels"),
    pytest.param("return y[..., ::2] + 1.0", id="slice-width-step"),
    pytest.param("return y[:, :, 1:, :-1].amax(1)", id="slice-two-spatial-axes"),
    pytest.param("return y[:, 0]", id="take-channel"),
    pytest.param("return y[:, -1, 2]", id="take-channel-and-row"),
    pytest.param("return y[:, 1:3, None]", id="slice-new-axis"),
    # x.unsqueeze(1).repeat(1, n, 1): Keras' RepeatVector
    pytest.param("return y.mean(dim=(2, 3)).unsqueeze(1).repeat(1, 3, 1)", id="repeat-vector"),
    pytest.param("return y.amax(dim=(2, 3))[:, None].repeat(1, 2, 1) - 1.0", id="repeat-vector-none-axis"),
])
def test_forward_math_to_keras(forward):
    err, torch_params, keras_params, tr = check_torch_source(conv_module(forward))
    assert err <= 1e-5, f"max abs error {err:.3g}\n{tr.text}"
    assert torch_params == keras_params


def test_numbers_are_constants_not_params():
    tr = translate(conv_module("return 2.0 ** y"), "m.py", "keras")
    graph = tr.program.models[0].graph
    power = next(n for n in graph.nodes if n.op == "power")
    base = power.inputs[0].producer
    assert base.op == "constant" and base.attrs["value"] == 2.0
    assert {n.op for n in graph.nodes if n.spec.params} == {"conv2d"}


@pytest.mark.parametrize("forward, reason", [
    pytest.param("return y.mean()", "static dim", id="mean-all"),
    pytest.param("return y.sum(dim=0)", "batch axis", id="sum-batch"),
    pytest.param("return torch.stack([y, y])", "batch axis", id="stack-batch"),
    pytest.param("return torch.einsum('bchw->chw', y)", "batch axis", id="einsum-sums-the-batch"),
    pytest.param("return torch.einsum('...hw->...wh', y)", "ellipsis", id="einsum-ellipsis"),
    pytest.param("return torch.full_like(y, y)", "fill_value", id="full_like-tensor-fill"),
    pytest.param("return torch.zeros_like(y, dtype=torch.complex64)", "dtype", id="zeros_like-complex"),
    pytest.param("return y[0]", "batch axis", id="index-batch"),
    pytest.param("return y[:, ::-1]", "negative step", id="negative-step"),
    pytest.param("return y.repeat(1, 2, 1, 1)", "RepeatVector", id="repeat-channels"),
])
def test_refused(forward, reason):
    tr = translate(conv_module(forward), "m.py", "keras")
    assert any(reason in d.message for d in tr.stubs), [d.message for d in tr.diagnostics]
