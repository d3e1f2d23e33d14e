"""printers/runtime_source.py: runtime helpers copied into generated programs as source text."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from transpiler.printers import runtime_source
from transpiler.printers.runtime_source import RUNTIME, Copier, load

MODULES = sorted(".".join(p.relative_to(RUNTIME).with_suffix("").parts)
                 for p in RUNTIME.rglob("*.py") if p.name != "__init__.py")


def test_every_runtime_module_is_found():
    assert {"torch.losses", "torch.metrics", "torch.training", "torch.callbacks", "torch.optimizers",
            "torch.keras_exact", "torch.datasets", "keras.data", "keras.optimizers", "keras.losses",
            "keras.training", "keras.layers"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_dependencies_are_defined_above_their_users(module):
    """Copier emits a closure in file order: that is dependency order only if each module
    defines what a definition uses above it."""
    mod = load(module)
    for index, name in enumerate(mod.order):
        later = [n for n in mod.definitions[name].uses if n in mod.definitions and mod.order.index(n) > index]
        assert not later, f"{module}.{name} uses {later}, defined below it"


@pytest.mark.parametrize("module", MODULES)
def test_every_definition_copies_as_valid_python(module):
    for name in load(module).order:
        ast.parse(runtime_source.source(module, name))


def test_copier_adds_dependencies_first_and_once():
    copy = Copier()
    first = copy.take("torch.callbacks", "LambdaCallback")
    assert [t.split("(")[0].split(":")[0] for t in first] == ["class Callback", "class LambdaCallback"]
    assert copy.take("torch.callbacks", "Callback") == []  # already in the program


def test_copier_follows_dataset_helpers_and_collects_imports():
    copy = Copier()
    texts = copy.take("torch.datasets", "load_cifar10")
    heads = [t.split("(")[0].split(":")[0] for t in texts]
    # get_file and what it calls come from another runtime module (torch.downloads)
    assert heads == ["class NumpyUnpickler", "def read_cifar_batch", "def load_cifar10", "def data_home",
                     "def file_hash_matches", "def inside", "def extract_archive", "def cache_folder", "def fetch", "def get_file"]
    assert {"import os", "import pickle", "import tarfile", "import numpy as np",
            "from torch.hub import download_url_to_file"} <= copy.imports
    assert "import gzip" not in copy.imports  # only fashion_mnist reads gzip


def test_rename_changes_names_and_words_not_other_identifiers():
    text = runtime_source.source("keras.optimizers", "TorchAdam", {"TorchAdam": "TorchAdamW", "Adam": "AdamW"})
    assert text.startswith('@keras.saving.register_keras_serializable(package="transpiler")\nclass TorchAdamW(')
    assert "keras.optimizers.AdamW)" in text and "AdamW as torch.optim.AdamW computes it" in text
    assert "TorchAdam(" not in text and "Adam'" not in text.replace("AdamW'", "")
    ast.parse(text)


def test_renamed_names_are_not_dependencies():
    copy = Copier()
    texts = copy.take("torch.training", "load_model", rename={"Model": "Net"})
    assert len(texts) == 1 and "model = Net()" in texts[0]  # not the module's placeholder


def test_unknown_definition_is_an_error():
    with pytest.raises(KeyError, match="has no nothing_here"):
        Copier().take("torch.losses", "nothing_here")


def test_copying_imports_no_framework():
    """The translation path reads the runtime as text: no torch/tensorflow/keras import."""
    code = ("import sys\nfrom transpiler.printers import runtime_source as r\n"
            "for m in %r:\n    [r.source(m, n) for n in r.load(m).order]\n"
            "bad = [m for m in ('torch', 'tensorflow', 'keras') if m in sys.modules]\n"
            "assert not bad, bad\n") % (MODULES,)
    subprocess.run([sys.executable, "-c", code], check=True)
