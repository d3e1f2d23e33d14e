"""Shared test set-up: import torch before TensorFlow, once per process."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402,F401  (first: a process holding both frameworks must load torch first)

torch.set_num_threads(1)


#: markers of long suites the default run deselects (``pytest -m NAME`` runs them)
_ON_REQUEST = ("onnx_zoo", "fuzz_programs", "realworld", "onnx_out_corpus", "keras_backends_corpus",
               "optimizers_corpus", "corpus_all")


def pytest_collection_modifyitems(config, items):
    asked = config.getoption("-m") or ""
    wanted = [m for m in _ON_REQUEST if m not in asked]
    drop = [item for item in items if any(item.get_closest_marker(m) for m in wanted)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if item not in drop]
