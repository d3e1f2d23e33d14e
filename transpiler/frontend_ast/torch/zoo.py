"""torchvision's model constructors (``torchvision.models.resnet18(weights=None)``) as modules
the reader reads like the script's own classes.

A program that takes a torchvision network and edits it (siamese_network replaces
``resnet.conv1`` and keeps ``list(resnet.children())[:-1]``) needs the network's structure:
its submodules under torchvision's attribute names (``conv1``, ``bn1``, ``layer1.0.conv1``,
``fc``), so the state_dict keys, the Keras layer names and the edits all line up. The
definitions below are torchvision's (``torchvision/models/resnet.py``) in the form the reader
reads: the same modules in the same order with the same arguments, and the same forward.
Pretrained weights (``weights=...`` other than None) are not translated: the constructor is
refused with a message saying so (the converted checkpoint of the user's own training is the
way to carry them).

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

#: the names the definitions reach torch by (bound in the reader's globals on first use)
_ALIASES = {"_zoo_nn": "torch.nn", "_zoo_torch": "torch"}

_SOURCE = '''
class _ZooBasicBlock(_zoo_nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = _zoo_nn.Conv2d(inplanes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = _zoo_nn.BatchNorm2d(planes)
        self.relu = _zoo_nn.ReLU(inplace=True)
        self.conv2 = _zoo_nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = _zoo_nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        out = self.relu(out)
        return out


class _ZooBottleneck(_zoo_nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = _zoo_nn.Conv2d(inplanes, planes, kernel_size=1, stride=1, bias=False)
        self.bn1 = _zoo_nn.BatchNorm2d(planes)
        self.conv2 = _zoo_nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = _zoo_nn.BatchNorm2d(planes)
        self.conv3 = _zoo_nn.Conv2d(planes, planes * 4, kernel_size=1, stride=1, bias=False)
        self.bn3 = _zoo_nn.BatchNorm2d(planes * 4)
        self.relu = _zoo_nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        out = self.relu(out)
        return out


class _ZooResNet(_zoo_nn.Module):
    def __init__(self, block, expansion, layers, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = _zoo_nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = _zoo_nn.BatchNorm2d(64)
        self.relu = _zoo_nn.ReLU(inplace=True)
        self.maxpool = _zoo_nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, expansion, 64, layers[0], 1)
        self.layer2 = self._make_layer(block, expansion, 128, layers[1], 2)
        self.layer3 = self._make_layer(block, expansion, 256, layers[2], 2)
        self.layer4 = self._make_layer(block, expansion, 512, layers[3], 2)
        self.avgpool = _zoo_nn.AdaptiveAvgPool2d((1, 1))
        self.fc = _zoo_nn.Linear(512 * expansion, num_classes)

    def _make_layer(self, block, expansion, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes * expansion:
            downsample = _zoo_nn.Sequential(
                _zoo_nn.Conv2d(self.inplanes, planes * expansion, kernel_size=1, stride=stride, bias=False),
                _zoo_nn.BatchNorm2d(planes * expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return _zoo_nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = _zoo_torch.flatten(x, 1)
        x = self.fc(x)
        return x


class _ZooVGG(_zoo_nn.Module):
    def __init__(self, cfg, batch_norm, num_classes=1000, dropout=0.5):
        super().__init__()
        layers = []
        in_channels = 3
        for v in cfg:
            if v == "M":
                layers += [_zoo_nn.MaxPool2d(kernel_size=2, stride=2)]
            else:
                conv2d = _zoo_nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
                if batch_norm:
                    layers += [conv2d, _zoo_nn.BatchNorm2d(v), _zoo_nn.ReLU(inplace=True)]
                else:
                    layers += [conv2d, _zoo_nn.ReLU(inplace=True)]
                in_channels = v
        self.features = _zoo_nn.Sequential(*layers)
        self.avgpool = _zoo_nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = _zoo_nn.Sequential(
            _zoo_nn.Linear(512 * 7 * 7, 4096),
            _zoo_nn.ReLU(True),
            _zoo_nn.Dropout(p=dropout),
            _zoo_nn.Linear(4096, 4096),
            _zoo_nn.ReLU(True),
            _zoo_nn.Dropout(p=dropout),
            _zoo_nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = _zoo_torch.flatten(x, 1)
        x = self.classifier(x)
        return x
'''

#: torchvision's VGG configurations (``torchvision/models/vgg.py``'s cfgs A, B, D, E)
_VGG_CFGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}
#: constructor → (configuration, batch norm)
VGGS = {f"vgg{n}{'_bn' if bn else ''}": (cfg, bn) for n, cfg in ((11, "A"), (13, "B"), (16, "D"), (19, "E"))
        for bn in (False, True)}

#: constructor → (block class, its expansion, blocks per stage)
RESNETS = {
    "resnet18": ("_ZooBasicBlock", 1, [2, 2, 2, 2]),
    "resnet34": ("_ZooBasicBlock", 1, [3, 4, 6, 3]),
    "resnet50": ("_ZooBottleneck", 4, [3, 4, 6, 3]),
    "resnet101": ("_ZooBottleneck", 4, [3, 4, 23, 3]),
    "resnet152": ("_ZooBottleneck", 4, [3, 8, 36, 3]),
}

_PARSED: dict[str, cst.Module] = {}  # (each definitions text parsed once per process)


def source_classes(fe, source: str, aliases: dict, cache: str, expose: bool = False) -> dict:
    """The classes of the definitions text ``source`` as the reader's classes (parsed once;
    ``aliases`` bound in ``fe``'s globals; kept on ``fe`` under ``cache``); ``expose``: each
    class also bound by its own name (definitions that name one another from their code)."""
    from transpiler.frontend_ast.interp.values import ClassRef
    from transpiler.frontend_ast.torch.values import Ref

    module = _PARSED.get(source)
    if module is None:
        module = _PARSED[source] = cst.parse_module(source)
    for alias, path in aliases.items():
        fe.globals.vars.setdefault(alias, Ref(path))
    found = getattr(fe, cache, None)
    if found is None:
        found = {s.name.value: ClassRef(s, kind="module") for s in module.body if isinstance(s, cst.ClassDef)}
        if expose:
            for cls in found.values():
                fe.globals.vars.setdefault(cls.node.name.value, cls)
        setattr(fe, cache, found)
    return found


def _classes(fe) -> dict:
    """The torchvision definitions as the reader's classes."""
    return source_classes(fe, _SOURCE, _ALIASES, "zoo_classes")


def is_constructor(path: str) -> bool:
    """``torchvision.models.resnet18``: a network constructor defined here."""
    return path.startswith("torchvision.models.") and path.rsplit(".", 1)[-1] in {**RESNETS, **VGGS}


def construct(fe, path: str, args, kwargs, node):
    """``torchvision.models.<name>(...)``: the network as a user module of the reader, else
    None (a constructor not defined here)."""
    from transpiler.frontend_ast.torch.modules import Unsupported

    name = path.rsplit(".", 1)[-1]
    if not is_constructor(path):
        return None
    weights = kwargs.get("weights", args[0] if args else None)
    if weights is not None or kwargs.get("pretrained"):
        raise Unsupported(f"torchvision.models.{name} with pretrained weights: the architecture translates, "
                          "the downloaded weights do not (build it with weights=None and convert your own "
                          "checkpoint with --weights)")
    classes = _classes(fe)
    extra = {k: v for k, v in kwargs.items() if k == "num_classes"}
    if name in VGGS:
        cfg, batch_norm = VGGS[name]
        extra.update((k, v) for k, v in kwargs.items() if k == "dropout")
        return fe._instantiate(classes["_ZooVGG"], [list(_VGG_CFGS[cfg]), batch_norm], extra, node)
    block, expansion, counts = RESNETS[name]
    return fe._instantiate(classes["_ZooResNet"], [classes[block], expansion, list(counts)], extra, node)
