"""``add_module`` on the modules the torch reader builds (frontend_ast/torch/module_edits.py;
fast_neural_style's ``Vgg16`` fills empty ``nn.Sequential()`` slices with
``add_module(str(x), features[x])``). Before: a stub "module method .add_module() is not
supported". Now the children keep the names given (torch's state_dict keys), numerically
equal to torch on the same weights."""

from __future__ import annotations

import sys

import pytest
import torch  # (torch before Keras in one process)

from torch_keras_harness import check_torch_source
from transpiler.frontend_ast.torch import zoo
from transpiler.translate import translate

SRC = '''import torch
import torch.nn as nn

INPUT_SHAPE = (3, 8, 8)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        feats = [nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 6, 3), nn.ReLU(), nn.MaxPool2d(2)]
        self.slice1 = nn.Sequential()
        self.slice2 = torch.nn.Sequential(nn.Identity())
        for x in range(2):
            self.slice1.add_module(str(x), feats[x])
        for x in range(2, 5):
            self.slice2.add_module(str(x), feats[x])
        self.add_module("head", nn.Conv2d(6, 2, 1))

    def forward(self, x):
        return self.head(self.slice2(self.slice1(x)))


def build_model():
    return Net()
'''


def test_children_added_by_name_keep_torchs_names_and_equal_torch():
    err, n_t, n_k, tr = check_torch_source(SRC)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5 and n_t == n_k, err
    # (state_dict keys slice2.2.weight, head.weight: the Keras layers are named after them)
    assert 'name="slice2_2"' in tr.text and 'name="slice1_0"' in tr.text and 'name="head"' in tr.text


def test_add_module_with_a_name_known_only_at_run_time_is_a_stub():
    src = SRC.replace("self.slice1.add_module(str(x), feats[x])", "self.slice1.add_module(NAMES[x], feats[x])")
    src = src.replace("INPUT_SHAPE = (3, 8, 8)", "INPUT_SHAPE = (3, 8, 8)\nNAMES = open('names.txt').read().split()")
    tr = translate(src, "model.py", "keras")
    assert any("add_module" in d.message or "NAMES" in d.message for d in tr.stubs), [str(d) for d in tr.stubs]


VGG_SLICES = '''import torch
import torch.nn as nn
from torchvision import models

INPUT_SHAPE = (3, 16, 16)


class VggSlices(nn.Module):
    """fast_neural_style's Vgg16, without the pretrained weights and the freezing."""

    def __init__(self):
        super().__init__()
        vgg_features = models.vgg11(weights=None).features
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        for x in range(3):
            self.slice1.add_module(str(x), vgg_features[x])
        for x in range(3, 6):
            self.slice2.add_module(str(x), vgg_features[x])

    def forward(self, X):
        return self.slice2(self.slice1(X))


def build_model():
    return VggSlices()
'''


def _vgg_stand_in():
    """``torchvision`` (not installed here) with zoo.py's VGG definitions as ``models.vgg*``."""
    import types

    ns = {"_zoo_nn": torch.nn, "_zoo_torch": torch}
    exec(compile(zoo._SOURCE, "<zoo>", "exec"), ns)  # noqa: S102 - the definitions under test
    models = types.ModuleType("torchvision.models")
    for name, (cfg, bn) in zoo.VGGS.items():
        def make(weights=None, num_classes=1000, _cfg=cfg, _bn=bn):
            assert weights is None
            return ns["_ZooVGG"](list(zoo._VGG_CFGS[_cfg]), _bn, num_classes=num_classes)
        setattr(models, name, make)
    tv = types.ModuleType("torchvision")
    tv.models = models
    return tv


@pytest.mark.parametrize("name,params", [("vgg11", 132_863_336), ("vgg16", 138_357_544),
                                         ("vgg16_bn", 138_365_992), ("vgg19", 143_667_240)])
def test_zoo_vggs_have_torchvisions_parameters_and_names(name, params):
    """The counts torchvision's model documentation lists, and its state_dict names."""
    model = getattr(_vgg_stand_in().models, name)()
    assert sum(p.numel() for p in model.parameters()) == params
    assert {"features.0.weight", "classifier.0.weight", "classifier.6.bias"} <= set(model.state_dict())


def test_torchvision_vgg_features_sliced_by_add_module_equal_torch(monkeypatch):
    """torchvision's VGG is read like the ResNets (frontend_ast/torch/zoo.py); the
    AdaptiveAvgPool2d((7, 7)) its constructor builds and forward here never calls is refused
    only where it would be used (it was the stub's reason)."""
    monkeypatch.setitem(sys.modules, "torchvision", _vgg_stand_in())
    err, n_t, n_k, tr = check_torch_source(VGG_SLICES, weight_scale=0.1)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert 'name="slice2_3"' in tr.text and "AdaptiveAvg" not in tr.text
    assert err <= 1e-4, err


def test_a_refused_layer_that_forward_calls_is_still_a_stub():
    src = VGG_SLICES.replace("return self.slice2(self.slice1(X))",
                             "return models.vgg11(weights=None).avgpool(self.slice2(self.slice1(X)))")
    src = src.replace("        self.slice1 = torch.nn.Sequential()",
                      "        self.pool = models.vgg11(weights=None).avgpool\n        self.slice1 = torch.nn.Sequential()")
    src = src.replace("return models.vgg11(weights=None).avgpool(", "return self.pool(")
    tr = translate(src, "model.py", "keras")
    assert any("AdaptiveAvgPool2d" in d.message for d in tr.stubs), [str(d) for d in tr.stubs]
