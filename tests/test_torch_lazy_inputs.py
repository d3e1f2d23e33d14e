"""torch modules whose input shape nothing in the file fixes (issue 19 items 1 and 5): a
library file that only defines ``nn.Module`` classes, a module over sequences of any length.
The reader takes the rank, dtype and channels/features from the first layer and leaves the
other sizes unknown (frontend_ast/torch/lazy_inputs.py); the Keras model takes any size.

Numeric checks: the Keras model equals the torch module on the same weights and inputs, at
two different spatial sizes / sequence lengths (the same Keras model object, so nothing was
specialised to one size), images channels-last on the Keras side."""

from __future__ import annotations

import re

import os

import numpy as np
import pytest

from torch_keras_harness import load_source, randomize_torch  # (imports torch first)
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "corpus", "torch", "library")


def _read(name: str) -> str:
    with open(os.path.join(LIBRARY, name)) as fh:
        return fh.read()


def _compare(src: str, path: str, cls: str, sizes: list[dict[int, int]], batch: int = 2):
    """Max |torch - Keras| of class ``cls`` of ``src`` over inputs whose unknown axes take
    each of ``sizes`` (axis of the torch input → size) in turn."""
    import keras
    import torch

    tr = translate(src, path, "keras")
    assert not [d for d in tr.stubs if d.message.startswith(f"{cls}:")], [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if m.class_name == cls)
    model = getattr(load_source(src), cls)()
    randomize_torch(model)
    model.eval()
    kmodel = getattr(load_source(tr.text, "keras_model_under_test"), cls)()
    value = md.graph.inputs[0]
    source_shape = md.graph.origin.input_shapes[0]
    rng = np.random.RandomState(0)
    inputs = []
    for fill in sizes:
        shape = [batch] + [fill[i] if d is None else d for i, d in enumerate(source_shape[1:], start=1)]
        assert None not in shape, (source_shape, fill)
        if value.dtype.startswith("int"):
            x = rng.randint(0, 50, size=shape).astype("int64")
            xk = x
        else:
            x = rng.randn(*shape).astype("float32")
            xk = np.moveaxis(x, 1, -1) if md.graph.layouts.inputs[0] in ("NWC", "NHWC", "NDHWC") else x
        inputs.append((x, xk))
    assert not kmodel.built  # (a subclass: its layers build on the first call, of any size)
    kmodel(inputs[0][1])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    errors = []
    for x, xk in inputs:
        with torch.no_grad():
            y_t = model(torch.from_numpy(x)).numpy()
        y_k = keras.ops.convert_to_numpy(kmodel(xk, training=False))
        src_layout, dst_layout = md.graph.layouts.outputs[0], md.graph.layouts.target_outputs[0]
        if src_layout and dst_layout and src_layout != dst_layout:
            y_k = np.moveaxis(y_k, -1, 1)  # (a feature map: Keras returns it channels-last)
        assert y_t.shape == y_k.shape, (y_t.shape, y_k.shape)
        errors.append(float(np.max(np.abs(y_t - y_k))))
    return max(errors), tr


@pytest.mark.parametrize("cls,sizes", [
    ("Denoiser", [{2: 8, 3: 12}, {2: 16, 3: 6}]),
    ("SmallClassifier", [{2: 10, 3: 10}, {2: 7, 3: 13}]),
    # reflection padding (nn.ReflectionPad2d, F.pad(mode="reflect")), InstanceNorm2d with and
    # without affine terms, a crop of unknown sizes by negative stops
    ("StyleBlock", [{2: 9, 3: 6}, {2: 5, 3: 14}]),
])
def test_library_conv_models_equal_torch_at_any_image_size(cls, sizes):
    err, tr = _compare(_read("conv_models.py"), "conv_models.py", cls, sizes)
    assert err <= 1e-4, err
    if cls == "Denoiser":  # (its ConvBlocks are the file's own Layer subclass, made with torch's arguments)
        assert 'self.down = ConvBlock(3, 16, name="down")' in tr.text and "h = self.down(x)" in tr.text
    # a subclass building on its first call (no keras.Input: the sizes are unknown)
    assert f"class {cls}(keras.Model):" in tr.text and "keras.Input" not in tr.text


@pytest.mark.parametrize("cls,sizes", [
    ("Tagger", [{1: 5}, {1: 11}]),
    ("FeatureEncoder", [{2: 6}, {2: 17}]),
])
def test_sequence_models_equal_torch_at_any_length(cls, sizes):
    err, _ = _compare(_read("sequence_models.py"), "sequence_models.py", cls, sizes)
    assert err <= 1e-4, err


def test_a_library_file_reports_each_class_translated_without_an_input_shape():
    tr = translate(_read("conv_models.py"), "conv_models.py", "keras")
    notes = [d.message for d in tr.program.diagnostics if "no input shape in this file" in d.message]
    # (a library file: ConvBlock, which Denoiser nests, is translated on its own too, for its
    # constructor's sizes: another file may import it)
    assert sorted(n.split(":")[0] for n in notes) == ["ConvBlock", "Denoiser", "SmallClassifier", "StyleBlock",
                                                      "SubPixelUpscaler"]
    # (a block Denoiser nests: a Layer subclass taking the constructor's parameters)
    assert "class ConvBlock(layers.Layer):" in tr.text and "def __init__(self, cin, cout, **kwargs):" in tr.text
    assert any("(N, 3, H, W) float32" in n and "nn.Conv2d(3, ...)" in n for n in notes)
    assert not tr.stubs, [str(d) for d in tr.stubs]


FLATTENED = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 10, kernel_size=5)
        self.fc = nn.Linear(1440, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv(x), 2))
        x = x.view(x.size(0), -1)
        return self.fc(x)
'''


def test_flattening_unknown_spatial_sizes_is_a_stub_naming_them():
    """A view after convs needs H and W, which nothing in the file gives: a stub saying so
    (never a crash, never a guessed size)."""
    tr = translate(FLATTENED, "net.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any(m.startswith("Net: .view(x.size(0), -1) of a tensor of shape (N, 10, H, W)") for m in messages), \
        messages
    assert "def Net(" in tr.text and "NotImplementedError" in tr.text


def test_a_declared_input_shape_still_wins_over_the_first_layer():
    tr = translate(FLATTENED + "\nINPUT_SHAPE = (1, 28, 28)\n", "net.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "keras.Input(shape=(28, 28, 1)" in tr.text
    assert not [d for d in tr.program.diagnostics if "no input shape" in d.message]


def _compare_built(src: str, path: str, cls: str, args: tuple, inputs: list, batch: int = 2):
    """Max |torch - Keras| of ``cls(*args)`` (a class the file builds nowhere, translated for
    its constructor's sizes) on each input shape of ``inputs`` (without the batch axis)."""
    import keras
    import torch

    tr = translate(src, path, "keras")
    assert not [d for d in tr.stubs if d.message.startswith(f"{cls}:")], [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if m.class_name == cls)
    model = getattr(load_source(src), cls)(*args)
    randomize_torch(model)
    model.eval()
    kmodel = getattr(load_source(tr.text, "keras_model_under_test"), cls)(*args)
    rng = np.random.RandomState(0)
    pairs = []
    for shape in inputs:
        if md.graph.inputs[0].dtype.startswith("int"):
            x = rng.randint(0, args[0], size=(batch, *shape)).astype("int64")
            xk = x
        else:
            x = rng.randn(batch, *shape).astype("float32")
            xk = np.moveaxis(x, 1, -1)
        pairs.append((x, xk))
    assert not kmodel.built  # (a subclass: its layers build on the first call, of any size)
    kmodel(pairs[0][1])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    errors = []
    for x, xk in pairs:
        with torch.no_grad():
            y_t = model(torch.from_numpy(x)).numpy()
        y_k = keras.ops.convert_to_numpy(kmodel(xk, training=False))
        src_layout, dst_layout = md.graph.layouts.outputs[0], md.graph.layouts.target_outputs[0]
        if src_layout and dst_layout and src_layout != dst_layout:
            y_k = np.moveaxis(y_k, -1, 1)  # (a feature map: Keras returns it channels-last)
        assert y_t.shape == y_k.shape, (y_t.shape, y_k.shape)
        errors.append(float(np.max(np.abs(y_t - y_k))))
    return max(errors), tr


def test_rnn_language_model_built_for_the_callers_sizes_equals_torch_at_any_length():
    """``RNNLanguageModel(ntoken, ninp, nhid)``: nothing in the file gives the sizes; the
    builder takes them, and equals torch for sizes other than those it was traced with."""
    src = _read("rnn_language_model.py")
    err, tr = _compare_built(src, "rnn_language_model.py", "RNNLanguageModel", (23, 6, 10), [(4,), (9,)])
    assert err <= 1e-4, err
    assert "class RNNLanguageModel(keras.Model):" in tr.text
    assert re.search(r"def __init__\(\s*self, ntoken, ninp, nhid, nlayers=2, dropout=0.2, \*\*kwargs\s*\):", tr.text)
    assert re.search(r"layers\.LSTM\(\s*nhid,", tr.text)  # (the size as its name, however black wraps it)
    # the layer count is structure: another nlayers is refused, never silently built with two
    assert "if (nlayers, dropout) != (2, 0.2):" in tr.text


def test_conv_head_built_for_the_callers_channels_equals_torch_channels_last():
    src = _read("rnn_language_model.py")
    err, tr = _compare_built(src, "rnn_language_model.py", "ConvHead", (4, 6), [(4, 5, 7), (4, 12, 3)])
    assert err <= 1e-4, err
    assert "class ConvHead(keras.Model):" in tr.text and "keras.Input" not in tr.text


DEEP = '''import torch.nn as nn


class Deep(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x).relu()
        return x
'''


def test_a_required_constructor_argument_used_as_a_number_is_a_stub_naming_it():
    """``range(depth)`` fixes the structure by the traced number: refused, never printed
    with the placeholder."""
    tr = translate(DEEP, "deep.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any(m.startswith("Deep: ") and "built for its constructor's depth as sizes" in m and "depth: range" in m
               for m in messages), messages
    assert not tr.program.models


@pytest.mark.parametrize("factor", [2, 3])
def test_sub_pixel_upscaler_equals_torch_for_the_callers_factor(factor):
    """nn.PixelShuffle (torch's channel order, channels-last) after a conv of ``3 * factor ** 2``
    filters, the factor a constructor size."""
    err, tr = _compare_built(_read("conv_models.py"), "conv_models.py", "SubPixelUpscaler", (factor,),
                             [(3, 5, 4), (3, 8, 11)])
    assert err <= 1e-4, err
    assert "class SubPixelUpscaler(keras.Model):" in tr.text and "def __init__(self, factor, **kwargs):" in tr.text
    assert "PixelShuffle(factor" in tr.text


def test_a_checkpoint_converted_for_a_class_building_on_its_first_call_loads_into_it(tmp_path, capsys):
    """``--weights model.pt --weights-out model.weights.h5`` for a library class printed as a
    subclass (no input shape): the file holds the layers under the subclass's attribute paths,
    ``load_weights`` after a first call takes it, and the model then equals torch (batch-norm
    statistics included) at an image size other than the one that built it."""
    import keras
    import torch

    from transpiler.cli import run

    src = _read("conv_models.py")
    model = load_source(src).Denoiser()
    randomize_torch(model)
    model.eval()
    (tmp_path / "conv_models.py").write_text(src)
    torch.save(model.state_dict(), tmp_path / "denoiser.pt")
    out = tmp_path / "conv_models_keras.py"
    assert run([str(tmp_path / "conv_models.py"), "--to", "keras", "-o", str(out), "--weights",
                str(tmp_path / "denoiser.pt"), "--weights-out", str(tmp_path / "denoiser.weights.h5")]) == 0
    err = capsys.readouterr().err
    assert "loadable with Denoiser(...).load_weights once a first call has built the model" in err, err
    kmodel = load_source(out.read_text(), "keras_model_under_test").Denoiser()
    kmodel(np.zeros((1, 8, 8, 3), "float32"))
    kmodel.load_weights(str(tmp_path / "denoiser.weights.h5"))
    x = np.random.RandomState(1).randn(2, 3, 10, 14).astype("float32")
    with torch.no_grad():
        y_t = model(torch.from_numpy(x)).numpy()
    y_k = np.moveaxis(keras.ops.convert_to_numpy(kmodel(np.moveaxis(x, 1, -1), training=False)), -1, 1)
    assert float(np.max(np.abs(y_t - y_k))) <= 1e-4


def _compare_multi(cls: str, args: tuple, shapes: list[tuple], batch: int = 2):
    """Max |torch - Keras| of ``cls(*args)`` of multi_input_models.py, a module of several
    inputs, on inputs of each of ``shapes`` (a torch shape per input, without the batch axis);
    the Keras model is called on the list of its inputs, images channels-last."""
    import keras
    import torch

    src = _read("multi_input_models.py")
    tr = translate(src, "multi_input_models.py", "keras")
    assert not [d for d in tr.stubs if d.message.startswith(f"{cls}:")], [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if m.class_name == cls)
    model = getattr(load_source(src), cls)(*args)
    randomize_torch(model)
    model.eval()
    kmodel = getattr(load_source(tr.text, "keras_model_under_test"), cls)(*args)
    rng = np.random.RandomState(0)
    cases = []
    for per_input in shapes:
        xs = [rng.randn(batch, *s).astype("float32") for s in per_input]
        cases.append((xs, [np.moveaxis(x, 1, -1) if x.ndim == 4 else x for x in xs]))
    assert not kmodel.built
    kmodel(cases[0][1])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    errors = []
    for xs, xks in cases:
        with torch.no_grad():
            y_t = model(*[torch.from_numpy(x) for x in xs]).numpy()
        y_k = keras.ops.convert_to_numpy(kmodel(xks, training=False))
        assert y_t.shape == y_k.shape, (y_t.shape, y_k.shape)
        errors.append(float(np.max(np.abs(y_t - y_k))))
    return max(errors), tr


def test_siamese_network_of_two_inputs_through_one_encoder_equals_torch():
    """``forward(self, input1, input2)``, each input handed to the shared encoder through
    ``forward_once``: each input's shape is what the encoder's first Conv2d implies; one
    encoder (its weights shared) reads both; any image size."""
    err, tr = _compare_multi("SiameseNet", (), [[(1, 8, 8), (1, 8, 8)], [(1, 11, 6), (1, 11, 6)]])
    assert err <= 1e-4, err
    assert "def call(self, inputs):" in tr.text and "input1, input2 = inputs" in tr.text
    assert tr.text.count("layers.Conv2D(8, 3") == 1  # (one encoder, called on both inputs)


def test_a_module_of_an_image_and_a_feature_vector_equals_torch():
    """Two inputs of different kinds: the image's shape from its Conv2d, the vector's from
    its Linear (a constructor size)."""
    err, tr = _compare_multi("ImageAndFeatures", (5, 4), [[(3, 6, 7), (5,)], [(3, 9, 4), (5,)]])
    assert err <= 1e-4, err
    assert "features (N, n_features) float32" in tr.text


PAIR = '''import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, a, b):
        return self.fc(torch.cat([a, b], 1))
'''


def test_inputs_first_handed_to_something_other_than_a_layer_are_a_stub_naming_them():
    """``torch.cat([a, b])`` says nothing of either input's size: a stub naming the inputs
    and the INPUT_SHAPE that gives them (never a guess)."""
    tr = translate(PAIR, "pair.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any(m.startswith("Pair: cannot tell the shapes of the model's inputs a, b") and
               "INPUT_SHAPE = ((...), (...))" in m for m in messages), messages
    tr = translate(PAIR + "\nINPUT_SHAPE = ((3,), (5,))\n", "pair.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]


BLOCKS = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + F.gelu(self.norm(self.fc(x)))


class Mix(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gate = nn.Linear(width, width)

    def forward(self, x, y):
        return torch.sigmoid(self.gate(x)) * y


class Tower(nn.Module):
    def __init__(self, features, width=8):
        super().__init__()
        self.inp = nn.Linear(features, width * 2)
        self.wide = Block(width * 2)
        self.shared = Block(width * 2)
        self.mix = Mix(width * 2)
        self.stack = nn.Sequential(Block(width * 2), Block(width * 2))
        self.out = nn.Linear(width * 2, 3)

    def forward(self, x):
        h = self.wide(self.inp(x))
        h = self.shared(self.shared(h))
        h = self.mix(h, h * 2.0)
        return self.out(self.stack(h))
'''


def test_blocks_a_subclass_holds_are_their_classes_where_the_call_is_one():
    """A block made with an expression of the class's parameters (``Block(width * 2)``) is the
    file's own Layer; one called twice is one attribute called twice (torch's shared weights);
    a block of two inputs and the blocks inside an nn.Sequential keep their layers inline.
    Equal to torch either way."""
    err, tr = _compare_built(BLOCKS, "blocks.py", "Tower", (5,), [(5,), (5,)])
    assert err <= 1e-4, err
    text = tr.text
    assert 'self.wide = Block(width * 2, name="wide")' in text and text.count("self.shared = Block(") == 1
    assert text.count("self.shared(") == 2  # (one attribute, called twice)
    assert "self.mix = Mix(" not in text and "self.stack_0 = Block(" not in text
