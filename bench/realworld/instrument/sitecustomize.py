"""Instrumentation of one real-world run (original or translation), loaded as ``sitecustomize``.

The harness puts this folder first on PYTHONPATH of the program's subprocess. Nothing here is
written into the program: it patches framework entry points after they are imported.

Environment (set by bench/realworld/run.py):
  RW_RECORD        JSON file receiving what was observed (rewritten atomically at each event)
  RW_MODE          "keras" (TensorFlow/Keras program) or "torch"
  RW_STEPS         cap on training/evaluation batches per fit/evaluate/loader pass (default 4)
  RW_PLANTED       file listing stand-in files (one path a line) whose hash checks are waived
  RW_SAVE_WEIGHTS  (keras) where the model's initial weights go at its first fit
  RW_LOAD_WEIGHTS  (torch) a state_dict (.pt) loaded into the first module whose keys it matches
  RW_NEUTRALISE    "1": dropout and random augmentation set to inference behaviour, shuffling off
  RW_PREDICT_STEPS cap on predict batches and on batches drawn from a tf.data dataset by a
                   hand-written loop (default 32: a bound for big data, above the stand-ins' sizes)

A process the program starts (multiprocessing workers, Hogwild) writes its own record,
``RW_RECORD`` with ``.<pid>`` before ``.json``: the harness reads them as the workers' records.

Every run: no network (sockets may reach only this machine).
"""

import importlib.abc
import importlib.machinery
import json
import os
import socket
import sys

_RECORD_PATH = os.environ.get("RW_RECORD")
_STEPS = int(os.environ.get("RW_STEPS", "4"))
_NEUTRALISE = os.environ.get("RW_NEUTRALISE", "1") == "1"
_PREDICT_STEPS = int(os.environ.get("RW_PREDICT_STEPS", "32"))
RECORD = {"losses": [], "tape": [], "logs": [], "events": [], "weights_saved": None, "weights_loaded": None,
          "optimizers": [], "distributions": []}
os.environ.setdefault("RW_ROOT_PID", str(os.getpid()))  # inherited by the processes the program starts


def _record_path():
    """The run's record, or a worker's own (a forked worker keeps RECORD but not the pid)."""
    if not _RECORD_PATH or str(os.getpid()) == os.environ.get("RW_ROOT_PID"):
        return _RECORD_PATH
    stem = _RECORD_PATH[:-5] if _RECORD_PATH.endswith(".json") else _RECORD_PATH
    return f"{stem}.{os.getpid()}.json"


def _write_record():
    path = _record_path()
    if not path:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump(RECORD, fh)
    os.replace(tmp, path)


def _event(text):
    if len(RECORD["events"]) < 50:
        RECORD["events"].append(text)
        _write_record()


# ---------------------------------------------------------------- no network
_LOCAL = ("127.", "::1", "localhost", "0.0.0.0")


def _is_local(address):
    if isinstance(address, tuple) and address:
        host = str(address[0])
        return host.startswith(_LOCAL) or host == ""
    return True  # AF_UNIX paths


class NetworkBlocked(OSError):
    pass


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _connect(self, address):
    if not _is_local(address):
        _event(f"network blocked: {address!r}")
        raise NetworkBlocked(f"real-world harness: no network (connect to {address!r})")
    return _real_connect(self, address)


def _connect_ex(self, address):
    if not _is_local(address):
        _event(f"network blocked: {address!r}")
        raise NetworkBlocked(f"real-world harness: no network (connect to {address!r})")
    return _real_connect_ex(self, address)


def _getaddrinfo(host, *args, **kwargs):
    if host is not None and not str(host).startswith(_LOCAL):
        _event(f"network blocked: resolve {host!r}")
        raise NetworkBlocked(f"real-world harness: no network (resolve {host!r})")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _connect
socket.socket.connect_ex = _connect_ex
socket.getaddrinfo = _getaddrinfo


# ---------------------------------------------------------------- after-import hooks
class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self):
        self.hooks = {}

    def find_spec(self, name, path, target=None):
        hook = self.hooks.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or getattr(spec.loader.exec_module, "_rw_after", False):
            return spec if spec.loader is not None else None
        # (the hook stays registered until the module runs: a find_spec without an import, as
        # tensorflow's ``importlib.util.find_spec("keras")``, must not use it up)
        loader = spec.loader
        inner = loader.exec_module

        def exec_module(module):  # on the loader itself: its resource readers stay as they are
            inner(module)
            for run in self.hooks.pop(module.__name__, []):
                try:
                    run(module)
                except Exception as exc:  # an instrumentation failure is reported, never fatal
                    _event(f"instrumentation of {module.__name__} failed: {exc!r}")

        exec_module._rw_after = True
        loader.exec_module = exec_module
        return spec


_AFTER = _AfterImport()
sys.meta_path.insert(0, _AFTER)


def after_import(name):
    def deco(fn):
        if name in sys.modules:
            fn(sys.modules[name])
        else:
            _AFTER.hooks.setdefault(name, []).append(fn)  # (several hooks may wait for one module)
        return fn

    return deco


def _planted():
    path = os.environ.get("RW_PLANTED")
    if not path or not os.path.exists(path):
        return set()
    with open(path) as fh:
        return {os.path.realpath(line.strip()) for line in fh if line.strip()}


def _scalar(value):
    try:
        import numpy as np

        arr = np.asarray(value)
        if arr.size == 1 and arr.dtype.kind in "fiu":
            return float(arr.reshape(()))
    except Exception:
        pass
    return None


MODE = os.environ.get("RW_MODE", "")

if MODE and _NEUTRALISE:
    # Python's own generator, unseeded by the program: the same draws in both runs, from when
    # the program's framework has been imported (importing TensorFlow draws from it)
    @after_import("keras" if MODE == "keras" else "torch")
    def _seed_python_random(mod):
        import random

        random.seed(0)

if MODE == "keras":
    import bench_rw_keras  # noqa: F401  (the Keras patches, beside this file)
elif MODE == "torch":
    import bench_rw_pytorch  # noqa: F401
if MODE:
    import rw_tfds  # noqa: F401  (tensorflow_datasets' stand-in, either framework)
