"""Shared test set-up: import torch before TensorFlow, once per process."""

import gc
import os
import re
import sys
import tempfile

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# TensorFlow's own CPU kernels lack some ops its oneDNN kernels have (a transposed convolution
# with dilation_rate > 1: "Current CPU implementations do not yet support dilation rates larger
# than 1"), and TensorFlow turns oneDNN on by itself only on CPUs with AVX-512-class features:
# the Keras side of the numeric tests must not depend on which CPU the suite runs on
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402,F401  (first: a process holding both frameworks must load torch first)

torch.set_num_threads(1)

from corpus_sample import sample_each_value  # noqa: E402


#: markers of long suites the default run deselects (``pytest -m NAME`` runs them)
_ON_REQUEST = ("onnx_zoo", "fuzz_programs", "realworld", "onnx_out_corpus", "keras_backends_corpus",
               "optimizers_corpus", "corpus_all", "numeric_ops_all", "matrix_all")


def asked(config, marker: str) -> bool:
    """Whether the ``-m`` expression names ``marker`` (as a whole word)."""
    return re.search(rf"\b{marker}\b", config.getoption("-m") or "") is not None


def pytest_configure(config):
    # the hypothesis fuzz test draws 200 programs when ``-m fuzz`` asks for it, 40 in the default
    # run (TRANSPILER_FUZZ_EXAMPLES, when set, wins in both; tests/test_fuzz.py)
    if asked(config, "fuzz"):
        os.environ.setdefault("TRANSPILER_FUZZ_EXAMPLES", "200")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    sample_each_value(items)  # (first: -m MARKER selects the cases this marks)
    wanted = [m for m in _ON_REQUEST if not asked(config, m)]
    drop = [item for item in items if any(item.get_closest_marker(m) for m in wanted)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if item not in drop]


@pytest.fixture(scope="session", autouse=True)
def _temp_files_under_pytest_basetemp(tmp_path_factory):
    """Every temporary file the tests or the code under test make (``tempfile``, and subprocesses
    through TMPDIR) goes under pytest's own base temp folder, which pytest prunes to the last
    three runs: generated modules are imported from temp files that stay while the process may
    still need their source, and the suite had left about 136,000 of them in /tmp."""
    folder = str(tmp_path_factory.mktemp("tmp", numbered=False))
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    # (the formatting cache of the runs, printers/text_cache.py, stays inside the run too:
    # the suite neither reads a cache an earlier run left nor writes to the user's home)
    os.environ.setdefault("TRANSPILE_CACHE_DIR", os.path.join(folder, "transpile-cache"))
    yield
    if saved[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved[0]
    tempfile.tempdir = saved[1]


@pytest.fixture(scope="module", autouse=True)
def _frozen_heap():
    """What is alive when a test module starts (the frameworks' modules, caches, the servers of
    tests/program_runner.py) is not garbage: keep it out of the cyclic collector's way. Keras'
    clear_session() runs a full gc.collect() per model, and with TensorFlow and torch loaded it
    walked the whole heap each time (about a second a call). The collection here only walks
    what the previous module left, as everything older is frozen already; objects a later
    module frees are still freed by their reference counts. (Keras' global state, the last
    model of the previous module, is cleared first: it would stay frozen once cleared later.)"""
    if "keras" in sys.modules:
        sys.modules["keras"].backend.clear_session()
    gc.collect()
    gc.freeze()
    yield
