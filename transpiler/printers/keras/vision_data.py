"""The generated torchvision stand-ins of a Keras program (frontend_ast/torch/vision.py); their
code is the runtime module transpiler/runtime/keras/vision.py, whose docstring says what
they do (datasets as arrays, transforms on a batch of images). This module prints the
expression that builds one and asks for the classes it names.
"""

from __future__ import annotations

#: helpers a helper uses
NEEDS = {"ToImage": ["PILToTensor"], "ToDtype": ["_channels_last"], "Resize": ["_channels_last"],
         "CenterCrop": ["_channels_last"], "Grayscale": ["_channels_last"], "VisionDataset": ["ArrayDataset"],
         "ImageFolder": ["ArrayDataset"], "RandomResizedCrop": ["Resize"]}


def expression(p, cfg: dict) -> str:
    """The code of a torchvision object (the config ``torch_vision`` recorded), the generated
    classes it names made part of the program."""
    p.imports.add("import numpy as np")
    # a name the script imported from torchvision (``from torchvision.transforms import Compose``)
    # is the generated class now
    p.torch_names = set(p.torch_names) - set(cfg["helpers"])
    for name in cfg["helpers"]:
        for need in NEEDS.get(name, []) + [name]:
            p.need(need)
    return cfg["template"].format(*[p.ref(part) for part in cfg["parts"]])
