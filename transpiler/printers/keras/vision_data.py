"""The generated torchvision stand-ins of a Keras program (frontend_ast/torch/vision.py); their
code is the runtime module transpiler/runtime/keras/vision.py.

Datasets are arrays, as the Keras program's other data: ``VisionDataset`` loads
``keras.datasets.<name>`` (the same images and labels as torchvision's MNIST,
FashionMNIST, CIFAR10 and CIFAR100; their train/test splits), ``ImageFolder`` reads the
class folders with ``keras.utils.load_img`` (classes sorted by name, as torchvision);
either applies its transform to the whole set of images once and keeps
``arrays = (images, labels)``. The transforms work on a batch of images: uint8
``(N, H, W, C)`` as loaded (torchvision's PIL images), and after ``ToTensor`` float32
``(N, C, H, W)`` scaled to [0, 1] — what torch's model sees; the Keras program changes
the layout where it feeds the channels-last model. ``Resize`` is bilinear with
antialiasing (``keras.ops.image.resize``; PIL's filter differs in the last bits).
"""

from __future__ import annotations

#: helpers a helper uses
NEEDS = {"ToImage": ["PILToTensor"], "ToDtype": ["_channels_last"], "Resize": ["_channels_last"],
         "CenterCrop": ["_channels_last"], "Grayscale": ["_channels_last"], "VisionDataset": ["ArrayDataset"],
         "ImageFolder": ["ArrayDataset"]}


def expression(p, cfg: dict) -> str:
    """The code of a torchvision object (the config ``torch_vision`` recorded), the generated
    classes it names made part of the program."""
    p.imports.add("import numpy as np")
    for name in cfg["helpers"]:
        for need in NEEDS.get(name, []) + [name]:
            p.need(need)
    return cfg["template"].format(*[p.ref(part) for part in cfg["parts"]])
