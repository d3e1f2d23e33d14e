"""torchvision networks in a PyTorch program (issue 19 items 1 and 5): ``torchvision.models.
resnet18(weights=None)`` read from its definition (frontend_ast/torch/zoo.py), edited the way
pytorch/examples' siamese_network edits it (``resnet.conv1 = nn.Conv2d(1, ...)``,
``nn.Sequential(*list(resnet.children())[:-1])``, ``resnet.fc.in_features``), in a module of
two inputs.

torchvision is not installed here: its stand-in in these tests is zoo.py's own definition run
by torch, which is checked first against torchvision's published parameter counts and
state_dict names; the translation is then checked against it numerically."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from torch_keras_harness import load_source, randomize_torch  # (imports torch first)
from transpiler.frontend_ast.torch import zoo
from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights


def _torchvision_stand_in() -> types.ModuleType:
    """A ``torchvision`` module whose ``models.resnet*`` are zoo.py's definitions."""
    import torch

    ns = {"_zoo_nn": torch.nn, "_zoo_torch": torch}
    exec(compile(zoo._SOURCE, "<zoo>", "exec"), ns)  # noqa: S102 - the definitions under test
    models = types.ModuleType("torchvision.models")
    for name, (block, expansion, counts) in zoo.RESNETS.items():
        def make(weights=None, num_classes=1000, _b=ns[block], _e=expansion, _c=counts):
            assert weights is None
            return ns["_ZooResNet"](_b, _e, list(_c), num_classes=num_classes)
        setattr(models, name, make)
    tv = types.ModuleType("torchvision")
    tv.models = models
    return tv


@pytest.mark.parametrize("name,params", [("resnet18", 11_689_512), ("resnet34", 21_797_672),
                                         ("resnet50", 25_557_032)])
def test_zoo_resnets_have_torchvisions_parameters_and_names(name, params):
    """The counts torchvision's model documentation lists, and its state_dict names."""
    model = getattr(_torchvision_stand_in().models, name)()
    assert sum(p.numel() for p in model.parameters()) == params
    keys = set(model.state_dict())
    assert {"conv1.weight", "bn1.running_var", "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
            "layer2.0.downsample.1.num_batches_tracked", "layer4.1.bn2.bias", "fc.weight", "fc.bias"} <= keys


SIAMESE = '''import torch
import torch.nn as nn
import torchvision


class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        self.resnet = torchvision.models.resnet18(weights=None)
        self.resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
        self.fc_in_features = self.resnet.fc.in_features
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, 1),
        )
        self.sigmoid = nn.Sigmoid()

    def forward_once(self, x):
        output = self.resnet(x)
        output = output.view(output.size()[0], -1)
        return output

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        output = self.fc(output)
        return self.sigmoid(output)
'''


def test_siamese_resnet18_edited_as_pytorch_examples_does_equals_torch(monkeypatch):
    import keras
    import torch

    monkeypatch.setitem(sys.modules, "torchvision", _torchvision_stand_in())
    tr = translate(SIAMESE, "siamese.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "class SiameseNetwork(keras.Model):" in tr.text and "torchvision" not in tr.text
    md = tr.program.models[0]
    model = load_source(SIAMESE).SiameseNetwork()
    randomize_torch(model, scale=0.05)
    model.eval()
    kmodel = load_source(tr.text, "keras_model_under_test").SiameseNetwork()
    rng = np.random.RandomState(0)
    cases = [[rng.rand(2, 1, s, s).astype("float32") for _ in range(2)] for s in (32, 40)]
    kmodel([np.moveaxis(x, 1, -1) for x in cases[0]])
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    for xs in cases:
        with torch.no_grad():
            y_t = model(*[torch.from_numpy(x) for x in xs]).numpy()
        y_k = keras.ops.convert_to_numpy(kmodel([np.moveaxis(x, 1, -1) for x in xs], training=False))
        assert y_t.shape == y_k.shape == (2, 1)
        assert float(np.max(np.abs(y_t - y_k))) <= 1e-4


def test_pretrained_torchvision_weights_are_a_stub_naming_them():
    src = SIAMESE.replace("resnet18(weights=None)", 'resnet18(weights="IMAGENET1K_V1")')
    tr = translate(src, "siamese.py", "keras")
    assert any("with pretrained weights" in d.message for d in tr.stubs), [str(d) for d in tr.stubs]


WHOLE = '''import torch
import torchvision.models as models

model = models.resnet18(weights=None, num_classes=10)
x = torch.randn(2, 3, 48, 40)
print(model(x).shape)
'''


def test_a_torchvision_network_as_the_whole_model_equals_torch(monkeypatch):
    """``model = models.resnet18(weights=None)`` at module level (imagenet's model): the network
    is the program's model, printed as a builder over the data's shape, equal to torch."""
    import keras
    import torch

    monkeypatch.setitem(sys.modules, "torchvision", _torchvision_stand_in())
    monkeypatch.setitem(sys.modules, "torchvision.models", sys.modules["torchvision"].models)
    tr = translate(WHOLE, "whole.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "torchvision" not in tr.text and "model = build_model()" in tr.text
    md = tr.program.models[0]
    model = load_source(WHOLE.replace("print(model(x).shape)\n", "")).model
    randomize_torch(model, scale=0.05)
    model.eval()
    kmodel = load_source(tr.text.split("\nx = ")[0], "keras_model_under_test").build_model()
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    x = np.random.RandomState(0).rand(2, 3, 48, 40).astype("float32")
    with torch.no_grad():
        y_t = model(torch.from_numpy(x)).numpy()
    y_k = keras.ops.convert_to_numpy(kmodel(np.moveaxis(x, 1, -1), training=False))
    assert y_t.shape == y_k.shape == (2, 10)
    assert float(np.max(np.abs(y_t - y_k))) <= 1e-4
