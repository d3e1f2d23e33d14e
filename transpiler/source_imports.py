"""Which frameworks a script imports, by a line scan (no parse, no import of the translation
path): the CLI's single-file mode asks it before anything heavy is imported, directory mode
(``transpiler.batch``) to decide which files to translate."""

from __future__ import annotations

import re

TORCH_MODULES = frozenset({"torch", "torchvision"})
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+([A-Za-z_][\w]*)", re.M)
KERAS_MODULES = frozenset({"keras", "tensorflow", "tf_keras"})


def imports_keras(text: str, modules: frozenset = KERAS_MODULES) -> bool:
    """``import keras`` / ``import tensorflow as tf`` / ``from keras.layers import ...`` anywhere
    (``modules``: which top-level packages count; ``TORCH_MODULES`` for PyTorch scripts).

    A line scan rather than a parse, so that a Keras script with a syntax error still
    counts (and is reported as an error instead of being skipped).
    """
    for match in _FROM.finditer(text):
        if match.group(1) in modules:
            return True
    for match in _IMPORT.finditer(text):
        for item in match.group(1).replace("(", " ").replace(")", " ").replace("\\", " ").split(","):
            name = item.strip().split(" ")[0].split(".")[0]
            if name in modules:
                return True
    return False
