"""Keras checkpoints read and written with h5py and zipfile (no TensorFlow, no Keras).

Three formats are read:

* Keras 3 ``.weights.h5``: ``layers/<key>/vars/<i>``; ``<key>`` is the snake-cased class
  name with a per-model counter (``dense_1``), the ``vars`` group's ``name`` attribute is
  the layer's name; a recurrent layer keeps its tensors under ``cell/``, a
  Bidirectional under ``forward_layer/cell`` and ``backward_layer/cell``; a nested model
  has its own ``layers/``.
* ``.keras``: a zip holding ``model.weights.h5`` in that format. A stored (uncompressed)
  member is read in place through an offset window on the zip file, so nothing is copied.
* legacy ``.h5`` (``model.save("m.h5")``, tf.keras ``save_weights("w.h5")``): layer groups
  listed in the ``layer_names`` attribute, each naming its tensors in ``weight_names``.

Tensors stay on disk (h5py datasets) until the converter reads them one at a time.
Keras 3 ``.weights.h5`` files are also written, for the torch → Keras direction.
"""

from __future__ import annotations

import io
import os
import struct
import tempfile
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from transpiler.ir.naming import keras_auto_name
from transpiler.weights.errors import CheckpointError

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
ZIP_MAGIC = b"PK\x03\x04"
#: sub-objects of a layer that hold weights, in the order Keras lists them (a
#: MultiHeadAttention keeps its four projections under ``*_dense``)
MHA_PARTS = ("query_dense", "key_dense", "value_dense", "output_dense")
SUBLAYERS = ("cell", "forward_layer", "backward_layer") + MHA_PARTS + ("layer",)  # TimeDistributed's
#: their names in a legacy .h5 file's weight names
MHA_LEGACY_PARTS = ("query", "key", "value", "attention_output")


def sniff(path: str) -> str:
    """``"hdf5"``, ``"zip"``, ``"pickle"``, ``"safetensors"`` or ``"unknown"`` from the first bytes."""
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CheckpointError(f"{path}: is a directory; give a checkpoint file")
    with open(path, "rb") as fh:
        head = fh.read(16)
    if not head:
        raise CheckpointError(f"{path}: the file is empty")
    if head.startswith(HDF5_MAGIC):
        return "hdf5"
    if head.startswith(ZIP_MAGIC):
        return "zip"
    if head[:1] == b"\x80" and len(head) > 1 and head[1] in range(2, 6):
        return "pickle"
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    return "unknown"


@dataclass
class CheckpointLayer:
    """One layer's tensors, in the layer's weight order (lazy h5py datasets)."""

    name: str
    path: str
    tensors: list[Any] = field(default_factory=list)
    #: one weight of a custom layer's own (``<layer>/vars/<i>``, from ``add_weight``), not a layer
    variable: bool = False

    def paths(self) -> list[str]:
        return [t.name for t in self.tensors]


class _Window(io.RawIOBase):
    """A read-only view of ``size`` bytes of a file starting at ``start``."""

    def __init__(self, fh, start: int, size: int):
        super().__init__()
        self._fh, self._start, self._size, self._pos = fh, start, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer) -> int:
        n = max(0, min(len(buffer), self._size - self._pos))
        if n == 0:
            return 0
        self._fh.seek(self._start + self._pos)
        got = self._fh.readinto(memoryview(buffer)[:n])
        self._pos += got or 0
        return got or 0


class KerasCheckpoint:
    """An open Keras checkpoint: ``layers`` maps each layer name to its tensors."""

    def __init__(self, path: str):
        import h5py

        self.path = path
        self._h5py = h5py
        self._closers: list = []
        kind = sniff(path)
        if kind == "pickle":
            raise CheckpointError(f"{path}: a Python pickle (a PyTorch .pt file?), not a Keras "
                                  "checkpoint; it was not loaded")
        if kind == "safetensors":
            raise CheckpointError(f"{path}: a safetensors file, not a Keras checkpoint (.keras, .h5, "
                                  ".weights.h5)")
        #: the file holding the HDF5 bytes and where they start (for mapping tensors in place)
        self._h5_file, self._h5_start = path, 0
        if kind not in ("zip", "hdf5"):
            raise CheckpointError(f"{path}: not a Keras checkpoint (expected a .keras zip or an HDF5 "
                                  ".h5 / .weights.h5 file)")
        try:
            h5 = self._open_zip(path) if kind == "zip" else self._open_h5(path, path)
        except BaseException:  # (every exit path: the zip, the raw file, the inflated copy go)
            self.close()
            raise
        self.format = "keras" if kind == "zip" else None
        self._h5 = h5
        try:
            _refuse_external_links(h5, path)
            found, fmt = _index(h5, path)
            self.layers = {k: v for k, v in found.items() if not v.variable}
            #: custom layers' own weights one by one (``<layer>/vars/<i>``)
            self.variables = {k: v for k, v in found.items() if v.variable}
        except (OSError, KeyError, ValueError) as exc:
            self.close()
            raise CheckpointError(f"{path}: the file is corrupt or truncated ({_reason(exc)})") from None
        except BaseException:
            self.close()
            raise
        self.format = self.format or fmt

    def _open_h5(self, fileobj, label: str):
        try:
            h5 = self._h5py.File(fileobj, "r")
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{label}: cannot be read as HDF5; the file is corrupt or "
                                  f"truncated ({_reason(exc)})") from None
        self._closers.append(h5.close)
        return h5

    def _open_zip(self, path: str):
        try:
            zf = zipfile.ZipFile(path)
            info = zf.getinfo("model.weights.h5")
        except KeyError:
            raise CheckpointError(f"{path}: a zip file without model.weights.h5, so not a .keras "
                                  "file (one saved by model.save('model.keras') holds it)") from None
        except (zipfile.BadZipFile, OSError) as exc:
            raise CheckpointError(f"{path}: the zip file is corrupt or truncated ({_reason(exc)})") from None
        self._closers.append(zf.close)
        raw = open(path, "rb")
        self._closers.append(raw.close)
        if info.compress_type == zipfile.ZIP_STORED:
            raw.seek(info.header_offset)
            header = raw.read(30)
            if len(header) < 30 or header[:4] != ZIP_MAGIC:
                raise CheckpointError(f"{path}: the zip file is corrupt (bad local header)")
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            start = info.header_offset + 30 + name_len + extra_len
            if start + info.file_size > os.path.getsize(path):
                raise CheckpointError(f"{path}: the zip file is truncated")
            self._h5_start = start
            return self._open_h5(_Window(raw, start, info.file_size), f"{path}:model.weights.h5")
        # compressed member: stream it to a temporary file once (bounded: see _inflate)
        tmp = _inflate(zf, info, path)
        self._closers.append(lambda: os.path.exists(tmp) and os.unlink(tmp))
        self._h5_file = tmp
        return self._open_h5(tmp, f"{path}:model.weights.h5")

    def read(self, dataset) -> np.ndarray:
        """One tensor: mapped in place (read-only) when HDF5 stores it as one contiguous
        block, as Keras does; otherwise read through h5py."""
        self._refuse_outside(dataset)
        mapped = self._mapped(dataset)
        if mapped is not None:
            return mapped
        try:
            return np.asarray(dataset[()])
        except (OSError, ValueError, KeyError) as exc:
            raise CheckpointError(f"{self.path}: cannot read {dataset.name}; the file is corrupt or "
                                  f"truncated ({_reason(exc)})") from None

    def _refuse_outside(self, dataset) -> None:
        """A tensor whose bytes are not in the opened file is refused: external storage (raw
        bytes of any other file, /dev/urandom), a virtual dataset (other files' datasets), or a
        dataset reached through a link into another file."""
        try:
            external = dataset.id.get_create_plist().get_external_count()
            virtual = dataset.is_virtual
            elsewhere = dataset.file.id.fileno != self._h5.id.fileno
        except Exception as exc:  # noqa: BLE001 - h5py raises several types on a corrupt file
            raise CheckpointError(f"{self.path}: cannot read {dataset.name}; the file is corrupt or "
                                  f"truncated ({_reason(exc)})") from None
        if external or virtual or elsewhere:
            how = ("stores its bytes in external files" if external else
                   "is a virtual dataset over other files" if virtual else "lives in another file")
            raise CheckpointError(f"{self.path}: the tensor {dataset.name} {how}; a checkpoint whose "
                                  "tensors are not inside it is not read")

    def _mapped(self, dataset) -> np.ndarray | None:
        try:
            offset = dataset.id.get_offset()
            plist = dataset.id.get_create_plist()
            filtered = plist.get_nfilters() > 0
        except Exception:  # noqa: BLE001 - no offset: compact/chunked storage, read it instead
            return None
        dtype = np.dtype(dataset.dtype)
        if offset is None or filtered or dataset.chunks is not None or dtype.kind not in "fiub":
            return None
        size = int(np.prod(dataset.shape, dtype=np.int64)) * dtype.itemsize
        start = self._h5_start + offset
        if size == 0 or start + size > os.path.getsize(self._h5_file):
            return None
        return np.memmap(self._h5_file, dtype=dtype, mode="r", offset=start, shape=tuple(dataset.shape))

    def close(self) -> None:
        for close in reversed(self._closers):
            try:
                close()
            except Exception:  # noqa: BLE001 - closing what is already broken
                pass
        self._closers.clear()

    def __enter__(self) -> "KerasCheckpoint":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


#: a compressed .keras member may inflate this much before the ratio limit applies
INFLATE_FREE = 64 << 20
#: beyond INFLATE_FREE, at most this many bytes out per compressed byte in
INFLATE_RATIO = 100


def _inflate(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> str:
    """The compressed member inflated into a temporary file, whose path is returned. Refused
    (and the file removed, on every exit path) when the member declares one size and inflates
    to another, or inflates more than INFLATE_RATIO:1 beyond the first INFLATE_FREE bytes:
    a zip bomb would otherwise fill the temp folder."""
    def too_big(n: int) -> bool:
        return n > INFLATE_FREE and n > INFLATE_RATIO * max(info.compress_size, 1)

    if too_big(info.file_size):
        raise CheckpointError(f"{path}: model.weights.h5 declares {info.file_size} bytes from "
                              f"{info.compress_size} compressed (over {INFLATE_RATIO}:1); not inflated")
    fd, tmp = tempfile.mkstemp(suffix=".weights.h5", prefix=".transpile-")
    try:
        written = 0
        with os.fdopen(fd, "wb") as out, zf.open(info) as src:
            while chunk := src.read(1 << 22):
                written += len(chunk)
                if written > info.file_size or too_big(written):
                    raise CheckpointError(f"{path}: model.weights.h5 inflates past its declared "
                                          f"{info.file_size} bytes or {INFLATE_RATIO}:1; not inflated further")
                out.write(chunk)
        if written != info.file_size:
            raise CheckpointError(f"{path}: model.weights.h5 declares {info.file_size} bytes but "
                                  f"inflates to {written}; the zip file is corrupt")
        return tmp
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        os.unlink(tmp)
        raise CheckpointError(f"{path}: the zip file is corrupt or truncated ({_reason(exc)})") from None
    except BaseException:
        os.unlink(tmp)
        raise


def _refuse_external_links(h5, path: str) -> None:
    """An HDF5 external link (to an object in another file) anywhere in the checkpoint is
    refused before anything is followed: a checkpoint is read from itself only."""
    import h5py

    def visit(name, link):  # (a callback must not raise: h5py's lock breaks; non-None stops)
        return (name, link.filename) if isinstance(link, h5py.ExternalLink) else None

    found = h5.visititems_links(visit)
    if found:
        raise CheckpointError(f"{path}: {found[0]} is an HDF5 external link to {found[1]}; a "
                              "checkpoint that reaches into other files is not read")


def _decode(x) -> str:
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


def _index(h5, path: str) -> tuple[dict[str, CheckpointLayer], str]:
    if "layer_names" in h5.attrs or "model_weights" in h5:
        root = h5["model_weights"] if "model_weights" in h5 else h5
        layers = {}
        for name in (_decode(n) for n in root.attrs.get("layer_names", [])):
            group = root[name]
            names = [_decode(w) for w in group.attrs.get("weight_names", [])]
            tensors = [group[w] for w in names]
            _nested_legacy(layers, name, group.name, names, tensors)
        return layers, "legacy.h5"
    if "layers" in h5 or "vars" in h5:
        layers: dict[str, CheckpointLayer] = {}
        _walk(h5, layers)
        return layers, "weights.h5"
    raise CheckpointError(f"{path}: an HDF5 file, but not a Keras checkpoint (no 'layers' or "
                          "'model_weights' group)")


def _nested_legacy(layers, name, path, names, tensors) -> None:
    """Each weight belongs to the innermost layer its name mentions: ``dense/kernel`` to
    ``dense``, ``tower/residual/dense_2/kernel`` (a custom layer's sub-layer) to
    ``dense_2``; a recurrent cell or a Bidirectional half belongs to its wrapper
    (``bidirectional/forward_lstm/lstm_cell/kernel`` to ``bidirectional``)."""
    groups: dict[str, list] = {}
    paths = [w.split(":")[0].split("/")[:-1] for w in names]
    # a MultiHeadAttention's projections: all four under one layer (a lone "query" is a layer)
    attention = {tuple(p[:-1]) for p in paths if p and p[-1] == "query" and all(
        [*p[:-1], part] in paths for part in MHA_LEGACY_PARTS)}
    for parts, t in zip(paths, tensors):
        parts = list(parts)
        while len(parts) > 1 and (_is_weight_part(parts[-1]) or (
                parts[-1] in MHA_LEGACY_PARTS and tuple(parts[:-1]) in attention)):
            parts.pop()
        owner = parts[-1] if parts else name
        groups.setdefault(owner, []).append(t)
    for owner, ts in groups.items():
        layers[owner] = CheckpointLayer(owner, path, ts)
        for i, t in enumerate(ts):  # a custom layer's own weights, in Keras' vars order
            layers[f"{owner}/vars/{i}"] = CheckpointLayer(f"{owner}/vars/{i}", path, [t], variable=True)
    if len(groups) == 1 and name not in layers:
        # a wrapper's one inner layer (TimeDistributed: time_distributed/dense/kernel) is also
        # found under the wrapper's name
        layers[name] = CheckpointLayer(name, path, next(iter(groups.values())))


def _is_weight_part(part: str) -> bool:
    """A path component that holds a layer's weights but is not a layer of its own."""
    return part.endswith("_cell") or part.startswith(("forward_", "backward_")) or part in SUBLAYERS


#: top-level groups of a .keras weights file that are not layers
NOT_LAYERS = ("optimizer", "metrics", "compile_metrics", "loss", "_metrics")


def _walk(group, out: dict[str, CheckpointLayer], top: bool = True) -> None:
    """Every layer under ``group``: functional and Sequential models keep them in a
    ``layers`` list; subclassed models and custom layers under their attribute names
    (``block1/conv/vars``). A group with ``vars`` is a layer (named by the ``vars``
    group's ``name``); its tensors are its own ``vars`` and those of its weight-holding
    parts (``cell``, ``forward_layer``, ``backward_layer``); any other child group is a
    layer of its own (a custom layer's sub-layers)."""
    for key in sorted(group.keys()):
        g = group[key]
        if key == "vars" or not hasattr(g, "keys") or (top and key in NOT_LAYERS):
            continue
        if key == "layers" or "vars" not in g:
            _walk(g, out, top=False)
            continue
        name = _decode(g["vars"].attrs.get("name", key))
        tensors = _layer_tensors(g)
        if name in out:
            if tensors and out[name].tensors:
                raise CheckpointError(f"{g.file.filename}: two layers are named {name!r}")
            if not tensors:
                continue
        out[name] = CheckpointLayer(name, g.name, tensors)
        if "vars" in g:  # a custom layer's own weights (add_weight), one by one
            for k in g["vars"].keys():
                out[f"{name}/vars/{k}"] = CheckpointLayer(f"{name}/vars/{k}", g["vars"][k].name, [g["vars"][k]],
                                                         variable=True)
        for child in sorted(g.keys()):
            if child not in ("vars",) + SUBLAYERS:
                sub = g[child]
                if hasattr(sub, "keys"):
                    _walk(sub if child == "layers" else _Single(child, sub), out, top=False)


class _Single:
    """A one-entry view ``{key: group}`` so a child group is walked like a container's."""

    def __init__(self, key, group):
        self._key, self._group = key, group

    def keys(self):
        return [self._key]

    def __getitem__(self, key):
        return self._group


def _layer_tensors(g) -> list:
    tensors = []
    if "vars" in g:
        keys = sorted(g["vars"].keys(), key=lambda k: int(k) if k.isdigit() else 1 << 30)
        tensors += [g["vars"][k] for k in keys]
    children = [k for k in g.keys() if k not in ("vars", "layers")]
    ordered = [c for c in SUBLAYERS if c in children] + sorted(c for c in children if c not in SUBLAYERS)
    for child in ordered:
        tensors += _layer_tensors(g[child])
    return tensors


# ---------------------------------------------------------------------------------
# Writing Keras 3 .weights.h5
# ---------------------------------------------------------------------------------
#: where a layer's tensors live under its group, by op (default: its own vars)
SUBPATHS = {"lstm": ("cell",), "gru": ("cell",), "simple_rnn": ("cell",), "conv_lstm2d": ("cell",),
            "bidirectional": ("forward_layer/cell", "backward_layer/cell"),
            "multi_head_attention": MHA_PARTS}
#: where a wrapper layer keeps its inner layer's tensors, by Keras class
WRAPPER_SUBPATHS = {"TimeDistributed": ("layer",)}


def weights_paths(attributes: list[str], auto_keys: list[str]) -> list[str]:
    """The ``.weights.h5`` group of each layer of a subclassed model, as Keras' saver
    places them: it walks the model's attributes in sorted order (public ones first), a
    layer under its attribute's name, and the ``layers`` list, each layer of which not
    yet visited goes under ``layers/<key>``, the key counted over the whole list (the
    snake-cased class name, ``dense``, ``dense_1``, ...: ``auto_keys``). So a layer whose
    attribute sorts before ``layers`` is saved at the top, the others under ``layers/``."""
    return [attr if attr < "layers" else f"layers/{key}" for attr, key in zip(attributes, auto_keys)]


@dataclass
class KerasLayerOut:
    """A layer to write: its class, name, op and tensors in Keras' weight order."""

    cls: str
    name: str
    op: str
    tensors: list[np.ndarray]
    inner_names: tuple[str, ...] = ()


def layer_keys(layers: list[KerasLayerOut]) -> list[str]:
    """The key Keras' saver gives each layer of ``model.layers`` (in that order): the
    snake-cased class name, counted (``dense``, ``dense_1``, ...)."""
    used: dict[str, int] = {}
    keys = []
    for layer in layers:
        key = keras_auto_name(layer.cls)
        n = used.get(key)
        used[key] = 0 if n is None else n + 1
        keys.append(key if n is None else f"{key}_{n + 1}")
    return keys


def write_keras_weights(path: str, model_name: str, layers: list[KerasLayerOut],
                        groups: list[str] | None = None, containers: list[str] = ()) -> None:
    """Write a Keras 3 ``.weights.h5`` (``layers`` in ``model.layers`` order), atomically.
    Each layer goes under ``layers/<key>`` (a functional model), or under its entry of
    ``groups`` (a subclassed model's attribute paths; ``containers``: the groups of the
    layers that hold others, each with its own ``vars``)."""
    import h5py

    if groups is None:
        groups = [f"layers/{key}" for key in layer_keys(layers)]
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".transpile-", suffix=".weights.h5")
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            if not containers:
                f.create_group("layers")
            for container in containers:
                f.require_group(container).create_group("vars").attrs["name"] = container.split("/")[-1]
            for layer, group in zip(layers, groups):
                g = f.create_group(group)
                own = g.create_group("vars")
                own.attrs["name"] = layer.name
                subs = WRAPPER_SUBPATHS.get(layer.cls) or SUBPATHS.get(layer.op, ())
                if not subs:
                    for i, t in enumerate(layer.tensors):
                        own.create_dataset(str(i), data=t)
                    continue
                per = len(layer.tensors) // len(subs)
                for j, sub in enumerate(subs):
                    parts = sub.split("/")
                    node = g
                    for depth, part in enumerate(parts):
                        node = node.require_group(part)
                        vg = node.require_group("vars")
                        if "name" not in vg.attrs:
                            vg.attrs["name"] = (layer.inner_names[j] if depth == 0 and layer.inner_names
                                                else part)
                    for i, t in enumerate(layer.tensors[j * per:(j + 1) * per]):
                        node["vars"].create_dataset(str(i), data=t)
            f.create_group("vars").attrs["name"] = model_name
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
