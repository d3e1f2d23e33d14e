"""PyTorch checkpoints: safetensors (numpy only) or ``torch.load(weights_only=True)``.

A pickle that holds anything but tensors and plain containers is refused by torch's
weights-only unpickler before any of it runs; the user gets a paragraph, not a
traceback. torch is imported only here, only when a ``.pt`` file is read or written.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from transpiler.weights.errors import CheckpointError
from transpiler.weights.keras_files import sniff
from transpiler.weights.safetensors_io import SafetensorsFile

#: keys under which training checkpoints usually keep the model's state_dict
NESTED_KEYS = ("state_dict", "model_state_dict", "model")


def read_torch_state(path: str) -> dict[str, np.ndarray]:
    """A state_dict from ``.safetensors`` or ``.pt`` as numpy arrays."""
    kind = sniff(path)
    if kind == "safetensors" or path.endswith(".safetensors"):
        return SafetensorsFile(path).to_dict()
    if kind == "hdf5":
        raise CheckpointError(f"{path}: a Keras HDF5 checkpoint, not a PyTorch one (.pt or .safetensors)")
    if kind not in ("zip", "pickle"):
        raise CheckpointError(f"{path}: not a PyTorch checkpoint (.pt state_dict or .safetensors)")
    import pickle
    import zipfile

    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise CheckpointError(
            f"{path}: refused: the file holds pickled Python objects other than tensors ({first}). "
            "transpile loads PyTorch files with torch.load(weights_only=True) only and never runs "
            "their code; save the model's state_dict (torch.save(model.state_dict(), path)) or a "
            "safetensors file instead.") from None
    except (RuntimeError, EOFError, OSError, zipfile.BadZipFile, ValueError) as exc:
        raise CheckpointError(f"{path}: the PyTorch checkpoint is corrupt or truncated "
                              f"({str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__})") from None
    return _state_from(obj, path)


def _state_from(obj: Any, path: str) -> dict[str, np.ndarray]:
    import torch

    if isinstance(obj, dict):
        for key in NESTED_KEYS:
            if isinstance(obj.get(key), dict) and all(isinstance(v, torch.Tensor) for v in obj[key].values()):
                obj = obj[key]
                break
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise CheckpointError(f"{path}: not a state_dict (a dict of tensors); save "
                              "model.state_dict() rather than the model object")
    return {str(k): v.detach().cpu().numpy() for k, v in obj.items()}


def write_torch_pt(path: str, state: dict[str, np.ndarray]) -> None:
    """A ``.pt`` state_dict (torch.save), written atomically."""
    import torch

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".transpile-", suffix=".pt.tmp")
    try:
        from transpiler.paths import public_mode

        public_mode(fd)
        # (into the open file: torch.save names the archive's folder after a path it is given,
        # which for the temp file changed from run to run)
        with os.fdopen(fd, "wb") as fh:
            torch.save({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}, fh)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
