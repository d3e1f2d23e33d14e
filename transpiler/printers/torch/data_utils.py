"""Keras' data utilities (frontend_ast/keras/data_utils.py) → their runtime functions.

Each utility is a function of the same name and arguments in ``transpiler/runtime/torch/``
(real code, tested against Keras), copied into the generated program through
``printers/runtime_source.py``; the call keeps the user's arguments.
"""

from __future__ import annotations

#: utility name → (runtime module, definition)
UTILITIES = {
    "get_file": ("torch.downloads", "get_file"),
    "load_img": ("torch.images", "load_img"),
    "img_to_array": ("torch.images", "img_to_array"),
    "array_to_img": ("torch.images", "array_to_img"),
    "save_img": ("torch.images", "save_img"),
    "pad_sequences": ("torch.sequences", "pad_sequences"),
}
