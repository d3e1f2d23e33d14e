"""torchvision data in PyTorch programs → the Keras program's data (no torchvision in the output).

* ``datasets.MNIST / FashionMNIST / CIFAR10 / CIFAR100(root, train=..., transform=...)``
  → the generated ``VisionDataset("mnist", train=..., transform=...)`` (an ``ArrayDataset``
  over ``keras.datasets.<name>.load_data()``), ``datasets.ImageFolder(root, transform=...)``
  → the generated ``ImageFolder`` (the class folders read with ``keras.utils.load_img``),
  ``datasets.FakeData(size, image_size, num_classes, transform)`` → the generated lazy
  ``FakeData`` (random images and labels drawn per item, seeded by the index);
  the reader sees either as a dataset of two arrays (images, int64 labels) that a
  ``DataLoader`` batches, so the usual loops become ``fit``;
* ``transforms.Compose / ToTensor / Normalize / Resize / CenterCrop / Grayscale /
  PILToTensor / ConvertImageDtype`` (v1) and ``ToImage / ToDtype`` (v2) → generated numpy
  classes of the same names that transform a whole batch of images (printers/keras/vision_data.py):
  the data is what torch's transforms make, channels-first (N, C, H, W) float32 after
  ``ToTensor`` (scaled to [0, 1]), and the Keras program feeds it to the channels-last
  model through the same layout change as any channels-first array data.
  Random augmentations draw per item and per epoch in torch: ``RandomResizedCrop``,
  ``RandomCrop`` (without padding), ``RandomHorizontalFlip`` and ``RandomVerticalFlip`` are
  generated classes drawing per image on every call (numpy's generator), and a dataset whose
  transform holds one is the per-item form (``VisionItems`` / ``ImageFolderItems``: a
  map-style dataset putting item i through the transform when it is read, not the whole set
  once), and so is a dataset whose transform's steps the reader cannot see (made by a
  function); the other random augmentations are marked stubs.

The model's input shape follows from the dataset and its transforms (``data_shape``):
MNIST with ``ToTensor`` is (1, 28, 28) in torch's terms, (28, 28, 1) in the Keras model.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import attribute_chain, nodes_of
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.reader_values import V

#: torchvision dataset → (keras.datasets module, (C, H, W) of one image)
DATASETS = {
    "MNIST": ("mnist", (1, 28, 28)),
    "FashionMNIST": ("fashion_mnist", (1, 28, 28)),
    "CIFAR10": ("cifar10", (3, 32, 32)),
    "CIFAR100": ("cifar100", (3, 32, 32)),
}
FOLDERS = ("ImageFolder",)
#: datasets whose items are what a user loader returns: the transforms fix the size, the
#: model's first layer the channels (frontend._pick_data_shape)
USER_FOLDERS = ("DatasetFolder",)
#: where each folder dataset takes ``transform`` positionally
TRANSFORM_POSITION = {"ImageFolder": 1, "DatasetFolder": 3}
#: transforms the generated numpy classes implement (printers/keras/vision_data.py)
TRANSFORMS = ("Compose", "ToTensor", "Normalize", "Resize", "CenterCrop", "Grayscale", "PILToTensor",
              "ConvertImageDtype", "ToImage", "ToDtype", "Lambda")
#: random augmentations the generated classes draw per image → the arguments they take
RANDOM_TRANSFORMS = {"RandomResizedCrop": ("size", "scale", "ratio", "antialias"), "RandomCrop": ("size",),
                     "RandomHorizontalFlip": ("p",), "RandomVerticalFlip": ("p",)}
RANDOM = ("RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop", "RandomRotation",
          "ColorJitter", "RandomAffine", "RandomErasing", "AutoAugment", "RandAugment", "TrivialAugmentWide")
DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
          "float16": "float16", "half": "float16", "uint8": "uint8"}


#: transforms whose output is a tensor (array data in the Keras program)
TENSOR_MAKERS = ("ToTensor", "PILToTensor", "ToImage")


class TransformV(V):
    """A transform (or Compose) that makes tensors: what calling it returns is array data
    (``ToTensor()(img).view(1, -1, h, w)`` is numpy code in the Keras program)."""


def _path(fe, node) -> str | None:
    """The dotted torchvision path ``node`` names through the module's imports, else None."""
    name, parts = attribute_chain(node)
    if name is None:
        return None
    ref = fe.globals.vars.get(name.value)
    base = getattr(ref, "path", None)
    if type(ref).__name__ != "Ref" or not base or base.split(".")[0] != "torchvision":
        return None
    return ".".join([base] + parts)


def _kind(path: str | None) -> tuple[str, str] | None:
    """``("dataset" | "transform", name)`` for a torchvision path, else None."""
    if path is None:
        return None
    name = path.rsplit(".", 1)[-1]
    if path.startswith("torchvision.datasets."):
        return "dataset", name
    if path.startswith(("torchvision.transforms.", "torchvision.transforms.v2.")):
        return "transform", name
    return None


# -- the model's input shape ---------------------------------------------------------------
def data_shape(fe, call: cst.Call) -> tuple[tuple, str] | None:
    """``((C, H, W), "float32")`` of one item of the torchvision dataset ``call`` makes, as
    its transforms leave it, or None (not such a call, or not a tensor of a known size)."""
    kind = _kind(_path(fe, call.func))
    if kind is None or kind[0] != "dataset" or (kind[1] not in DATASETS and kind[1] not in FOLDERS + USER_FOLDERS):
        return None
    shape = DATASETS[kind[1]][1] if kind[1] in DATASETS else (None if kind[1] in USER_FOLDERS else 3, None, None)
    transform = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "transform"), None)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if transform is None and kind[1] in TRANSFORM_POSITION and len(positional) > TRANSFORM_POSITION[kind[1]]:
        transform = positional[TRANSFORM_POSITION[kind[1]]]  # (ImageFolder(root, transforms.Compose(...)))
    if transform is None:
        return None  # PIL images: nothing a model takes
    steps = _steps(fe, transform)
    if steps is None:
        return None
    tensor = False
    c, h, w = shape
    for name, call_node in steps:
        args = [a.value for a in call_node.args if a.keyword is None]
        kw = {a.keyword.value: a.value for a in call_node.args if a.keyword is not None}
        if name in ("ToTensor", "PILToTensor", "ToImage"):
            tensor = True
        elif name in ("Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop"):
            size = _size(fe, args[0] if args else kw.get("size"))
            if size is None:
                return None
            if len(size) == 1:
                if name == "Resize" and (h is None or h != w):
                    h = w = None  # the smaller edge only: the other follows the image's aspect (a crop
                    continue      # after it fixes both: Resize(256), CenterCrop(224))
                size = (size[0], size[0])
            h, w = size
        elif name == "Grayscale":
            n = _int(fe, args[0] if args else kw.get("num_output_channels", cst.Integer("1")))
            if n is None:
                return None
            c = n
        elif name in ("Normalize", "ConvertImageDtype", "ToDtype", "RandomHorizontalFlip", "RandomVerticalFlip",
                      "ColorJitter", "RandomRotation", "RandomErasing"):
            continue
        else:
            return None
    if not tensor or h is None or w is None:
        return None
    return (c, h, w), "float32"


def _steps(fe, node) -> list[tuple[str, cst.Call]] | None:
    """The transforms ``node`` applies in order (a Compose is flattened), resolving a name to
    the one expression the module assigns to it."""
    if isinstance(node, cst.Name):
        values = {cst.Module([]).code_for_node(a.value): a.value for a in nodes_of(fe.module, cst.Assign)
                  if any(isinstance(t.target, cst.Name) and t.target.value == node.value for t in a.targets)}
        if len(values) != 1:
            return None
        node = next(iter(values.values()))
    if not isinstance(node, cst.Call):
        return None
    kind = _kind(_path(fe, node.func))
    if kind is None or kind[0] != "transform":
        return None
    if kind[1] == "Compose":
        if not node.args or not isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            return None
        out = []
        for el in node.args[0].value.elements:
            inner = _steps(fe, el.value)
            if inner is None:
                return None
            out += inner
        return out
    return [(kind[1], node)]


def _int(fe, node) -> int | None:
    try:
        value = fe._eval(node, fe.globals)
    except Exception:  # noqa: BLE001 - not a constant
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _size(fe, node) -> tuple | None:
    if node is None:
        return None
    if isinstance(node, (cst.Tuple, cst.List)):
        values = [_int(fe, e.value) for e in node.elements]
        return tuple(values) if len(values) == 2 and all(v is not None for v in values) else None
    value = _int(fe, node)
    return (value,) if value is not None else None


# -- the program around the model (torch_training's reader) -----------------------------------
def call(reader, node: cst.Call, scope):  # long: one dispatch over the torchvision call kinds; a registry is next
    """What a torchvision call holds for the reader (a dataset, or plain data for a
    transform), with the fact that prints it; None when ``node`` is not a torchvision call."""
    from transpiler.frontend_ast.torch.reader_values import OTHER, DatasetV

    root = node.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name) or scope.lookup(root.value) is not None:
        return None  # (a local name shadows the import)
    kind = _kind(_path(reader.fe, node.func))
    if kind is None:
        return None
    what, name = kind
    args = reader.arguments(node, scope)
    if any(a.star for a, _ in args):
        raise Unsupported(f"torchvision {name}(*...): unpacked arguments")
    pos = [a.value for a, _ in args if a.keyword is None]
    kw = {a.keyword.value: a.value for a, _ in args if a.keyword is not None}
    if what == "transform":
        if name in RANDOM_TRANSFORMS:
            return _random_transform(reader, node, name, pos, kw)
        if name in RANDOM:
            raise Unsupported(f"transforms.{name}: a random augmentation (drawn per item and per epoch) is not "
                              "translated to Keras yet")
        if name not in TRANSFORMS:
            raise Unsupported(f"transforms.{name} is not translated to Keras yet")
        if name == "ToDtype":
            dtype = pos[0] if pos else kw.get("dtype")
            dtype_name = dtype.attr.value if isinstance(dtype, cst.Attribute) else None
            if dtype_name not in DTYPES:
                raise Unsupported("transforms.v2.ToDtype of a dtype that is not a float or uint8")
            scale = kw.get("scale")
            template = f'ToDtype("{DTYPES[dtype_name]}"' + (", scale={0}" if scale is not None else "") + ")"
            reader.fact(node, "vision", {"template": template, "parts": [reader.sid(scale)] if scale is not None else [],
                                         "helpers": ["ToDtype"]})
            return OTHER
        if name == "ConvertImageDtype":
            dtype = pos[0] if pos else kw.get("dtype")
            dtype_name = dtype.attr.value if isinstance(dtype, cst.Attribute) else None
            if dtype_name not in DTYPES:
                raise Unsupported("transforms.ConvertImageDtype of a dtype that is not a float or uint8")
            reader.fact(node, "vision", {"template": f'ToDtype("{DTYPES[dtype_name]}", scale=True)', "parts": [],
                                         "helpers": ["ToDtype"]})
            return OTHER
        allowed = {"Normalize": {"mean", "std", "inplace"}, "Resize": {"size", "antialias", "interpolation"},
                   "CenterCrop": {"size"}, "Grayscale": {"num_output_channels"}, "Lambda": {"lambd"}}.get(name, set())
        if set(kw) - allowed:
            raise Unsupported(f"transforms.{name}({', '.join(sorted(set(kw) - allowed))}=...) is not translated")
        if "interpolation" in kw:
            raise Unsupported(f"transforms.{name}(interpolation=...) is not translated (bilinear only)")
        texts = [f"{{{i}}}" for i in range(len(pos))] + [f"{k}={{{len(pos) + i}}}" for i, k in enumerate(kw)]
        reader.fact(node, "vision", {"template": f"{name}({', '.join(texts)})",
                                     "parts": [reader.sid(p) for p in pos] + [reader.sid(v) for v in kw.values()],
                                     "helpers": ["Compose"] if name == "Compose" else ["Compose", name]})
        if name == "Lambda" and pos and isinstance(pos[0], cst.Lambda) and len(pos[0].params.params) == 1:
            # its parameter is an image as the steps before left it: array data (x.mul(255) → x * 255)
            from transpiler.frontend_ast.torch.reader_values import Arr, Scope

            inner = Scope(scope)
            inner.vars[pos[0].params.params[0].name.value] = Arr()
            reader.expr(pos[0].body, inner)
        steps = _steps(reader.fe, node)
        return TransformV() if steps and any(n in TENSOR_MAKERS for n, _ in steps) else OTHER
    if name == "FakeData":
        return _fake_data(reader, node, pos, kw)
    if name not in DATASETS and name not in FOLDERS:
        raise Unsupported(f"torchvision.datasets.{name} is not translated to Keras yet")
    names = ("root", "train", "transform", "target_transform", "download") if name in DATASETS else \
        ("root", "transform", "target_transform")
    given = dict(zip(names, pos))
    given.update(kw)
    extra = set(given) - set(names)
    if extra:
        raise Unsupported(f"datasets.{name}({', '.join(sorted(extra))}=...) is not translated")
    if given.get("target_transform") is not None:
        raise Unsupported(f"datasets.{name}(target_transform=...) is not translated")
    keep = [k for k in ("train", "transform") if k in given]
    # a transform drawing at random, or one whose steps the reader cannot see (made by a
    # function, chosen at run time): put through per item (a map-style dataset), as torchvision's
    steps = _steps(reader.fe, given["transform"]) if given.get("transform") is not None else []
    per_item = steps is None or any(n in RANDOM_TRANSFORMS for n, _ in steps)
    if name in DATASETS:
        head = f'{"VisionItems" if per_item else "VisionDataset"}("{DATASETS[name][0]}"'
        helpers = ["VisionItems"] if per_item else ["ArrayDataset", "VisionDataset"]
        parts = [given[k] for k in keep]
        texts = [f"{k}={{{i}}}" for i, k in enumerate(keep)]
    else:
        if "root" not in given:
            raise Unsupported("datasets.ImageFolder without its root folder")
        head = f"{'ImageFolderItems' if per_item else 'ImageFolder'}({{0}}"
        helpers = ["ImageFolderItems"] if per_item else ["ArrayDataset", "ImageFolder"]
        keep = [k for k in keep if k == "transform"]
        parts = [given["root"]] + [given[k] for k in keep]
        texts = [f"{k}={{{i + 1}}}" for i, k in enumerate(keep)]
    reader.fact(node, "vision", {"template": ", ".join([head] + texts) + ")", "parts": [reader.sid(p) for p in parts],
                                 "helpers": helpers})
    if per_item:
        from transpiler.frontend_ast.torch.reader_values import MapDatasetV

        return MapDatasetV(2)
    return DatasetV([node, node], node, vision=True)


def _random_transform(reader, node: cst.Call, name: str, pos: list, kw: dict):
    """``transforms.RandomResizedCrop(224)`` / ``RandomCrop`` / ``RandomHorizontalFlip`` /
    ``RandomVerticalFlip``: the generated class of the same name (drawing per image)."""
    from transpiler.frontend_ast.torch.reader_values import OTHER

    names = RANDOM_TRANSFORMS[name]
    extra = set(kw) - set(names)
    if extra or len(pos) > len(names):
        what = ", ".join(sorted(extra)) + "=..." if extra else "more positional arguments"
        raise Unsupported(f"transforms.{name}({what}) is not translated")
    texts = [f"{{{i}}}" for i in range(len(pos))] + [f"{k}={{{len(pos) + i}}}" for i, k in enumerate(kw)]
    reader.fact(node, "vision", {"template": f"{name}({', '.join(texts)})",
                                 "parts": [reader.sid(p) for p in pos] + [reader.sid(v) for v in kw.values()],
                                 "helpers": ["Compose", name]})
    return OTHER


def _fake_data(reader, node: cst.Call, pos: list, kw: dict):
    """``datasets.FakeData(size, image_size, num_classes, transform)`` → the generated
    ``FakeData``: a map-style dataset drawing item i's image (uint8, of ``image_size``) and
    label from a generator seeded by i, as torchvision's does (other numbers: torch's generator
    is not reproduced), through the transform."""
    from transpiler.frontend_ast.torch.reader_values import MapDatasetV

    names = ("size", "image_size", "num_classes", "transform", "target_transform", "random_offset")
    given = dict(zip(names, pos))
    given.update(kw)
    if set(given) - set(names):
        raise Unsupported(f"datasets.FakeData({', '.join(sorted(set(given) - set(names)))}=...) is not translated")
    if given.get("target_transform") is not None:
        raise Unsupported("datasets.FakeData(target_transform=...) is not translated")
    keys = [k for k in names if k in given and k != "target_transform"]
    texts = [f"{k}={{{i}}}" for i, k in enumerate(keys)]
    reader.fact(node, "vision", {"template": f"FakeData({', '.join(texts)})",
                                 "parts": [reader.sid(given[k]) for k in keys], "helpers": ["FakeData"]})
    return MapDatasetV(2)
