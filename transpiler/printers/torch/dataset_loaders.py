"""``keras.datasets.X.load_data()`` as numpy functions for generated PyTorch programs.

The loaders live in ``transpiler/runtime/torch/datasets.py`` (real code, unit-tested): each
fetches the file Keras fetches (same URL and hash) into a cache of its own through
``runtime/torch/downloads.py`` (``torch.hub.download_url_to_file``) and returns the arrays
Keras returns. This module names them and copies the ones a program uses,
with the shared helpers they call, through ``printers/runtime_source.py``. The keys are the
``keras.datasets`` module names.
"""

from __future__ import annotations

from transpiler.printers import runtime_source

RUNTIME = "torch.datasets"

#: keras.datasets module name → its loader in the runtime module
LOADERS = {"mnist": "load_mnist", "fashion_mnist": "load_fashion_mnist", "cifar10": "load_cifar10",
           "cifar100": "load_cifar100", "boston_housing": "load_boston_housing", "imdb": "load_imdb",
           "reuters": "load_reuters"}


def loader_texts(names, utilities=()) -> tuple[list[str], set[str]]:
    """The helper sources (each once) and imports for these datasets and data utilities
    (``get_file``, ``load_img``, ...: printers/torch/data_utils.py)."""
    from transpiler.printers.torch import data_utils

    copy = runtime_source.Copier()
    texts = copy.take(RUNTIME, *(LOADERS[name] for name in names)) if names else []
    for name in utilities:
        texts += copy.take(*data_utils.UTILITIES[name])
    return texts, copy.imports
