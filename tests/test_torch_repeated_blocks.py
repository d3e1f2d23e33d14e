"""A block repeated a constructor argument's number of times (issue 19):
``nn.ModuleList([Layer(d) for _ in range(n_layers)])`` and
``nn.Sequential(*[Layer(d) for _ in range(depth)])`` in a module class its file does not build
(a library ``model.py``). The Keras class holds the same list, its length the caller's
expression, and calls it in a loop; the weights follow torch's ``layers.0.``, ``layers.1.``
names; the translation equals torch for two different counts, in-process and run as a program."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from torch_keras_harness import randomize_torch  # (imports torch first)
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

SRC = '''import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return x + torch.relu(self.lin(self.norm(x)))


class Stack(nn.Module):
    def __init__(self, d, n_layers, n_out):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.layers = nn.ModuleList([Layer(d) for _ in range(n_layers)])
        self.out = nn.Linear(d, n_out)

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.out(x)


class Chain(nn.Module):
    def __init__(self, d, depth):
        super().__init__()
        self.blocks = nn.Sequential(*[Layer(d) for _ in range(depth)])
        self.head = nn.Linear(d, 3)

    def forward(self, x):
        x = self.blocks(x)
        return self.head(x)
'''

#: each repetition built with its index: not the same block, the refusal stays
BY_INDEX = SRC.replace("[Layer(d) for _ in range(depth)]", "[Layer(d + 0 * i) for i in range(depth)]")

#: the count used by its number elsewhere too: the refusal stays
COUNTED_TWICE = SRC.replace("        self.head = nn.Linear(d, 3)\n",
                            "        self.head = nn.Linear(d, 3)\n        self.scales = [i for i in range(depth)]\n")

RUN = '''import sys
import numpy as np
import generated

x = np.load("x.npy")
for cls, args, n in (("Stack", (8, {n}, 5), {n}), ("Chain", (8, {n}), {n})):
    model = getattr(generated, cls)(*args)
    model(x)
    with np.load(f"{{cls}}_weights.npz") as w:
        model.set_weights([w[f"a{{i}}"] for i in range(len(w.files))])
    np.save(f"{{cls}}_out.npy", np.asarray(model(x, training=False)))
'''


def _load(src: str, name: str):
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(src, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def translated():
    return translate(SRC, "blocks.py", "keras")


def test_repeated_blocks_print_as_a_list_and_a_loop(translated):
    tr = translated
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert 'self.layers_ = [Layer(d, name=f"layers_{i}") for i in range(n_layers)]' in tr.text
    assert 'self.blocks = [Layer(d, name=f"blocks_{i}") for i in range(depth)]' in tr.text
    assert "for block in self.layers_:" in tr.text and "for block in self.blocks:" in tr.text


def test_the_reader_traces_two_blocks_not_a_placeholder_count(translated):
    """The count is traced with two blocks (frontend_ast/torch/repeated_blocks COUNT_PLACEHOLDER),
    not a placeholder prime's hundred: the Keras class and the weights take any count."""
    for md in translated.program.models:
        if md.class_name in ("Stack", "Chain"):
            items = {n.from_torch.block_call[0] for n in md.graph.nodes if n.from_torch.block_call}
            assert items == ({"layers.0", "layers.1"} if md.class_name == "Stack" else {"blocks.0", "blocks.1"})


#: fewer items than traced (1), more (3): the weights of the untraced items follow the first one's
@pytest.mark.parametrize("n", [1, 3])
def test_repeated_blocks_equal_torch_for_the_callers_count(translated, n, tmp_path):
    import keras
    import torch

    tr = translated
    tmod, kmod = _load(SRC, f"torch_repeated_{n}"), _load(tr.text, f"keras_repeated_{n}")
    x = np.random.RandomState(n).randn(4, 8).astype("float32")
    np.save(tmp_path / "x.npy", x)
    expected = {}
    for cls, args in (("Stack", (8, n, 5)), ("Chain", (8, n))):
        md = next(m for m in tr.program.models if m.class_name == cls)
        model = getattr(tmod, cls)(*args)
        randomize_torch(model)
        model.eval()
        kmodel = getattr(kmod, cls)(*args)
        kmodel(x)
        state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        assert f"{'layers' if cls == 'Stack' else 'blocks'}.{n - 1}.lin.weight" in state
        for name, arrays in keras_weights(md.graph, state).items():  # (torch's blocks.0., blocks.1. names)
            keras_layer(kmodel, md.graph, name).set_weights(arrays)
        with torch.no_grad():
            expected[cls] = model(torch.from_numpy(x)).numpy()
        got = keras.ops.convert_to_numpy(kmodel(x, training=False))
        assert got.shape == expected[cls].shape
        assert float(np.max(np.abs(got - expected[cls]))) <= 1e-4
        assert len(kmodel.layers_ if cls == "Stack" else kmodel.blocks) == n
        np.savez(tmp_path / f"{cls}_weights.npz", **{f"a{i}": w for i, w in enumerate(kmodel.get_weights())})
    # the generated module run as a program in its own interpreter, on the same weights
    (tmp_path / "generated.py").write_text(tr.text)
    (tmp_path / "run.py").write_text(RUN.format(n=n))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    p = program_runner.run([sys.executable, "run.py"], capture_output=True, text=True, timeout=600,
                           cwd=tmp_path, env=env, preload=("torch", "tensorflow"))
    assert p.returncode == 0, p.stderr[-3000:]
    for cls, want in expected.items():
        assert float(np.max(np.abs(np.load(tmp_path / f"{cls}_out.npy") - want))) <= 1e-4


@pytest.mark.parametrize("src", [BY_INDEX, COUNTED_TWICE], ids=["built_by_index", "count_used_elsewhere"])
def test_other_repetitions_keep_the_refusal(src):
    tr = translate(src, "blocks.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any("Chain" in m and "depth" in m and "needs their numbers" in m for m in messages), messages
    assert not any("Stack" in m for m in messages), messages


#: an initialisation hook reading ``module.bias`` (minGPT's ``_init_weights``): the reader's
#: look at the layer's parameter shapes is not a use of the width's number
WITH_INIT = SRC.replace("""        self.head = nn.Linear(d, 3)
""", """        self.head = nn.Linear(d, 3)
        self.apply(self._init)

    def _init(self, module):
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
""")


def test_an_init_hook_reading_a_layers_bias_keeps_the_width_free():
    tr = translate(WITH_INIT, "blocks.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert 'self.blocks = [Layer(d, name=f"blocks_{i}") for i in range(depth)]' in tr.text
    chain = tr.text.split("class Chain")[1]
    assert "raise NotImplementedError" not in chain.split("def call")[0]


def test_checkpoint_converter_refuses_a_list_of_blocks(translated, tmp_path):
    """The .weights.h5 writer does not know how Keras keys a list's layers: refused, not a file
    that loads wrong (the weights are set in Python: keras_weights)."""
    from transpiler.weights.convert import torch_source_to_keras
    from transpiler.weights.errors import CheckpointError

    md = next(m for m in translated.program.models if m.class_name == "Chain")
    state = {e.key: np.zeros(1, "float32") for e in md.graph.weight_plan.source_state}
    with pytest.raises(CheckpointError, match="list of repeated blocks"):
        torch_source_to_keras(md.graph, "chain.pt", str(tmp_path / "chain.weights.h5"), state=state)
