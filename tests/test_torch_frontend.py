"""The PyTorch frontend: IR facts, diagnostics, the Keras printer's output shape, the CLI."""

from __future__ import annotations

import re

import ast
import contextlib
import io
import os
import subprocess
import sys
import textwrap

import pytest

from transpiler.frontend_ast.torch import modules as torch_modules
from transpiler.frontend_ast.keras.frontend import FrontendError
from transpiler.frontend_ast.torch.frontend import read_torch
from transpiler.ir import ops as ops_table
from transpiler.printers.keras import ops as keras_ops
from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(__file__))
CNN = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    INPUT_SHAPE = (1, 28, 28)


    class Net(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)  # keeps 28x28
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(8 * 14 * 14, num_classes)

        def forward(self, x):
            x = self.pool(F.relu(self.bn(self.conv1(x))))
            x = x.view(x.size(0), -1)
            return self.fc(x)


    def build_model(num_classes=10):
        return Net(num_classes)
''')


def _graph(src: str, i: int = 0):
    program = read_torch(src, "m.py")
    return program, program.models[i].graph


def test_module_subclass_becomes_a_channels_first_graph():
    program, g = _graph(CNN)
    md = program.models[0]
    assert (md.builder, md.class_name) == ("build_model", "Net")
    assert [n.op for n in g.nodes] == ["conv2d", "batch_norm", "relu", "max_pool2d", "flatten", "dense"]
    assert g.inputs[0].shape == (None, 1, 28, 28) and g.inputs[0].layout == "NCHW"
    assert [n.name for n in g.nodes if n.source_name] == ["conv1", "bn", "pool", "fc"]  # F.relu: none
    assert g.nodes[0].attrs["padding"] == ((1, 1), (1, 1))


def test_torch_defaults_in_the_unified_spelling():
    """BatchNorm momentum is the fraction kept (torch 0.1 → 0.9), torch's eps is explicit."""
    _, g = _graph(CNN)
    bn = next(n for n in g.nodes if n.op == "batch_norm")
    assert bn.attrs["momentum"] == pytest.approx(0.9)
    assert bn.attrs["epsilon"] == 1e-5
    assert bn.attrs["axis"] == 1


def test_leaky_relu_and_layer_norm_defaults():
    src = CNN.replace("x = self.pool(F.relu(self.bn(self.conv1(x))))",
                      "x = self.pool(nn.functional.leaky_relu(self.bn(self.conv1(x))))")
    _, g = _graph(src)
    assert next(n for n in g.nodes if n.op == "leaky_relu").attrs["negative_slope"] == 0.01
    layer = torch_modules.recognize("LayerNorm", [16], {})
    assert (layer.op, layer.attrs["epsilon"], layer.attrs["axis"]) == ("layer_norm", 1e-5, (-1,))


def test_keras_pipeline_channels_last_and_flatten_absorbed():
    tr = translate(CNN, "m.py", "keras")
    g = tr.program.models[0].graph
    assert g.inputs[0].shape == (None, 28, 28, 1) and g.inputs[0].layout == "NHWC"
    assert g.layouts.transposes == 0
    bn = next(n for n in g.nodes if n.op == "batch_norm")
    assert bn.attrs["axis"] == -1
    fc = next(n for n in g.nodes if n.op == "dense")
    assert fc.param_transforms["kernel"] == [("permute_rows", ((8, 14, 14), (1, 2, 0)))]
    conv = next(n for n in g.nodes if n.op == "conv2d")
    assert conv.attrs["padding"] == "same"


def test_printed_keras_is_idiomatic():
    text = translate(CNN, "m.py", "keras").text
    tree = ast.parse(text)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names} | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "keras" in imported and not any(m and m.startswith("torch") for m in imported)
    assert 'keras.Input(shape=(28, 28, 1), name="x")' in text
    flat = "".join(text.split())
    assert 'layers.Conv2D(8,3,padding="same",name=' in flat  # Keras' own initializers (default)
    exact = "".join(translate(CNN, "m.py", "keras", exact=True).text.split())
    assert 'layers.Conv2D(8,3,padding="same",kernel_initializer=torch_kernel_init()' in exact
    assert "bias_initializer=torch_uniform_init(9)" in exact  # torch's U(±1/sqrt(fan_in)), explicit
    assert 'layers.BatchNormalization(momentum=0.9,epsilon=1e-05,name="bn")' in flat
    assert "# keeps 28x28" in text
    assert "def build_model(num_classes=10):" in text
    assert translate(CNN, "m.py", "keras").text == text  # deterministic


def test_plain_chain_is_sequential():
    src = textwrap.dedent('''
        import torch.nn as nn

        INPUT_SHAPE = (4,)


        def build_model():
            return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    ''')
    text = translate(src, "m.py", "keras").text
    assert "keras.Sequential(" in text and "keras.Model(" not in text
    assert 'layers.Dense(8, name="linear_0")' in text  # Keras' own initializers (--exact: torch's)
    assert 'layers.Dense(\n                8,\n' in translate(src, "m.py", "keras", exact=True).text


def test_input_shape_from_literal_data():
    src = CNN.replace("INPUT_SHAPE = (1, 28, 28)\n", "") + "\nout = build_model()(torch.randn(64, 1, 28, 28))\n"
    _, g = _graph(src)
    assert g.inputs[0].shape == (None, 1, 28, 28)


DATA_FED_MODELS = {
    # (the model, the data the program makes, expected input shape and dtype)
    "module_constants": (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lstm = nn.LSTM(N_FEATURES, 8, batch_first=True)\n\n"
        "    def forward(self, x):\n        out, _ = self.lstm(x)\n        return out[:, -1, :]\n",
        "x = torch.randn(90, 10, N_FEATURES)", (None, 10, 6), "float32"),
    "token_ids": (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.emb = nn.Embedding(VOCAB, 4, padding_idx=0)\n\n"
        "    def forward(self, tokens):\n        return self.emb(tokens).mean(dim=1)\n",
        "tokens = torch.randint(0, VOCAB, (128, SEQ_LEN))", (None, 12), "int64"),
    "generator_method": (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(1, 2, 5)\n\n    def forward(self, x):\n        return self.conv(x)\n",
        "rng = np.random.default_rng(0)\n    x = torch.tensor(rng.standard_normal((96, 1, 28, 28)))",
        (None, 1, 28, 28), "float32"),
    "generator_in_place": (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(10, 4)\n        self.bn = nn.BatchNorm1d(4, momentum=0.2)\n\n"
        "    def forward(self, x):\n        return self.bn(self.fc(x))\n",
        "x = np.random.RandomState(3).randn(200, 10).astype('float32')", (None, 10), "float32"),
    "depthwise_first_layer": (
        "def make():\n    return nn.Sequential(nn.Conv2d(3, 3, 3, groups=3), nn.Flatten())\n",
        "y = torch.randn(16, 3)\n    x = torch.randn(16, 3, 9, 9)", (None, 3, 9, 9), "float32"),
    "targets_made_first": (
        "def make():\n    return nn.Sequential(nn.Linear(8, 1))\n",
        "y = torch.randn(64, 1)\n    x = torch.randn(64, 8)", (None, 8), "float32"),
}


@pytest.mark.parametrize("case", list(DATA_FED_MODELS))
def test_input_shape_from_the_programs_own_data(case):
    """A new user's script declares no INPUT_SHAPE: the shape (and integer token ids) come
    from the data the script makes, sized by module constants, numpy generator methods or
    literals, the array the model's first layer accepts (each case was "cannot tell the
    model's input shape", or the targets' shape)."""
    model, data, shape, dtype = DATA_FED_MODELS[case]
    builder = "Net()" if model.startswith("class") else "make()"
    src = ("import numpy as np\nimport torch\nimport torch.nn as nn\n\nN_FEATURES = 6\nVOCAB = 50\n"
           f"SEQ_LEN = 12\n\n\n{model}\n\ndef build_model():\n    return {builder}\n\n\n"
           f"def main():\n    {data}\n")
    _, g = _graph(src)
    assert (g.inputs[0].shape, g.inputs[0].dtype) == (shape, dtype)


def test_missing_input_shape_is_a_clear_error():
    src = CNN.replace("INPUT_SHAPE = (1, 28, 28)\n", "")
    program = read_torch(src, "m.py")
    assert not program.models
    msg = next(d for d in program.diagnostics if d.severity == "stub" and "build_model" in d.message)
    assert "INPUT_SHAPE" in msg.message and msg.span.line > 0


def test_unsupported_construct_is_a_stub_not_a_drop():
    src = CNN.replace("return self.fc(x)", "return self.fc(x) * torch.exp(x[:, ::-1])")
    tr = translate(src, "m.py", "keras")
    stub = next(d for d in tr.stubs if "build_model" in d.message)
    assert stub.span.line == src.splitlines().index(
        "        return self.fc(x) * torch.exp(x[:, ::-1])") + 1
    assert "raise NotImplementedError" in tr.text


def test_untranslated_training_code_is_stubbed_and_reported():
    src = CNN + textwrap.dedent('''

        def train(model):
            opt = torch.optim.LBFGS(model.parameters())
            return opt
    ''')
    tr = translate(src, "m.py", "keras")
    stub = next(d for d in tr.stubs if "LBFGS" in d.message)
    assert stub.span.line == src.splitlines().index("    opt = torch.optim.LBFGS(model.parameters())") + 1
    assert "# | opt = torch.optim.LBFGS(model.parameters())" in tr.text
    assert "raise NotImplementedError(" in tr.text and '"transpiler: m.py:28:5: torch.optim.LBFGS' in tr.text


def test_module_list_and_nested_modules_named_by_path():
    src = textwrap.dedent('''
        import torch.nn as nn

        INPUT_SHAPE = (4,)


        class Block(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.fc = nn.Linear(width, width)

            def forward(self, x):
                return x + self.fc(x)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block(4) for _ in range(2)])

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x


        def build_model():
            return Net()
    ''')
    _, g = _graph(src)
    assert [n.from_torch.path for n in g.nodes if n.op == "dense"] == ["blocks.0.fc", "blocks.1.fc"]
    assert [n.name for n in g.nodes if n.op == "dense"] == ["blocks_0_fc", "blocks_1_fc"]


def test_stacked_rnn_expands_per_layer():
    src = textwrap.dedent('''
        import torch.nn as nn

        INPUT_SHAPE = (10, 3)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True, dropout=0.1)

            def forward(self, x):
                out, (h, c) = self.lstm(x)
                return h[-1]


        def build_model():
            return Net()
    ''')
    _, g = _graph(src)
    assert [n.op for n in g.nodes] == ["lstm", "dropout", "lstm"]
    assert g.nodes[0].attrs["return_sequences"] and not g.nodes[2].attrs["return_sequences"]
    assert g.inputs[0].layout == "NWC"
    tr = translate(src, "m.py", "keras")
    keys = [e.key for e in tr.program.models[0].graph.weight_plan.source_state]
    assert "lstm.weight_ih_l1" in keys and "lstm.bias_hh_l0" in keys


def test_every_recogniser_op_has_a_keras_emitter():
    for name, reg in torch_modules.registered_modules().items():
        for op in reg.ops:
            ops_table.get(op)
            assert keras_ops.has_emitter(op), f"nn.{name} → {op} has no Keras emitter"
    for name, reg in torch_modules.registered_functions().items():
        for op in reg.ops:
            assert keras_ops.has_emitter(op), f"{name} → {op} has no Keras emitter"


def test_translation_imports_no_framework():
    code = ("import sys\nfrom transpiler.translate import translate\n"
            f"translate(open({os.path.join(ROOT, 'corpus', 'torch', 'mnist_cnn.py')!r}).read(), 'm.py', 'keras')\n"
            "bad = [m for m in ('torch', 'tensorflow', 'keras') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_syntax_error_has_a_location():
    with pytest.raises(FrontendError) as info:
        read_torch("import torch\ndef f(:\n", "bad.py")
    assert info.value.span.line == 2


# ---------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------
def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "transpiler", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_default_output_name(tmp_path):
    src = tmp_path / "net.py"
    src.write_text(CNN)
    r = _cli(str(src), "--to", "keras")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "net_keras.py").exists()


def test_cli_weights_loadable_by_keras(tmp_path):
    import numpy as np

    expected, got = _cli_weights_to_keras(tmp_path, CNN, "net",
                                          np.random.RandomState(0).randn(2, 1, 28, 28).astype("float32"))
    assert np.max(np.abs(expected - got)) <= 1e-4


def test_cli_weights_wrong_checkpoint_names_the_tensor(tmp_path):
    import torch

    src = tmp_path / "net.py"
    src.write_text(CNN)
    ckpt = tmp_path / "other.pt"
    torch.save({"conv1.weight": torch.zeros(8, 1, 3, 3)}, ckpt)
    r = _cli(str(src), "--to", "keras", "--weights", str(ckpt), "--weights-out", str(tmp_path / "w.weights.h5"))
    assert r.returncode == 2
    assert "keys match the state_dict of no model" in r.stderr
    assert "Traceback" not in r.stderr


def test_directory_mode_to_keras(tmp_path):
    (tmp_path / "net.py").write_text(CNN)
    (tmp_path / "keras_script.py").write_text("import keras\nmodel = keras.Sequential([])\n")
    r = _cli(str(tmp_path), "--to", "keras")
    assert r.returncode == 0, r.stderr
    out = tmp_path.parent / f"{tmp_path.name}_keras"  # a program's folder goes beside it, names kept
    assert (out / "net.py").exists() and not (tmp_path / "net_keras.py").exists()
    assert "does not import torch" in r.stderr + r.stdout
    assert (out / "keras_script.py").read_text() == (tmp_path / "keras_script.py").read_text()  # copied
    r = _cli(str(tmp_path), "--to", "keras")  # again: the same outputs, nothing translated twice
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["keras_script.py", "net.py"]


def test_support_table_in_the_docs_matches_the_registry():
    with open(os.path.join(ROOT, "docs", "torch_to_keras.md"), encoding="utf-8") as fh:
        text = fh.read()
    marker = "<!-- generated: python -m transpiler.frontend_ast.torch.modules -->\n"
    assert text.split(marker, 1)[1] == torch_modules.render_support_table()



def _cli_weights_to_keras(tmp_path, source: str, name: str, x):
    """``--to keras --weights``: the torch model with random weights and the generated Keras
    model loading the converted ``.weights.h5``; returns both outputs on channels-first ``x``."""
    import torch  # noqa: F401  (first)
    import numpy as np

    from torch_keras_harness import load_source, randomize_torch

    src = tmp_path / f"{name}.py"
    src.write_text(source)
    model = load_source(source).build_model()
    randomize_torch(model)
    model.eval()
    ckpt = tmp_path / f"{name}.pt"
    torch.save(model.state_dict(), ckpt)
    out = tmp_path / f"{name}_keras.py"
    r = _cli(str(src), "--to", "keras", "-o", str(out), "--weights", str(ckpt), "--weights-out",
             str(tmp_path / f"{name}.weights.h5"))
    assert r.returncode == 0, r.stderr
    kmodel = load_source(out.read_text(), f"cli_keras_{name}").build_model()
    kmodel.load_weights(str(tmp_path / f"{name}.weights.h5"))
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    return expected, np.asarray(kmodel(np.moveaxis(x, 1, -1) if x.ndim == 4 else x, training=False))


def test_cli_attention_weights_loadable_by_keras(tmp_path):
    """nn.MultiheadAttention's packed in_proj_weight (and separate q/k/v weights with kdim,
    vdim) split into Keras' query/key/value einsum kernels in the .weights.h5."""
    import numpy as np

    with open(os.path.join(ROOT, "tests", "golden_keras", "attention_block", "input.py"), encoding="utf-8") as fh:
        source = fh.read()
    expected, got = _cli_weights_to_keras(tmp_path, source, "block",
                                          np.random.RandomState(0).randn(2, 6, 8).astype("float32"))
    assert np.max(np.abs(expected - got)) <= 1e-5


def test_cli_weights_of_own_parameters_loadable_by_keras(tmp_path):
    """A module's own nn.Parameters and buffer (ModelWeight layers), F.linear's parameters (a
    Dense) go through the .weights.h5 the model loads."""
    import numpy as np

    with open(os.path.join(ROOT, "tests", "golden_keras", "own_parameters", "input.py"), encoding="utf-8") as fh:
        source = fh.read()
    expected, got = _cli_weights_to_keras(tmp_path, source, "own",
                                          np.random.RandomState(0).randn(3, 6).astype("float32"))
    assert np.max(np.abs(expected - got)) <= 1e-5


BRANCHING = '''import torch
import torch.nn as nn

INPUT_SHAPE = (6,)


class Net(nn.Module):
    """Layers whose attributes sort before and after ``layers`` (Keras' saver puts the
    first at the top of the file, the others under ``layers/``), one only training calls,
    one only inference calls, an LSTM (weights under ``cell/``)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.bn = nn.BatchNorm1d(8)
        self.zeta = nn.Linear(8, 8)
        self.alpha = nn.Linear(8, 8)
        self.rnn = nn.LSTM(2, 3, batch_first=True)
        self.mixer = nn.Linear(12, 4)

    def forward(self, x):
        h = self.bn(torch.relu(self.enc(x)))
        if self.training:
            h = self.zeta(h)
        else:
            h = self.alpha(h)
        out, _ = self.rnn(h.view(-1, 4, 2))
        return self.mixer(out.flatten(1))


def build_model():
    return Net()
'''


def test_cli_weights_of_a_subclass_loadable_by_keras(tmp_path):
    """A forward branching on self.training → a keras.Model subclass; its converted
    .weights.h5 has the groups Keras' saver gives a subclass (attribute paths), so
    load_weights fills every layer, also those only one mode calls: both modes agree."""
    import torch  # noqa: F401  (first)
    import numpy as np

    from torch_keras_harness import load_source, randomize_torch

    src = tmp_path / "net.py"
    src.write_text(BRANCHING)
    model = load_source(BRANCHING).build_model()
    randomize_torch(model)
    ckpt = tmp_path / "net.pt"
    torch.save(model.state_dict(), ckpt)
    out = tmp_path / "net_keras.py"
    r = _cli(str(src), "--to", "keras", "-o", str(out), "--weights", str(ckpt), "--weights-out",
             str(tmp_path / "net.weights.h5"))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "class Net(keras.Model):" in text and "if training:" in text
    kmodel = load_source(text, "cli_keras_branching").build_model()
    kmodel.load_weights(str(tmp_path / "net.weights.h5"))
    x = np.random.RandomState(0).randn(5, 6).astype("float32")
    for training in (False, True):
        model.train(training)
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        got = np.asarray(kmodel(x, training=training))
        assert np.max(np.abs(expected - got)) <= 1e-5, training
    # the same file as Keras' own saver writes for the model: the same groups
    import h5py

    kmodel.save_weights(str(tmp_path / "keras_saved.weights.h5"))

    def groups(path):
        with h5py.File(path) as f:
            found = []
            f.visititems(lambda name, obj: found.append((name, obj.shape if hasattr(obj, "shape") else None)))
            return sorted(found)

    assert groups(tmp_path / "net.weights.h5") == groups(tmp_path / "keras_saved.weights.h5")


def test_data_shapes_with_unpacked_sizes_are_kept():
    """``torch.randn(4, *INPUT_SHAPE)`` → ``np.random.standard_normal((4, *INPUT_SHAPE))``
    (the unpacked sizes were dropped: a (4,) array)."""
    src = (
        "import torch\nimport torch.nn as nn\n\nINPUT_SHAPE = (3, 8)\n\n\n"
        "def build_model():\n    return nn.Sequential(nn.Flatten(), nn.Linear(24, 2))\n\n\n"
        "def main():\n    model = build_model()\n    x = torch.randn(4, *INPUT_SHAPE)\n"
        "    noise = torch.rand(*INPUT_SHAPE)\n    z = torch.zeros(2, *INPUT_SHAPE, 1)\n"
        "    return model(x), noise, z\n")
    tr = translate(src, "shapes.py", "keras")
    assert 'np.random.standard_normal((4, *INPUT_SHAPE)).astype("float32")' in tr.text, tr.text
    assert 'np.random.random_sample((*INPUT_SHAPE,)).astype("float32")' in tr.text
    assert 'np.zeros((2, *INPUT_SHAPE, 1), dtype="float32")' in tr.text


def test_map_style_dataset_random_split_and_device_translate_and_run(tmp_path, monkeypatch):
    """A Dataset subclass (kept, items as numpy arrays), random_split, DataLoaders over
    its parts (DatasetLoader), torch.device and .to(device) (gone): the program runs, and
    the loader's batches are torch's (shuffle off)."""
    import torch  # noqa: F401  (first)
    import numpy as np

    from torch_keras_harness import load_source

    path = os.path.join(ROOT, "tests", "golden_keras", "custom_dataset", "input.py")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    tr = translate(source, "custom_dataset.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "class TabularDataset:" in tr.text and "device = Device(" in tr.text and ".to(device)" not in tr.text
    gen = load_source(tr.text, "custom_dataset_keras")
    src = load_source(source, "custom_dataset_torch")
    # the same items, the same batches
    t_loader = torch.utils.data.DataLoader(src.TabularDataset(n=10), batch_size=4)
    k_loader = gen.DatasetLoader(gen.TabularDataset(n=10), batch_size=4)
    assert len(k_loader) == len(t_loader) == 3
    for (tx, ty), (kx, ky) in zip(t_loader, k_loader):
        np.testing.assert_array_equal(tx.numpy(), kx)
        np.testing.assert_array_equal(ty.numpy(), ky)
    # random_split's sizes, fractions too
    for lengths in ([7, 3], [0.8, 0.2], [0.34, 0.33, 0.33]):
        t_parts = torch.utils.data.random_split(src.TabularDataset(n=10), lengths)
        k_parts = gen.random_split(gen.TabularDataset(n=10), lengths)
        assert [len(p) for p in k_parts] == [len(p) for p in t_parts], lengths
        seen = sorted(int(i) for p in k_parts for i in p.indices)
        assert seen == list(range(10))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["custom_dataset_keras.py", "--epochs", "2"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        gen.main()
    lines = printed.getvalue().splitlines()
    assert len(lines) == 2 and all("train" in line and "val" in line for line in lines), lines
    assert (tmp_path / "mlp.weights.h5").exists()


RNN_WITH_STATE = textwrap.dedent('''
    import torch
    import torch.nn as nn

    INPUT_SHAPE = (7, 4)


    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.GRU(4, 8, batch_first=True)
            self.dec = nn.GRU(4, 8, batch_first=True)
            self.fc = nn.Linear(8, 2)

        def forward(self, x):
            _, h = self.enc(x)
            out, _ = self.dec(x, h)
            return self.fc(out[:, -1])


    def build_model():
        return Seq2Seq()
''')


@pytest.mark.parametrize("replacement", ["out, _ = self.dec(x, h)", "out, _ = self.dec(x, hx=h)"],
                         ids=["encoder_state", "hx_keyword"])
def test_rnn_initial_state_is_keras_initial_state(replacement):
    """An RNN given an initial state (the encoder's h_n) was read as if called on x alone
    (wrong numbers, the encoder's weights gone), then a stub; now Keras' initial_state=
    (numbers: test_numeric_torch_to_keras)."""
    tr = translate(RNN_WITH_STATE.replace("out, _ = self.dec(x, h)", replacement), "m.py", "keras")
    assert not tr.stubs, tr.stubs
    assert re.search(r"\)\(x, initial_state=\[\w+\]\)", tr.text), tr.text


def test_rnn_initial_state_computed_from_zeros_is_a_stub():
    """Zeros made in forward and then computed with are no initial state it reads."""
    tr = translate(RNN_WITH_STATE.replace("out, _ = self.dec(x, h)",
                                          "out, _ = self.dec(x, torch.zeros(1, x.size(0), 8) + 1)"), "m.py", "keras")
    assert [d.message.split(":")[0] for d in tr.stubs] == ["build_model"], tr.stubs


@pytest.mark.parametrize("expr", ["torch.cat([x, torch.zeros(x.size(0), 7, 4)], 2)",
                                  "torch.stack([x, 3], 1)", "torch.add(x, [1])"])
def test_non_tensor_in_a_tensor_list_is_a_stub(expr):
    """``torch.cat``/``torch.stack``/``torch.add`` of something that is not a tensor: a stub
    (an AttributeError inside the translator before)."""
    src = RNN_WITH_STATE.replace("_, h = self.enc(x)", f"x = {expr}").replace("self.dec(x, h)", "self.dec(x)")
    tr = translate(src, "m.py", "keras")
    assert [d.message.split(":")[0] for d in tr.stubs] == ["build_model"], tr.stubs


def test_expand_of_an_own_parameter_to_the_batch_is_a_stub():
    """``self.cls_token.expand(b, -1, -1)`` (a (1, 1, C) weight made one per example): a stub,
    not the weight passed on unexpanded (a Concatenate failing at run time)."""
    src = textwrap.dedent('''
        import torch
        import torch.nn as nn

        INPUT_SHAPE = (3, 16, 16)


        class ViT(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Conv2d(3, 16, 4, stride=4)
                self.cls = nn.Parameter(torch.zeros(1, 1, 16))
                self.head = nn.Linear(16, 3)

            def forward(self, x):
                x = self.proj(x).flatten(2).transpose(1, 2)
                x = torch.cat((self.cls.expand(x.shape[0], -1, -1), x), dim=1)
                return self.head(x[:, 0])


        def build_model():
            return ViT()
    ''')
    tr = translate(src, "vit.py", "keras")
    assert [d.message.split(":")[0] for d in tr.stubs] == ["build_model"], tr.stubs
    assert "own parameter to the batch" in tr.stubs[0].message


def test_attribute_assignment_at_module_level_is_no_internal_error():
    """``somemodule.attr = f`` at module level (monkey-patching): the script is read, the
    statement is the program's (it was an internal error)."""
    src = """
import torch.nn as nn
import collections

collections.helper_hook = print

INPUT_SHAPE = (4,)


def build_model():
    return nn.Sequential(nn.Linear(4, 2))
"""
    tr = translate(src, "patch.py", "keras")
    assert "keras.Sequential" in tr.text and "collections.helper_hook = print" in tr.text
